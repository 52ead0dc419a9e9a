//! Streamable HTTP at `http://ADDR/mcp`, behind the bearer token and the `Host`/`Origin`
//! checks of [`auth`](crate::auth).
//!
//! Every request passes three gates before rmcp sees it, in this order: a `Host` that does not
//! name this server gets 403, a present `Origin` that is not this server's origin gets 403,
//! and a missing or wrong `Authorization: Bearer <token>` gets 401. Without a token in the
//! options, one is generated at start and written to `<root>/.staged/mcp-<port>.token`,
//! readable only by the user (mode 0600), and the file is removed when the server stops.

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::Arc,
};

use axum::{
    body::Body,
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header},
    middleware::{self, Next},
    response::Response,
};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use staged_fs::{DirHandle, NewFileMode};
use staged_journal::ConfinedRoot;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::{BearerToken, HttpOptions, McpError, StagedServer, auth::HostPolicy};

/// The HTTP path the MCP endpoint is mounted at: `http://ADDR/mcp`.
pub const HTTP_PATH: &str = "/mcp";

/// A bound HTTP endpoint, ready to serve.
#[derive(Debug)]
pub struct HttpEndpoint {
    listener: TcpListener,
    addr: SocketAddr,
    gate: Arc<Gate>,
    token_file: Option<TokenFile>,
}

/// The generated token's file: its folder's handle, its name there, and its path for
/// messages.
#[derive(Debug)]
struct TokenFile {
    dir: DirHandle,
    name: String,
    path: PathBuf,
}

/// What every request is checked against.
#[derive(Debug)]
struct Gate {
    token: BearerToken,
    hosts: HostPolicy,
}

impl HttpEndpoint {
    /// Checks `options` ([`HttpOptions::check`]), binds the listener and settles the token:
    /// the given one, or a generated one written to `mcp-<port>.token` in `server`'s
    /// workspace state directory (`.staged/`).
    pub async fn bind(
        options: HttpOptions,
        server: &StagedServer,
    ) -> Result<HttpEndpoint, McpError> {
        options.check()?;
        let listener = TcpListener::bind(options.addr)
            .await
            .map_err(|source| McpError::Bind { addr: options.addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| McpError::Bind { addr: options.addr, source })?;
        let (token, token_file) = match options.token {
            Some(token) => (token, None),
            None => {
                let token = BearerToken::generate()?;
                let file = write_token_file(server.workspace().workspace(), addr.port(), &token)?;
                (token, Some(file))
            }
        };
        let hosts = HostPolicy {
            port: addr.port(),
            remote: options.allow_remote,
            names: options.allowed_hosts.iter().map(|name| name.to_ascii_lowercase()).collect(),
        };
        Ok(HttpEndpoint { listener, addr, gate: Arc::new(Gate { token, hosts }), token_file })
    }

    /// The address the listener is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint's URL, `http://ADDR/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{HTTP_PATH}", self.addr)
    }

    /// The file holding the generated token, or `None` when the token was given.
    pub fn token_file(&self) -> Option<&Path> {
        self.token_file.as_ref().map(|file| file.path.as_path())
    }

    /// Serves `server` until `shutdown` fires, then removes the generated token file.
    pub async fn serve(
        self,
        server: StagedServer,
        shutdown: CancellationToken,
    ) -> Result<(), McpError> {
        // Hosts are checked by the gate in front, which also knows IP literals and
        // `--allow-host` names.
        let config = StreamableHttpServerConfig::default()
            .with_cancellation_token(shutdown.child_token())
            .disable_allowed_hosts();
        let service: StreamableHttpService<StagedServer, LocalSessionManager> =
            StreamableHttpService::new(
                move || Ok(server.clone()),
                Arc::new(LocalSessionManager::default()),
                config,
            );
        let router = axum::Router::new()
            .nest_service(HTTP_PATH, service)
            .layer(middleware::from_fn_with_state(self.gate.clone(), guard));
        tracing::debug!("serving MCP on {}", self.url());
        let res = axum::serve(self.listener, router)
            .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
            .await
            .map_err(|err| McpError::Serve(err.to_string()));
        if let Some(file) = &self.token_file {
            let _ = file.dir.remove_file(&file.name);
        }
        res
    }
}

/// The three gates: `Host`, `Origin`, then the token.
async fn guard(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).map(HeaderValue::as_bytes);
    let origin = headers.get(header::ORIGIN).map(HeaderValue::as_bytes);
    if let Err(text) = gate.hosts.check(host, origin) {
        return refuse(StatusCode::FORBIDDEN, text);
    }
    let presented = headers.get(header::AUTHORIZATION).map(HeaderValue::as_bytes);
    if !presented.is_some_and(|value| gate.token.accepts(value)) {
        let mut res = refuse(
            StatusCode::UNAUTHORIZED,
            "Unauthorized: send the header `Authorization: Bearer <token>` (staged mcp printed where the token is)",
        );
        res.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"staged\""));
        return res;
    }
    next.run(request).await
}

fn refuse(status: StatusCode, message: &'static str) -> Response {
    let mut res = Response::new(Body::from(message));
    *res.status_mut() = status;
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    res
}

/// Writes `token` to `.staged/mcp-<port>.token`, readable and writable only by the user,
/// through the state folder's handle.
///
/// An old file of that name is removed first, and the new one is created exclusively, so a
/// symlink planted in its place is never followed.
fn write_token_file(
    workspace: &ConfinedRoot,
    port: u16,
    token: &BearerToken,
) -> Result<TokenFile, McpError> {
    let name = format!("mcp-{port}.token");
    let path = workspace.state_dir().join(&name);
    let fail = |source| McpError::TokenFile { path: path.clone(), source };
    let dir = workspace
        .state(true)
        .map_err(|err| fail(std::io::Error::other(err.to_string())))?
        .ok_or_else(|| fail(std::io::Error::other("the state folder could not be created")))?;
    match dir.remove_file(&name) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(fail(err)),
    }
    dir.create_new(&name, format!("{}\n", token.as_str()).as_bytes(), &NewFileMode::Private)
        .map_err(fail)?;
    Ok(TokenFile { dir, name, path })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_token_file_is_private_and_replaces_a_planted_symlink() {
        use std::os::unix::fs::{PermissionsExt, symlink};

        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::fs::create_dir(dir.path().join(".staged")).unwrap();
        symlink(&victim, dir.path().join(".staged/mcp-8765.token")).unwrap();
        let token = BearerToken::parse("0123456789abcdef").unwrap();
        let workspace = ConfinedRoot::new(dir.path()).unwrap();
        let path = write_token_file(&workspace, 8765, &token).unwrap().path;
        assert_eq!(path, workspace.root().join(".staged/mcp-8765.token"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "0123456789abcdef\n");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(!std::fs::symlink_metadata(&path).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    }
}
