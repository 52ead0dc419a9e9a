//! Shell calls under staged (`docs/contract/shell.md`): the model's shell command is rewritten
//! (the client's `updatedInput`) to run under `staged shell-run`, which runs it in a private
//! overlay of the workspace (`staged-shell`), so staged knows exactly what it wrote; once it
//! is done, [`finish`] records those writes in the session (record mode) or stages them as
//! one preview of it and keeps them out of the tree (gate mode); a run of record mode's
//! snapshot fallback (no overlay) is recorded from its snapshot, with its caveat
//! (`staged_shell::snapshot`). A run whose wrapper never
//! finished (the command was killed) is finished by the session's next hook call
//! ([`sweep`]). A run that outlives its wrapper or its call (a process the command left
//! running, a Codex `exec_command` that yielded) is harvested by the wrapper ([`outlive`])
//! and then at each hook call of the session, each time for what was written since, as an
//! entry or a preview of its own (`Shell (background): <command>`), until its last process
//! ended.
//!
//! Handled (`docs/contract/shell.md`, per client): Claude Code's `Bash` (its `command`);
//! Codex's shell (`Bash`, its `command`) where its approval policy is `never`; Gemini CLI's
//! `run_shell_command` (`hookSpecificOutput.tool_input`); opencode's `bash` (the plugin
//! assigns the new `args`) where opencode's permission for `bash` is `allow`; Copilot CLI's
//! `bash` (`modifiedArgs`); Cline's `run_commands` (the plugin's `beforeTool` returns the new
//! `input`), each of its commands under its own wrapper. Qwen Code's hooks cannot rewrite a
//! tool's input: its `run_shell_command` is refused, telling the model the exact wrapped
//! command to run instead, and that command, when the model runs it, passes.

use std::path::Path;

use serde_json::{Map, Value};
use staged_core::{FrontEnd, RESOLVE_REMINDER};
use staged_shell::{Run, apply};
use staged_store::SessionScope;
use staged_workspace::WorkspaceSession;

pub use crate::shell_harvest::{outlive, tell_session};
use crate::{
    Outcome,
    event::{Client, EventName, HookEvent, Mode, Reply},
    gate::NEWEST_FIRST,
    shell_harvest::{Harvested, harvest, record_base},
};

/// Whether `event` is a shell call this module wraps: Claude Code's `Bash`; Codex's shell
/// (`Bash`, its `command` a string) where its approval policy is `never`
/// (`bypassPermissions`: Codex takes a rewrite only with an allow, which must grant nothing it
/// would not) and the command is no patch (those the gate stages as patches); Gemini CLI's
/// and Qwen Code's `run_shell_command`; opencode's and Copilot CLI's `bash`; Cline's
/// `run_commands`.
pub(crate) fn wraps(client: Client, event: &HookEvent) -> bool {
    if event.hook_event_name != EventName::PreToolUse {
        return false;
    }
    let tool = event.tool_name.as_deref();
    let command = event.input().command.0.is_some();
    match client {
        Client::ClaudeCode => tool == Some("Bash") && command,
        Client::Codex => {
            event.permission_mode.as_deref() == Some("bypassPermissions")
                && client.edit(event).is_none()
                && tool == Some("Bash")
                && command
        }
        Client::GeminiCli | Client::QwenCode => tool == Some("run_shell_command") && command,
        Client::OpenCode | Client::Copilot => tool == Some("bash") && command,
        Client::Cline => tool == Some("run_commands") && cline_commands(event).is_some(),
        Client::Cursor => false,
    }
}

/// Whether `event` calls a shell tool [`wraps`] would wrap, whether or not its input can be
/// read: a gate refuses such a call when [`wraps`] cannot read it ([`unreadable`]), rather
/// than let a command it cannot wrap run.
pub(crate) fn is_shell_tool(client: Client, event: &HookEvent) -> bool {
    if event.hook_event_name != EventName::PreToolUse {
        return false;
    }
    let tool = event.tool_name.as_deref();
    match client {
        Client::ClaudeCode => tool == Some("Bash"),
        Client::Codex => {
            event.permission_mode.as_deref() == Some("bypassPermissions")
                && client.edit(event).is_none()
                && tool == Some("Bash")
        }
        Client::GeminiCli | Client::QwenCode => tool == Some("run_shell_command"),
        Client::OpenCode | Client::Copilot => tool == Some("bash"),
        Client::Cline => tool == Some("run_commands"),
        Client::Cursor => false,
    }
}

/// The answer to a shell call whose command staged cannot read (a shape of the input staged
/// does not know): refused in gate mode, since it cannot run under the wrapper; let through
/// with a note in record mode.
pub(crate) fn unreadable(mode: Mode) -> Outcome {
    match mode {
        Mode::Gate => Outcome::reply(Reply::Deny(
            "staged cannot read this shell call's command (its input is not in a shape staged knows), so it cannot run it under its wrapper; in gate mode it is refused, and nothing was run. Give the command as one string.".to_owned(),
        )),
        Mode::Record => Outcome::reply(Reply::Nothing).note(
            "staged: this shell call's command could not be read, so it is not wrapped and its writes are not recorded",
        ),
    }
}

/// `word` quoted for a POSIX shell.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// The word [`quote`] made of `quoted`, when `quoted` is exactly one word quoted that way.
fn unquote(quoted: &str) -> Option<String> {
    let inner = quoted.strip_prefix('\'')?.strip_suffix('\'')?;
    let word = inner.replace("'\\''", "'");
    (quote(&word) == quoted).then_some(word)
}

/// Where Cline reads a `run_commands` call's commands from, as Cline 3.0.65's own reading
/// (its input schema's union, then `aZ`) picks it: the whole input (a string, a list), or the
/// field `commands` (a list or one command), else `command` (with `args`: one command run
/// without a shell), else `cmd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClineField {
    Whole,
    Commands,
    Command,
    Cmd,
}

/// Cline's `run_commands` input as shell command lines, in the shapes Cline reads it: a
/// string, a list, `{commands}` (a string or a list), `{command, args}` or `{cmd}`; each
/// command a string or `{command, args}` (run without a shell by Cline, here quoted word by
/// word). With the field they were read from.
fn cline_commands_in(input: &Value) -> Option<(ClineField, Vec<String>)> {
    fn line(command: &Value) -> Option<String> {
        if let Some(text) = command.as_str() {
            return Some(text.to_owned());
        }
        let program = command.get("command")?.as_str()?;
        let mut words = vec![quote(program)];
        for arg in command.get("args").and_then(Value::as_array).into_iter().flatten() {
            words.push(quote(arg.as_str()?));
        }
        Some(words.join(" "))
    }
    let (field, list): (ClineField, Vec<Value>) = match input {
        Value::String(_) => (ClineField::Whole, vec![input.clone()]),
        Value::Array(items) => (ClineField::Whole, items.clone()),
        Value::Object(object) => {
            match (object.get("commands"), object.get("command"), object.get("cmd")) {
                (Some(Value::Array(items)), _, _) => (ClineField::Commands, items.clone()),
                (Some(one), _, _) => (ClineField::Commands, vec![one.clone()]),
                // Without `args`, Cline runs `command` as a line of its shell.
                (None, Some(command), _) if !object.contains_key("args") => {
                    (ClineField::Command, vec![command.clone()])
                }
                (None, Some(_), _) => (ClineField::Command, vec![input.clone()]),
                (None, None, Some(cmd)) => (ClineField::Cmd, vec![cmd.clone()]),
                (None, None, None) => return None,
            }
        }
        _ => return None,
    };
    let lines: Option<Vec<String>> = list.iter().map(line).collect();
    lines.filter(|lines| !lines.is_empty()).map(|lines| (field, lines))
}

/// [`cline_commands_in`] of the event's input.
fn cline_commands(event: &HookEvent) -> Option<Vec<String>> {
    cline_commands_in(event.tool_input.as_ref()?).map(|(_, lines)| lines)
}

/// Cline's `run_commands` input with its commands replaced by `wrapped` (as many as it
/// held): every other field the client sent is kept; the commands' field holds the wrapped
/// lines (`{command, args}` becomes `{command: <wrapped>}`, a line run by the shell).
fn cline_rewritten(input: &Value, wrapped: Vec<String>) -> Value {
    let field = cline_commands_in(input).map(|(field, _)| field);
    let mut res = input.clone();
    match (field, res.as_object_mut()) {
        (Some(ClineField::Command), Some(object)) if wrapped.len() == 1 => {
            object.remove("args");
            object.insert("command".to_owned(), Value::from(wrapped[0].clone()));
        }
        (Some(ClineField::Cmd), Some(object)) if wrapped.len() == 1 => {
            object.insert("cmd".to_owned(), Value::from(wrapped[0].clone()));
        }
        (Some(ClineField::Commands), Some(object)) => {
            object.insert("commands".to_owned(), Value::from(wrapped));
        }
        // A string or a list: Cline's plugin answer must be an object or a list.
        _ if input.is_array() => res = Value::from(wrapped),
        _ => res = Value::Object(Map::from_iter([("commands".to_owned(), Value::from(wrapped))])),
    }
    res
}

/// The wrapper's command line for `session` of `client` in `mode`, up to its `--call`.
fn wrapper_prefix(staged: &Path, root: &Path, client: Client, session: &str, mode: Mode) -> String {
    format!(
        "{} --workspace {} shell-run --client {} --session {} --mode {}",
        quote(&staged.to_string_lossy()),
        quote(&root.to_string_lossy()),
        client.name(),
        quote(session),
        mode.name()
    )
}

/// `command` run under the wrapper (`prefix`), as call `call`.
fn wrapped(prefix: &str, call: Option<&str>, command: &str) -> String {
    let mut line = prefix.to_owned();
    if let Some(call) = call {
        line.push_str(&format!(" --call {}", quote(call)));
    }
    line.push_str(&format!(" -- {}", quote(command)));
    line
}

/// `PreToolUse` of a shell call: the same call, its command run under `staged shell-run`.
pub(crate) fn pre_tool_use(
    client: Client,
    mode: Mode,
    event: &HookEvent,
    root: &Path,
    staged: Option<&Path>,
) -> Outcome {
    let (Some(session), Some(staged)) = (event.session_id.as_deref(), staged) else {
        return match mode {
            Mode::Gate => Outcome::reply(Reply::Deny(
                "staged cannot run this shell command under its wrapper (the event names no session, or staged's own path is unknown), so in gate mode it is refused; nothing was run.".to_owned(),
            )),
            Mode::Record => Outcome::reply(Reply::Nothing)
                .note("staged: this shell command is not wrapped, so its writes are not recorded"),
        };
    };
    let prefix = wrapper_prefix(staged, root, client, session, mode);
    let call = event.tool_use_id.as_deref();
    match client {
        Client::QwenCode => ask_model(client, mode, event, &prefix),
        Client::Cline => {
            let commands = cline_commands(event).unwrap_or_default();
            let several = commands.len() > 1;
            let lines: Vec<String> = commands
                .iter()
                .enumerate()
                .map(|(i, command)| {
                    let call =
                        call.map(|c| if several { format!("{c}-{}", i + 1) } else { c.to_owned() });
                    wrapped(&prefix, call.as_deref(), command)
                })
                .collect();
            let input = event.tool_input.clone().unwrap_or(Value::Null);
            Outcome::reply(Reply::Rewrite(cline_rewritten(&input, lines)))
        }
        _ => {
            if client == Client::OpenCode
                && let Some((why, refusal)) = opencode_refusal(event, root)
            {
                return match mode {
                    Mode::Gate => Outcome::reply(Reply::Deny(refusal)),
                    Mode::Record => Outcome::reply(Reply::Nothing).note(format!(
                        "staged: this shell command is not wrapped ({why}), so its writes are not recorded"
                    )),
                };
            }
            let command = event.input().command.0.unwrap_or_default();
            let mut input = event.tool_input.clone().unwrap_or(Value::Null);
            if let Some(object) = input.as_object_mut() {
                object.insert("command".to_owned(), Value::String(wrapped(&prefix, call, command)));
            }
            Outcome::reply(Reply::Rewrite(input))
        }
    }
}

/// Why staged does not wrap opencode's `bash` call `event`, and the gate's deny text, when
/// opencode would ask about it or refuse it and the wrapped command would not: its permission
/// for `bash` is not `allow` (a wrapped command no longer matches its rules for commands), or
/// the command names a path outside opencode's project folder (the event's `directory`) and
/// its permission for `external_directory` is not `allow` (a wrapped command's paths are no
/// longer seen).
fn opencode_refusal(event: &HookEvent, root: &Path) -> Option<(String, String)> {
    use crate::clients::opencode;
    let agent = event.agent.as_deref();
    if let Err(why) = opencode::bash_allowed(root, agent) {
        return Some((
            why.clone(),
            format!(
                "staged runs opencode's shell commands under its wrapper only where opencode's permission for bash is \"allow\" ({why}): wrapped, the command would no longer match opencode's own rules. So in gate mode this shell call is refused, and nothing was run."
            ),
        ));
    }
    let dir = event.cwd.as_deref().unwrap_or(root);
    let path = opencode::outside_path(event.input().command.0.unwrap_or_default(), dir)?;
    let why = opencode::external_allowed(root, agent).err()?;
    let why =
        format!("it names {path}, outside {}, and for external_directory {why}", dir.display());
    let refusal = format!(
        "staged runs an opencode shell command that names a path outside the project under its wrapper only where opencode's permission for external_directory is \"allow\" ({why}): wrapped, opencode would no longer see the path and ask. So in gate mode this shell call is refused, and nothing was run."
    );
    Some((why, refusal))
}

/// A client whose hooks cannot rewrite a tool's input (Qwen Code): a command already run
/// under the wrapper of this session and mode passes; any other is refused, and the model is
/// told the exact command to run instead. A gate never lets a command run unwrapped.
fn ask_model(client: Client, mode: Mode, event: &HookEvent, prefix: &str) -> Outcome {
    let command = event.input().command.0.unwrap_or_default();
    if command
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix(" -- "))
        .and_then(unquote)
        .is_some()
    {
        return Outcome::reply(Reply::Nothing);
    }
    let does = match mode {
        Mode::Gate => "holds what it writes as a preview",
        Mode::Record => "records what it writes in this session",
    };
    Outcome::reply(Reply::Deny(format!(
        "staged runs {client}'s shell commands under its wrapper, which {does}, and {client}'s hooks cannot change a command, so this call was refused and nothing was run. Run the same command as exactly this command (the same text, the command quoted as one word after --): {}",
        wrapped(prefix, None, command),
        client = client.display(),
    )))
}

/// What finishing a run tells the model (on the command's stderr, or as the next event's
/// context) and the person (notes).
#[derive(Debug, Default)]
pub struct Finished {
    /// For the model: what became of the command's writes; `None` when there is nothing to
    /// say.
    pub message: Option<String>,
    /// For the hook's log.
    pub notes: Vec<String>,
}

/// Enters the client session `session` of `client` in `ws`: what is recorded or staged from
/// now on is that session's.
pub(crate) fn enter(ws: &WorkspaceSession, client: &str, session: &str) {
    if let Some(store) = ws.sqlite() {
        let process = staged_session::process::client_of_this_process().map(|p| p.key());
        if let Ok(row) = store.open_session(client, session, process.as_deref()) {
            store.set_scope(SessionScope::model(row.number));
        }
    }
    ws.session().set_front_end(FrontEnd::Hook(client.to_owned()));
}

/// Finishes `run` (every process of its command is done, or dead): reads what it wrote (since
/// its last harvest, for a run that outlived its wrapper), records it or stages it as its mode
/// says, and deletes the run folder (kept, and named, when the writes could not be recorded).
/// A gate-mode run whose earlier preview of a file it wrote again is still pending stays
/// until that preview is resolved: the session's next hook call finishes it then.
pub fn finish(ws: &WorkspaceSession, run: Run) -> Finished {
    if run.is_done() {
        let _ = run.remove();
        return Finished::default();
    }
    match staged_shell::snapshot::Snapshot::of_run(run.dir()) {
        Ok(Some(snapshot)) => return finish_snapshot(ws, run, &snapshot),
        Ok(None) => {}
        Err(why) => return kept_aside(run, &why),
    }
    if run.from_earlier_boot() {
        return kept_aside(
            run,
            "the system restarted before they were recorded, and what a command writes is not synced until then, so they may be incomplete",
        );
    }
    match harvest(ws, &run, true) {
        Err(why) => kept_aside(run, &why),
        Ok(Harvested::Deferred) => Finished::default(),
        Ok(Harvested::Done { mut finished, failures }) => {
            let _ = run.mark_done();
            if run.info().mode == "gate" {
                finished
                    .notes
                    .extend(failures.iter().map(|f| format!("staged: not moved in: {f}")));
            } else if !failures.is_empty() {
                let mut kept = kept_aside(run, &failures.join("; "));
                kept.notes.splice(0..0, finished.notes);
                return kept;
            }
            let _ = run.remove();
            finished
        }
        Ok(Harvested::Refused(finished)) => {
            let _ = run.remove();
            finished
        }
    }
}

/// Finishes a run of the snapshot fallback (the command ran unisolated, in record mode): what
/// changed in the tree since its snapshot is logged as one entry, which says it may hold other
/// programs' writes. Nothing is written or put back: a gate never runs a command this way.
fn finish_snapshot(
    ws: &WorkspaceSession,
    run: Run,
    snapshot: &staged_shell::snapshot::Snapshot,
) -> Finished {
    let info = run.info().clone();
    let mut res = Finished::default();
    if info.mode != "record" {
        let _ = run.remove();
        return res;
    }
    enter(ws, &info.client, &info.session);
    let base = record_base(&info, &staged_shell::label(&info.command), false, 0);
    let recorded = snapshot.record(ws.session(), ws.workspace(), &info.command, base);
    let _ = run.mark_done();
    let _ = run.remove();
    match recorded {
        Ok(true) => res.notes.push(format!(
            "staged: this command's writes were recorded by comparing the tree before and after it: {}.",
            staged_shell::snapshot::CAVEAT
        )),
        Ok(false) => {}
        Err(why) => {
            let text = format!(
                "staged could not record what this command wrote ({why}); its writes are in the workspace, unrecorded"
            );
            res.notes.push(format!("staged: {text}"));
            res.message = Some(text);
        }
    }
    res
}

/// A run that cannot be finished now (`why`: the workspace could not be opened): its folder is
/// kept and named, as [`finish`] keeps one whose writes could not be recorded.
pub fn unfinished(run: Run, why: &str) -> Finished {
    kept_aside(run, why)
}

/// A run whose writes could not be recorded: its folder is kept (renamed `kept-<id>`), and
/// the model and the person are told where.
pub(crate) fn kept_aside(run: Run, why: &str) -> Finished {
    let dir = run.dir().to_path_buf();
    let aside = dir.with_file_name(format!(
        "kept-{}",
        dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    ));
    let place = match std::fs::rename(&dir, &aside) {
        Ok(()) => aside,
        Err(_) => dir,
    };
    let text = format!(
        "staged could not record what this command wrote ({why}); its writes are kept in {}",
        place.join("upper").display()
    );
    Finished { message: Some(text.clone()), notes: vec![format!("staged: {text}")] }
}

/// What the model of `client` is told of a command whose writes were staged: to call
/// `resolve` by the name the client gives it (Claude Code's and Codex's models: `resolve`).
pub(crate) fn gated_text(gated: &apply::Gated, client: Client) -> String {
    let resolve = match client {
        Client::ClaudeCode | Client::Codex => "resolve",
        other => other.resolve_tool(),
    };
    let mut text = String::new();
    if let Some(id) = &gated.id {
        text.push_str(&format!(
            "staged holds what this command wrote as a preview, and none of it was written to the workspace yet: {id} ({}; {}). To write it, call {resolve} with action \"apply\" and a one-line reason (or \"discard\" to drop it); {NEWEST_FIRST}",
            gated.label,
            gated.files.join(", ")
        ));
    }
    if !gated.others.is_empty() {
        if !text.is_empty() {
            text.push(' ');
        }
        let named: Vec<String> =
            gated.others.iter().map(|(path, why)| format!("{path} ({why})")).collect();
        text.push_str(&format!(
            "staged previews only text files, so these writes of the command were not staged and did not reach the workspace: {}. A person can run such a command.",
            named.join(", ")
        ));
    }
    if gated.ignored > 0 {
        text.push_str(&format!(
            " {} path{} that .gitignore ignores changed as the command left them, never staged.",
            gated.ignored,
            if gated.ignored == 1 { "" } else { "s" },
        ));
    }
    if gated.id.is_some() {
        text.push_str("\n\n");
        text.push_str(RESOLVE_REMINDER);
    }
    text
}

pub(crate) fn client_of(name: &str) -> Client {
    Client::from_name(name).unwrap_or(Client::ClaudeCode)
}

pub(crate) fn client_display(name: &str) -> &'static str {
    client_of(name).display()
}

/// Whether the workspace at `root` holds a run folder (a command running, or one whose
/// wrapper died): only then does a hook call that is no edit open the workspace, to sweep. A
/// finished run's folder being deleted (`gone-`, by the child its wrapper left to delete it,
/// or by the next one's) is no run; when that is all there is, the folders are deleted here
/// unless a deleter is at work ([`staged_shell::delete_gone`] does not wait for one), so a
/// deleter killed halfway leaves nothing for good.
pub(crate) fn any_runs(root: &Path) -> bool {
    let state = root.join(staged_journal::STATE_DIR_NAME);
    let runs = state.join(staged_shell::RUNS_DIR);
    // A symlink in its place (to a folder outside the workspace, maybe) is never read.
    if !std::fs::symlink_metadata(&runs).is_ok_and(|m| m.is_dir()) {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(&runs) else { return false };
    let mut gone = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(staged_shell::GONE_PREFIX) {
            gone = true;
        } else if !name.starts_with("kept") && entry.path().is_dir() {
            return true;
        }
    }
    if gone {
        staged_shell::delete_gone(&state);
    }
    false
}

/// At any hook call of a session: finishes the session's runs whose wrapper died, harvests
/// those that outlive their wrapper (what a process their command left running wrote since
/// their last harvest), and says what became of their writes (`None` when there were none).
pub(crate) fn sweep(client: Client, event: &HookEvent, ws: &WorkspaceSession) -> Finished {
    let Some(session) = event.session_id.as_deref() else { return Finished::default() };
    let state = ws.workspace().state_dir();
    if !state.join(staged_shell::RUNS_DIR).is_dir() {
        return Finished::default();
    }
    let mut res = Finished::default();
    let mut messages = Vec::new();
    // A call that returned while its wrapper still runs: from now on its run is harvested as
    // one that outlives its call. Its own `PostToolUse` says so (Claude Code's
    // `run_in_background`); Codex 0.171 sends none for an `exec_command` that yielded (the
    // command runs on in its session), so the end of the turn (`Stop`) or the next prompt
    // says it of every run of the session still running: no tool call is in flight then.
    match (&event.hook_event_name, event.tool_use_id.as_deref()) {
        (EventName::PostToolUse, Some(call)) => {
            Run::mark_returned(&state, client.name(), session, Some(call));
        }
        (EventName::Stop | EventName::UserPromptSubmit, _) => {
            Run::mark_returned(&state, client.name(), session, None);
        }
        _ => {}
    }
    for run in Run::leftovers(&state, client.name(), session) {
        let command = run.info().command.clone();
        if run.is_outliving() {
            let done = if run.ended() {
                finish(ws, run)
            } else if staged_shell::snapshot::Snapshot::in_run(run.dir()) {
                // A snapshot fallback's run has no upper layer to harvest from: it is compared
                // with its snapshot once, when its last process has ended.
                continue;
            } else {
                outlive(ws, run)
            };
            res.notes.extend(done.notes);
            messages.extend(done.message);
            continue;
        }
        let done = finish(ws, run);
        res.notes.extend(done.notes);
        messages.push(match done.message {
            Some(text) => format!(
                "A shell command that did not finish (`{}`): {text}",
                staged_shell::label(&command)
            ),
            None => format!(
                "A shell command that did not finish (`{}`): what it wrote was recorded.",
                staged_shell::label(&command)
            ),
        });
    }
    if !messages.is_empty() {
        res.message = Some(messages.join("\n"));
    }
    res
}
