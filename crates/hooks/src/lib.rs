//! staged as the gate of the coding agents people already use: the hooks `staged hook
//! claude-code`, `codex`, `qwen-code`, `gemini-cli`, `opencode`, `cursor`, `copilot` and
//! `cline` run (one event on stdin, one reply on stdout), their installers, and the checks of
//! `staged doctor`.
//!
//! - **Gate mode** (the default): an edit the client is about to make (Claude Code's Edit,
//!   MultiEdit and Write; Codex's `apply_patch`, as its own tool or as an `apply_patch` heredoc
//!   in the shell; Qwen Code's `edit` and `write_file`; Gemini CLI's `replace` and
//!   `write_file`; opencode's `edit`, `write` and `apply_patch`; Cursor's `Write`,
//!   `StrReplace` and `Edit`; Copilot CLI's `edit` and `create`; Cline's `editor` and
//!   `apply_patch`) is staged as a preview through `staged-edit`, and the tool call is denied
//!   with a reason that names the preview and says to call `resolve`. Nothing is written until
//!   then. The gate never grants what the client would not (`permission.rs`): in a mode or
//!   sandbox where the client would refuse the edit (plan mode, a read-only sandbox) it is
//!   denied without staging; where the client would have asked the person (Claude Code's
//!   default mode) the preview is one only a person may apply; `.git/` and the agents' control
//!   files are never staged ([`staged_journal::PROTECTED_PATHS`]). Claude Code's NotebookEdit
//!   is denied, telling the model to edit the notebook's JSON with Edit. Anything staged cannot
//!   stage (a file with a pending preview, a path outside the workspace, a patch that does not
//!   apply) is denied with its error: a gate never fails open.
//!   A Stop hook keeps the turn going while a preview this session staged is pending (or the
//!   rest of one after a partial apply), or an edit refused for one was never made again,
//!   three times at most, as the reference's loop forces `resolve` three times before it
//!   gives up.
//! - **Record mode**: the edit goes through, and is recorded in the resolve log as applied
//!   (its diff, each file's hashes before and after, and undo data), with `hook:<client>` as
//!   its front end, so `staged log` and `staged undo` cover it.
//!
//! - **Shell calls** (Claude Code's `Bash`; Codex's shell where its approval policy is
//!   `never`; Gemini CLI's and Qwen Code's `run_shell_command`, opencode's and Copilot CLI's
//!   `bash`, Cline's `run_commands`), in both modes: the call's command is rewritten (each
//!   client's form of `updatedInput`; Qwen Code has none, so the model is told to run the
//!   wrapped command itself) to run under `staged shell-run`, which runs it in an overlay of the workspace (`staged-shell`) and then
//!   records what it wrote as one entry of the session, or stages it as one preview of the
//!   session and keeps it out of the tree (`shell_run.rs`, `docs/contract/shell.md`). A run
//!   whose wrapper was killed is finished at the session's next hook call; what a process a
//!   command left running writes after its call returned is taken at each of the session's
//!   next hook calls, as an entry or a preview of its own.
//!
//! Each client is a codec (`clients/`): its events are read into the client-neutral
//! [`HookEvent`], and the neutral [`Reply`] is written back in its format.
//!
//! Every reply is built here; the CLI reads stdin, prints, and in gate mode runs the work in a
//! child it supervises (a child that dies or times out is answered with a [`Reply::Deny`],
//! or exit 2 when it died before it named the event).
//!
//! Library API besides what the CLI calls: a client's event read into the neutral shape
//! (`HookEvent::parse_from`, a `HookEvent` with its `EventName`), the error of an install (`InstallError`) and the
//! checks `staged doctor` reports (`Check`).

#![deny(missing_docs)]

mod clients;
mod event;
mod gate;
pub mod install;
mod permission;
mod record;
mod session;
mod shell;
mod shell_harvest;
mod shell_run;
mod state;
mod stop;

use std::path::{Path, PathBuf};

use staged_workspace::WorkspaceSessionBuilder;

pub use crate::{
    event::{Client, EventName, HookEvent, Mode, Reply},
    permission::doctor_line_for as permission_doctor_line_for,
    shell_run::{Finished, finish, outlive, tell_session, unfinished},
};

/// What a hook call produced: the reply to print, and notes for stderr (the client shows them
/// in its log, never to the model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// What to answer.
    pub reply: Reply,
    /// Lines for stderr.
    pub notes: Vec<String>,
}

impl Outcome {
    fn reply(reply: Reply) -> Outcome {
        Outcome { reply, notes: Vec::new() }
    }

    fn note(mut self, note: impl Into<String>) -> Outcome {
        self.notes.push(note.into());
        self
    }
}

/// Runs one hook call of `client` in `mode` on the event `input`. The workspace is `root` when
/// given, else the one `cwd` (the folder the client runs the hook in) is in: never one the
/// event names, since Codex sends a shell call's `workdir`, which the model picks, as the
/// event's `cwd`. The event's `cwd` is only where a patch's relative paths start, and must be
/// inside the workspace.
pub fn handle(
    client: Client,
    mode: Mode,
    input: &[u8],
    root: Option<&Path>,
    cwd: &Path,
) -> Outcome {
    handle_in(client, mode, input, root, cwd, None)
}

/// [`handle`], with Codex's home (`CODEX_HOME`, else `~/.codex`), whose `config.toml` says
/// the sandbox and approval policy the gate reads for Codex (`permission.rs`); without it,
/// only the project's `.codex/config.toml` is read.
pub(crate) fn handle_in(
    client: Client,
    mode: Mode,
    input: &[u8],
    root: Option<&Path>,
    cwd: &Path,
    codex_home: Option<&Path>,
) -> Outcome {
    let homes = install::ClientHomes {
        codex_home: codex_home.map(Path::to_path_buf),
        ..Default::default()
    };
    handle_for(client, mode, input, root, cwd, &homes)
}

/// [`handle`], with the clients' homes, whose settings say what the gate reads of a client's
/// permissions (`permission.rs`): Codex's `config.toml`, Gemini CLI's `settings.json`.
pub fn handle_for(
    client: Client,
    mode: Mode,
    input: &[u8],
    root: Option<&Path>,
    cwd: &Path,
    homes: &install::ClientHomes,
) -> Outcome {
    let event = match client.parse(input) {
        Ok(event) => event,
        Err(why) => return refuse_unreadable(mode, &why),
    };
    // A tool call that names no tool cannot be told from an edit: a gate refuses it.
    if mode == Mode::Gate
        && event.hook_event_name.as_str() == "PreToolUse"
        && event.tool_name.as_deref().is_none_or(|tool| tool.trim().is_empty())
    {
        return refuse_unreadable(mode, "the tool call names no tool");
    }
    let root: PathBuf = root.map_or_else(|| staged_workspace::find_root(cwd), Path::to_path_buf);
    if client == Client::ClaudeCode && clients::cursor::claude_hook_defers(input, &root) {
        return Outcome::reply(Reply::Nothing).note(
            "staged: Cursor runs staged's Cursor hook (.cursor/hooks.json) for this event, so the Claude Code hook stands aside and the edit is staged once",
        );
    }
    // The folder the client runs the hook in: its session's (Codex's sandbox is rooted there).
    let session_dir = cwd.to_path_buf();
    let cwd = event.cwd.clone().filter(|c| c.is_absolute()).unwrap_or_else(|| cwd.to_path_buf());
    let is_tool_event = matches!(event.hook_event_name.as_str(), "PreToolUse" | "PostToolUse");
    let shell_call = shell_run::wraps(client, &event);
    if !shell_call && shell_run::is_shell_tool(client, &event) {
        return shell_run::unreadable(mode);
    }
    let passing = is_tool_event && !gate::is_edit(client, &event) && !shell_call;
    let runs = shell_run::any_runs(&root);
    if passing && !runs {
        return Outcome::reply(Reply::Nothing);
    }
    // A shell call with no run to sweep only needs the root: the store is opened by the
    // wrapper once the command is done (and a workspace it cannot open runs nothing).
    if shell_call
        && !runs
        && let Ok(workspace) = staged_journal::ConfinedRoot::new(&root)
    {
        return shell_run::pre_tool_use(
            client,
            mode,
            &event,
            workspace.root(),
            homes.staged.as_deref(),
        );
    }
    let ws = match WorkspaceSessionBuilder::lean().open(&root) {
        Ok(ws) => ws,
        Err(err) => {
            let why = format!("staged could not open the workspace {}: {err}", root.display());
            return match (mode, event.hook_event_name.as_str()) {
                (Mode::Gate, "PreToolUse") => Outcome::reply(Reply::Deny(format!(
                    "{why}. Nothing was written; the edit is refused until staged can stage it."
                ))),
                _ => Outcome::reply(Reply::Nothing).note(why),
            };
        }
    };
    ws.session().set_front_end(staged_core::FrontEnd::Hook(client.name().to_owned()));
    let number = session::enter(client, &event, &ws);
    let swept = shell_run::sweep(client, &event, &ws);
    if let (Some(text), Some(number), Some(store)) = (&swept.message, number, ws.sqlite()) {
        let _ = store.notify_session(number, text);
    }
    // The event's own commits (a preview, a log entry, the session's state, the notices
    // taken) are synced once, together, before the reply tells anyone of them. (The sweep
    // above may write the tree after its commits, so its own are synced each.)
    let deferred = !passing && !shell_call && ws.sqlite().is_some_and(|s| s.defer_syncs().is_ok());
    let mut outcome = match (mode, event.hook_event_name.as_str()) {
        _ if passing => Outcome::reply(Reply::Nothing),
        (_, "PreToolUse") if shell_call => shell_run::pre_tool_use(
            client,
            mode,
            &event,
            ws.workspace().root(),
            homes.staged.as_deref(),
        ),
        (Mode::Gate, "PreToolUse") => {
            gate::pre_tool_use(client, &event, &ws, &cwd, &session_dir, homes)
        }
        (Mode::Gate, "Stop") => stop::stop(client, &event, &ws),
        (Mode::Record, "PreToolUse") => record::pre_tool_use(client, &event, &ws, &cwd),
        (Mode::Record, "PostToolUse") => record::post_tool_use(client, &event, &ws, &cwd),
        (Mode::Record, "Stop") => record::stop(client, &event, &ws),
        _ => Outcome::reply(Reply::Nothing),
    };
    outcome.reply = session::with_notices(client, &event, &ws, number, outcome.reply);
    if deferred
        && let Some(store) = ws.sqlite()
        && let Err(err) = store.sync_deferred()
    {
        outcome = durability_failed(mode, outcome, &err.to_string());
    }
    outcome.notes.extend(swept.notes);
    outcome
}

/// `outcome` when what the event's work committed could not be synced (`why`): a gate
/// denies, saying that the preview it names may not survive a crash; record mode says so in a
/// note.
fn durability_failed(mode: Mode, outcome: Outcome, why: &str) -> Outcome {
    let note = format!("staged: its database could not be synced ({why})");
    match (mode, outcome.reply) {
        (Mode::Gate, Reply::Deny(text)) => Outcome {
            reply: Reply::Deny(format!(
                "{text}\n\nstaged could not sync its database ({why}): if the system stops now, what this call staged may be lost."
            )),
            notes: outcome.notes,
        }
        .note(note),
        (_, reply) => Outcome { reply, notes: outcome.notes }.note(note),
    }
}

/// The neutral name of an event of `client` (`PreToolUse`, `Stop`, ...), read without
/// building the rest of it (the other fields are skipped, not kept): what a supervised gate
/// call reports before it does the work, so that its supervisor knows how to refuse if the
/// work dies. `None` when it is not readable.
pub fn event_name(client: Client, input: &[u8]) -> Option<String> {
    client.event_name(input).map(|name| name.as_str().to_owned())
}

/// Lowers this process's address-space limit (`RLIMIT_AS`) to `bytes`, or leaves it where it
/// is when it is lower: a gate call's worker runs under it, so that work that would take more
/// memory fails (an allocation that fails aborts it, which its supervisor takes as a deny)
/// instead of growing until the system's out-of-memory killer picks a process.
///
/// # Errors
/// When the kernel refuses the limit.
pub fn limit_memory(bytes: u64) -> std::io::Result<()> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let now = getrlimit(Resource::As);
    let current = now.current.map_or(bytes, |c| c.min(bytes));
    setrlimit(Resource::As, Rlimit { current: Some(current), maximum: now.maximum })
        .map_err(std::io::Error::from)
}

/// This process's address-space limit (`RLIMIT_AS`) in bytes, when there is one: what a
/// worker started now inherits.
pub fn memory_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::As).current
}

/// The largest event a hook reads: a Write of a file this big is refused.
pub const MAX_EVENT_BYTES: u64 = 512 << 20;

/// The outcome for an event longer than [`MAX_EVENT_BYTES`] (the caller stopped reading it).
pub fn too_big(mode: Mode) -> Outcome {
    refuse_unreadable(mode, &format!("it is longer than {} MiB", MAX_EVENT_BYTES >> 20))
}

/// The outcome for an event the caller could not hand over (`why`): a deny in gate mode.
pub fn unreadable(mode: Mode, why: &str) -> Outcome {
    refuse_unreadable(mode, why)
}

/// An event that is not one: a gate denies (it never lets an edit it could not read through);
/// record mode lets it go and says why.
fn refuse_unreadable(mode: Mode, why: &str) -> Outcome {
    match mode {
        Mode::Gate => Outcome::reply(Reply::Deny(format!(
            "staged could not read this hook event ({why}), so it refuses the tool call; nothing was written."
        ))),
        Mode::Record => Outcome::reply(Reply::Nothing).note(format!("staged: {why}")),
    }
}
