//! Opening the workspace a command works on, and running async tool code to completion with
//! Ctrl-C wired to the cancel token.
//!
//! Every open registers the rehydrator of plugin previews, so any command can resolve a
//! preview a plugin staged (starting the plugin only then); the commands that offer tools
//! (`mcp`, `agent`, `tools`, `tool`) also start the plugins and load their tools
//! ([`open_with_plugins`]).

use std::{
    future::Future,
    path::{Path, PathBuf},
    sync::Arc,
};

use anyhow::{Context, bail};
use staged_core::CancelToken;
use staged_plugin::{PluginHost, PluginsConfig};
use staged_render::escape_line;
use staged_workspace::{RecoveryReport, WorkspaceSession, WorkspaceSessionBuilder, locate_root};

use crate::{args::GlobalArgs, config::Files};

/// The workspace root: `--workspace`, else the nearest ancestor with `.staged` or `.git`,
/// else the current directory (and then stderr says so, since that is where state would go).
pub(crate) fn workspace_root(global: &GlobalArgs) -> anyhow::Result<PathBuf> {
    let root = match &global.workspace {
        Some(dir) => dir.clone(),
        None => {
            let cwd = std::env::current_dir().context("reading the current directory")?;
            let (root, found) = locate_root(&cwd);
            if !found {
                eprintln!(
                    "staged: no .git or .staged folder in {} or above it; using it as the workspace",
                    cwd.display()
                );
            }
            root
        }
    };
    if !root.is_dir() {
        bail!("workspace {} is not a directory", root.display());
    }
    Ok(root)
}

/// Opens the workspace session for a command that keeps state whatever it stages (creating
/// `.staged` now), reporting on stderr any interrupted apply it recovered.
pub(crate) fn open(global: &GlobalArgs) -> anyhow::Result<WorkspaceSession> {
    let root = workspace_root(global)?;
    let (host, _) = plugin_host(&root)?;
    let ws = host
        .register_rehydrator(WorkspaceSession::builder().progress(crate::progress::counter()))
        .open(&root)
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    report_recovery(ws.recovery());
    Ok(ws)
}

/// Opens the workspace session for a command that stages: `.staged` is created only when
/// something is staged, so a command that fails first leaves none behind.
pub(crate) fn open_deferred(global: &GlobalArgs) -> anyhow::Result<WorkspaceSession> {
    let root = workspace_root(global)?;
    let (host, _) = plugin_host(&root)?;
    let ws = host
        .register_rehydrator(WorkspaceSession::builder().progress(crate::progress::counter()))
        .open_deferred(&root)
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    report_recovery(ws.recovery());
    Ok(ws)
}

/// Opens the workspace session for a command that only looks or resolves: a workspace where
/// nothing was ever staged gets no `.staged` folder.
pub(crate) fn open_existing(global: &GlobalArgs) -> anyhow::Result<WorkspaceSession> {
    let root = workspace_root(global)?;
    let (host, _) = plugin_host(&root)?;
    let ws = host
        .register_rehydrator(WorkspaceSession::builder().progress(crate::progress::counter()))
        .open_existing(&root)
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    report_recovery(ws.recovery());
    Ok(ws)
}

/// The host of the plugins this workspace may start (none started yet), and the warnings
/// about those it may not.
/// A configuration that cannot be read (a symlink, not UTF-8) starts no plugin and is a
/// warning, so it never keeps a command from working on the stack.
fn plugin_host(root: &Path) -> anyhow::Result<(Arc<PluginHost>, Vec<String>)> {
    let (plugins, warnings) = match Files::read(root) {
        Ok(files) => files.plugins(),
        Err(err) => (PluginsConfig::new(), vec![format!("{err:#}; no plugin was started")]),
    };
    Ok((PluginHost::new(root, &plugins), warnings))
}

/// Opens the workspace session for a command that offers tools: starts the plugins on
/// `runtime` (where they keep running until [`PluginHost::shutdown`]) and registers their
/// tools. Warnings and load errors go to stderr, one line each; none is fatal.
/// Whether a long-running front end keeps a warm index: unless `STAGED_WARM_INDEX` is `0`
/// (for a tree on a file system whose changes inotify does not see, or to compare).
pub(crate) fn warm_index_wanted() -> bool {
    std::env::var_os("STAGED_WARM_INDEX").is_none_or(|v| v != "0")
}

/// Closes a long-running front end's warm index when it goes out of scope, on every way out
/// of the command ([`staged_workspace::WarmIndex::close`]): its cookie folder in the system's
/// temporary folder is deleted before the process exits.
pub(crate) struct ClosesIndex(pub(crate) Option<staged_workspace::WarmIndex>);

impl Drop for ClosesIndex {
    fn drop(&mut self) {
        if let Some(index) = &self.0 {
            index.close();
        }
    }
}

/// Prints `message` as a warning on stderr, control characters escaped.
pub(crate) fn warn(message: &str) {
    eprintln!("staged: warning: {}", escape_line(message));
}

pub(crate) fn open_with_plugins(
    global: &GlobalArgs,
    runtime: &tokio::runtime::Runtime,
    effect: crate::cmd::Effect,
) -> anyhow::Result<(WorkspaceSession, Arc<PluginHost>)> {
    let root = workspace_root(global)?;
    let (host, warnings) = plugin_host(&root)?;
    for warning in warnings {
        eprintln!("staged: warning: {}", escape_line(&warning));
    }
    let builder: WorkspaceSessionBuilder = if host.is_empty() {
        WorkspaceSession::builder().progress(crate::progress::counter())
    } else {
        let loaded = runtime.block_on(host.load());
        host.register(loaded, WorkspaceSession::builder().progress(crate::progress::counter()))
    };
    let res = match effect {
        crate::cmd::Effect::Stages => builder.open_deferred(&root),
        crate::cmd::Effect::Serves => builder.open(&root),
        crate::cmd::Effect::ReadOnly => builder.open_existing(&root),
    };
    let ws = match res {
        Ok(ws) => ws,
        Err(err) => {
            runtime.block_on(host.shutdown());
            return Err(anyhow::anyhow!("{err}"));
        }
    };
    report_recovery(ws.recovery());
    for error in ws.load_errors() {
        eprintln!("staged: warning: {}", escape_line(&error.to_string()));
    }
    Ok((ws, host))
}

/// The scope paths a person typed, as the tools take them. A relative path is relative to the
/// current directory when that is inside the workspace (as in git and ast-grep), and to the
/// workspace root otherwise (`--workspace DIR` run from elsewhere). The result is relative to
/// the root, so messages and output name paths as the rest of staged does; confinement to the
/// root is then the tool's.
pub(crate) fn scope_paths(root: &Path, paths: &[String]) -> anyhow::Result<Vec<String>> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let cwd = cwd.canonicalize().unwrap_or(cwd);
    let Ok(base) = cwd.strip_prefix(&root) else { return Ok(paths.to_vec()) };
    if base.as_os_str().is_empty() {
        return Ok(paths.to_vec());
    }
    Ok(paths.iter().map(|p| rebase(base, p)).collect())
}

/// The paths of `--only` and `--except` (files, folders, globs, `FILE:N`) relative to the
/// workspace `root`: as [`scope_paths`], and an absolute path inside the root (as an editor
/// copies one) made relative to it. An absolute path outside the root is left as typed, and
/// matches none of the files.
pub(crate) fn pick_paths(root: &Path, paths: &[String]) -> anyhow::Result<Vec<String>> {
    let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let scoped = scope_paths(root, paths)?;
    Ok(scoped
        .into_iter()
        .map(|p| {
            let path = Path::new(&p);
            if !path.is_absolute() {
                return p;
            }
            [root, canonical.as_path()].iter().find_map(|r| path.strip_prefix(r).ok()).map_or_else(
                || p.clone(),
                |rel| match rel.to_string_lossy() {
                    rel if rel.is_empty() => ".".to_owned(),
                    rel => rel.into_owned(),
                },
            )
        })
        .collect())
}

/// `p` (relative to `base`, itself relative to the root) relative to the root, normalised
/// lexically. Absolute paths, URLs and paths that climb above the root are left for the tool
/// to judge.
fn rebase(base: &Path, p: &str) -> String {
    if p.contains("://") || Path::new(p).is_absolute() {
        return p.to_owned();
    }
    let mut parts: Vec<String> =
        base.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    // Above the root: keep the climb, so the tool reports it as outside.
                    return format!("{}/{p}", base.display());
                }
            }
            other => parts.push(other.to_owned()),
        }
    }
    if parts.is_empty() { ".".to_owned() } else { parts.join("/") }
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
        eprintln!("staged: warning: {}", escape_line(&refusal.to_string()));
    }
}

/// A multi-threaded runtime for one command.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Runs `make(cancel)` on a multi-threaded runtime; Ctrl-C cancels the token.
pub(crate) fn block_on<F, Fut>(make: F) -> anyhow::Result<Fut::Output>
where
    F: FnOnce(CancelToken) -> Fut,
    Fut: Future,
{
    block_on_in(&runtime()?, make)
}

/// [`block_on`] on `runtime` (one whose plugins are running).
pub(crate) fn block_on_in<F, Fut>(
    runtime: &tokio::runtime::Runtime,
    make: F,
) -> anyhow::Result<Fut::Output>
where
    F: FnOnce(CancelToken) -> Fut,
    Fut: Future,
{
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_typed_in_a_subfolder_are_rebased_on_the_root() {
        let base = Path::new("src/app");
        assert_eq!(rebase(base, "value"), "src/app/value");
        assert_eq!(rebase(base, "."), "src/app");
        assert_eq!(rebase(base, "../lib/*.ts"), "src/lib/*.ts");
        assert_eq!(rebase(base, "../.."), ".");
        assert_eq!(rebase(base, "**/*.rs"), "src/app/**/*.rs");
        assert_eq!(rebase(base, "../../../etc"), "src/app/../../../etc");
        assert_eq!(rebase(base, "/abs/x"), "/abs/x");
    }
}
