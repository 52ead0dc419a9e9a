//! Record mode: the client's edit goes through, and is recorded in the resolve log as an
//! applied entry (diff, hashes before and after, undo data, front end `hook:<client>`), so
//! `staged log` shows it and `staged undo` reverts it (only while the files are still what the
//! edit wrote).
//!
//! Only what the edit itself did is recorded, from the bytes on disk: at `PreToolUse` the
//! files it names are read, and after it ran the disk must hold exactly what the edit makes
//! of them; anything else (a call that was declined or failed, a person's edit of the same
//! file in between) is not recorded, with a note saying so.
//!
//! - Claude Code: its `PostToolUse` compares the disk with the Edit (its `old_string` replaced
//!   by `new_string` in the file with CRLF read as LF, as Claude Code edits it, then written
//!   all LF or all CRLF) or the Write (its `content`); its `originalFile` must be the file read
//!   at `PreToolUse` with CRLF as LF. The entry's undo gives back the bytes read then. Qwen
//!   Code's `edit` and `write_file` are recorded the same way (its codec gives its
//!   `PostToolUse` Claude Code's `filePath` and `originalFile`).
//! - Codex: at `PreToolUse` the parsed patch is applied to the files read (as
//!   `staged_edit::patch` applies it, which matches Codex byte for byte); a patch that does not
//!   apply is not recorded (Codex refuses it too). The comparison is at the call's
//!   `PostToolUse`, at the next patch's `PreToolUse` (so that two patches of one file are
//!   each checked against what the other left), or at the turn's `Stop` for a patch sent
//!   through the shell or one that failed (neither fires a `PostToolUse`).
//! - opencode and Cursor: at `PreToolUse` what the call makes of its file is kept
//!   (`clients/opencode.rs`), and compared with the disk at its `PostToolUse`, as a Codex
//!   patch's is.

use std::{collections::BTreeMap, path::Path};

use serde_json::Value;
use staged_core::{FrontEnd, LogAction, LogOutcome, LogRecord, PendingId};
use staged_edit::patch::PatchFile;
use staged_fs::RelPath;
use staged_journal::{
    Applied, ChangeKind, ChangedFile, NEW_FILE_MODE, STATE_DIR_NAME, UndoData, describe_applied,
    label_of,
};
use staged_protocol::lenient::view;
use staged_workspace::WorkspaceSession;

use crate::{
    Outcome,
    clients::{
        ToolEdit,
        wire::{ClaudeEdit, ClaudeEdits, FileToolResponse},
    },
    event::{Client, HookEvent, Reply},
    gate::{base, shell_patch_of},
    shell::ShellPatch,
    state::{FileBefore, SessionFile, Snapshot},
};

/// `PreToolUse`: lets the edit go; first reads the files it names (and, for Codex, records
/// the patches before it that are done).
pub(crate) fn pre_tool_use(
    client: Client,
    event: &HookEvent,
    ws: &WorkspaceSession,
    cwd: &Path,
) -> Outcome {
    let (Some(session), Some(call)) = (&event.session_id, &event.tool_use_id) else {
        return Outcome::reply(Reply::Nothing)
            .note("staged: the event names no session or call; not recorded");
    };
    let file = match SessionFile::open(ws, client, session) {
        Ok(file) => file,
        Err(why) => {
            return Outcome::reply(Reply::Nothing).note(format!("staged: not recorded: {why}"));
        }
    };
    let (mut state, unreadable) = file.load_or_rebuild(ws);
    let mut notes: Vec<String> = unreadable.into_iter().collect();
    if client == Client::Codex {
        // The patches before this one have run (or never will): what they left is on disk
        // now, before this one changes it.
        notes.extend(finish(ws, client, &mut state.snapshots, None));
    }
    let snapshot = match client {
        Client::OpenCode | Client::Cursor => crate::clients::opencode::snapshot(event, ws, cwd),
        Client::Copilot | Client::Cline => claude_snapshot(event, ws),
        _ => match client.edit(event) {
            Some(ToolEdit::Patch | ToolEdit::ShellPatch) => codex_snapshot(event, ws, cwd),
            _ => claude_snapshot(event, ws),
        },
    };
    match snapshot {
        Ok(snapshot) => state.keep_snapshot(call, snapshot),
        Err(why) => notes.push(format!("staged: not recorded: {why}")),
    }
    if let Err(why) = file.save(&state) {
        notes.push(format!("staged: not recorded: {why}"));
    }
    Outcome { reply: Reply::Nothing, notes }
}

/// `PostToolUse`: records what the edit wrote.
pub(crate) fn post_tool_use(
    client: Client,
    event: &HookEvent,
    ws: &WorkspaceSession,
    cwd: &Path,
) -> Outcome {
    let _ = cwd;
    let (Some(session), Some(call)) = (&event.session_id, &event.tool_use_id) else {
        return Outcome::reply(Reply::Nothing)
            .note("staged: the event names no session or call; not recorded");
    };
    let res = SessionFile::open(ws, client, session).and_then(|file| {
        let (mut state, unreadable) = file.load_or_rebuild(ws);
        let mut notes: Vec<String> = unreadable.into_iter().collect();
        notes.extend(match client {
            Client::Codex | Client::OpenCode | Client::Cursor => {
                finish(ws, client, &mut state.snapshots, Some(call))
            }
            _ => {
                let snapshot = state.snapshots.remove(call.as_str());
                match record_claude(client, event, ws, snapshot.as_ref()) {
                    Ok(notes) => notes,
                    Err(why) => vec![format!("staged: not recorded: {why}")],
                }
            }
        });
        file.save(&state)?;
        Ok(notes)
    });
    match res {
        Ok(notes) => Outcome { reply: Reply::Nothing, notes },
        Err(why) => Outcome::reply(Reply::Nothing).note(format!("staged: not recorded: {why}")),
    }
}

/// `Stop` (Codex): records the patches whose `PostToolUse` never came (shell patches, and
/// patches that failed, which are not recorded).
pub(crate) fn stop(client: Client, event: &HookEvent, ws: &WorkspaceSession) -> Outcome {
    let (Client::Codex, Some(session)) = (client, &event.session_id) else {
        return Outcome::reply(Reply::Nothing);
    };
    let res = SessionFile::open(ws, client, session).and_then(|file| {
        let (mut state, unreadable) = file.load_or_rebuild(ws);
        let mut notes: Vec<String> = unreadable.into_iter().collect();
        notes.extend(finish(ws, client, &mut state.snapshots, None));
        file.save(&state)?;
        Ok(notes)
    });
    match res {
        Ok(notes) => Outcome { reply: Reply::Nothing, notes },
        Err(why) => Outcome::reply(Reply::Nothing).note(format!("staged: not recorded: {why}")),
    }
}

/// The file a Claude Code Edit, MultiEdit or Write names, as it is now.
fn claude_snapshot(event: &HookEvent, ws: &WorkspaceSession) -> Result<Snapshot, String> {
    let path = event.input().file_path.0.ok_or("the edit names no file")?;
    let rel = claude_file(ws, path)?;
    let (text, mode) = match read(ws, &rel)? {
        Some((text, mode)) => (Some(text), mode),
        None => (None, 0),
    };
    Ok(Snapshot {
        files: vec![FileBefore { path: rel.display(), text, mode }],
        ..Snapshot::default()
    })
}

/// `path` (absolute, as Claude Code names files) as a workspace file: with its symlinks
/// resolved when it exists, else as written.
pub(crate) fn claude_file(ws: &WorkspaceSession, path: &str) -> Result<RelPath, String> {
    let workspace = ws.workspace();
    let lexical = workspace.lexical(path).map_err(|err| err.to_string())?;
    let rel = if std::fs::symlink_metadata(&lexical).is_ok() {
        workspace
            .resolve_existing(path)
            .map_err(|err| err.to_string())?
            .ok_or("the edit names the workspace root")?
    } else {
        let rel = lexical
            .strip_prefix(workspace.root())
            .map_err(|_| format!("{path} is outside the workspace"))?;
        RelPath::new(rel).map_err(|err| err.to_string())?
    };
    let display = rel.display();
    workspace_file(&display)
        .ok_or_else(|| format!("{display} is in staged's own state folder ({STATE_DIR_NAME}/)"))
}

/// `text` with each CRLF as LF, as Claude Code reads a file.
fn lf(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// What Claude Code's Edit or MultiEdit makes of `text` (read with CRLF as LF): each
/// `old_string` replaced by its `new_string` (every one with `replace_all`), in order. `None`
/// when one is not in the text as given (Claude Code then matches it some other way, which
/// staged does not guess at).
fn claude_edited(input: &Value, text: &str) -> Option<String> {
    let many = view::<ClaudeEdits>(input).and_then(|multi| multi.edits.0);
    let edits = many.as_deref().unwrap_or(std::slice::from_ref(input));
    let mut text = text.to_owned();
    for edit in edits {
        let edit: ClaudeEdit = view(edit)?;
        let (old, new) = (edit.old_string.0?, edit.new_string.0?);
        let all = edit.replace_all.0.unwrap_or(false);
        if old.is_empty() {
            // An Edit of an empty (or new) file writes `new_string` as the file.
            if !text.is_empty() {
                return None;
            }
            text = new.to_owned();
            continue;
        }
        // Deleting a line takes its line ending with it.
        let old = match format!("{old}\n") {
            with_end if new.is_empty() && !old.ends_with('\n') && text.contains(&with_end) => {
                with_end
            }
            _ => old.to_owned(),
        };
        if !text.contains(&old) {
            return None;
        }
        text = if all { text.replace(&old, new) } else { text.replacen(&old, new, 1) };
    }
    Some(text)
}

/// Claude Code's Edit, MultiEdit or Write, from its `PostToolUse` and the file as it was read
/// at `PreToolUse` (`snapshot`).
///
/// Copilot CLI's edit and create and Cline's editor (as Edit and Write) are recorded alike:
/// their result says only whether the tool succeeded (`resultType`, `isError`), so the file as
/// the snapshot read it is what the edit started from, and a failed call wrote nothing.
fn record_claude(
    client: Client,
    event: &HookEvent,
    ws: &WorkspaceSession,
    snapshot: Option<&Snapshot>,
) -> Result<Vec<String>, String> {
    let response = event.tool_response.as_ref().ok_or("the event carries no tool_response")?;
    let response = FileToolResponse::of(response);
    let failed = match client {
        Client::Copilot => response.result_type.0 != Some("success"),
        Client::Cline => response.is_error.0 == Some(true),
        _ => false,
    };
    if failed {
        return Ok(Vec::new());
    }
    let path = response
        .file_path
        .0
        .or_else(|| event.input().file_path.0)
        .ok_or("the event names no file")?;
    let rel = claude_file(ws, path)?;
    let path = rel.display();
    let before =
        snapshot.and_then(|s| s.files.iter().find(|f| f.path == path)).ok_or_else(|| {
            format!("{path} was not read before the edit (its PreToolUse hook did not run)")
        })?;
    let snapshot_text = before.text.as_deref().map(lf);
    let original = match client {
        Client::Copilot | Client::Cline => snapshot_text.as_deref().or(Some("")),
        _ => response.original_file.0,
    };
    // An Edit that creates a file reports it as empty.
    let created = before.text.is_none() && original == Some("");
    if before.text.as_deref().map(lf).as_deref() != original && !created {
        return Err(format!(
            "{path} changed between staged's hook and {}'s reading of it, so what the edit did is not known",
            client.display()
        ));
    }
    let now = read(ws, &rel)?.map(|(text, _)| text);
    let input = event.tool_input.clone().unwrap_or(Value::Null);
    let explained = match client.edit(event) {
        Some(ToolEdit::Write) => event.input().content.0 == now.as_deref(),
        _ => match (claude_edited(&input, original.unwrap_or_default()), &now) {
            (Some(edited), Some(now)) => *now == edited || *now == edited.replace('\n', "\r\n"),
            _ => false,
        },
    };
    let Some(after) = now.filter(|_| explained) else {
        return Err(format!(
            "{path} is not what the edit makes of it (the file changed after the edit, or the edit matched its text in a way staged does not know)"
        ));
    };
    if before.text.as_deref() == Some(after.as_str()) {
        return Ok(Vec::new());
    }
    let op = match &before.text {
        Some(text) => {
            Applied::Update { path: path.clone(), edits: staged_edit::line_edits(text, &after) }
        }
        None => Applied::Create { path: path.clone(), content: after, mode: None },
    };
    let source = match client.edit(event) {
        Some(ToolEdit::Write) => "write",
        _ => "edit",
    };
    let mut texts = BTreeMap::new();
    if let Some(text) = &before.text {
        texts.insert(path, text.clone());
    }
    let tool = match (client, event.tool_name.as_deref()) {
        (Client::Copilot, Some("Write")) => "create",
        (Client::Copilot, _) => "edit",
        (Client::Cline, _) => "editor",
        (_, tool) => tool.unwrap_or("edit"),
    };
    log(ws, client, event, source, tool, vec![op], &texts)
}

/// The files a Codex patch names (moves' destinations included), as they are now, and as the
/// patch leaves them.
pub(crate) fn codex_snapshot(
    event: &HookEvent,
    ws: &WorkspaceSession,
    cwd: &Path,
) -> Result<Snapshot, String> {
    let (patch, dir) = match Client::Codex.edit(event) {
        Some(ToolEdit::Patch) => (
            event.input().patch()
                .ok_or("the apply_patch call carries no patch")?
                .to_owned(),
            None,
        ),
        _ => match shell_patch_of(event) {
            ShellPatch::Alone { patch, dir } => (patch, dir),
            _ => return Err(
                "the shell command runs apply_patch together with other commands, so staged cannot tell what it wrote"
                    .to_owned(),
            ),
        },
    };
    let mut parsed = staged_edit::patch::parse(&patch)?;
    if let Some(base) = base(ws, cwd, dir.as_deref())? {
        parsed.rebase(&base);
    }
    let rel = |path: &str| -> Result<String, String> {
        let lexical = ws.workspace().lexical(path).map_err(|err| err.to_string())?;
        let rel = lexical
            .strip_prefix(ws.workspace().root())
            .map_err(|_| format!("{path} is outside the workspace"))?;
        let rel = RelPath::new(rel).map_err(|err| err.to_string())?;
        workspace_file(&rel.display())
            .map(|rel| rel.display())
            .ok_or_else(|| format!("{path} is in staged's own state folder ({STATE_DIR_NAME}/)"))
    };
    let mut res = Snapshot::default();
    for file in &parsed.files {
        if let PatchFile::Update { path, move_to: Some(to), .. } = file {
            res.moves.push((rel(path)?, rel(to)?));
        }
    }
    for path in parsed.paths() {
        let path = rel(path)?;
        if res.files.iter().any(|f| f.path == path) {
            continue;
        }
        let (text, mode) = match read(ws, &RelPath::new(&path).map_err(|err| err.to_string())?)? {
            Some((text, mode)) => (Some(text), mode),
            None => (None, 0),
        };
        res.files.push(FileBefore { path, text, mode });
    }
    // What the patch leaves, applied to the files as they are.
    let mut after: BTreeMap<String, Option<String>> =
        res.files.iter().map(|f| (f.path.clone(), f.text.clone())).collect();
    let not_applied = |why: String| {
        format!(
            "the patch does not apply to the files as they are ({why}), so Codex refuses it too"
        )
    };
    for file in &parsed.files {
        match file {
            PatchFile::Add { path, content, .. } => {
                after.insert(rel(path)?, Some(content.clone()));
            }
            PatchFile::Delete { path, .. } => {
                let path = rel(path)?;
                if after.get(&path).cloned().flatten().is_none() {
                    return Err(not_applied(format!("{path} does not exist")));
                }
                after.insert(path, None);
            }
            PatchFile::Update { path, move_to, chunks, style, .. } => {
                let path = rel(path)?;
                let text = after
                    .get(&path)
                    .cloned()
                    .flatten()
                    .ok_or_else(|| not_applied(format!("{path} does not exist")))?;
                let edits = staged_edit::patch::apply_chunks(&path, &text, chunks, *style)
                    .map_err(not_applied)?;
                let new = staged_journal::replay(&text, &edits)
                    .ok_or_else(|| not_applied(format!("its changes of {path} overlap")))?;
                match move_to.as_deref().map(rel).transpose()?.filter(|to| *to != path) {
                    Some(to) => {
                        after.insert(path, None);
                        after.insert(to, Some(new));
                    }
                    None => {
                        after.insert(path, Some(new));
                    }
                }
            }
        }
    }
    res.after = after;
    Ok(res)
}

/// Records the snapshot of call `only` (or every snapshot left) whose files are now exactly
/// what its patch makes of them, and notes each one that is not recorded; all are forgotten.
fn finish(
    ws: &WorkspaceSession,
    client: Client,
    snapshots: &mut BTreeMap<String, Snapshot>,
    only: Option<&str>,
) -> Vec<String> {
    let mut calls: Vec<(u64, String)> = snapshots
        .iter()
        .filter(|(call, _)| only.is_none_or(|only| only == call.as_str()))
        .map(|(call, s)| (s.seq, call.clone()))
        .collect();
    calls.sort();
    let mut notes = Vec::new();
    for (_, call) in calls {
        let Some(snapshot) = snapshots.remove(&call) else { continue };
        let event = HookEvent {
            hook_event_name: crate::event::EventName::PostToolUse,
            session_id: None,
            cwd: None,
            tool_name: Some(snapshot.tool.clone().unwrap_or_else(|| "apply_patch".to_owned())),
            tool_input: None,
            tool_response: None,
            tool_use_id: Some(call),
            permission_mode: None,
            stop_hook_active: None,
            prompt: None,
            agent: None,
        };
        match record_snapshot(ws, client, &event, &snapshot) {
            Ok(mut more) => notes.append(&mut more),
            Err(why) => notes.push(format!("staged: not recorded: {why}")),
        }
    }
    notes
}

/// What a Codex patch (or an opencode edit) did: its files before, if they are now exactly
/// what it makes of them.
fn record_snapshot(
    ws: &WorkspaceSession,
    client: Client,
    event: &HookEvent,
    snapshot: &Snapshot,
) -> Result<Vec<String>, String> {
    // The state file is the workspace's, as open to anyone as any file there: what it names
    // outside the workspace, or in staged's own folder, is not a file a patch wrote.
    let names = snapshot.files.iter().map(|f| &f.path).chain(snapshot.after.keys());
    if let Some(odd) = names.into_iter().find(|path| workspace_file(path).is_none()) {
        return Err(format!("{} is not a file of the workspace", odd.escape_debug()));
    }
    if snapshot.after.is_empty() {
        return Err("what the patch makes of its files is not known".to_owned());
    }
    let files: Vec<&FileBefore> = snapshot.files.iter().collect();
    let mut now: BTreeMap<&str, Option<(String, u32)>> = BTreeMap::new();
    for path in files.iter().map(|f| &f.path).chain(snapshot.after.keys()) {
        let Some(rel) = workspace_file(path) else { continue };
        now.insert(path.as_str(), read(ws, &rel)?);
    }
    for (path, expected) in &snapshot.after {
        let found = now.get(path.as_str()).cloned().flatten().map(|(text, _)| text);
        if found != *expected {
            return Err(format!(
                "{path} is not what the patch makes of it: the patch did not run (declined or failed), or the file changed since"
            ));
        }
    }
    let moves = &snapshot.moves;
    let before: BTreeMap<&str, &FileBefore> = files.iter().map(|f| (f.path.as_str(), *f)).collect();
    let mut ops = Vec::new();
    let mut done: Vec<&str> = Vec::new();
    for (from, to) in moves {
        let (Some(b), Some(Some((after, _)))) =
            (before.get(from.as_str()).and_then(|f| f.text.as_ref()), now.get(to.as_str()))
        else {
            continue;
        };
        let gone = matches!(now.get(from.as_str()), Some(None));
        let was_absent = before.get(to.as_str()).is_some_and(|f| f.text.is_none());
        if gone && was_absent {
            ops.push(Applied::Move {
                from: from.clone(),
                to: to.clone(),
                edits: staged_edit::line_edits(b, after),
            });
            done.extend([from.as_str(), to.as_str()]);
        }
    }
    let mut texts = BTreeMap::new();
    for f in &files {
        if let Some(text) = &f.text {
            texts.insert(f.path.clone(), text.clone());
        }
        if done.contains(&f.path.as_str()) {
            continue;
        }
        match (&f.text, now.get(f.path.as_str()).cloned().flatten()) {
            (Some(b), Some((a, _))) if *b != a => {
                ops.push(Applied::Update {
                    path: f.path.clone(),
                    edits: staged_edit::line_edits(b, &a),
                });
            }
            (Some(b), None) => {
                ops.push(Applied::Delete {
                    path: f.path.clone(),
                    content: b.clone(),
                    mode: plain_mode(f.mode),
                });
            }
            (None, Some((a, _))) => {
                ops.push(Applied::Create { path: f.path.clone(), content: a, mode: None });
            }
            _ => {}
        }
    }
    if ops.is_empty() {
        return Ok(Vec::new());
    }
    let tool = snapshot.tool.as_deref().unwrap_or("apply_patch");
    log(ws, client, event, tool, tool, ops, &texts)
}

/// `path` as a workspace file, if it is one: relative, inside the root, and not in staged's own
/// state folder.
fn workspace_file(path: &str) -> Option<RelPath> {
    let rel = RelPath::new(path).ok()?;
    let first = rel.components().next()?;
    (rel.display() == path && first != STATE_DIR_NAME).then_some(rel)
}

/// The permission bits of a file's mode, as a restored file gets them: read, write and run,
/// never set-id or sticky; none at all (a mode that is no file's) is a new file's.
fn plain_mode(mode: u32) -> u32 {
    match mode & 0o777 {
        0 => NEW_FILE_MODE,
        bits => bits,
    }
}

/// Writes the log entry of `ops` (made by `tool` of `client`).
fn log(
    ws: &WorkspaceSession,
    client: Client,
    event: &HookEvent,
    source: &str,
    tool: &str,
    ops: Vec<Applied>,
    before: &BTreeMap<String, String>,
) -> Result<Vec<String>, String> {
    let (diff, files) = describe_applied(&ops, before).map_err(|err| err.to_string())?;
    let changed: Vec<ChangedFile> = ops.iter().map(|op| changed_file(op, before)).collect();
    let label = label_of(source, &changed);
    let call = event.tool_use_id.clone().unwrap_or_default();
    let mut record = LogRecord::new(
        PendingId::from_string(format!("hook:{}:{call}", client.name())),
        label.clone(),
        source,
        LogOutcome::Applied,
        LogAction::Apply,
        &FrontEnd::Hook(client.name().to_owned()),
    );
    record.reason = format!("{}'s {tool}, recorded by staged's hook", client.display());
    record.result = format!("Recorded {label}.");
    record.diff = Some(diff);
    record.files = files;
    record.undo = Some(UndoData::of(ops).to_value());
    record.texts = before.values().cloned().collect();
    ws.store().log_record(record).map_err(|err| err.to_string())?;
    Ok(Vec::new())
}

/// How a person sees one recorded op.
fn changed_file(op: &Applied, before: &BTreeMap<String, String>) -> ChangedFile {
    let lines = |edits: &[staged_journal::Edit]| {
        edits.iter().fold((0, 0), |(a, r), e| (a + count(&e.after), r + count(&e.before)))
    };
    match op {
        Applied::Update { path, edits } => {
            let (added, removed) = lines(edits);
            ChangedFile {
                path: path.clone(),
                from: None,
                change: ChangeKind::Updated,
                summary: format!("+{added} -{removed}"),
                lines_added: added,
                lines_removed: removed,
            }
        }
        Applied::Create { path, content, .. } => ChangedFile {
            path: path.clone(),
            from: None,
            change: ChangeKind::Added,
            summary: format!("new file, {} lines", count(content)),
            lines_added: count(content),
            lines_removed: 0,
        },
        Applied::Delete { path, content, .. } => ChangedFile {
            path: path.clone(),
            from: None,
            change: ChangeKind::Deleted,
            summary: "deleted".to_owned(),
            lines_added: 0,
            lines_removed: count(content),
        },
        Applied::Move { from, to, edits } => {
            let (added, removed) = lines(edits);
            let _ = before;
            ChangedFile {
                path: to.clone(),
                from: Some(from.clone()),
                change: ChangeKind::Moved,
                summary: format!("moved from {from}"),
                lines_added: added,
                lines_removed: removed,
            }
        }
    }
}

fn count(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        text.matches('\n').count() + usize::from(!text.ends_with('\n'))
    }
}

/// The text and mode of the file at `rel`; `None` when nothing is there.
///
/// # Errors
/// When something is there that is not a text file (a folder, a symlink, a FIFO, bytes that
/// are not UTF-8), or it cannot be read: what a patch did to it cannot be recorded.
pub(crate) fn read(ws: &WorkspaceSession, rel: &RelPath) -> Result<Option<(String, u32)>, String> {
    let path = rel.display();
    let (dir, name) = match ws.workspace().fs().parent(rel) {
        Ok(found) => found,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("{path} cannot be read: {err}")),
    };
    match dir.entry_metadata(&name) {
        Ok(None) => return Ok(None),
        Ok(Some(meta)) if meta.is_file() => {}
        Ok(Some(_)) => return Err(format!("{path} is not a regular file")),
        Err(err) => return Err(format!("{path} cannot be read: {err}")),
    }
    let file = dir.open_file(&name).map_err(|err| format!("{path} cannot be read: {err}"))?;
    let mode = file.metadata().map_err(|err| format!("{path} cannot be read: {err}"))?;
    let mode = std::os::unix::fs::PermissionsExt::mode(&mode.permissions());
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut &file, &mut bytes)
        .map_err(|err| format!("{path} cannot be read: {err}"))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{path} is not a text file"))?;
    Ok(Some((text, plain_mode(mode))))
}
