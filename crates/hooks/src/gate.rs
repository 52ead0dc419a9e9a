//! Gate mode: every edit staged, never written (the Stop hook that holds a turn while a staged
//! preview is pending is `stop.rs`).
//!
//! Before staging, the client's own permissions are read (`permission.rs`): an edit the client
//! would refuse is denied without staging, and one it would have asked the person about is
//! staged as a preview only a person may apply. A protected path (`.git/`, the agents' control
//! files) is refused by the staging itself. NotebookEdit is denied with a reason that tells the
//! model to edit the notebook's JSON with Edit.

use std::path::Path;

use serde_json::Value;
use staged_core::RESOLVE_REMINDER;
use staged_edit::{EditItem, EditParams, WriteParams};
use staged_fs::RelPath;
use staged_protocol::ToolResult;
use staged_workspace::{ChangeDetails, WorkspaceSession};

use crate::{
    Outcome,
    clients::ToolEdit,
    event::{Client, HookEvent, Reply},
    permission::{Verdict, verdict},
    shell::{ShellPatch, shell_patch, shell_patch_argv},
};

/// Whether a tool event is an edit this hook handles.
pub(crate) fn is_edit(client: Client, event: &HookEvent) -> bool {
    client.edit(event).is_some()
}

/// What the command of a shell tool call (`command` or `cmd`: a script, or its words) is.
pub(crate) fn shell_patch_of(event: &HookEvent) -> ShellPatch {
    let Some(input) = &event.tool_input else { return ShellPatch::None };
    let command = input.get("command").or_else(|| input.get("cmd"));
    match command {
        Some(Value::String(script)) => shell_patch(script),
        Some(Value::Array(words)) => {
            let words: Option<Vec<&str>> = words.iter().map(Value::as_str).collect();
            match words {
                Some(words) => shell_patch_argv(&words),
                // Words that are not all strings: what runs is unknown.
                None => ShellPatch::Entangled,
            }
        }
        _ => ShellPatch::None,
    }
}

/// Why a shell command that runs a patch in any other way than on its own is refused whole.
pub(crate) const ENTANGLED_PATCH: &str = "this shell command runs apply_patch (or carries a patch) together with other commands or in a form staged cannot stage, so none of it was run. Send the patch on its own: with the apply_patch tool, or as a command that is only `apply_patch <<'EOF'` ... `EOF` (after at most one `cd <dir> &&`); run the other commands in a call of their own.";

/// Why Claude Code's NotebookEdit is refused: staged stages text edits of files, and a cell
/// edit is a rewrite of the notebook's JSON that the model can make with Edit.
pub(crate) const NOTEBOOK_EDIT: &str = "staged refused this NotebookEdit without staging it, and nothing was written: staged gates every edit as a preview of the file's text, and does not stage notebook cell edits. To change the notebook, edit its JSON with Edit (a cell's \"source\" lines), which staged stages as a preview.";

/// Why Qwen Code's `notebook_edit` is refused (as Claude Code's NotebookEdit is).
pub(crate) const QWEN_NOTEBOOK_EDIT: &str = "staged refused this notebook_edit without staging it, and nothing was written: staged gates every edit as a preview of the file's text, and does not stage notebook cell edits. To change the notebook, edit its JSON with edit (a cell's \"source\" lines), which staged stages as a preview.";

/// The deny text of `client`'s notebook cell edit.
fn notebook_edit(client: Client) -> String {
    match client {
        Client::QwenCode => QWEN_NOTEBOOK_EDIT,
        _ => NOTEBOOK_EDIT,
    }
    .to_owned()
}

/// `PreToolUse`: stages the edit and denies the call, naming the preview; denies with the error
/// when it cannot be staged, and without staging when the client would refuse the edit.
pub(crate) fn pre_tool_use(
    client: Client,
    event: &HookEvent,
    ws: &WorkspaceSession,
    cwd: &Path,
    session_dir: &Path,
    homes: &crate::install::ClientHomes,
) -> Outcome {
    let codex_home = homes.codex_home.as_deref();
    let person = match verdict(client, event, ws.workspace().root(), homes) {
        Verdict::Deny(why) => return Outcome::reply(Reply::Deny(why)),
        Verdict::Stage => None,
        Verdict::PersonOnly(why) => Some(why),
    };
    if client == Client::Codex
        && let Some(paths) = patch_paths(client, event, ws, cwd)
        && let Some(why) = crate::permission::outside_workspace_write(
            ws.workspace().root(),
            codex_home,
            session_dir,
            &paths,
        )
    {
        return Outcome::reply(Reply::Deny(why));
    }
    if let Some(why) = client.refusal(event) {
        return Outcome::reply(Reply::Deny(why));
    }
    if client.edit(event) == Some(ToolEdit::Notebook) {
        return Outcome::reply(Reply::Deny(notebook_edit(client)));
    }
    ws.session().set_needs_person(person.clone());
    match stage(client, event, ws, cwd) {
        Ok(staged) => {
            let reason = match &person {
                None => staged_reason(client, &staged),
                Some(why) => person_reason(client, &staged, why),
            };
            let mut outcome = Outcome::reply(Reply::Deny(reason));
            // The Stop hook holds the turn for what the model can resolve; a preview only a
            // person may apply is not the model's to finish.
            if person.is_none()
                && let Some(session) = &event.session_id
            {
                match crate::stop::remember(ws, client, session, &staged.id, &staged.files) {
                    Ok(None) => {}
                    Ok(Some(note)) => outcome = outcome.note(note),
                    Err(why) => outcome = outcome.note(format!("staged: {why}")),
                }
            }
            outcome
        }
        Err(why) => {
            let outcome = Outcome::reply(Reply::Deny(format!(
                "staged refused this edit, and nothing was written: {why}"
            )));
            match crate::stop::refused(ws, client, event, &why) {
                Some(note) => outcome.note(note),
                None => outcome,
            }
        }
    }
}

/// The files a Codex patch writes (moves' sources and destinations), absolute; `None` when it
/// is not a patch staged can read, which the staging then refuses with its own error.
fn patch_paths(
    client: Client,
    event: &HookEvent,
    ws: &WorkspaceSession,
    cwd: &Path,
) -> Option<Vec<std::path::PathBuf>> {
    let (patch, dir) = match client.edit(event)? {
        ToolEdit::Patch => (event.input().patch()?.to_owned(), None),
        _ => match shell_patch_of(event) {
            ShellPatch::Alone { patch, dir } => (patch, dir),
            _ => return None,
        },
    };
    let mut parsed = staged_edit::patch::parse(&patch).ok()?;
    if let Some(base) = base(ws, cwd, dir.as_deref()).ok()? {
        parsed.rebase(&base);
    }
    let root = ws.workspace().root();
    Some(parsed.paths().into_iter().map(|path| root.join(path)).collect())
}

/// What a gate staged.
pub(crate) struct Staged {
    pub(crate) id: String,
    pub(crate) label: String,
    pub(crate) files: Vec<String>,
}

/// Stages the event's edit with the text tools.
fn stage(
    client: Client,
    event: &HookEvent,
    ws: &WorkspaceSession,
    cwd: &Path,
) -> Result<Staged, String> {
    let session = ws.session();
    let workspace = ws.workspace();
    let input = event.tool_input.clone().unwrap_or(Value::Null);
    let result = match client.edit(event) {
        Some(ToolEdit::Replace) => {
            let params = edit_params(&input)?;
            staged_edit::stage_edit(session, workspace, &params)
        }
        Some(ToolEdit::Write) => {
            let params: WriteParams = serde_json::from_value(input)
                .map_err(|err| format!("the Write call's arguments are not readable: {err}"))?;
            staged_edit::stage_write(session, workspace, &params)
        }
        Some(ToolEdit::Patch) => {
            let patch = event.input().patch().ok_or("the apply_patch call carries no patch")?;
            staged_edit::stage_patch(session, workspace, patch, base(ws, cwd, None)?.as_ref())
        }
        Some(ToolEdit::ShellPatch) => {
            let ShellPatch::Alone { patch, dir } = shell_patch_of(event) else {
                return Err(ENTANGLED_PATCH.to_owned());
            };
            staged_edit::stage_patch(
                session,
                workspace,
                &patch,
                base(ws, cwd, dir.as_deref())?.as_ref(),
            )
        }
        Some(ToolEdit::Notebook | ToolEdit::Refused) | None => {
            return Err("this tool is not an edit staged can stage".to_owned());
        }
    };
    staged_of(&result.map_err(|err| err.to_string())?)
}

/// Claude Code's Edit (`{file_path, old_string, new_string, replace_all}`) or MultiEdit
/// (`{file_path, edits}`) as `edit`'s arguments.
fn edit_params(input: &Value) -> Result<EditParams, String> {
    let path = input
        .get("file_path")
        .or_else(|| input.get("path"))
        .and_then(Value::as_str)
        .ok_or("the edit names no file_path")?
        .to_owned();
    let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_owned);
    if let Some(edits) = input.get("edits") {
        let edits: Vec<EditItem> = serde_json::from_value(edits.clone())
            .map_err(|err| format!("the MultiEdit call's edits are not readable: {err}"))?;
        return Ok(EditParams {
            path,
            old_string: None,
            new_string: None,
            replace_all: None,
            edits: Some(edits),
        });
    }
    Ok(EditParams {
        path,
        old_string: Some(text("old_string").ok_or("the Edit call has no old_string")?),
        new_string: Some(text("new_string").ok_or("the Edit call has no new_string")?),
        replace_all: input.get("replace_all").and_then(Value::as_bool),
        edits: None,
    })
}

/// The folder a patch's relative paths are relative to: the client's `cwd` (and a `cd` in
/// the command), relative to the workspace root.
pub(crate) fn base(
    ws: &WorkspaceSession,
    cwd: &Path,
    dir: Option<&str>,
) -> Result<Option<RelPath>, String> {
    let mut at = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    if let Some(dir) = dir {
        at = at.join(dir);
    }
    let root = ws.workspace().root();
    let rel = match at.strip_prefix(root) {
        Ok(rel) => rel.to_path_buf(),
        Err(_) => {
            return Err(format!(
                "the patch runs in {}, which is outside the workspace {}",
                at.display(),
                root.display()
            ));
        }
    };
    if rel.as_os_str().is_empty() {
        return Ok(None);
    }
    RelPath::new(&rel)
        .map(Some)
        .map_err(|err| format!("the patch's folder is not one inside the workspace: {err}"))
}

fn staged_of(result: &ToolResult) -> Result<Staged, String> {
    let details = result
        .details
        .as_ref()
        .and_then(|d| ChangeDetails::parse(d).ok())
        .ok_or("staging returned no preview")?;
    let id = details.pending_id.clone().ok_or("staging returned no pending id")?;
    Ok(Staged {
        id,
        label: details.label.clone(),
        files: details.files.iter().map(|f| f.path.clone()).collect(),
    })
}

/// What every deny text that names a preview says about which preview `resolve` acts on.
pub(crate) const NEWEST_FIRST: &str = "resolve acts on the newest pending preview: with several pending, resolve them one at a time, newest first, each with its own reason.";

/// The reason a staged edit is denied with: the preview, how to resolve it, the reminder.
pub(crate) fn staged_reason(client: Client, staged: &Staged) -> String {
    let what = client.what();
    let mut res = format!(
        "staged holds this {what} as a preview, and nothing was written yet: {} ({}). To write it, call {} with action \"apply\" and a one-line reason (or \"discard\" to drop it); {NEWEST_FIRST}",
        staged.id,
        staged.label,
        client.resolve_tool()
    );
    if client.reread_after_apply() {
        res.push_str(&format!(
            " After applying, Read {} again before editing it further.",
            staged.files.join(", ")
        ));
    }
    res.push_str("\n\n");
    res.push_str(RESOLVE_REMINDER);
    res
}

/// The reason an edit staged as a preview only a person may apply is denied with.
pub(crate) fn person_reason(client: Client, staged: &Staged, why: &str) -> String {
    format!(
        "staged holds this {} as a preview, and nothing was written yet: {} ({}). {}{}, so only a person may apply it: tell them it waits for them (`staged review`, or `staged resolve apply --id {} --reason \"...\"` in the workspace). Calling {} to apply it is refused (\"discard\" drops it); {NEWEST_FIRST}",
        client.what(),
        staged.id,
        staged.label,
        why.get(..1).unwrap_or_default().to_uppercase(),
        why.get(1..).unwrap_or_default(),
        staged.id,
        client.resolve_tool()
    )
}
