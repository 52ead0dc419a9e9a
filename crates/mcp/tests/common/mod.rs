//! Shared harness: a temporary workspace, and an rmcp client connected in-process (over a
//! `tokio::io::duplex` pipe) to a `StagedServer` on it.
#![allow(dead_code, unreachable_pub)]

use std::{
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
};

use rmcp::{
    ClientHandler, ErrorData, RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
        ElicitRequestParams, ElicitResult, ElicitationAction, Implementation, ProtocolVersion,
    },
    service::{
        ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RunningService,
    },
};
use serde_json::{Value, json};
use staged_mcp::{Approval, StagedServer};
use staged_workspace::WorkspaceSession;

/// The exact resolve reminder.
pub const REMINDER: &str = staged_core::RESOLVE_REMINDER;

/// What the test client answers to an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Accept with `{"approve": true}`.
    Accept,
    /// Accept with `{"approve": false}`.
    AcceptNo,
    /// Accept with `{"approve": false, "reason": <reason>}`: a decline in the person's words.
    AcceptNoBecause(&'static str),
    /// Decline.
    Decline,
    /// Cancel.
    Cancel,
}

/// How the test client presents itself. The default is the latest protocol without
/// elicitation.
#[derive(Debug, Clone, Default)]
pub struct ClientSetup {
    /// Its protocol version.
    pub protocol: ProtocolVersion,
    /// Its elicitation answer; `None` declares no elicitation capability.
    pub answer: Option<Answer>,
    /// While the person decides, another process stages `ast_edit` with these arguments in
    /// this workspace.
    pub stage_while_asked: Option<(PathBuf, Value)>,
}

/// The test client: records every elicitation message it was shown, and counts the
/// `notifications/resources/list_changed` it got outside a `subscriptions/listen` stream.
#[derive(Debug, Clone)]
pub struct TestClient {
    setup: ClientSetup,
    pub asked: Arc<Mutex<Vec<String>>>,
    pub list_changed: Arc<AtomicUsize>,
}

impl ClientHandler for TestClient {
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.asked.lock().unwrap().push(message.clone());
        }
        if let Some((root, args)) = &self.setup.stage_while_asked {
            let other = WorkspaceSession::open(root).unwrap();
            let res = staged_core::Tool::execute(
                &other.ast_edit_tool(),
                args.clone(),
                &staged_core::CancelToken::new(),
            )
            .await
            .unwrap();
            assert!(!res.is_error, "{}", res.text_content());
        }
        let res = match self.setup.answer {
            Some(Answer::Accept) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": true}))
            }
            Some(Answer::AcceptNo) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": false}))
            }
            Some(Answer::AcceptNoBecause(reason)) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(json!({"approve": false, "reason": reason})),
            Some(Answer::Decline) => ElicitResult::new(ElicitationAction::Decline),
            Some(Answer::Cancel) | None => ElicitResult::new(ElicitationAction::Cancel),
        };
        Ok(res)
    }

    fn get_info(&self) -> ClientConfig {
        let caps = if self.setup.answer.is_some() {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(caps, Implementation::new("staged-mcp-tests", "0.0.0"))
            .with_protocol_version(self.setup.protocol.clone())
    }
}

/// A temporary workspace with files.
pub struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// A workspace holding `files` (`(relative path, contents)`).
    pub fn new(files: &[(&str, &str)]) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        for (path, contents) in files {
            write(dir.path(), path, contents);
        }
        Fixture { dir }
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// A file's contents.
    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.root().join(path)).unwrap()
    }

    /// A fresh session on the same workspace, as another process (the CLI) would open it.
    pub fn open_session(&self) -> WorkspaceSession {
        WorkspaceSession::open(self.root()).unwrap()
    }

    /// Starts a server on this workspace and connects a default client (no elicitation).
    pub async fn connect(&self, approve: Approval) -> Connection {
        self.connect_with(approve, ClientSetup::default()).await
    }

    /// Starts a server on this workspace and connects a client set up as `setup`.
    pub async fn connect_with(&self, approve: Approval, setup: ClientSetup) -> Connection {
        let server = StagedServer::new(self.open_session(), approve);
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        let server_task = tokio::spawn(async move {
            // A client without the `initialize` handshake (2026-07-28) is served while
            // `serve` waits for one; it then ends with "connection closed".
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let asked = Arc::new(Mutex::new(Vec::new()));
        let self_protocol = setup.protocol.clone();
        let modern = setup.protocol >= ProtocolVersion::V_2026_07_28;
        let list_changed = Arc::new(AtomicUsize::new(0));
        let test_client =
            TestClient { setup, asked: asked.clone(), list_changed: list_changed.clone() };
        let client = if modern {
            let lifecycle = ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            };
            test_client.serve_with_lifecycle(client_io, lifecycle).await.unwrap()
        } else {
            test_client.serve(client_io).await.unwrap()
        };
        assert_eq!(
            client.peer_info().map(|info| info.protocol_version.clone()),
            Some(self_protocol)
        );
        Connection { client, asked, list_changed, server_task }
    }
}

/// Writes `contents` to `root/path`, creating directories.
pub fn write(root: &Path, path: &str, contents: &str) -> PathBuf {
    let full = root.join(path);
    if let Some(parent) = full.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&full, contents).unwrap();
    full
}

/// A connected client and the server task behind it.
pub struct Connection {
    pub client: RunningService<RoleClient, TestClient>,
    pub asked: Arc<Mutex<Vec<String>>>,
    /// How many `notifications/resources/list_changed` reached the client's handler.
    pub list_changed: Arc<AtomicUsize>,
    server_task: tokio::task::JoinHandle<()>,
}

impl Connection {
    /// Calls `name` with `args` (a JSON object), and checks that the result tells the same
    /// thing in its text blocks and in its `structuredContent`.
    pub async fn call(&self, name: &str, args: Value) -> CallToolResult {
        let Value::Object(args) = args else { panic!("arguments must be an object") };
        let res = self
            .client
            .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
            .await
            .unwrap();
        check_structured(&res);
        res
    }

    /// How many `notifications/resources/list_changed` reached the client's handler so far.
    pub fn list_changed(&self) -> usize {
        self.list_changed.load(Ordering::SeqCst)
    }

    /// The elicitation messages shown so far.
    pub fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }

    /// Disconnects.
    pub async fn close(self) {
        let _ = self.client.cancel().await;
        self.server_task.abort();
    }
}

/// All text parts, in order.
pub fn texts(result: &CallToolResult) -> Vec<String> {
    result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.clone()).collect()
}

/// The text parts joined with newlines.
pub fn text(result: &CallToolResult) -> String {
    texts(result).join("\n")
}

/// Checks the `structuredContent` shape, `{"text", "isError", "details", "pending"}`: its
/// text is the text blocks joined with newlines and its error flag the result's.
#[track_caller]
pub fn check_structured(result: &CallToolResult) {
    let structured = result.structured_content.as_ref().expect("structuredContent");
    let keys: Vec<&str> = structured.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["details", "isError", "pending", "text"], "{structured}");
    assert_eq!(structured["text"], text(result), "{structured}");
    assert_eq!(structured["isError"], is_error(result), "{structured}");
    assert!(structured["details"].is_object(), "{structured}");
    let pending = &structured["pending"];
    assert!(pending.is_null() || (pending["id"].is_string() && pending["label"].is_string()));
}

/// The tool's details (`structuredContent.details`).
pub fn details(result: &CallToolResult) -> Value {
    result.structured_content.as_ref().expect("structuredContent")["details"].clone()
}

/// The head of the stack after the call (`structuredContent.pending`).
pub fn head(result: &CallToolResult) -> Value {
    result.structured_content.as_ref().expect("structuredContent")["pending"].clone()
}

/// Whether the result is flagged as an error.
pub fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// Whether the last text part is the exact reminder.
pub fn ends_with_reminder(result: &CallToolResult) -> bool {
    texts(result).last().map(String::as_str) == Some(REMINDER)
}

/// `ast_edit` arguments rewriting `oldApi(...)` to `newApi(...)` in `paths`.
pub fn rename_args(paths: &[&str]) -> Value {
    json!({"ops": [{"pat": "oldApi($$$ARGS)", "out": "newApi($$$ARGS)"}], "paths": paths})
}

/// A TypeScript file with two `oldApi` calls.
pub const SOURCE: &str = "oldApi(1);\nconst x = oldApi(2, 3);\n";

/// `SOURCE` after the rename.
pub const RENAMED: &str = "newApi(1);\nconst x = newApi(2, 3);\n";
