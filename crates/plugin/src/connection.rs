//! One running plugin: a child process that staged speaks MCP to over its stdin and stdout,
//! as rmcp's client. Its stderr is kept (the last lines) to explain a crash.
//!
//! Every wait is bounded by the plugin's timeout; a plugin that does not answer in time is
//! killed, so a hung plugin never holds a resolve or a tool call forever.

use std::{
    collections::VecDeque,
    path::Path,
    process::Stdio,
    sync::{Arc, Mutex},
    time::Duration,
};

use rmcp::{
    RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
        JsonObject, Tool as McpTool,
    },
    service::{Peer, RunningService, ServiceError},
};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};

use crate::{PluginConfig, PluginError};

/// How many of the plugin's last stderr lines are kept.
const STDERR_LINES: usize = 20;

/// A started plugin and its MCP session.
pub(crate) struct Connection {
    process: Process,
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, ClientConfig>>>,
    /// Every tool the plugin listed at start-up, callbacks included.
    pub(crate) tools: Vec<McpTool>,
}

/// The plugin's process, and what it said on stderr.
struct Process {
    plugin: String,
    timeout: Duration,
    child: Mutex<Child>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// The task reading stderr, awaited (briefly) to explain an exit with its last line.
    stderr_reader: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").field("plugin", &self.process.plugin).finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Connection {
    /// Starts `config`'s command in `root`, performs the MCP handshake and lists its tools,
    /// each within the plugin's timeout.
    pub(crate) async fn start(
        config: &PluginConfig,
        root: &Path,
    ) -> Result<Connection, PluginError> {
        let plugin = config.name.clone();
        let mut command = Command::new(&config.command[0]);
        command
            .args(&config.command[1..])
            .current_dir(root)
            .envs(&config.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|source| PluginError::Spawn {
            plugin: plugin.clone(),
            command: config.command_line(),
            source,
        })?;
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let mut stderr_reader = None;
        if let Some(pipe) = child.stderr.take() {
            let (tail, name) = (Arc::clone(&stderr), plugin.clone());
            stderr_reader = Some(tokio::spawn(async move {
                let mut lines = BufReader::new(pipe).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::debug!(plugin = %name, "{line}");
                    let mut tail = lock(&tail);
                    if tail.len() == STDERR_LINES {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            }));
        }
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(PluginError::Protocol {
                plugin,
                what: "start-up".to_owned(),
                message: "its standard input and output could not be opened".to_owned(),
            });
        };
        let client_config = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("staged", env!("CARGO_PKG_VERSION")),
        );
        let process = Process {
            plugin,
            timeout: config.timeout,
            child: Mutex::new(child),
            stderr,
            stderr_reader: Mutex::new(stderr_reader),
        };
        let service = match tokio::time::timeout(
            config.timeout,
            client_config.serve((stdout, stdin)),
        )
        .await
        {
            Ok(Ok(service)) => service,
            Ok(Err(err)) => {
                return Err(process.failure("the MCP handshake", &err.to_string()).await);
            }
            Err(_) => return Err(process.timed_out("the MCP handshake")),
        };
        let peer = service.peer().clone();
        let mut conn = Connection {
            process,
            peer,
            service: tokio::sync::Mutex::new(Some(service)),
            tools: Vec::new(),
        };
        conn.tools = match tokio::time::timeout(config.timeout, conn.peer.list_all_tools()).await {
            Ok(Ok(tools)) => tools,
            Ok(Err(err)) => return Err(conn.service_error("`tools/list`", err).await),
            Err(_) => return Err(conn.process.timed_out("`tools/list`")),
        };
        Ok(conn)
    }

    /// Whether the process has ended.
    pub(crate) fn has_exited(&self) -> bool {
        self.process.has_exited()
    }

    /// Whether calls can still go through: the process runs and the MCP session's task is
    /// alive (it dies with the runtime that started it, e.g. one command's `block_on`).
    pub(crate) fn is_live(&self) -> bool {
        !self.has_exited() && !self.peer.is_transport_closed()
    }

    /// Calls the plugin's tool `name` with `args`, within the plugin's timeout.
    pub(crate) async fn call(
        &self,
        name: &str,
        args: JsonObject,
    ) -> Result<CallToolResult, PluginError> {
        let what = format!("`{name}`");
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(args);
        match tokio::time::timeout(self.process.timeout, self.peer.call_tool(params)).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(err)) => Err(self.service_error(&what, err).await),
            Err(_) => Err(self.process.timed_out(&what)),
        }
    }

    /// Ends the session: closes the plugin's input (an MCP server exits then) and waits a
    /// moment for it, then kills it.
    pub(crate) async fn shutdown(&self) {
        if let Some(service) = self.service.lock().await.take() {
            let _ = service.cancel().await;
        }
        for _ in 0..20 {
            if self.has_exited() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let _ = lock(&self.process.child).start_kill();
    }

    async fn service_error(&self, what: &str, err: ServiceError) -> PluginError {
        match err {
            ServiceError::McpError(data) => PluginError::Protocol {
                plugin: self.process.plugin.clone(),
                what: what.to_owned(),
                message: data.message.to_string(),
            },
            ServiceError::UnexpectedResponse => PluginError::Protocol {
                plugin: self.process.plugin.clone(),
                what: what.to_owned(),
                message: "its answer is not a tool result".to_owned(),
            },
            other => self.process.failure(what, &other.to_string()).await,
        }
    }
}

impl Process {
    fn has_exited(&self) -> bool {
        !matches!(lock(&self.child).try_wait(), Ok(None))
    }

    /// The error for a session that broke: the process exited (say how, with its last
    /// stderr line), or it is still running and broke the protocol (it is then stopped).
    async fn failure(&self, what: &str, message: &str) -> PluginError {
        // The process may be a moment behind its closed pipe.
        let mut status = None;
        for _ in 0..20 {
            if let Ok(Some(exit)) = lock(&self.child).try_wait() {
                status = Some(exit);
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if status.is_some() {
            // Its last words may still be in the pipe.
            let reader = lock(&self.stderr_reader).take();
            if let Some(reader) = reader {
                let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
            }
        }
        let stderr = lock(&self.stderr).back().map(|line| format!(": {line}")).unwrap_or_default();
        match status {
            Some(exit) => PluginError::Exited {
                plugin: self.plugin.clone(),
                status: exit.to_string(),
                what: what.to_owned(),
                stderr,
            },
            None => {
                let _ = lock(&self.child).start_kill();
                PluginError::Protocol {
                    plugin: self.plugin.clone(),
                    what: what.to_owned(),
                    message: format!("{message}; it was stopped"),
                }
            }
        }
    }

    fn timed_out(&self, what: &str) -> PluginError {
        let _ = lock(&self.child).start_kill();
        PluginError::Timeout {
            plugin: self.plugin.clone(),
            what: what.to_owned(),
            ms: self.timeout.as_millis(),
        }
    }
}
