//! Opening the workspace a command works on, and running async tool code to completion with
//! Ctrl-C wired to the cancel token.

use std::{future::Future, path::PathBuf};

use anyhow::{Context, bail};
use staged_core::CancelToken;
use staged_workspace::{RecoveryReport, WorkspaceSession, find_root};

use crate::args::GlobalArgs;

/// The workspace root: `--workspace`, else the nearest ancestor with `.staged` or `.git`,
/// else the current directory.
pub(crate) fn workspace_root(global: &GlobalArgs) -> anyhow::Result<PathBuf> {
    let root = match &global.workspace {
        Some(dir) => dir.clone(),
        None => find_root(&std::env::current_dir().context("reading the current directory")?),
    };
    if !root.is_dir() {
        bail!("workspace {} is not a directory", root.display());
    }
    Ok(root)
}

/// Opens the workspace session, reporting on stderr any interrupted apply it recovered.
pub(crate) fn open(global: &GlobalArgs) -> anyhow::Result<WorkspaceSession> {
    let root = workspace_root(global)?;
    let ws = WorkspaceSession::open(&root).map_err(|err| anyhow::anyhow!("{err}"))?;
    report_recovery(ws.recovery());
    Ok(ws)
}

/// Says on stderr what start-up recovery did, and which journals it refused to touch.
pub(crate) fn report_recovery(report: &RecoveryReport) {
    if report.rolled_forward + report.rolled_back > 0 {
        eprintln!(
            "staged: recovered interrupted applies: {} finished, {} rolled back",
            report.rolled_forward, report.rolled_back
        );
    }
    for refusal in &report.refused {
        eprintln!("staged: warning: {refusal}");
    }
}

/// Runs `make(cancel)` on a multi-threaded runtime; Ctrl-C cancels the token.
pub(crate) fn block_on<F, Fut>(make: F) -> anyhow::Result<Fut::Output>
where
    F: FnOnce(CancelToken) -> Fut,
    Fut: Future,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let cancel = CancelToken::new();
    let on_signal = cancel.clone();
    Ok(runtime.block_on(async move {
        let watcher = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                on_signal.cancel_with("Interrupted");
            }
        });
        let res = make(cancel).await;
        watcher.abort();
        res
    }))
}
