//! Record mode: the client's edit goes through, and is recorded in the resolve log as an
//! applied entry (diff, hashes before and after, undo data, front end `hook:<client>`), so
//! `staged log` shows it and `staged undo` reverts it (only while the files are still what the
//! edit wrote).
//!
//! Claude Code's `PostToolUse` carries the file as it was (`originalFile`); Codex's carries only
//! the tool's output, so for Codex the files a patch names are read at `PreToolUse` and
//! compared after it ran: at its `PostToolUse`, or at the turn's `Stop` for a patch sent
//! through the shell (which fires no `PostToolUse`).

use std::{collections::BTreeMap, path::Path};

use serde_json::Value;
use staged_core::{FrontEnd, LogAction, LogOutcome, LogRecord, PendingId};
use staged_fs::RelPath;
use staged_journal::{
    Applied, ChangeKind, ChangedFile, NEW_FILE_MODE, STATE_DIR_NAME, UndoData, describe_applied,
    label_of,
};
use staged_workspace::WorkspaceSession;

use crate::{
    Outcome,
    event::{Client, HookEvent, Reply},
    gate::{base, shell_patch_of},
    shell::ShellPatch,
    state::{FileBefore, SessionFile, Snapshot},
};

/// `PreToolUse`: lets the edit go; for a Codex patch, first reads the files it names.
pub(crate) fn pre_tool_use(
    client: Client,
    event: &HookEvent,
    ws: &WorkspaceSession,
    cwd: &Path,
) -> Outcome {
    if client != Client::Codex {
        return Outcome::reply(Reply::Nothing);
    }
    let (Some(session), Some(call)) = (&event.session_id, &event.tool_use_id) else {
        return Outcome::reply(Reply::Nothing)
            .note("staged: the event names no session or call; not recorded");
    };
    let snapshot = match snapshot(event, ws, cwd) {
        Ok(snapshot) => snapshot,
        Err(why) => {
            return Outcome::reply(Reply::Nothing).note(format!("staged: not recorded: {why}"));
        }
    };
    let res = SessionFile::open(ws.workspace(), client, session).and_then(|file| {
        let mut state = file.load();
        state.snapshots.insert(call.clone(), snapshot);
        file.save(&state)
    });
    match res {
        Ok(()) => Outcome::reply(Reply::Nothing),
        Err(why) => Outcome::reply(Reply::Nothing).note(format!("staged: not recorded: {why}")),
    }
}

/// `PostToolUse`: records what the edit wrote.
pub(crate) fn post_tool_use(
    client: Client,
    event: &HookEvent,
    ws: &WorkspaceSession,
    cwd: &Path,
) -> Outcome {
    let _ = cwd;
    let res = match client {
        Client::ClaudeCode => record_claude(event, ws),
        Client::Codex => {
            let (Some(session), Some(call)) = (&event.session_id, &event.tool_use_id) else {
                return Outcome::reply(Reply::Nothing);
            };
            finish_snapshots(ws, session, Some(call))
        }
    };
    match res {
        Ok(notes) => Outcome { reply: Reply::Nothing, notes },
        Err(why) => Outcome::reply(Reply::Nothing).note(format!("staged: not recorded: {why}")),
    }
}

/// `Stop` (Codex): records the patches whose `PostToolUse` never came (shell patches).
pub(crate) fn stop(client: Client, event: &HookEvent, ws: &WorkspaceSession) -> Outcome {
    let (Client::Codex, Some(session)) = (client, &event.session_id) else {
        return Outcome::reply(Reply::Nothing);
    };
    match finish_snapshots(ws, session, None) {
        Ok(notes) => Outcome { reply: Reply::Nothing, notes },
        Err(why) => Outcome::reply(Reply::Nothing).note(format!("staged: not recorded: {why}")),
    }
}

/// Claude Code's Edit, MultiEdit or Write, from its `PostToolUse`.
fn record_claude(event: &HookEvent, ws: &WorkspaceSession) -> Result<Vec<String>, String> {
    let response = event.tool_response.as_ref().ok_or("the event carries no tool_response")?;
    let path = response
        .get("filePath")
        .and_then(Value::as_str)
        .or_else(|| event.input_str("file_path"))
        .ok_or("the event names no file")?;
    let rel = ws
        .workspace()
        .resolve_existing(path)
        .map_err(|err| err.to_string())?
        .ok_or("the edit names the workspace root")?;
    let path = rel.display();
    if workspace_file(&path).is_none() {
        return Err(format!("{path} is in staged's own state folder ({STATE_DIR_NAME}/)"));
    }
    let before = response.get("originalFile").and_then(Value::as_str).map(str::to_owned);
    let Some((after, _)) = read(ws, &rel)? else {
        return Err(format!("{path} is not there after the edit"));
    };
    if before.as_deref() == Some(after.as_str()) {
        return Ok(Vec::new());
    }
    let op = match &before {
        Some(before) => {
            Applied::Update { path: path.clone(), edits: staged_edit::line_edits(before, &after) }
        }
        None => Applied::Create { path: path.clone(), content: after, mode: None },
    };
    let source = match event.tool_name.as_deref() {
        Some("Write") => "write",
        _ => "edit",
    };
    let mut texts = BTreeMap::new();
    if let Some(before) = before {
        texts.insert(path, before);
    }
    let tool = event.tool_name.as_deref().unwrap_or("edit");
    log(ws, Client::ClaudeCode, event, source, tool, vec![op], &texts)
}

/// The files a Codex patch names (moves' destinations included), as they are now.
fn snapshot(event: &HookEvent, ws: &WorkspaceSession, cwd: &Path) -> Result<Snapshot, String> {
    let (patch, dir) = match event.tool_name.as_deref() {
        Some("apply_patch") => (
            event
                .input_str("command")
                .or_else(|| event.input_str("input"))
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
    let rel = |path: &str| -> Result<RelPath, String> {
        let lexical = ws.workspace().lexical(path).map_err(|err| err.to_string())?;
        let rel = lexical
            .strip_prefix(ws.workspace().root())
            .map_err(|_| format!("{path} is outside the workspace"))?;
        let rel = RelPath::new(rel).map_err(|err| err.to_string())?;
        workspace_file(&rel.display())
            .ok_or_else(|| format!("{path} is in staged's own state folder ({STATE_DIR_NAME}/)"))
    };
    let mut res = Snapshot::default();
    for file in &parsed.files {
        if let staged_edit::patch::PatchFile::Update { path, move_to: Some(to), .. } = file {
            res.moves.push((rel(path)?.display(), rel(to)?.display()));
        }
    }
    for path in parsed.paths() {
        let rel = rel(path)?;
        let (text, mode) = match read(ws, &rel)? {
            Some((text, mode)) => (Some(text), mode),
            None => (None, 0),
        };
        let path = rel.display();
        if !res.files.iter().any(|f| f.path == path) {
            res.files.push(FileBefore { path, text, mode });
        }
    }
    Ok(res)
}

/// Records the snapshot of call `only` (or every snapshot left, at a Stop).
fn finish_snapshots(
    ws: &WorkspaceSession,
    session: &str,
    only: Option<&str>,
) -> Result<Vec<String>, String> {
    let file = SessionFile::open(ws.workspace(), Client::Codex, session)?;
    let mut state = file.load();
    let calls: Vec<String> = match only {
        Some(call) => state.snapshots.keys().filter(|k| *k == call).cloned().collect(),
        None => state.snapshots.keys().cloned().collect(),
    };
    let mut notes = Vec::new();
    for call in calls {
        let Some(snapshot) = state.snapshots.remove(&call) else { continue };
        let event = HookEvent {
            hook_event_name: "PostToolUse".to_owned(),
            session_id: Some(session.to_owned()),
            cwd: None,
            tool_name: Some("apply_patch".to_owned()),
            tool_input: None,
            tool_response: None,
            tool_use_id: Some(call),
            permission_mode: None,
            stop_hook_active: None,
        };
        match record_snapshot(ws, &event, &snapshot) {
            Ok(mut more) => notes.append(&mut more),
            Err(why) => notes.push(format!("staged: not recorded: {why}")),
        }
    }
    file.save(&state)?;
    Ok(notes)
}

/// What a Codex patch did, from its files before and now.
fn record_snapshot(
    ws: &WorkspaceSession,
    event: &HookEvent,
    snapshot: &Snapshot,
) -> Result<Vec<String>, String> {
    // The state file is the workspace's, as open to anyone as any file there: what it names
    // outside the workspace, or in staged's own folder, is not a file a patch wrote.
    let (files, dropped): (Vec<&FileBefore>, Vec<&FileBefore>) =
        snapshot.files.iter().partition(|f| workspace_file(&f.path).is_some());
    let mut notes: Vec<String> = dropped
        .iter()
        .map(|f| {
            format!(
                "staged: not recorded: {} is not a file of the workspace",
                f.path.escape_debug()
            )
        })
        .collect();
    let moves: Vec<&(String, String)> = snapshot
        .moves
        .iter()
        .filter(|(from, to)| workspace_file(from).is_some() && workspace_file(to).is_some())
        .collect();
    let mut now: BTreeMap<&str, Option<(String, u32)>> = BTreeMap::new();
    for f in &files {
        let Some(rel) = workspace_file(&f.path) else { continue };
        now.insert(f.path.as_str(), read(ws, &rel)?);
    }
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
        return Ok(notes);
    }
    notes.append(&mut log(ws, Client::Codex, event, "apply_patch", "apply_patch", ops, &texts)?);
    Ok(notes)
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
    let who = match client {
        Client::ClaudeCode => "Claude Code",
        Client::Codex => "Codex",
    };
    record.reason = format!("{who}'s {tool}, recorded by staged's hook");
    record.result = format!("Recorded {label}.");
    record.diff = Some(diff);
    record.files = files;
    record.undo = Some(UndoData::of(ops).to_value());
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
fn read(ws: &WorkspaceSession, rel: &RelPath) -> Result<Option<(String, u32)>, String> {
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
