//! Shell calls under staged (`docs/contract/shell.md`): the model's shell command is rewritten
//! (the client's `updatedInput`) to run under `staged shell-run`, which runs it in a private
//! overlay of the workspace (`staged-shell`), so staged knows exactly what it wrote; once it
//! is done, [`finish`] records those writes in the session (record mode) or stages them as
//! one preview of it and keeps them out of the tree (gate mode). A run whose wrapper never
//! finished (the command was killed) is finished by the session's next hook call
//! ([`sweep`]).
//!
//! Handled: Claude Code's `Bash` (its `command`); Codex's shell (`Bash`, its `command`) where
//! its approval policy is `never`.

use std::path::Path;

use serde_json::Value;
use staged_core::{FrontEnd, LogAction, LogOutcome, LogRecord, PendingId, RESOLVE_REMINDER};
use staged_shell::{Run, apply, plan, upper};
use staged_store::SessionScope;
use staged_workspace::WorkspaceSession;

use crate::{
    Outcome,
    event::{Client, HookEvent, Mode, Reply},
    gate::NEWEST_FIRST,
};

/// Whether `event` is a shell call this module wraps: Claude Code's `Bash`; Codex's shell
/// (`Bash`, its `command` a string) where its approval policy is `never`
/// (`bypassPermissions`: Codex takes a rewrite only with an allow, which must grant nothing it
/// would not) and the command is no patch (those the gate stages as patches).
pub(crate) fn wraps(client: Client, event: &HookEvent) -> bool {
    let codex_may = client == Client::Codex
        && event.permission_mode.as_deref() == Some("bypassPermissions")
        && client.edit(event).is_none();
    (client == Client::ClaudeCode || codex_may)
        && event.hook_event_name == "PreToolUse"
        && event.tool_name.as_deref() == Some("Bash")
        && event.input_str("command").is_some()
}

/// `word` quoted for a POSIX shell.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// `PreToolUse` of a shell call: the same call, its command run under `staged shell-run`.
pub(crate) fn pre_tool_use(
    client: Client,
    mode: Mode,
    event: &HookEvent,
    root: &Path,
    staged: Option<&Path>,
) -> Outcome {
    let (Some(command), Some(session), Some(staged)) =
        (event.input_str("command"), event.session_id.as_deref(), staged)
    else {
        return match mode {
            Mode::Gate => Outcome::reply(Reply::Deny(
                "staged cannot run this shell command under its wrapper (the event names no session, or staged's own path is unknown), so in gate mode it is refused; nothing was run.".to_owned(),
            )),
            Mode::Record => Outcome::reply(Reply::Nothing)
                .note("staged: this shell command is not wrapped, so its writes are not recorded"),
        };
    };
    let mut wrapped = format!(
        "{} --workspace {} shell-run --client {} --session {} --mode {}",
        quote(&staged.to_string_lossy()),
        quote(&root.to_string_lossy()),
        client.name(),
        quote(session),
        mode.name()
    );
    if let Some(call) = &event.tool_use_id {
        wrapped.push_str(&format!(" --call {}", quote(call)));
    }
    wrapped.push_str(&format!(" -- {}", quote(command)));
    let mut input = event.tool_input.clone().unwrap_or(Value::Null);
    if let Some(object) = input.as_object_mut() {
        object.insert("command".to_owned(), Value::String(wrapped));
    }
    Outcome::reply(Reply::Rewrite(input))
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
fn enter(ws: &WorkspaceSession, client: &str, session: &str) {
    if let Some(store) = ws.sqlite() {
        let process = staged_session::process::client_of_this_process().map(|p| p.key());
        if let Ok(row) = store.open_session(client, session, process.as_deref()) {
            store.set_scope(SessionScope::model(row.number));
        }
    }
    ws.session().set_front_end(FrontEnd::Hook(client.to_owned()));
}

/// Finishes `run` (its command is done, or dead): reads what it wrote, records it or stages
/// it as its mode says, and deletes the run folder (kept, and named, when the writes could
/// not be recorded).
pub fn finish(ws: &WorkspaceSession, run: Run) -> Finished {
    if run.is_done() {
        let _ = run.remove();
        return Finished::default();
    }
    if run.from_earlier_boot() {
        return kept_aside(
            run,
            "the system restarted before they were recorded, and what a command writes is not synced until then, so they may be incomplete",
        );
    }
    let info = run.info().clone();
    let client = client_display(&info.client);
    enter(ws, &info.client, &info.session);
    let root = ws.workspace().root().to_path_buf();
    let planned = upper::written(&root, &run.upper())
        .map_err(|err| format!("what the command wrote could not be read: {err}"))
        .and_then(|written| plan::plan(&root, written));
    let plan = match planned {
        Ok(plan) => plan,
        Err(why) => return kept_aside(run, &why),
    };
    let label = staged_shell::label(&info.command);
    let mut res = Finished::default();
    if plan.is_empty() {
        let _ = run.remove();
        return res;
    }
    if info.mode == "gate" {
        match apply::gate(ws.session(), ws.workspace(), &plan, &label) {
            Ok(gated) => {
                res.message = Some(gated_text(&gated));
                if let Some(id) = &gated.id
                    && let Err(why) = crate::stop::remember(
                        ws,
                        client_of(&info.client),
                        &info.session,
                        id,
                        &gated.files,
                    )
                {
                    res.notes.push(format!("staged: {why}"));
                }
                res.notes
                    .extend(gated.failures.iter().map(|f| format!("staged: not moved in: {f}")));
                let _ = run.mark_done();
            }
            Err(why) => {
                res.message = Some(format!(
                    "staged refused this command's writes, and none of them reached the workspace: {why}. The files are as they were before the command."
                ));
            }
        }
        let _ = run.remove();
        return res;
    }
    let call = info.call.clone().unwrap_or_default();
    let mut base = LogRecord::new(
        PendingId::from_string(format!("hook:{}:{call}", info.client)),
        label.clone(),
        staged_shell::SHELL_SOURCE,
        LogOutcome::Applied,
        LogAction::Apply,
        &FrontEnd::Hook(info.client.clone()),
    );
    base.reason = format!("{client}'s shell command, recorded by staged's wrapper");
    match apply::record(ws.session(), ws.workspace(), &plan, &info.command, base) {
        Ok(recorded) => {
            let _ = run.mark_done();
            res.notes
                .extend(recorded.failures.iter().map(|f| format!("staged: not moved in: {f}")));
            if !recorded.failures.is_empty() {
                return kept_aside(run, &recorded.failures.join("; "));
            }
            let _ = run.remove();
            res
        }
        Err(why) => kept_aside(run, &why),
    }
}

/// A run that cannot be finished now (`why`: the workspace could not be opened): its folder is
/// kept and named, as [`finish`] keeps one whose writes could not be recorded.
pub fn unfinished(run: Run, why: &str) -> Finished {
    kept_aside(run, why)
}

/// A run whose writes could not be recorded: its folder is kept (renamed `kept-<id>`), and
/// the model and the person are told where.
fn kept_aside(run: Run, why: &str) -> Finished {
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

/// What the model is told of a command whose writes were staged.
fn gated_text(gated: &apply::Gated) -> String {
    let mut text = String::new();
    if let Some(id) = &gated.id {
        text.push_str(&format!(
            "staged holds what this command wrote as a preview, and none of it was written to the workspace yet: {id} ({}; {}). To write it, call resolve with action \"apply\" and a one-line reason (or \"discard\" to drop it); {NEWEST_FIRST}",
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

fn client_of(name: &str) -> Client {
    match name {
        "codex" => Client::Codex,
        _ => Client::ClaudeCode,
    }
}

fn client_display(name: &str) -> &'static str {
    client_of(name).display()
}

/// Whether the workspace at `root` holds a run folder (a command running, or one whose
/// wrapper died): only then does a hook call that is no edit open the workspace, to sweep.
pub(crate) fn any_runs(root: &Path) -> bool {
    let dir = root.join(staged_journal::STATE_DIR_NAME).join(staged_shell::RUNS_DIR);
    std::fs::read_dir(dir).is_ok_and(|mut entries| {
        entries.any(|e| {
            e.is_ok_and(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                !name.starts_with("kept") && e.path().is_dir()
            })
        })
    })
}

/// At any hook call of a session: finishes the session's runs whose wrapper died, and says
/// what became of their writes (`None` when there were none).
pub(crate) fn sweep(client: Client, event: &HookEvent, ws: &WorkspaceSession) -> Finished {
    let Some(session) = event.session_id.as_deref() else { return Finished::default() };
    let state = ws.workspace().state_dir();
    if !state.join(staged_shell::RUNS_DIR).is_dir() {
        return Finished::default();
    }
    let mut res = Finished::default();
    let mut messages = Vec::new();
    for run in Run::leftovers(&state, client.name(), session) {
        let command = run.info().command.clone();
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
