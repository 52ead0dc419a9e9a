//! Test support for the agent runtime: [`MockModel`], a model server on 127.0.0.1 for each wire
//! format (OpenAI Responses, OpenAI Chat Completions, Anthropic Messages). It serves scripted
//! replies as SSE and records every request. A test that reads the recorded requests
//! ([`MockModel::requests`]) has each of them checked against the protocol invariants a provider
//! enforces (each tool call has exactly one result and each result has its call), and fails on
//! the first that breaks one; a test that never reads them checks nothing.
//!
//! The server runs on its own thread and runtime, so both async tests and tests that spawn the
//! real `staged` binary can use it.

mod invariants;
mod sse;

use std::{
    collections::{BTreeMap, VecDeque},
    sync::{Arc, Condvar, Mutex, MutexGuard},
    thread::JoinHandle,
    time::{Duration, Instant},
};

use axum::{
    Router,
    body::{Body, Bytes},
    extract::State,
    http::{HeaderMap, Uri},
    response::Response,
};
use serde_json::Value;

pub(crate) use crate::invariants::check_request;

use staged_protocol::WireFormat;

/// What the mock knows of each wire format, written here from the providers' documentation
/// rather than taken from the code under test.
pub trait MockWire {
    /// The `wire` value of a `staged.toml` provider table.
    fn toml_name(self) -> &'static str;
    /// The path the mock serves it at, under its base URL.
    fn mock_path(self) -> &'static str;
    /// The `tool_choice` a forced `resolve` has on this wire.
    fn forced_resolve(self) -> Value;
}

impl MockWire for WireFormat {
    fn toml_name(self) -> &'static str {
        match self {
            WireFormat::OpenaiResponses => "openai-responses",
            WireFormat::OpenaiChat => "openai-chat",
            WireFormat::AnthropicMessages => "anthropic-messages",
        }
    }

    fn mock_path(self) -> &'static str {
        match self {
            WireFormat::OpenaiResponses => "/v1/responses",
            WireFormat::OpenaiChat => "/v1/chat/completions",
            WireFormat::AnthropicMessages => "/v1/messages",
        }
    }

    fn forced_resolve(self) -> Value {
        match self {
            WireFormat::OpenaiResponses => {
                serde_json::json!({"type": "function", "name": "resolve"})
            }
            WireFormat::OpenaiChat => {
                serde_json::json!({"type": "function", "function": {"name": "resolve"}})
            }
            WireFormat::AnthropicMessages => serde_json::json!({"type": "tool", "name": "resolve"}),
        }
    }
}

/// One scripted model turn: thinking blocks (text and signature), text, then tool calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Turn {
    /// `(thinking, signature)` blocks (Anthropic thinking, Responses reasoning items).
    pub thinking: Vec<(String, String)>,
    /// The visible text.
    pub text: Option<String>,
    /// `(call id, tool name, arguments)`.
    pub calls: Vec<(String, String, Value)>,
}

impl Turn {
    /// A turn that only says `text`.
    pub fn text(text: &str) -> Self {
        Self { text: Some(text.to_owned()), ..Self::default() }
    }

    /// A turn that calls one tool.
    pub fn call(id: &str, name: &str, args: Value) -> Self {
        Self::default().and_call(id, name, args)
    }

    /// A turn that calls `resolve` with `action` and `reason`.
    pub fn resolve(id: &str, action: &str, reason: &str) -> Self {
        Self::call(id, "resolve", serde_json::json!({"action": action, "reason": reason}))
    }

    /// The same turn with one more call.
    #[must_use]
    pub fn and_call(mut self, id: &str, name: &str, args: Value) -> Self {
        self.calls.push((id.to_owned(), name.to_owned(), args));
        self
    }

    /// The same turn opening with a thinking block.
    #[must_use]
    pub fn with_thinking(mut self, thinking: &str, signature: &str) -> Self {
        self.thinking.push((thinking.to_owned(), signature.to_owned()));
        self
    }
}

/// What the mock answers to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A streamed turn.
    Turn(Turn),
    /// An HTTP error: status, headers, body.
    Status(u16, Vec<(String, String)>, String),
    /// Headers and the stream's first event, then silence until the client gives up.
    Stall,
}

impl From<Turn> for Reply {
    fn from(turn: Turn) -> Self {
        Reply::Turn(turn)
    }
}

/// One recorded request.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The request path.
    pub path: String,
    /// Headers, lower-case names.
    pub headers: BTreeMap<String, String>,
    /// The JSON body.
    pub body: Value,
}

impl Recorded {
    /// The `tool_choice` field, if sent.
    pub fn tool_choice(&self) -> Option<&Value> {
        self.body.get("tool_choice")
    }
}

struct Shared {
    wire: WireFormat,
    script: VecDeque<Reply>,
    /// Served once the script is used up; `None` answers 418.
    forever: Option<Reply>,
    /// Whether requests are kept (a benchmark serving forever keeps none).
    record: bool,
    requests: Vec<Recorded>,
}

struct Inner {
    shared: Mutex<Shared>,
    arrived: Condvar,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A mock model server on 127.0.0.1. Dropping it stops the server.
pub struct MockModel {
    base_url: String,
    inner: Arc<Inner>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for MockModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockModel").field("base_url", &self.base_url).finish_non_exhaustive()
    }
}

impl MockModel {
    /// Starts a server speaking `wire`, with `script` as its replies, in order. A request past
    /// the end of the script gets HTTP 418 `mock script exhausted`.
    ///
    /// # Panics
    /// When no loopback port can be bound.
    pub fn start(wire: WireFormat, script: Vec<Reply>) -> Self {
        Self::spawn(Shared {
            wire,
            script: script.into(),
            forever: None,
            record: true,
            requests: Vec::new(),
        })
    }

    /// Starts a server that answers every request with `reply` and records nothing: for
    /// benchmarks.
    pub fn serve_forever(wire: WireFormat, reply: Reply) -> Self {
        Self::spawn(Shared {
            wire,
            script: VecDeque::new(),
            forever: Some(reply),
            record: false,
            requests: Vec::new(),
        })
    }

    #[allow(clippy::expect_used)]
    fn spawn(shared: Shared) -> Self {
        let inner = Arc::new(Inner { shared: Mutex::new(shared), arrived: Condvar::new() });
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener.set_nonblocking(true).expect("nonblocking listener");
        let base_url = format!("http://{}/v1", listener.local_addr().expect("local addr"));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = Arc::clone(&inner);
        let thread = std::thread::spawn(move || {
            let Ok(runtime) =
                tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()
            else {
                return;
            };
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else { return };
                let app = Router::new().fallback(handle).with_state(state);
                tokio::select! {
                    _ = axum::serve(listener, app) => {}
                    _ = stopped => {}
                }
            });
            runtime.shutdown_background();
        });
        Self { base_url, inner, stop: Some(stop), thread: Some(thread) }
    }

    /// The base URL, e.g. `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Appends replies to the script.
    pub fn push(&self, replies: impl IntoIterator<Item = Reply>) {
        self.inner.lock().script.extend(replies);
    }

    /// Every request so far, after checking each against the wire format's invariants.
    ///
    /// # Panics
    /// When a request broke an invariant (a call without its result, a result without its
    /// call, ...): the message names the request and the problem.
    pub fn requests(&self) -> Vec<Recorded> {
        let shared = self.inner.lock();
        for (idx, request) in shared.requests.iter().enumerate() {
            let problems = check_request(shared.wire, &request.body);
            assert!(
                problems.is_empty(),
                "request {idx} breaks the {:?} protocol: {problems:#?}\n{:#}",
                shared.wire,
                request.body
            );
        }
        shared.requests.clone()
    }

    /// How many replies of the script are left.
    pub fn remaining(&self) -> usize {
        self.inner.lock().script.len()
    }

    /// Waits until at least `n` requests arrived, or `timeout` passed; returns the count.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> usize {
        let deadline = Instant::now() + timeout;
        let mut shared = self.inner.lock();
        while shared.requests.len() < n {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            shared = match self.inner.arrived.wait_timeout(shared, deadline - now) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        shared.requests.len()
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn handle(
    State(inner): State<Arc<Inner>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    let headers = headers
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or_default().to_owned()))
        .collect();
    let (wire, reply) = {
        let mut shared = inner.lock();
        if shared.record {
            shared.requests.push(Recorded { path: uri.path().to_owned(), headers, body });
        }
        inner.arrived.notify_all();
        let reply = shared.script.pop_front().or_else(|| shared.forever.clone());
        (shared.wire, reply)
    };
    let sse = |body: Body| {
        Response::builder()
            .status(200)
            .header("content-type", "text/event-stream")
            .header("cache-control", "no-cache")
            .body(body)
            .unwrap_or_default()
    };
    match reply {
        None => status(418, &[], "mock script exhausted".to_owned()),
        Some(Reply::Status(code, headers, body)) => status(code, &headers, body),
        Some(Reply::Turn(turn)) => sse(Body::from(sse::render(wire, &turn))),
        Some(Reply::Stall) => {
            let first = sse::first_event(wire);
            let stream = futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from(first))])
                .chain(futures::stream::pending());
            sse(Body::from_stream(stream))
        }
    }
}

use futures::StreamExt as _;

fn status(code: u16, headers: &[(String, String)], body: String) -> Response {
    let mut builder = Response::builder().status(code).header("content-type", "application/json");
    for (name, value) in headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder.body(Body::from(body)).unwrap_or_default()
}
