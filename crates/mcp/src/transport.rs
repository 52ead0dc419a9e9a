//! Serving over stdio: newline-delimited JSON-RPC through [`LineTransport`], which answers
//! bad frames itself. (Streamable HTTP is in `http.rs`.)

use rmcp::{ServiceExt, service::ServerInitializeError};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::{McpError, StagedServer, framing::LineTransport};

/// Serves `server` on this process's stdin and stdout until the client disconnects.
///
/// Logs go through `tracing`; stdout carries only the protocol.
pub async fn serve_stdio(server: StagedServer) -> Result<(), McpError> {
    let (reader, writer) = rmcp::transport::stdio_pipes();
    serve_lines(server, reader, writer).await
}

/// Serves `server` on any byte streams the way [`serve_stdio`] serves stdin and stdout: one
/// JSON-RPC message per line, each bad frame answered with a JSON-RPC error.
pub(crate) async fn serve_lines<R, W>(
    server: StagedServer,
    reader: R,
    writer: W,
) -> Result<(), McpError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    tracing::info!(root = %server.workspace().workspace().root().display(), "serving MCP on stdio");
    let transport = LineTransport::new(reader, writer);
    let running = match server.serve(transport).await {
        Ok(running) => running,
        // A 2026-07-28 client has no `initialize` handshake: rmcp answers its requests while
        // waiting for one, and reports the end of input as a closed connection. That is a
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
