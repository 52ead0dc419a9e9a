//! `staged ui`: the review page of a staged workspace, served by the binary itself on
//! loopback.
//!
//! The page lists the pending previews newest first, shows each one's files and diff
//! (highlighted on the server from the syntax trees of staged's tree-sitter grammars,
//! `syntax.rs`, else by a line lexer, `highlight.rs`; hunks numbered as `staged show --hunks`
//! numbers them, `diff.rs`), applies or discards the newest preview whole, per file or per hunk with a
//! reason, shows each agent session's net change (`sessions.rs`) with keep and revert per file
//! or per hunk through the code of `staged session keep|revert`, and shows the resolve log
//! with each entry's diff and undo/redo. Everything goes
//! through the workspace's [`staged_core::Session`], as the CLI's `resolve`, `undo` and `redo`
//! do, with the front end [`staged_core::FrontEnd::Ui`]: a person's.
//!
//! Who may use it (`guard.rs`): the server binds loopback only; the address it prints carries a
//! random token, exchanged on first load for an HttpOnly, SameSite=Strict cookie (and a
//! redirect, so the token leaves the address bar); `Host` and `Origin` are checked by the
//! rules of the HTTP MCP server ([`staged_mcp::HostPolicy`]); and every write carries the
//! page's CSRF token in a header, which no other site's page can read or send.
//!
//! While it serves, its port is recorded in `.staged/ui.json` ([`staged_mcp::PageRecord`]), so
//! the approval question of `staged mcp --approve human` links to the preview on the page.
//!
//! The page's HTML, script and style are embedded (`assets/`); nothing is fetched from the
//! network. This crate prints nothing and reads no environment: the `staged` CLI does.
//!
//! Library API: `UiServer`, whose `bind` and `serve` fail with a `UiError`.

#![deny(missing_docs)]

mod api;
mod diff;
mod guard;
mod highlight;
mod sessions;
mod syntax;

use std::{net::SocketAddr, sync::Arc};

use staged_mcp::{BearerToken, HostPolicy};
use staged_workspace::WorkspaceSession;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// What can keep the page from being served.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    /// The address is not a loopback address.
    #[error(
        "staged ui serves on loopback only (127.0.0.1 or [::1]), not {0}: the page can apply and undo changes"
    )]
    NotLoopback(SocketAddr),
    /// The listener could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// No random bytes for the tokens.
    #[error("no random token: {0}")]
    Random(String),
    /// Serving stopped on an error.
    #[error("the review page stopped: {0}")]
    Serve(String),
}

/// The secrets and rules every request is checked against, and the workspace.
#[derive(Debug)]
struct App {
    ws: WorkspaceSession,
    /// The token in the printed address.
    token: BearerToken,
    /// The cookie's value, given for the token.
    session: BearerToken,
    /// What every write must carry in [`guard::CSRF_HEADER`].
    csrf: BearerToken,
    hosts: HostPolicy,
    port: u16,
    /// The sessions list, read afresh only when something changed.
    sessions: sessions::SessionsCache,
}

/// A bound review page, ready to serve.
#[derive(Debug)]
pub struct UiServer {
    listener: TcpListener,
    addr: SocketAddr,
    app: Arc<App>,
    /// The page's record in the state folder, removed when serving ends.
    _record: Option<staged_mcp::PageRecord>,
}

fn random() -> Result<BearerToken, UiError> {
    BearerToken::generate().map_err(|err| UiError::Random(err.to_string()))
}

impl UiServer {
    /// Binds `addr` (loopback only; port 0 picks a free one) and draws the tokens.
    pub async fn bind(ws: WorkspaceSession, addr: SocketAddr) -> Result<UiServer, UiError> {
        if !addr.ip().is_loopback() {
            return Err(UiError::NotLoopback(addr));
        }
        let listener =
            TcpListener::bind(addr).await.map_err(|source| UiError::Bind { addr, source })?;
        let addr = listener.local_addr().map_err(|source| UiError::Bind { addr, source })?;
        let app = App {
            ws,
            token: random()?,
            session: random()?,
            csrf: random()?,
            hosts: HostPolicy::loopback(addr.port()),
            port: addr.port(),
            sessions: sessions::SessionsCache::default(),
        };
        // From here until serving ends, the page is found by the approval question of
        // `--approve human` (`staged_mcp::running_page`); without the record it only goes
        // unlinked.
        let state_dir = app.ws.workspace().state_dir();
        let record = staged_mcp::PageRecord::write(&state_dir, addr.port())
            .map_err(|err| {
                tracing::warn!(%err, "could not record the page in {}", state_dir.display());
            })
            .ok();
        Ok(UiServer { listener, addr, app: Arc::new(app), _record: record })
    }

    /// The address the listener is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The address to open: `http://ADDR/?token=TOKEN`.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr, self.app.token.as_str())
    }

    /// Serves the page until `shutdown` fires.
    pub async fn serve(self, shutdown: CancellationToken) -> Result<(), UiError> {
        let router = api::router(Arc::clone(&self.app))
            .layer(axum::middleware::from_fn_with_state(Arc::clone(&self.app), guard::guard));
        tracing::debug!("serving the review page on {}", self.addr);
        axum::serve(self.listener, router)
            .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
            .await
            .map_err(|err| UiError::Serve(err.to_string()))
    }
}
