//! `staged mcp`: serve the workspace over the Model Context Protocol (stdio, or streamable
//! HTTP behind a bearer token).
//!
//! The process-wide parts live here, not in `staged-mcp`: the stderr logger (`RUST_LOG`),
//! the Ctrl-C and SIGTERM handlers that stop the HTTP server, the token from `--token-file` or
//! `STAGED_MCP_TOKEN`, and every line printed for the person who started the server.

use std::path::Path;

use anyhow::Context;
use staged_mcp::{Approval, BearerToken, HttpEndpoint, HttpOptions, StagedServer};
use tokio_util::sync::CancellationToken;

use crate::{
    args::{ApproveArg, GlobalArgs, McpArgs},
    cmd::Effect,
    context,
    exit::Exit,
};

/// The environment variable that may hold the HTTP bearer token.
pub(crate) const TOKEN_ENV: &str = "STAGED_MCP_TOKEN";

/// Where the HTTP token came from, to tell the person.
enum TokenSource {
    File(std::path::PathBuf),
    Env,
    Generated,
}

pub(crate) fn run(global: &GlobalArgs, args: &McpArgs) -> anyhow::Result<Exit> {
    init_logging();
    let approve = match args.approve {
        ApproveArg::None => Approval::None,
        ApproveArg::Human => Approval::Human,
    };
    // Refuse a bad HTTP setup before the workspace is touched.
    let http = match args.http {
        None => None,
        Some(addr) => {
            let (token, source) = token(args)?;
            let options = HttpOptions {
                addr,
                allow_remote: args.allow_remote,
                token,
                allowed_hosts: args.allow_host.clone(),
            };
            options.check().map_err(|err| anyhow::anyhow!("{err}"))?;
            Some((options, source))
        }
    };
    let runtime = context::runtime()?;
    // Plugins start on this runtime and run until the server stops.
    let (mut workspace, host) = context::open_with_plugins(global, &runtime, Effect::Serves)?;
    // A server answers many searches over one tree: list and filter files from a warm index
    // (`STAGED_WARM_INDEX=0` walks the tree on every search instead).
    if context::warm_index_wanted()
        && let Err(err) = workspace.start_warm_index()
    {
        context::warn(&format!("no warm index, every search walks the tree: {err}"));
    }
    let _closes_index = context::ClosesIndex(workspace.warm_index().cloned());
    let root = workspace.workspace().root().to_path_buf();
    let server = StagedServer::new(workspace, approve);
    let res = runtime.block_on(async move {
        let Some((options, source)) = http else {
            return staged_mcp::serve_stdio(server.for_client_session()).await;
        };
        let allow_remote = options.allow_remote;
        let endpoint = HttpEndpoint::bind(options, &server).await?;
        print_http_notice(&endpoint, &source, allow_remote, &root);
        let shutdown = CancellationToken::new();
        tokio::spawn(stop_on_signal(shutdown.clone()));
        endpoint.serve(server, shutdown).await
    });
    runtime.block_on(host.shutdown());
    res.map_err(|err| anyhow::anyhow!("{err}"))?;
    Ok(Exit::Success)
}

/// Cancels `shutdown` on Ctrl-C, or on SIGTERM (how service managers and `kill` stop a
/// server), so the HTTP server stops cleanly and removes its generated token file.
pub(crate) async fn stop_on_signal(shutdown: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            shutdown.cancel();
            return;
        }
    }
    if tokio::signal::ctrl_c().await.is_ok() {
        shutdown.cancel();
    }
}

/// The HTTP token: `--token-file`, else `STAGED_MCP_TOKEN`, else `None` (generated later).
fn token(args: &McpArgs) -> anyhow::Result<(Option<BearerToken>, TokenSource)> {
    if let Some(path) = &args.token_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading --token-file {}", path.display()))?;
        let token = BearerToken::parse(&text)
            .map_err(|err| anyhow::anyhow!("--token-file {}: {err}", path.display()))?;
        return Ok((Some(token), TokenSource::File(path.clone())));
    }
    match std::env::var(TOKEN_ENV) {
        Ok(text) => {
            let token =
                BearerToken::parse(&text).map_err(|err| anyhow::anyhow!("{TOKEN_ENV}: {err}"))?;
            Ok((Some(token), TokenSource::Env))
        }
        Err(std::env::VarError::NotPresent) => Ok((None, TokenSource::Generated)),
        Err(std::env::VarError::NotUnicode(_)) => {
            anyhow::bail!("{TOKEN_ENV}: unusable MCP token: it is not valid UTF-8")
        }
    }
}

/// Tells the person where the server is and how a client gets the token.
fn print_http_notice(endpoint: &HttpEndpoint, source: &TokenSource, remote: bool, root: &Path) {
    let url = endpoint.url();
    eprintln!("staged: serving MCP at {url}");
    let header = match (source, endpoint.token_file()) {
        (TokenSource::Generated, Some(file)) => {
            eprintln!(
                "staged: clients must send `Authorization: Bearer <token>`; the token is in {} (readable only by you, removed when the server stops). It changes on every start: for a client setup that lasts, pass --token-file FILE or set {TOKEN_ENV}",
                file.display()
            );
            format!("Authorization: Bearer $(cat '{}')", file.display())
        }
        (TokenSource::File(path), _) => {
            eprintln!(
                "staged: clients must send `Authorization: Bearer <token>` with the token in {}",
                path.display()
            );
            format!("Authorization: Bearer $(cat '{}')", path.display())
        }
        (TokenSource::Env | TokenSource::Generated, _) => {
            eprintln!(
                "staged: clients must send `Authorization: Bearer <token>` with the token in {TOKEN_ENV}"
            );
            format!("Authorization: Bearer ${TOKEN_ENV}")
        }
    };
    eprintln!(
        "staged: for example: claude mcp add --transport http staged {url} --header \"{header}\""
    );
    if remote {
        eprintln!(
            "staged: warning: --allow-remote serves {} over plain HTTP; anyone who can reach it and holds the token can edit files in {}. Use it only on a trusted network, or behind TLS.",
            endpoint.local_addr(),
            root.display()
        );
    }
}

/// Logs to stderr (stdout carries the protocol), filtered by `RUST_LOG`; by default
/// `staged_mcp`'s `info` and everything's `warn`.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,staged_mcp=info"));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init();
}
