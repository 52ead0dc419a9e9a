//! Cline CLI (`cline`, tested with 3.0.65): the plugin staged installs, the events it sends
//! `staged hook cline`, the answers it reads back, the installer and `staged doctor`'s checks.
//!
//! Cline's file hooks (`.cline/hooks/`) cannot gate: the documented answer `{"cancel": true}`
//! aborts the whole run, so the model never sees the preview, and a hook that exits 1 lets
//! the edit through. A plugin can: Cline loads every `.js` file of `.cline/plugins/` (and
//! `~/.cline/plugins/`) as an extension, and a `beforeTool` hook that returns `{skip: true,
//! reason}` keeps the tool from running and gives the model `{"error": reason}` as its
//! result. So staged installs [`PLUGIN_FILE`], a small plugin that runs `staged hook cline`
//! for each `editor` and `apply_patch` call, with Claude Code's event shape on stdin
//! (`hook_event_name`, `session_id`: the Cline session's id, `cwd`: the workspace's root,
//! `tool_name`, `tool_input`, `tool_use_id`), and returns what it answers. It fails closed:
//! when staged cannot be started, exits non-zero, is killed, outlives the plugin's timeout or
//! prints anything but a reply, the call is skipped with a reason saying so. In record mode
//! it also sends `PostToolUse` after the tool ran (`tool_response`: Cline's `{output,
//! isError}`) and lets every call run. A `run_commands` call is sent too, in both modes: the
//! answer `{"input": ...}` (the call's input, each of its commands under `staged shell-run`,
//! every other field kept) is what the plugin's `beforeTool` returns, and Cline runs the call with that input
//! (`docs/contract/shell.md`); a gate whose plugin cannot ask staged skips it.
//!
//! The codec reads `editor` as Claude Code's tools: `{path, old_text, new_text}` is an Edit
//! (one exact replacement), `{path, new_text}` without `old_text` creates a file, as Write
//! (Cline refuses it on a file that exists, and so does the gate), and an `insert_line` call
//! is refused, naming the replacement form to use instead. `apply_patch` (`input`: a patch in
//! Codex's format, relative to the workspace) is staged as Codex's. Cline has no hook that
//! can keep a finished run going, so there is no Stop.
//!
//! Cline reads MCP servers only from the user's settings (`cline_mcp_settings.json`), never
//! from the project: the installer registers `staged mcp` there, and the model calls
//! `staged__resolve`. The plugin acts only in the workspace it is in.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::{
    clients::{EditInput, PatchInput, ToolEdit, WriteInput, input_json, wire::to_json},
    event::{Client, EventName, HookEvent, Mode, Reply},
    install::{
        Check, InstallError, SERVER, Target, WorkspaceFile, binary_checks,
        entries::{McpServer, entry_json},
        hook_command, mcp_check, object_at, read_json, write_json,
    },
};

/// The plugin, relative to the workspace root.
pub(crate) const PLUGIN_FILE: &str = ".cline/plugins/staged.js";

/// The first line of the plugin staged writes: what the installer and `staged doctor` know it by.
pub(crate) const PLUGIN_MARK: &str =
    "// staged's gate for Cline, written by `staged hook install cline`";

/// How long the plugin waits for `staged hook cline` before it skips the call (ms): above the
/// gate's own `--timeout` (45 s), whose supervisor always answers.
const PLUGIN_TIMEOUT_MS: u64 = 120_000;

/// A Cline event, as the plugin sends it (Claude Code's shape), as a [`HookEvent`].
///
/// # Errors
/// Why the bytes are not one.
pub(crate) fn parse(input: &[u8]) -> Result<HookEvent, String> {
    let mut event = HookEvent::parse(input)?;
    let args = event.tool_input.take();
    let (tool, input) = match (event.tool_name.as_deref(), args) {
        (Some("editor"), Some(args)) if args.get("insert_line").is_some_and(|v| !v.is_null()) => {
            ("editor", Some(args))
        }
        (Some("editor"), Some(args)) => {
            let path = args.get("path").cloned().unwrap_or(Value::Null);
            let new = args.get("new_text").cloned().unwrap_or_else(|| Value::from(""));
            match args.get("old_text").filter(|v| !v.is_null()) {
                Some(old) => {
                    let input = EditInput {
                        file_path: Some(path),
                        old_string: Some(old.clone()),
                        new_string: Some(new),
                        replace_all: None,
                    };
                    ("Edit", Some(input_json(input)?))
                }
                None => {
                    let input = WriteInput { file_path: Some(path), content: Some(new) };
                    ("Write", Some(input_json(input)?))
                }
            }
        }
        (Some("apply_patch"), Some(Value::String(patch))) => {
            ("apply_patch", Some(input_json(PatchInput { input: Value::String(patch) })?))
        }
        (_, args) => {
            event.tool_input = args;
            return Ok(event);
        }
    };
    event.tool_name = Some(tool.to_owned());
    event.tool_input = input;
    Ok(event)
}

/// The client's name for people.
pub(crate) const DISPLAY: &str = "Cline";

/// What its edit is called in a deny text.
pub(crate) const WHAT: &str = "edit";

/// How its model calls `resolve`.
pub(crate) const RESOLVE_TOOL: &str = "staged__resolve";

/// The client-neutral name of the event in `input` (the name of the event [`parse`] makes of it).
pub(crate) fn event_name(input: &[u8]) -> Option<EventName> {
    parse(input).ok().map(|event| event.hook_event_name)
}

/// The edit a read event's tool makes: `Edit` replaces, `Write` writes.
pub(crate) fn edit(event: &HookEvent) -> Option<ToolEdit> {
    match event.tool_name.as_deref()? {
        "Edit" => Some(ToolEdit::Replace),
        "Write" => Some(ToolEdit::Write),
        "editor" => Some(ToolEdit::Refused),
        "apply_patch" => Some(ToolEdit::Patch),
        _ => None,
    }
}

/// The plugin's answer that skips a call: `{"skip": true, "reason": R}`.
#[derive(Debug, Serialize)]
struct Skip<'a> {
    reason: &'a str,
    skip: bool,
}

/// The plugin's answer that runs a call with another input.
#[derive(Debug, Serialize)]
struct Rewritten<'a> {
    input: &'a Value,
}

/// What the plugin reads back: `{"skip": true, "reason": R}` skips the tool call.
///
/// # Errors
/// Why the answer could not be written.
pub(crate) fn answer(reply: &Reply) -> Result<Option<Value>, String> {
    let answer = match reply {
        // Neither a model's context nor a message to the person reaches this client's
        // answer (notices wait for a deny or a block, which carry text in any client).
        Reply::Nothing | Reply::Context { .. } | Reply::Notice(_) => return Ok(None),
        Reply::Deny(reason) | Reply::Block(reason) => to_json(Skip { reason, skip: true }),
        // `run_commands` under staged's wrapper: the plugin returns it as the call's input.
        Reply::Rewrite(input) => to_json(Rewritten { input }),
    };
    answer.map(Some)
}

/// Why the gate refuses an `editor` call without staging it.
pub(crate) fn refusal(event: &HookEvent) -> Option<String> {
    match event.tool_name.as_deref() {
        Some("editor") => Some(INSERT_LINE.to_owned()),
        Some("Write") => {
            let path = event.input().file_path.0?;
            std::fs::symlink_metadata(Path::new(path)).is_ok().then(|| CREATE_EXISTS.to_owned())
        }
        _ => None,
    }
}

/// The refusal of an `editor` call with `insert_line`.
pub(crate) const INSERT_LINE: &str = "staged refused this editor call without staging it, and nothing was written: staged stages an edit as a replacement, and does not stage insert_line. Make the same change with old_text (the exact lines around the place, which must match once) and new_text (those lines with the new ones added).";

/// The refusal of an `editor` call that would create a file that exists.
pub(crate) const CREATE_EXISTS: &str = "staged refused this editor call without staging it, and nothing was written: without old_text it creates a file, and this file already exists. To change it, give old_text (the exact text to replace, which must match once) and new_text.";

/// What `staged doctor` says about how the gate reads Cline's permissions.
pub(crate) const PERMISSIONS: &str = "Cline's plugin events carry no permission mode: the gate stages every edit as a preview the model may apply, and the model's staged__resolve is a tool call Cline runs only as its own approval settings allow (--auto-approve, the default of `cline \"task\"`)";

// --- the plugin ---------------------------------------------------------------------------

/// The plugin's text for `staged` (absolute, or a name on `PATH`) in `mode`.
pub(crate) fn plugin(staged: &Path, mode: Mode) -> String {
    let staged = Value::String(staged.to_string_lossy().into_owned()).to_string();
    let record = mode == Mode::Record;
    let args =
        if record { r#"["hook", "cline", "--mode", "record"]"# } else { r#"["hook", "cline"]"# };
    format!(
        r#"{PLUGIN_MARK} ({mode} mode).
// It runs `staged hook cline` for each editor and apply_patch call and skips the call when
// staged says so; a run_commands call runs with the input staged gives (each command under
// staged shell-run). Run the installer again rather than editing it; remove it with
// `staged hook install cline --uninstall`.
import {{ spawnSync }} from "node:child_process";

const STAGED = {staged};
const ARGS = {args};
const RECORD = {record};
const TOOLS = new Set(["editor", "apply_patch"]);
const SHELL = "run_commands";
const TIMEOUT_MS = {PLUGIN_TIMEOUT_MS};
let session;
let root;

function refused(why) {{
  return {{
    skip: true,
    reason: `staged's hook could not run (${{why}}), so this tool call is refused and nothing was written. Install staged, or remove its plugin: staged hook install cline --uninstall`,
  }};
}}

function ask(event) {{
  const cwd = root || process.cwd();
  const out = spawnSync(STAGED, ARGS, {{
    input: JSON.stringify({{ ...event, cwd }}),
    cwd,
    encoding: "utf8",
    timeout: TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
  }});
  if (out.error) throw new Error(out.error.code === "ETIMEDOUT" ? `no answer in ${{TIMEOUT_MS / 1000}} s` : String(out.error.message || out.error));
  if (out.signal) throw new Error(`killed by ${{out.signal}}`);
  if (out.status !== 0) throw new Error(`exit ${{out.status}}`);
  const text = (out.stdout || "").trim();
  if (!text) return undefined;
  const reply = JSON.parse(text);
  if (reply && typeof reply === "object" && reply.input && typeof reply.input === "object") {{
    return {{ input: reply.input }};
  }}
  if (!reply || typeof reply !== "object" || reply.skip !== true || typeof reply.reason !== "string") {{
    throw new Error("its answer is not one staged gives");
  }}
  return {{ skip: true, reason: reply.reason }};
}}

function event(name, ctx) {{
  return {{
    hook_event_name: name,
    session_id: session || ctx?.snapshot?.conversationId,
    tool_name: ctx?.tool?.name ?? ctx?.toolCall?.toolName,
    tool_input: ctx?.input ?? ctx?.toolCall?.input,
    tool_use_id: ctx?.toolCall?.toolCallId,
  }};
}}

export default {{
  name: "staged",
  manifest: {{ capabilities: ["hooks"] }},
  setup(_api, ctx) {{
    session = ctx?.session?.sessionId;
    root = ctx?.workspaceInfo?.rootPath;
  }},
  hooks: {{
    beforeTool(ctx) {{
      try {{
        const tool = ctx?.tool?.name ?? ctx?.toolCall?.toolName;
        if (!TOOLS.has(tool) && tool !== SHELL) return undefined;
        const reply = ask(event("PreToolUse", ctx));
        // A shell call runs under staged's wrapper in both modes: its new input.
        if (reply?.input !== undefined) return tool === SHELL ? reply : undefined;
        return RECORD ? undefined : reply;
      }} catch (err) {{
        return RECORD ? undefined : refused(String(err?.message ?? err));
      }}
    }},
    afterTool(ctx) {{
      try {{
        if (RECORD && TOOLS.has(ctx?.tool?.name ?? ctx?.toolCall?.toolName)) {{
          ask({{ ...event("PostToolUse", ctx), tool_response: ctx?.result }});
        }}
      }} catch {{
        // Record mode lets every edit through; an edit it could not record is not logged.
      }}
      return undefined;
    }},
  }},
}};
"#,
        mode = mode.name(),
    )
}

/// What an installed plugin runs, read back: `(staged, mode)`; `None` when the file is not
/// staged's plugin.
fn parse_plugin(text: &str) -> Option<(String, Mode)> {
    if !text.starts_with(PLUGIN_MARK) {
        return None;
    }
    let staged = text.lines().find_map(|line| line.strip_prefix("const STAGED = "))?;
    let staged: String = serde_json::from_str(staged.strip_suffix(';')?).ok()?;
    let mode = if text.contains("const RECORD = true;") { Mode::Record } else { Mode::Gate };
    Some((staged, mode))
}

// --- installer ----------------------------------------------------------------------------

/// `staged hook install cline [--mode record] [--uninstall]`: the plugin in [`PLUGIN_FILE`],
/// and `staged mcp` in Cline's MCP settings (user-level), merged into the servers there.
///
/// # Errors
/// [`InstallError`], before anything is written when a file cannot be merged into, or when
/// [`PLUGIN_FILE`] is a file staged did not write.
pub(crate) fn install(target: &Target, uninstall: bool) -> Result<Vec<String>, InstallError> {
    let plugin_file = WorkspaceFile::new(&target.root, PLUGIN_FILE)?;
    let settings_path = target.cline_mcp_settings.clone().ok_or_else(|| {
        InstallError::Missing(
            "Cline's MCP settings are unknown: set CLINE_MCP_SETTINGS_PATH, CLINE_DATA_DIR or HOME"
                .to_owned(),
        )
    })?;
    let mut settings = read_json(&settings_path)?;
    if let Some(text) = plugin_file.read_text()?
        && parse_plugin(&text).is_none()
    {
        return Err(InstallError::Unreadable {
            path: plugin_file.path(),
            why: "it is not the plugin staged writes (its first line is not staged's)".to_owned(),
        });
    }
    plugin_file.writable()?;
    let mut lines = Vec::new();
    if uninstall {
        if let Some(servers) = settings.get_mut("mcpServers").and_then(Value::as_object_mut) {
            servers.remove(SERVER);
        }
        plugin_file.remove()?;
        lines.push(format!("removed staged's plugin {}", plugin_file.path().display()));
        lines.push(format!("removed the staged MCP server from {}", settings_path.display()));
    } else {
        let staged = target.staged.to_string_lossy();
        let server = entry_json(McpServer::new(&staged, &["mcp"]))?;
        object_at(&mut settings, &["mcpServers"], &settings_path)?
            .insert(SERVER.to_owned(), server);
        plugin_file.write_text(&plugin(&target.hook, target.mode))?;
        lines.push(format!(
            "{} mode: a plugin for editor and apply_patch in {}",
            target.mode.name(),
            plugin_file.path().display()
        ));
        if target.mode == Mode::Gate {
            lines.push(format!(
                "the plugin runs {}; when it cannot run, the plugin refuses the edit and says why",
                target.hook.display()
            ));
        }
        lines.push(format!(
            "the staged MCP server in {} (Cline's own settings: it reads no project MCP servers; the model calls staged__resolve)",
            settings_path.display()
        ));
    }
    write_json(&settings_path, &settings)?;
    Ok(lines)
}

/// What `staged doctor` checks for Cline: `None` when staged's plugin is not installed.
pub(crate) fn doctor(root: &Path, settings_path: Option<&Path>) -> Option<Vec<Check>> {
    let who = Client::Cline.display();
    let plugin_file = WorkspaceFile::new(root, PLUGIN_FILE).ok()?;
    let text = plugin_file.read_text().ok()??;
    let mut checks = Vec::new();
    let parsed = parse_plugin(&text);
    checks.push(Check::new(
        format!("{who}: staged's plugin in {}", plugin_file.path().display()),
        parsed.as_ref().map(|_| ()).ok_or_else(|| {
            "it is not the plugin staged writes: run `staged hook install cline`".to_owned()
        }),
    ));
    if let Some((staged, mode)) = &parsed {
        let command = hook_command(Path::new(staged), Client::Cline, *mode, &[], "PreToolUse");
        checks.extend(binary_checks(Client::Cline, &[("PreToolUse".to_owned(), command)]));
    }
    let server = settings_path
        .and_then(|path| read_json(path).ok())
        .and_then(|s| s.get("mcpServers")?.get(SERVER).cloned());
    let where_ = settings_path
        .map_or_else(|| "Cline's MCP settings".to_owned(), |p| p.display().to_string());
    checks.push(Check::new(
        format!("{who}: the staged MCP server in {where_}"),
        server
            .is_some()
            .then_some(())
            .ok_or_else(|| "it is not there: run `staged hook install cline`".to_owned()),
    ));
    if let Some(server) = server {
        checks.push(mcp_check(who, &server, root));
    }
    Some(checks)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    /// The answer, which these shapes always write.
    fn answer(reply: &Reply) -> Option<Value> {
        super::answer(reply).unwrap()
    }

    fn pre(input: Value) -> HookEvent {
        let event = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/r",
            "tool_name": "editor", "tool_input": input, "tool_use_id": "call_0"});
        parse(event.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn editor_calls_become_claude_codes_edit_and_write_and_insert_line_is_refused() {
        let edit = pre(json!({"path": "/r/a.ts", "old_text": "a", "new_text": "b"}));
        assert_eq!(edit.tool_name.as_deref(), Some("Edit"));
        assert_eq!(
            edit.tool_input.unwrap(),
            json!({"file_path": "/r/a.ts", "old_string": "a", "new_string": "b"})
        );
        let create = pre(json!({"path": "/r/new.ts", "old_text": null, "new_text": "x"}));
        assert_eq!(create.tool_name.as_deref(), Some("Write"));
        assert_eq!(create.tool_input.unwrap(), json!({"file_path": "/r/new.ts", "content": "x"}));
        let insert = pre(json!({"path": "/r/a.ts", "new_text": "x", "insert_line": 2}));
        assert_eq!(refusal(&insert).as_deref(), Some(INSERT_LINE));
    }

    #[test]
    fn the_plugin_is_read_back_and_a_deny_skips() {
        let text = plugin(Path::new("/opt/my \"tools\"/staged"), Mode::Record);
        assert_eq!(
            parse_plugin(&text),
            Some(("/opt/my \"tools\"/staged".to_owned(), Mode::Record))
        );
        let text = plugin(Path::new("staged"), Mode::Gate);
        assert_eq!(parse_plugin(&text), Some(("staged".to_owned(), Mode::Gate)));
        assert_eq!(parse_plugin("export default {}"), None);
        assert_eq!(
            answer(&Reply::Deny("no".into())).unwrap(),
            json!({"skip": true, "reason": "no"})
        );
        assert_eq!(answer(&Reply::Nothing), None);
    }
}
