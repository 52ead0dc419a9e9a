//! Who may use the page. Every request passes these gates, in order:
//!
//! 1. `Host` must name this server and a present `Origin` must be its origin (the HTTP MCP
//!    server's rules, [`staged_mcp::HostPolicy`]): else 403. This refuses DNS rebinding and
//!    other sites' pages.
//! 2. `GET /?token=T`: the printed token is exchanged for the session cookie (HttpOnly,
//!    SameSite=Strict, named for the port so two pages on one host do not clash), with a 303
//!    to `/` so the token leaves the address bar. A wrong token gets 401.
//! 3. Every other request needs the session cookie: else 401.
//! 4. A request that is not `GET` or `HEAD` needs the page's CSRF token in [`CSRF_HEADER`]
//!    (and the endpoints take JSON bodies only): else 403. Another site's form or script
//!    can neither read the token nor set the header without the server's consent, which it
//!    never gives (no CORS).
//!
//! Every response forbids framing, caching and referrers, and allows scripts and styles
//! from this server only.

use std::sync::Arc;

use axum::{
    body::Body,
    extract::{Request, State},
    http::{HeaderMap, HeaderValue, Method, StatusCode, header},
    middleware::Next,
    response::Response,
};

use crate::App;

/// The header every write carries the page's CSRF token in.
pub(crate) const CSRF_HEADER: &str = "x-staged-csrf";

/// The session cookie's name for a page on `port`.
pub(crate) fn cookie_name(port: u16) -> String {
    format!("staged_ui_{port}")
}

/// The refusal of a request without the session cookie.
pub(crate) const NO_SESSION_TEXT: &str = staged_mcp::PAGE_NO_SESSION_TEXT;
/// The refusal of a wrong token in the address.
pub(crate) const BAD_TOKEN_TEXT: &str = "Unauthorized: the token in the address is not this page's; open the address `staged ui` printed";
/// The refusal of a write without the page's CSRF token.
pub(crate) const NO_CSRF_TEXT: &str = "Forbidden: a change needs the page's CSRF token; use the buttons of the page `staged ui` serves";

pub(crate) async fn guard(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let mut res = check(&app, request, next).await;
    let headers = res.headers_mut();
    for (name, value) in [
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::CACHE_CONTROL, "no-store"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
        ),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    res
}

async fn check(app: &App, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).map(HeaderValue::as_bytes);
    let origin = headers.get(header::ORIGIN).map(HeaderValue::as_bytes);
    if let Err(text) = app.hosts.check(host, origin) {
        return refuse(StatusCode::FORBIDDEN, text);
    }
    if request.method() == Method::GET
        && request.uri().path() == "/"
        && let Some(token) = query_token(request.uri().query())
    {
        if !app.token.matches(token.as_bytes()) {
            return refuse(StatusCode::UNAUTHORIZED, BAD_TOKEN_TEXT);
        }
        let cookie = format!(
            "{}={}; Path=/; HttpOnly; SameSite=Strict",
            cookie_name(app.port),
            app.session.as_str()
        );
        let mut res = Response::new(Body::empty());
        *res.status_mut() = StatusCode::SEE_OTHER;
        res.headers_mut().insert(header::LOCATION, HeaderValue::from_static("/"));
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            res.headers_mut().insert(header::SET_COOKIE, value);
        }
        return res;
    }
    if !has_session(app, headers) {
        return refuse(StatusCode::UNAUTHORIZED, NO_SESSION_TEXT);
    }
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        let csrf = headers.get(CSRF_HEADER).map(HeaderValue::as_bytes);
        if !csrf.is_some_and(|value| app.csrf.matches(value)) {
            return refuse(StatusCode::FORBIDDEN, NO_CSRF_TEXT);
        }
    }
    next.run(request).await
}

/// The `token` parameter of a query string.
fn query_token(query: Option<&str>) -> Option<&str> {
    query?.split('&').find_map(|pair| pair.strip_prefix("token="))
}

/// Whether the request carries this page's session cookie.
fn has_session(app: &App, headers: &HeaderMap) -> bool {
    let name = cookie_name(app.port);
    headers.get_all(header::COOKIE).iter().any(|value| {
        value.as_bytes().split(|b| *b == b';').any(|pair| {
            let pair = pair.trim_ascii();
            pair.strip_prefix(name.as_bytes())
                .and_then(|rest| rest.strip_prefix(b"="))
                .is_some_and(|value| app.session.matches(value))
        })
    })
}

pub(crate) fn refuse(status: StatusCode, message: &'static str) -> Response {
    let mut res = Response::new(Body::from(message));
    *res.status_mut() = status;
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    res
}
