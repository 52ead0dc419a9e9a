//! `staged doctor`'s checks shared by the clients: the hook commands' binaries, the MCP
//! server's answer, an older install's commands.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use serde_json::Value;

use crate::event::{Client, Mode};

use super::{
    FailSafe, Ours, claude_code::doctor_claude, codex::doctor_codex, cursor, gemini_cli, is_ours,
    opencode, parse_ours, qwen_code,
};

/// One line of `staged doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What was checked.
    pub what: String,
    /// `Ok` or why not.
    pub result: Result<(), String>,
    /// Whether a failure is only a warning: the hooks work, but not everywhere (headless runs).
    pub warning: bool,
}

impl Check {
    pub(crate) fn new(what: impl Into<String>, result: Result<(), String>) -> Check {
        Check { what: what.into(), result, warning: false }
    }

    pub(crate) fn warn(what: impl Into<String>, result: Result<(), String>) -> Check {
        Check { what: what.into(), result, warning: true }
    }
}

/// Where the clients keep their own state, for the checks that read it.
#[derive(Debug, Clone, Default)]
pub struct ClientHomes {
    /// Codex's home (`CODEX_HOME`, else `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// Claude Code's global config file (`$CLAUDE_CONFIG_DIR/.claude.json`, else
    /// `~/.claude.json`), where it records the folders a person trusted.
    pub claude_config: Option<PathBuf>,
    /// Qwen Code's home (`QWEN_HOME`, else `~/.qwen`).
    pub qwen_home: Option<PathBuf>,
    /// `QWEN_CODE_MCP_APPROVALS_PATH`: Qwen Code's approvals file, when set.
    pub qwen_approvals: Option<PathBuf>,
    /// Gemini CLI's `.gemini` folder in its home (`$GEMINI_CLI_HOME/.gemini`, else
    /// `~/.gemini`), whose `settings.json` may set its approval mode.
    pub gemini_home: Option<PathBuf>,
    /// Copilot CLI's home (`COPILOT_HOME`, else `~/.copilot`), whose `config.json` records
    /// the folders a person trusted.
    pub copilot_home: Option<PathBuf>,
    /// Cline's MCP settings (`CLINE_MCP_SETTINGS_PATH`, else
    /// `$CLINE_DATA_DIR/settings/cline_mcp_settings.json`, else under `~/.cline/data`).
    pub cline_mcp_settings: Option<PathBuf>,
    /// The `staged` binary a shell call is wrapped in (`staged shell-run`).
    pub staged: Option<PathBuf>,
}

/// What `staged doctor` checks for `client`: `None` when nothing of staged is installed for it.
pub fn doctor(client: Client, root: &Path, homes: &ClientHomes) -> Option<Vec<Check>> {
    match client {
        Client::ClaudeCode => doctor_claude(root, homes.claude_config.as_deref()),
        Client::Codex => doctor_codex(homes.codex_home.as_deref()?, root),
        Client::QwenCode => {
            qwen_code::doctor(root, homes.qwen_home.as_deref(), homes.qwen_approvals.as_deref())
        }
        Client::GeminiCli => gemini_cli::doctor(root, homes.gemini_home.as_deref()),
        Client::OpenCode => opencode::doctor(root),
        Client::Cursor => cursor::doctor(root),
        Client::Copilot => crate::clients::copilot::doctor(root, homes.copilot_home.as_deref()),
        Client::Cline => crate::clients::cline::doctor(root, homes.cline_mcp_settings.as_deref()),
    }
}

/// Warnings for hook commands an older `staged hook install` wrote: a gate without the
/// fail-safe (a missing binary lets the edit through), and for Codex one without `--in` (it
/// gates every folder) or one whose workspaces leave out `root`.
pub(crate) fn older_install_checks(
    client: Client,
    commands: &[(String, String)],
    root: Option<&Path>,
) -> Vec<Check> {
    let (who, name) = (client.display(), client.name());
    let ours: Vec<(&str, Ours)> = commands
        .iter()
        .filter_map(|(event, c)| Some((event.as_str(), parse_ours(c, client)?)))
        .collect();
    let again = format!("run `staged hook install {name}` again to update it");
    let mut res = Vec::new();
    if ours.iter().any(|(_, o)| o.mode == Mode::Gate) {
        let older = ours
            .iter()
            .any(|(event, o)| o.mode == Mode::Gate && o.fail_safe != FailSafe::for_event(event));
        res.push(Check::warn(
            format!("{who}: the hooks block the edit when staged cannot run"),
            match older {
                true => Err(format!(
                    "an older install: when the binary is missing, the client lets the edit through; {again}"
                )),
                false => Ok(()),
            },
        ));
    }
    if let Some(root) = root {
        let mut roots: Vec<&String> = ours.iter().flat_map(|(_, o)| &o.roots).collect();
        roots.sort();
        roots.dedup();
        let here = root.to_string_lossy();
        res.push(Check::warn(
            format!("{who}: the hooks act only in the workspaces they were installed in"),
            if ours.iter().any(|(_, o)| o.roots.is_empty()) {
                Err(format!("an older install: they act in every folder Codex runs in; {again}"))
            } else if !roots.iter().any(|r| root.starts_with(r.as_str())) {
                Err(format!(
                    "they act in {}, not in {here} (`staged hook install codex` here adds it)",
                    roots.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
                ))
            } else {
                Ok(())
            },
        ));
    }
    res
}

/// `(event, command)` of each of `client`'s hooks.
pub(super) fn hook_commands(settings: &Value, client: Client) -> Vec<(String, String)> {
    let mut res = Vec::new();
    let Some(events) = settings.get("hooks").and_then(Value::as_object) else { return res };
    for (event, groups) in events {
        for group in groups.as_array().into_iter().flatten() {
            for handler in group.get("hooks").and_then(Value::as_array).into_iter().flatten() {
                if let Some(command) = handler.get("command").and_then(Value::as_str)
                    && is_ours(command, client)
                {
                    res.push((event.clone(), command.to_owned()));
                }
            }
        }
    }
    res
}

/// The binary each hook command runs exists and may be run (one without a `/` is looked up
/// on `PATH`, as the client's shell will).
pub(crate) fn binary_checks(client: Client, commands: &[(String, String)]) -> Vec<Check> {
    let who = client.display();
    let mut seen = Vec::new();
    let mut res = Vec::new();
    for (_, command) in commands {
        let Some(binary) = parse_ours(command, client).map(|o| o.binary) else { continue };
        if seen.contains(&binary) {
            continue;
        }
        seen.push(binary.clone());
        let result =
            if binary.contains('/') { executable(Path::new(&binary)) } else { on_path(&binary) };
        res.push(Check::new(format!("{who}: the hook runs {binary}"), result));
    }
    res
}

/// The first executable `name` on `PATH`.
pub(super) fn on_path(name: &str) -> Result<(), String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|dir| executable(&dir.join(name)).is_ok()) {
        Ok(())
    } else {
        Err("it is not on PATH".to_owned())
    }
}

/// `Ok` when `path` is a regular file someone may execute; else why not (`it cannot be found
/// (...)`, `it is not an executable file`).
pub fn executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => Ok(()),
        Ok(_) => Err("it is not an executable file".to_owned()),
        Err(err) => Err(format!("it cannot be found ({err})")),
    }
}

/// Starts the configured MCP server and asks it for its tools: it must answer, and list
/// `resolve`, within a few seconds.
pub(crate) fn mcp_check(who: &str, server: &Value, cwd: &Path) -> Check {
    let command = server.get("command").and_then(Value::as_str).unwrap_or_default();
    let args: Vec<String> = server
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    mcp_command_check(who, command, &args, cwd)
}

/// Whether the MCP server `command` `args` a client's config names (`who`'s) starts in `cwd`
/// and lists staged's `resolve`.
pub(crate) fn mcp_command_check(who: &str, command: &str, args: &[String], cwd: &Path) -> Check {
    Check::new(
        format!("{who}: the staged MCP server answers ({command} {})", args.join(" ")),
        probe_mcp(command, args, cwd),
    )
}

/// A JSON-RPC message the doctor sends an MCP server.
#[derive(Debug, serde::Serialize)]
struct Message {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<u64>,
    jsonrpc: &'static str,
    method: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<Initialize>,
}

impl Message {
    /// The request `id` of `method`.
    fn request(id: u64, method: &'static str, params: Option<Initialize>) -> Message {
        Message { id: Some(id), jsonrpc: "2.0", method, params }
    }

    /// The notification `method`.
    fn notification(method: &'static str) -> Message {
        Message { id: None, jsonrpc: "2.0", method, params: None }
    }
}

/// MCP's `initialize` parameters.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Initialize {
    capabilities: Capabilities,
    client_info: ClientInfo,
    protocol_version: &'static str,
}

/// The doctor's capabilities: none.
#[derive(Debug, serde::Serialize)]
struct Capabilities {}

/// Who asks.
#[derive(Debug, serde::Serialize)]
struct ClientInfo {
    name: &'static str,
    version: &'static str,
}

/// `initialize`, `notifications/initialized`, `tools/list` over stdio.
pub(super) fn probe_mcp(command: &str, args: &[String], cwd: &Path) -> Result<(), String> {
    use std::io::{BufRead, BufReader, Write};
    let mut child = std::process::Command::new(command)
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|err| format!("it does not start: {err}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let send = |stdin: &mut std::process::ChildStdin, message: Message| {
        let value = serde_json::to_value(message)
            .map_err(|err| format!("its request could not be written: {err}"))?;
        writeln!(stdin, "{value}")
            .and_then(|()| stdin.flush())
            .map_err(|err| format!("it does not read its input: {err}"))
    };
    let wait_for = |id: u64| -> Result<Value, String> {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line =
                rx.recv_timeout(left).map_err(|_| "it did not answer within 10 s".to_owned())?;
            if let Ok(value) = serde_json::from_str::<Value>(&line)
                && value.get("id").and_then(Value::as_u64) == Some(id)
            {
                return Ok(value);
            }
        }
    };
    let res = (|| {
        let params = Initialize {
            capabilities: Capabilities {},
            client_info: ClientInfo { name: "staged-doctor", version: "1" },
            protocol_version: "2025-06-18",
        };
        send(&mut stdin, Message::request(1, "initialize", Some(params)))?;
        wait_for(1)?;
        send(&mut stdin, Message::notification("notifications/initialized"))?;
        send(&mut stdin, Message::request(2, "tools/list", None))?;
        let listed = wait_for(2)?;
        let names: Vec<&str> = listed
            .get("result")
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
            .map(|tools| tools.iter().filter_map(|t| t.get("name")?.as_str()).collect())
            .unwrap_or_default();
        if names.contains(&"resolve") {
            Ok(())
        } else {
            Err(format!("it lists no resolve tool (it lists {})", names.join(", ")))
        }
    })();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    res
}
