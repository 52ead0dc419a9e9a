//! One running plugin: a child process that staged speaks MCP to over its stdin and stdout,
//! as rmcp's client. Its stderr is kept (the last lines, bounded in bytes) to explain a crash.
//!
//! Every wait is bounded by the plugin's timeout; a plugin that does not answer in time is
//! killed, so a hung plugin never holds a resolve or a tool call forever. The plugin runs in a
//! process group of its own, and killing it kills the whole group: a wrapper (`sh -c`, `npx`,
//! `uv run`) does not leave its child running, and writing, after staged said it stopped it.
//!
//! What the plugin writes on stdout passes through [`frame_stdout`] before rmcp reads it: a
//! message longer than [`MAX_FRAME_BYTES`], or a line that is not a JSON-RPC message, ends the
//! session at once with an error that says so (rmcp alone would drop it, and the call would
//! wait out its timeout).

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
        JsonObject, ServerJsonRpcMessage, Tool as McpTool,
    },
    service::{Peer, RunningService, ServiceError},
};
use serde::{Deserialize, de::IgnoredAny};
use tokio::{
    io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt},
    process::{Child, Command},
};

use crate::{PluginConfig, PluginError};

/// How many of the plugin's last stderr lines are kept.
const STDERR_LINES: usize = 20;

/// The longest stderr line kept, in bytes; the rest of a longer line is dropped. With
/// [`STDERR_LINES`], what is kept of a plugin's stderr stays under 100 KiB, whatever it writes
/// (a progress bar redrawn with `\r` forever, or megabytes without a line break).
const STDERR_LINE_BYTES: usize = 4096;

/// The environment variable naming the folder where a plugin keeps what it must remember
/// across restarts: the helpers record there each callback run by its idempotency key.
pub(crate) const STATE_ENV: &str = "STAGED_PLUGIN_STATE";

/// The folder of the plugins' own state inside the state folder.
pub(crate) const PLUGINS_STATE_DIR: &str = "plugins";

/// `<root>/.staged/plugins/<plugin>`: the plugin's state folder ([`STATE_ENV`]). It lives in
/// the workspace's state folder, so that it goes with the pending ids it records (a fresh
/// `.staged` numbers its previews from 0 again).
pub(crate) fn state_dir(root: &Path, plugin: &str) -> std::path::PathBuf {
    root.join(staged_workspace::STATE_DIR_NAME).join(PLUGINS_STATE_DIR).join(plugin)
}

/// The longest message read from a plugin's stdout, as rmcp's own limit and the MCP server's.
pub(crate) const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// How long a killed plugin's process group is given to die, so that nothing of it still runs
/// when staged reports that it was stopped.
const KILL_WAIT: Duration = Duration::from_secs(2);

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
    /// The plugin's process group: its pid, as it leads a group of its own.
    group: Option<rustix::process::Pid>,
    stderr: Arc<Mutex<StderrTail>>,
    /// The task reading stderr, awaited (briefly) to explain an exit with its last line.
    stderr_reader: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// How the plugin broke the framing of its stdout, once it did.
    violation: Arc<Mutex<Option<String>>>,
    /// The task passing the plugin's stdout on to rmcp.
    framer: tokio::task::JoinHandle<()>,
}

impl Drop for Process {
    /// A plugin never outlives staged's handle on it (a command that only resolved drops its
    /// plugins rather than shutting them down): its group is killed, and waited for, briefly
    /// and blocking, since nothing can be awaited here.
    fn drop(&mut self) {
        self.framer.abort();
        self.signal_group();
        let deadline = std::time::Instant::now() + KILL_WAIT;
        while !self.is_gone() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// The last lines a plugin wrote on stderr. `\n` and `\r` both end a line (a progress bar
/// redraws itself after `\r`), empty lines are not kept, and a line keeps its first
/// [`STDERR_LINE_BYTES`] bytes.
#[derive(Debug, Default)]
pub(crate) struct StderrTail {
    lines: VecDeque<String>,
    current: Vec<u8>,
    /// Whether bytes of the current line were dropped.
    cut: bool,
}

impl StderrTail {
    /// Takes in `chunk`; returns the lines it finished.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Vec<String> {
        let mut done = Vec::new();
        for part in chunk.split_inclusive(|b| *b == b'\n' || *b == b'\r') {
            let (body, ends) = match part.last() {
                Some(b'\n' | b'\r') => (&part[..part.len() - 1], true),
                _ => (part, false),
            };
            let room = STDERR_LINE_BYTES.saturating_sub(self.current.len());
            if body.len() > room {
                self.cut = true;
            }
            self.current.extend_from_slice(&body[..body.len().min(room)]);
            if ends && let Some(line) = self.end_line() {
                done.push(line);
            }
        }
        done
    }

    /// Ends the current line (at end of stream); returns it when it was not empty.
    pub(crate) fn end_line(&mut self) -> Option<String> {
        let mut line = String::from_utf8_lossy(&self.current).into_owned();
        if self.cut {
            // A cut may split a character: its lossy remains go, and the cut is marked.
            line = line.trim_end_matches('\u{fffd}').to_owned();
            line.push('…');
        }
        self.current.clear();
        self.cut = false;
        if line.trim().is_empty() {
            return None;
        }
        if self.lines.len() == STDERR_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(line.clone());
        Some(line)
    }

    /// The last line kept.
    pub(crate) fn last(&self) -> Option<&str> {
        self.lines.back().map(String::as_str)
    }

    /// The bytes kept, for tests: never more than 20 lines of 4 KiB and the line in progress.
    #[cfg(test)]
    fn kept_bytes(&self) -> usize {
        self.lines.iter().map(String::len).sum::<usize>() + self.current.len()
    }
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
            .env(STATE_ENV, state_dir(root, &config.name))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // A group of its own: a timeout or a shutdown kills the plugin and every process it
            // started (a terminal's Ctrl-C no longer reaches it; staged stops it instead).
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|source| PluginError::Spawn {
            plugin: plugin.clone(),
            command: config.command_line(),
            source,
        })?;
        let group = child
            .id()
            .and_then(|pid| i32::try_from(pid).ok())
            .filter(|pid| *pid > 1)
            .and_then(rustix::process::Pid::from_raw);
        let stderr = Arc::new(Mutex::new(StderrTail::default()));
        let mut stderr_reader = None;
        if let Some(pipe) = child.stderr.take() {
            let (tail, name) = (Arc::clone(&stderr), plugin.clone());
            stderr_reader = Some(tokio::spawn(read_stderr(pipe, tail, name)));
        }
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(PluginError::Protocol {
                plugin,
                what: "start-up".to_owned(),
                message: "its standard input and output could not be opened".to_owned(),
                after: String::new(),
            });
        };
        let violation = Arc::new(Mutex::new(None));
        let (framed, to_rmcp) = tokio::io::duplex(64 * 1024);
        let framer = tokio::spawn(frame_stdout(stdout, to_rmcp, Arc::clone(&violation)));
        let client_config = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("staged", env!("CARGO_PKG_VERSION")),
        );
        let process = Process {
            plugin,
            timeout: config.timeout,
            child: Mutex::new(child),
            group,
            stderr,
            stderr_reader: Mutex::new(stderr_reader),
            violation,
            framer,
        };
        let service = match tokio::time::timeout(
            config.timeout,
            client_config.serve((framed, stdin)),
        )
        .await
        {
            Ok(Ok(service)) => service,
            Ok(Err(err)) => {
                return Err(process.failure("the MCP handshake", &err.to_string(), false).await);
            }
            Err(_) => return Err(process.timed_out("the MCP handshake", false).await),
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
            Ok(Err(err)) => return Err(conn.service_error("`tools/list`", err, false).await),
            Err(_) => return Err(conn.process.timed_out("`tools/list`", false).await),
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
            Ok(Err(err)) => Err(self.service_error(&what, err, true).await),
            Err(_) => Err(self.process.timed_out(&what, true).await),
        }
    }

    /// Ends the session: closes the plugin's input (an MCP server exits then) and waits a
    /// moment for it, then kills its process group, whatever of it is left.
    pub(crate) async fn shutdown(&self) {
        if let Some(service) = self.service.lock().await.take() {
            let _ = service.cancel().await;
        }
        for _ in 0..20 {
            if self.has_exited() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        self.process.kill().await;
    }

    async fn service_error(&self, what: &str, err: ServiceError, call: bool) -> PluginError {
        if let Some(violation) = self.process.violation() {
            return self.process.broke(what, violation, call).await;
        }
        match err {
            ServiceError::McpError(data) => PluginError::Protocol {
                plugin: self.process.plugin.clone(),
                what: what.to_owned(),
                message: data.message.to_string(),
                after: String::new(),
            },
            ServiceError::UnexpectedResponse => PluginError::Protocol {
                plugin: self.process.plugin.clone(),
                what: what.to_owned(),
                message: "its answer is not a tool result".to_owned(),
                after: may_have_run(what, call),
            },
            other => self.process.failure(what, &other.to_string(), call).await,
        }
    }
}

/// `; <what> may have run, in part or in full` for a tool call that failed after it was sent
/// (a timeout, a crash, a broken answer): staged cannot know how far the plugin got, and a
/// retry must not assume it did nothing.
fn may_have_run(what: &str, call: bool) -> String {
    if call { format!("; {what} may have run, in part or in full") } else { String::new() }
}

impl Process {
    fn has_exited(&self) -> bool {
        !matches!(lock(&self.child).try_wait(), Ok(None))
    }

    fn violation(&self) -> Option<String> {
        lock(&self.violation).clone()
    }

    /// Sends SIGKILL to the plugin's process group (the plugin and every process it started
    /// that stayed in its group) and to the plugin itself.
    fn signal_group(&self) {
        if let Some(group) = self.group {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ = lock(&self.child).start_kill();
    }

    /// Whether the plugin has exited and no process of its group is left (`kill(-group, 0)`
    /// fails with ESRCH then).
    fn is_gone(&self) -> bool {
        self.has_exited()
            && self
                .group
                .is_none_or(|group| rustix::process::test_kill_process_group(group).is_err())
    }

    /// Kills the plugin's process group and waits (up to [`KILL_WAIT`]) until none of it is
    /// left, so that nothing of the plugin writes after this returns.
    async fn kill(&self) {
        self.signal_group();
        let deadline = tokio::time::Instant::now() + KILL_WAIT;
        while !self.is_gone() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The error for a plugin that broke the framing of its stdout; it is stopped.
    async fn broke(&self, what: &str, violation: String, call: bool) -> PluginError {
        self.kill().await;
        PluginError::Protocol {
            plugin: self.plugin.clone(),
            what: what.to_owned(),
            message: format!("{violation}; it was stopped"),
            after: may_have_run(what, call),
        }
    }

    /// The error for a session that broke: the process exited (say how, with its last
    /// stderr line), or it is still running and broke the protocol (it is then stopped).
    async fn failure(&self, what: &str, message: &str, call: bool) -> PluginError {
        if let Some(violation) = self.violation() {
            return self.broke(what, violation, call).await;
        }
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
        let stderr = lock(&self.stderr).last().map(|line| format!(": {line}")).unwrap_or_default();
        match status {
            Some(exit) => {
                // What it started may outlive it.
                self.kill().await;
                PluginError::Exited {
                    plugin: self.plugin.clone(),
                    status: exit.to_string(),
                    what: what.to_owned(),
                    stderr,
                    after: may_have_run(what, call),
                }
            }
            None => {
                self.kill().await;
                PluginError::Protocol {
                    plugin: self.plugin.clone(),
                    what: what.to_owned(),
                    message: format!("{message}; it was stopped"),
                    after: may_have_run(what, call),
                }
            }
        }
    }

    async fn timed_out(&self, what: &str, call: bool) -> PluginError {
        self.kill().await;
        PluginError::Timeout {
            plugin: self.plugin.clone(),
            what: what.to_owned(),
            ms: self.timeout.as_millis(),
            after: may_have_run(what, call),
        }
    }
}

/// Keeps the tail of the plugin's stderr (see [`StderrTail`]), reading it in chunks so that no
/// line, however long, is ever held whole.
async fn read_stderr(
    mut pipe: impl AsyncRead + Unpin,
    tail: Arc<Mutex<StderrTail>>,
    plugin: String,
) {
    let mut buf = vec![0u8; 8192];
    loop {
        let n = match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let done = lock(&tail).feed(&buf[..n]);
        for line in done {
            tracing::debug!(plugin = %plugin, "{line}");
        }
    }
    if let Some(line) = lock(&tail).end_line() {
        tracing::debug!(plugin = %plugin, "{line}");
    }
}

/// The first fields of a JSON-RPC message, checked without building the rest.
#[derive(Deserialize)]
struct Envelope {
    jsonrpc: String,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

/// Passes the plugin's stdout on to rmcp one message (line) at a time. A line longer than
/// [`MAX_FRAME_BYTES`], a line that is not JSON-RPC 2.0, or an answer that is not a valid
/// JSON-RPC response ends the stream at once, after recording why in `violation`: the call
/// waiting for that answer then fails with that reason, instead of waiting out its timeout.
async fn frame_stdout(
    mut out: impl AsyncRead + Unpin,
    mut to_rmcp: impl AsyncWrite + Unpin,
    violation: Arc<Mutex<Option<String>>>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    loop {
        let n = match out.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        for part in buf[..n].split_inclusive(|b| *b == b'\n') {
            if line.len() + part.len() > MAX_FRAME_BYTES + 1 {
                *lock(&violation) = Some(format!(
                    "it sent a message longer than {} MiB, the most staged reads of one message",
                    MAX_FRAME_BYTES >> 20
                ));
                return;
            }
            line.extend_from_slice(part);
            if line.last() != Some(&b'\n') {
                continue;
            }
            if let Err(why) = check_frame(&line) {
                *lock(&violation) = Some(why);
                return;
            }
            if to_rmcp.write_all(&line).await.is_err() {
                return;
            }
            line.clear();
        }
    }
}

/// Why `line` (one line of a plugin's stdout, with its `\n`) is not a message rmcp can take,
/// if it is not; blank lines pass (rmcp skips them).
fn check_frame(line: &[u8]) -> Result<(), String> {
    let body = line.strip_prefix(b"\xef\xbb\xbf".as_slice()).unwrap_or(line);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let garbage = || {
        let shown: String = String::from_utf8_lossy(&body[..body.len().min(60)])
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        format!(
            "it wrote something that is not a JSON-RPC message on its standard output (`{}`); a plugin writes only MCP messages there, and logs to stderr",
            shown.trim()
        )
    };
    let envelope: Envelope = serde_json::from_slice(body).map_err(|_| garbage())?;
    if envelope.jsonrpc != "2.0" {
        return Err(garbage());
    }
    if envelope.method.is_none()
        && let Err(err) = serde_json::from_slice::<ServerJsonRpcMessage>(body)
    {
        return Err(format!("its answer is not a valid JSON-RPC response ({err})"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_stderr_tail_is_bounded_and_takes_cr_as_a_line_break() {
        let mut tail = StderrTail::default();
        for i in 0..100_000 {
            tail.feed(format!("\r{i:>3}%|████      | {i}/100000 [00:01<00:00]").as_bytes());
        }
        assert!(tail.kept_bytes() < 20 * 200, "{}", tail.kept_bytes());
        assert_eq!(tail.last(), Some("99998%|████      | 99998/100000 [00:01<00:00]"));
        // A line without any break, megabytes long, keeps its first 4 KiB.
        for _ in 0..1000 {
            tail.feed(&[b'x'; 8192]);
        }
        assert!(tail.kept_bytes() <= 21 * STDERR_LINE_BYTES);
        tail.feed(b"\n\r\n\nlast words\r\n");
        assert_eq!(tail.last(), Some("last words"));
        let long = tail.lines.iter().rev().nth(1).unwrap();
        assert_eq!(long.len(), STDERR_LINE_BYTES + '…'.len_utf8());
        assert!(long.ends_with('…'));
    }

    #[test]
    fn frames_that_are_not_json_rpc_are_named() {
        assert!(check_frame(b"\n").is_ok());
        assert!(check_frame(br#"{"jsonrpc":"2.0","method":"notifications/x"}"#).is_ok());
        assert!(check_frame(br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#).is_ok());
        let err = check_frame(b"Starting the server...\n").unwrap_err();
        assert!(
            err.contains("not a JSON-RPC message") && err.contains("`Starting the server...`"),
            "{err}"
        );
        assert!(check_frame(br#"{"jsonrpc":"1.0","id":1,"result":{}}"#).is_err());
        let err = check_frame(br#"{"jsonrpc":"2.0","id":1}"#).unwrap_err();
        assert!(err.contains("not a valid JSON-RPC response"), "{err}");
    }
}
