//! `McpProcess`: the real `staged mcp` over stdio, for tests that write raw frames to it and
//! read every line it answers.
//!
//! A thread reads stdout line by line; every line must be one JSON value. The server's own
//! notifications (`notifications/resources/list_changed`, sent whenever the shared stack
//! changes, at a moment no test controls) are checked to be JSON and kept apart, so `next`
//! and `finish` see the replies and the server's requests only; `next_notification` reads them. Waiting for a reply
//! has a long deadline that only guards against a hang (a missing reply fails the test
//! instead of blocking CI); no test asserts on time.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::{
    io::{BufRead, BufReader, Read, Write},
    path::Path,
    process::{Child, ChildStdin, Command, ExitStatus, Stdio},
    sync::mpsc,
    thread::JoinHandle,
    time::Duration,
};

use serde_json::{Value, json};

/// How long to wait for a line before calling the server hung.
const HANG: Duration = Duration::from_secs(120);

/// A running `staged --workspace DIR mcp`.
pub(crate) struct McpProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Result<Value, String>>,
    notifications: mpsc::Receiver<Result<Value, String>>,
    stderr: Option<JoinHandle<String>>,
}

/// How the process ended.
pub(crate) struct Finished {
    /// Lines written after the last one read with `next`.
    pub(crate) rest: Vec<Value>,
    pub(crate) status: ExitStatus,
    pub(crate) stderr: String,
}

impl McpProcess {
    /// Starts the server on the workspace `dir`.
    pub(crate) fn start(dir: &Path) -> McpProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_staged"))
            .args(["--workspace", dir.to_str().unwrap(), "mcp"])
            .current_dir(dir)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn staged mcp");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        let (notify_tx, notifications) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            loop {
                line.clear();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        let value = serde_json::from_slice::<Value>(&line).map_err(|err| {
                            format!(
                                "stdout line is not JSON ({err}): {}",
                                String::from_utf8_lossy(&line)
                            )
                        });
                        let notification = value.as_ref().is_ok_and(|frame| {
                            frame.get("id").is_none()
                                && frame["method"]
                                    .as_str()
                                    .is_some_and(|m| m.starts_with("notifications/"))
                        });
                        let sent = if notification {
                            notify_tx.send(value).map_err(drop)
                        } else {
                            tx.send(value).map_err(drop)
                        };
                        if sent.is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut stderr = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        McpProcess { stdin: child.stdin.take(), child, lines, notifications, stderr: Some(stderr) }
    }

    /// Starts the server and completes the `initialize` handshake (protocol 2025-11-25).
    pub(crate) fn initialized(dir: &Path) -> McpProcess {
        let mut server = McpProcess::start(dir);
        server.send_json(&json!({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}}
        }));
        let reply = server.next();
        assert_eq!(reply["id"], "init", "{reply}");
        assert_eq!(reply["result"]["serverInfo"]["name"], "staged", "{reply}");
        server.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    /// Writes `bytes` as they are (a frame must end with its own newline).
    pub(crate) fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).expect("write to staged mcp");
        stdin.flush().expect("flush");
    }

    /// Writes `value` as one frame.
    pub(crate) fn send_json(&mut self, value: &Value) {
        let mut frame = serde_json::to_vec(value).unwrap();
        frame.push(b'\n');
        self.send(&frame);
    }

    /// The next line the server wrote.
    #[track_caller]
    pub(crate) fn next(&mut self) -> Value {
        match self.lines.recv_timeout(HANG) {
            Ok(line) => line.unwrap_or_else(|err| panic!("{err}")),
            Err(err) => panic!("no reply from staged mcp ({err})"),
        }
    }

    /// The next notification the server wrote.
    #[track_caller]
    pub(crate) fn next_notification(&mut self) -> Value {
        match self.notifications.recv_timeout(HANG) {
            Ok(line) => line.unwrap_or_else(|err| panic!("{err}")),
            Err(err) => panic!("no notification from staged mcp ({err})"),
        }
    }

    /// The server's peak resident memory so far, in KiB (Linux `VmHWM`).
    pub(crate) fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|line| line.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// Closes stdin, reads everything the server still writes, and waits for it to exit.
    pub(crate) fn finish(mut self) -> Finished {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        loop {
            match self.lines.recv_timeout(HANG) {
                Ok(line) => rest.push(line.unwrap_or_else(|err| panic!("{err}"))),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(err) => panic!("staged mcp did not exit after stdin closed ({err})"),
            }
        }
        let status = self.child.wait().unwrap();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        Finished { rest, status, stderr }
    }
}

impl Drop for McpProcess {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
