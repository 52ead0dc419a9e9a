//! Serving: stdio by default, or streamable HTTP bound to loopback unless remote access is
//! explicitly allowed.

use std::{net::SocketAddr, sync::Arc};

use rmcp::{
    ServiceExt,
    service::ServerInitializeError,
    transport::{
        stdio,
        streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
        },
    },
};
use staged_workspace::WorkspaceSession;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::{McpError, McpOptions, StagedServer};

/// The HTTP path the MCP endpoint is mounted at: `http://ADDR/mcp`.
pub const HTTP_PATH: &str = "/mcp";

/// Serves `options.workspace_root` over stdio (no `http`) or streamable HTTP, until the
/// client disconnects (stdio) or the process is interrupted (HTTP).
///
/// Logs go to stderr through `tracing`; stdout carries only the protocol.
pub async fn run(options: McpOptions) -> Result<(), McpError> {
    init_stderr_logging();
    if let Some(addr) = options.http {
        check_bind_address(addr, options.allow_remote)?;
    }
    let workspace = WorkspaceSession::open(&options.workspace_root).map_err(|err| {
        McpError::Workspace { root: options.workspace_root.clone(), message: err.to_string() }
    })?;
    let server = StagedServer::new(workspace, options.approve);
    match options.http {
        None => serve_stdio(server).await,
        Some(addr) => {
            let listener =
                TcpListener::bind(addr).await.map_err(|source| McpError::Bind { addr, source })?;
            let shutdown = CancellationToken::new();
            let on_signal = shutdown.clone();
            tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    on_signal.cancel();
                }
            });
            serve_http(listener, server, options.allow_remote, shutdown).await
        }
    }
}

/// Refuses a non-loopback address unless `allow_remote`.
pub fn check_bind_address(addr: SocketAddr, allow_remote: bool) -> Result<(), McpError> {
    if addr.ip().is_loopback() || allow_remote {
        return Ok(());
    }
    Err(McpError::NotLoopback { addr })
}

/// Serves `server` on this process's stdin and stdout until the client disconnects.
pub async fn serve_stdio(server: StagedServer) -> Result<(), McpError> {
    tracing::info!(root = %server.workspace().workspace().root().display(), "serving MCP on stdio");
    let running = match server.serve(stdio()).await {
        Ok(running) => running,
        // A 2026-07-28 client has no `initialize` handshake: rmcp answers its requests while
        // waiting for one, and reports the end of stdin as a closed connection. That is a
        // normal disconnect, not a failure.
        Err(ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("the client disconnected");
            return Ok(());
        }
        Err(err) => return Err(McpError::Serve(err.to_string())),
    };
    running.waiting().await.map_err(|err| McpError::Serve(err.to_string()))?;
    Ok(())
}

/// Serves `server` as streamable HTTP at [`HTTP_PATH`] on `listener` until `shutdown` fires.
///
/// Without `allow_remote`, requests whose `Host` is not a loopback name are refused (a guard
/// against DNS rebinding); the listener itself should then be bound to loopback too.
pub async fn serve_http(
    listener: TcpListener,
    server: StagedServer,
    allow_remote: bool,
    shutdown: CancellationToken,
) -> Result<(), McpError> {
    let mut config =
        StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token());
    if allow_remote {
        config = config.disable_allowed_hosts();
    }
    let service: StreamableHttpService<StagedServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
    let router = axum::Router::new().nest_service(HTTP_PATH, service);
    if let Ok(addr) = listener.local_addr() {
        tracing::info!("serving MCP on http://{addr}{HTTP_PATH}");
    }
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await
        .map_err(|err| McpError::Serve(err.to_string()))
}

/// Sends `tracing` output to stderr (filtered by `RUST_LOG`; by default this crate's `info` and everything's `warn`), unless a
/// subscriber is already installed.
fn init_stderr_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,staged_mcp=info"));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_allowed_and_other_addresses_need_allow_remote() {
        let local: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let local6: SocketAddr = "[::1]:8080".parse().unwrap();
        let remote: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert!(check_bind_address(local, false).is_ok());
        assert!(check_bind_address(local6, false).is_ok());
        assert!(check_bind_address(remote, true).is_ok());
        let err = check_bind_address(remote, false).unwrap_err().to_string();
        assert_eq!(
            err,
            "0.0.0.0:8080 is not a loopback address; refusing to serve MCP on it (pass --allow-remote to allow it)"
        );
    }
}
