//! `staged session list|show|revert|keep`: an agent session reviewed like a pull request.
//!
//! `list` shows each session (its client, title, times, files, entries, pending previews and
//! review progress); `show [S]` its net change as one diff, composed from its own log entries
//! (`staged_session`), hunks numbered as `staged show` numbers them and marked when someone
//! else changed them since or a person reviewed them; `revert [S] [--only ...] [--except ...]
//! --reason R` writes the chosen hunks back to what they were before the session, all or
//! nothing, as one log entry `staged undo` can undo; `keep` marks hunks reviewed. A revert or a
//! keep with a reason leaves the session's model a notice, told once at its next chance.
//!
//! The reading, keeping and reverting live in `staged_workspace::sessions` (which prints
//! nothing), shared with `staged review`'s sessions view and the review page of `staged ui`:
//! [`listed`] for the sessions, [`Loaded`] for a session's files, [`revert_picked`] (here on
//! the CLI's runtime, [`revert_picked_now`]) and [`keep_picked`] for a revert or a keep. This
//! file parses `--only`/`--except` and prints.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use anyhow::{Context, bail};
use serde::Serialize;
use staged_core::FrontEnd;
use staged_journal::diff_files;
use staged_session::{FileKind, Pick, SessionFile, origin_text};
use staged_store::{SessionRow, SqliteStore};
use staged_workspace::sessions::{
    Listed, Loaded, Reverted, check_reason, keep_picked, listed, plural,
};
use staged_workspace::{
    WorkspaceSession,
    sessions::{hunk_note, kind_name, revert_picked},
};

use crate::{
    args::{GlobalArgs, SessionArgs, SessionCommand, SessionPickArgs},
    context,
    exit::Exit,
    output::Output,
    pick,
};

pub(crate) fn run(global: &GlobalArgs, args: &SessionArgs, out: &Output) -> anyhow::Result<Exit> {
    let ws = context::open_existing(global)?;
    let Some(store) = ws.sqlite().cloned() else {
        // Nothing was ever staged or recorded here.
        return match &args.command {
            SessionCommand::List => {
                if out.json {
                    out.line("[]")?;
                } else {
                    out.line("No sessions: nothing was staged or recorded in this workspace.")?;
                }
                Ok(Exit::Success)
            }
            _ => bail!("no sessions: nothing was staged or recorded in this workspace"),
        };
    };
    match &args.command {
        SessionCommand::List => list(&ws, &store, out),
        SessionCommand::Show { session, entry } => {
            show(&ws, &store, session.as_deref(), *entry, out)
        }
        SessionCommand::Revert(pick_args) => revert(&ws, &store, pick_args, out),
        SessionCommand::Keep(pick_args) => keep(&ws, &store, pick_args, out),
    }
}

/// The session `typed` names (`S3` or `3`), or the one active last.
fn find_session(store: &SqliteStore, typed: Option<&str>) -> anyhow::Result<SessionRow> {
    let err = |e: staged_core::StoreError| anyhow::anyhow!("{e}");
    match typed {
        None => store
            .sessions()
            .map_err(err)?
            .into_iter()
            .next()
            .context("no agent session has staged or recorded anything in this workspace"),
        Some(typed) => store
            .session_named(typed)
            .map_err(err)?
            .map_err(|why| anyhow::anyhow!("{why}; see `staged session list`")),
    }
}

/// Session `typed` (or the one active last), read afresh.
fn load(ws: &WorkspaceSession, store: &SqliteStore, typed: Option<&str>) -> anyhow::Result<Loaded> {
    Ok(Loaded::of(ws, find_session(store, typed)?)?)
}

/// `3 of 7 hunks reviewed`.
pub(crate) fn progress(reviewed: usize, hunks: usize) -> String {
    format!("{reviewed} of {} reviewed", plural(hunks, "hunk"))
}

fn list(ws: &WorkspaceSession, store: &SqliteStore, out: &Output) -> anyhow::Result<Exit> {
    let listed = listed(ws, store)?;
    if out.json {
        let value: Vec<ListedJson<'_>> = listed.iter().map(ListedJson::of).collect();
        out.line(&serde_json::to_string_pretty(&value)?)?;
        return Ok(Exit::Success);
    }
    if listed.is_empty() {
        out.line("No sessions: no agent session has staged or recorded anything here.")?;
        return Ok(Exit::Success);
    }
    for Listed { row, entries, pending: n_pending, files, hunks, reviewed, error } in &listed {
        let title = row.title.as_deref().map(|t| format!(" \"{t}\"")).unwrap_or_default();
        out.line(&staged_render::escape_line(&format!(
            "{} {}{title}: started {}, active {}",
            row.short_id(),
            row.client,
            time(row.started_ms),
            time(row.active_ms)
        )))?;
        // The id its client shows (Claude Code's, Codex's), which names the session too.
        out.line(&staged_render::escape_line(&format!(
            "    client id: {}",
            client_id_shown(&row.external_id)
        )))?;
        let mut line = format!(
            "    {} changed, {}, {} pending, {}",
            plural(*files, "file"),
            plural(*entries, "entry"),
            plural(*n_pending, "preview"),
            progress(*reviewed, *hunks),
        );
        if let Some(error) = error {
            line = format!("    {error}");
        }
        out.line(&staged_render::escape_line(&line))?;
    }
    Ok(Exit::Success)
}

/// The characters of a client's session id the text list shows: the ids clients give (UUIDs,
/// 36 characters) in full; a longer id that a client's event made up, its start (a start
/// only that session's id has names it as well).
const CLIENT_ID_SHOWN: usize = 64;

/// A client's session id as a person's screen shows it: whole, or its first
/// [`CLIENT_ID_SHOWN`] characters and `…`.
pub(crate) fn client_id_shown(id: &str) -> String {
    match id.char_indices().nth(CLIENT_ID_SHOWN) {
        Some((end, _)) => format!("{}…", &id[..end]),
        None => id.to_owned(),
    }
}

fn show(
    ws: &WorkspaceSession,
    store: &SqliteStore,
    typed: Option<&str>,
    entry: Option<u64>,
    out: &Output,
) -> anyhow::Result<Exit> {
    let loaded = match entry {
        Some(seq) => Loaded::entry(ws, seq)?,
        None => load(ws, store, typed)?,
    };
    let caveats = snapshot_caveats(&loaded);
    if out.json {
        let mut value = ShowJson::of(&loaded);
        value.caveats = caveats
            .iter()
            .map(|(entry, label)| CaveatJson {
                caveat: staged_shell::snapshot::CAVEAT,
                entry: *entry,
                label,
            })
            .chain(loaded.unreadable.iter().map(|(entry, label)| CaveatJson {
                caveat: UNREADABLE,
                entry: *entry,
                label,
            }))
            .collect();
        out.line(&serde_json::to_string_pretty(&value)?)?;
        return Ok(Exit::Success);
    }
    for (entry, label) in &loaded.unreadable {
        eprintln!(
            "{}",
            staged_render::escape_line(&format!("log entry {entry} ({label}) {UNREADABLE}."))
        );
    }
    if loaded.files.is_empty() && loaded.folders.is_empty() {
        if !loaded.unreadable.is_empty() {
            out.line(&format!("{} changed nothing staged can show.", loaded.name))?;
            return Ok(Exit::ToolError);
        }
        out.line(&format!(
            "{} changed nothing that is still in the files (or everything it changed was reverted).",
            loaded.name
        ))?;
        return Ok(Exit::Success);
    }
    let folders = match loaded.folders.len() {
        0 => String::new(),
        n => format!(" and {}", plural(n, "folder")),
    };
    eprintln!(
        "{} {}: {}{folders}, {} of {} reviewed",
        loaded.name,
        loaded.row.client,
        plural(loaded.files.len(), "file"),
        loaded.reviewed_count(),
        plural(loaded.hunk_count(), "hunk")
    );
    for (entry, label) in &caveats {
        eprintln!(
            "{}",
            staged_render::escape_line(&format!(
                "log entry {entry} ({label}) was recorded by comparing the tree before and after its command: {}.",
                staged_shell::snapshot::CAVEAT
            ))
        );
    }
    // The folders it made or removed, one line each, before the files' diffs.
    let mut diff = staged_journal::folder_lines(&loaded.folders);
    for file in &loaded.files {
        diff.push_str(&numbered(file, &loaded.states));
    }
    out.diff(&diff)?;
    Ok(Exit::Success)
}

/// The log entries behind `loaded`'s hunks that a shell command's snapshot fallback recorded
/// (`extra.shell.attribution` = `"snapshot"`: they may hold other programs' writes), with
/// their labels.
fn snapshot_caveats(loaded: &Loaded) -> Vec<(u64, String)> {
    let seqs: BTreeSet<u64> = loaded
        .files
        .iter()
        .flat_map(|f| f.diff.hunks.iter().flat_map(|h| h.entries.iter().copied()))
        .collect();
    loaded.by_snapshot.iter().filter(|(seq, _)| seqs.contains(seq)).cloned().collect()
}

/// What `session show` says of a log entry of the session whose undo data cannot be read.
const UNREADABLE: &str = "wrote files, but its undo data cannot be read (the log was changed outside staged): its change is neither shown nor reverted";

/// `file`'s diff with each hunk header numbered and marked; still a diff `git apply` takes.
pub(crate) fn numbered(file: &SessionFile, states: &HashMap<String, String>) -> String {
    let diff = &file.diff.diff;
    // A file replaced whole: git's `Binary files ... differ` line, which `git apply` passes
    // over, with its note.
    if file.kept.is_some() {
        let note = hunk_note(file, 0, 1, states).unwrap_or_default();
        return format!("{} {note}\n", diff.trim_end());
    }
    let Some(section) = diff_files(diff).into_iter().next() else { return diff.clone() };
    let n = section.hunks.len();
    let mut res = String::with_capacity(diff.len() + 48 * n);
    let mut cursor = 0;
    for (idx, range) in section.hunks.iter().enumerate() {
        let Some(note) = hunk_note(file, idx, n, states) else { continue };
        let header_end = diff[range.start..].find('\n').map_or(diff.len(), |i| range.start + i);
        res.push_str(&diff[cursor..header_end]);
        res.push(' ');
        res.push_str(&note);
        cursor = header_end;
    }
    res.push_str(&diff[cursor..]);
    res
}

/// What `--only` and `--except` pick of the session's files, as picks per file.
fn picks(
    ws: &WorkspaceSession,
    loaded: &Loaded,
    args: &SessionPickArgs,
) -> anyhow::Result<Vec<Option<Pick>>> {
    for (name, paths) in [("--only", &args.only), ("--except", &args.except)] {
        if paths.iter().any(|p| p.trim().is_empty()) {
            bail!(
                "{name} got an empty path; name the files, folders, globs or FILE:N hunks to pick"
            );
        }
    }
    let parts = loaded.parts();
    let root = ws.workspace().root();
    let only = context::pick_paths(root, &args.only)?;
    let except = context::pick_paths(root, &args.except)?;
    let keep: Vec<Option<Option<BTreeSet<u64>>>> = pick::keep_of(
        &parts,
        &only,
        &args.only,
        &except,
        &args.except,
        &pick::Source::change(&loaded.name),
    )?;
    let mut res = Vec::with_capacity(keep.len());
    for (file, kept) in loaded.files.iter().zip(keep) {
        res.push(match kept {
            None => None,
            Some(None) => Some(Pick::Whole),
            Some(Some(set)) => {
                if file.kind != FileKind::Changed {
                    bail!(
                        "{} was {} by the session: it is reverted or kept whole; name the file without hunks",
                        file.path,
                        kind_name(&file.kind)
                    );
                }
                // A hunk the file does not have is an input error here, before a keep marks
                // the others (the revert refuses it too, but a keep would skip it silently).
                let count = file.diff.hunks.len();
                if let Some(n) = set.iter().find(|n| !(1..=count as u64).contains(n)) {
                    bail!(
                        "--only names hunk {n} of {}, which has {} (numbered from 1, as `staged session show` prints them); nothing was written",
                        file.path,
                        plural(count, "hunk")
                    );
                }
                Some(Pick::Hunks(set.into_iter().map(|n| usize::try_from(n).unwrap_or(usize::MAX)).collect()))
            }
        });
    }
    // A session that only made or removed folders has no file to pick.
    let only_folders = res.is_empty() && !loaded.folders.is_empty();
    if !only_folders && res.iter().all(Option::is_none) {
        bail!("--except leaves nothing of the session's change to pick");
    }
    Ok(res)
}

fn revert(
    ws: &WorkspaceSession,
    store: &Arc<SqliteStore>,
    args: &SessionPickArgs,
    out: &Output,
) -> anyhow::Result<Exit> {
    let reason = args.reason.clone().unwrap_or_default();
    check_reason(&reason, true)?;
    let loaded = load(ws, store, args.session.as_deref())?;
    revert_loaded(ws, &loaded, args, &reason, out)
}

/// `staged undo ENTRY --only ...`: reverts part of log entry `seq`'s own change, on the files
/// as they are now (the entry itself stays undoable for the rest).
pub(crate) fn undo_part(
    ws: &WorkspaceSession,
    seq: u64,
    args: &SessionPickArgs,
    out: &Output,
) -> anyhow::Result<Exit> {
    let loaded = Loaded::entry(ws, seq)?;
    revert_loaded(ws, &loaded, args, args.reason.as_deref().unwrap_or_default(), out)
}

fn revert_loaded(
    ws: &WorkspaceSession,
    loaded: &Loaded,
    args: &SessionPickArgs,
    reason: &str,
    out: &Output,
) -> anyhow::Result<Exit> {
    if loaded.files.is_empty() && loaded.folders.is_empty() {
        if let Some((entry, label)) = loaded.unreadable.first() {
            bail!(
                "{} has no change staged can revert: log entry {entry} ({label}) {UNREADABLE}; nothing was written",
                loaded.name
            );
        }
        bail!("{} has no change left to revert; nothing was written", loaded.name);
    }
    let picks = picks(ws, loaded, args)?;
    let (text, entry, hunks) = match revert_picked_now(ws, loaded, &picks, reason, &FrontEnd::Cli)?
    {
        Reverted::Done { text, entry, hunks } => (text, entry, hunks),
        Reverted::Refused(text) => return refused(out, &text),
    };
    if out.json {
        let hunks = hunks.iter().map(|(path, hunk)| RevertedHunk { hunk: *hunk, path }).collect();
        let value =
            RevertJson { entry, hunks, is_error: false, session: &loaded.name, text: &text };
        out.line(&serde_json::to_string_pretty(&value)?)?;
    } else {
        out.answer(&text)?;
    }
    Ok(Exit::Success)
}

/// [`revert_picked`] on the CLI's runtime, interrupted by Ctrl-C.
pub(crate) fn revert_picked_now(
    ws: &WorkspaceSession,
    loaded: &Loaded,
    picks: &[Option<Pick>],
    reason: &str,
    front_end: &FrontEnd,
) -> anyhow::Result<Reverted> {
    Ok(context::block_on(|cancel| async move {
        revert_picked(ws, loaded, picks, reason, front_end, &cancel).await
    })??)
}

fn keep(
    ws: &WorkspaceSession,
    store: &Arc<SqliteStore>,
    args: &SessionPickArgs,
    out: &Output,
) -> anyhow::Result<Exit> {
    let reason = args.reason.clone().unwrap_or_default();
    check_reason(&reason, false)?;
    let loaded = load(ws, store, args.session.as_deref())?;
    if loaded.files.is_empty() {
        bail!("{} has no change left to keep", loaded.name);
    }
    let picks = picks(ws, &loaded, args)?;
    let kept = keep_picked(store, &loaded, &picks, &reason)?;
    if out.json {
        let value = KeepJson {
            hunks: loaded.hunk_count(),
            kept: kept.kept,
            reviewed: kept.reviewed,
            session: &loaded.name,
            text: &kept.text,
        };
        out.line(&serde_json::to_string_pretty(&value)?)?;
    } else {
        out.answer(&kept.text)?;
    }
    Ok(Exit::Success)
}

fn refused(out: &Output, text: &str) -> anyhow::Result<Exit> {
    if out.json {
        out.line(&serde_json::to_string_pretty(&RefusedJson { is_error: true, text })?)?;
    } else {
        out.answer(text)?;
    }
    Ok(Exit::ToolError)
}

/// RFC 3339 (UTC) for milliseconds since the Unix epoch.
fn time(ms: i64) -> String {
    let at = std::time::UNIX_EPOCH
        + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or_default());
    crate::cmd::timestamp(at)
}

// The `--json` shapes of the subcommands. Their fields are in the order they are printed:
// by name, as scripts have read them since the first release.

/// A session of `session list --json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListedJson<'a> {
    active_ms: i64,
    client: &'a str,
    client_session_id: &'a str,
    entries: usize,
    error: Option<&'a str>,
    files: usize,
    hunks: usize,
    id: String,
    pending: usize,
    reviewed: usize,
    started_ms: i64,
    title: Option<&'a str>,
}

impl<'a> ListedJson<'a> {
    fn of(listed: &'a Listed) -> Self {
        let Listed { row, entries, pending, files, hunks, reviewed, error } = listed;
        Self {
            active_ms: row.active_ms,
            client: &row.client,
            client_session_id: &row.external_id,
            entries: *entries,
            error: error.as_deref(),
            files: *files,
            hunks: *hunks,
            id: row.short_id(),
            pending: *pending,
            reviewed: *reviewed,
            started_ms: row.started_ms,
            title: row.title.as_deref(),
        }
    }
}

/// `session show --json`.
#[derive(Serialize)]
struct ShowJson<'a> {
    /// The log entries behind its hunks recorded from a shell command's snapshots.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    caveats: Vec<CaveatJson<'a>>,
    client: &'a str,
    files: Vec<FileJson<'a>>,
    /// The folders it made or removed: `{"path", "op": "made" | "removed"}`.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    folders: &'a [staged_journal::FolderChange],
    hunks: usize,
    reviewed: usize,
    session: &'a str,
    title: Option<&'a str>,
}

/// A log entry of `session show --json` that a shell command's snapshot fallback recorded.
#[derive(Serialize)]
struct CaveatJson<'a> {
    caveat: &'static str,
    entry: u64,
    label: &'a str,
}

/// A file of `session show --json`.
#[derive(Serialize)]
struct FileJson<'a> {
    change: &'static str,
    diff: &'a str,
    from: Option<&'a str>,
    hunks: Vec<HunkJson<'a>>,
    /// A file replaced whole: why, and the SHA-256 of its bytes before and after.
    #[serde(rename = "notText", skip_serializing_if = "Option::is_none")]
    not_text: Option<NotTextJson<'a>>,
    path: &'a str,
}

/// Why a file of `session show --json` has no text diff, and its bytes' SHA-256 before and
/// after (`null`: no file).
#[derive(Serialize)]
struct NotTextJson<'a> {
    after: Option<&'a str>,
    before: Option<&'a str>,
    why: &'a str,
}

/// A hunk of a file of `session show --json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HunkJson<'a> {
    changed_since: Option<String>,
    entries: &'a [u64],
    key: &'a str,
    number: usize,
    review: Option<&'a str>,
}

impl<'a> ShowJson<'a> {
    fn of(loaded: &'a Loaded) -> Self {
        let hunk = |h: &'a staged_session::Hunk| HunkJson {
            changed_since: h.changed_since.as_ref().map(origin_text),
            entries: &h.entries,
            key: &h.key,
            number: h.number,
            review: loaded.states.get(&h.key).map(String::as_str),
        };
        let file = |f: &'a SessionFile| FileJson {
            change: kind_name(&f.kind),
            diff: &f.diff.diff,
            from: match &f.kind {
                FileKind::Moved { from } => Some(from.as_str()),
                _ => None,
            },
            hunks: f.diff.hunks.iter().map(hunk).collect(),
            not_text: f.kept.as_ref().map(|kept| NotTextJson {
                after: kept.after.as_ref().map(|a| a.sha.as_str()),
                before: kept.before.as_ref().map(|b| b.sha.as_str()),
                why: &kept.why,
            }),
            path: &f.path,
        };
        Self {
            caveats: Vec::new(),
            client: &loaded.row.client,
            files: loaded.files.iter().map(file).collect(),
            folders: &loaded.folders,
            hunks: loaded.hunk_count(),
            reviewed: loaded.reviewed_count(),
            session: &loaded.name,
            title: loaded.row.title.as_deref(),
        }
    }
}

/// `session revert --json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RevertJson<'a> {
    entry: Option<u64>,
    hunks: Vec<RevertedHunk<'a>>,
    is_error: bool,
    session: &'a str,
    text: &'a str,
}

/// A hunk `session revert` reverted.
#[derive(Serialize)]
struct RevertedHunk<'a> {
    hunk: usize,
    path: &'a str,
}

/// `session keep --json`.
#[derive(Serialize)]
struct KeepJson<'a> {
    hunks: usize,
    kept: usize,
    reviewed: usize,
    session: &'a str,
    text: &'a str,
}

/// A revert refused, with `--json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RefusedJson<'a> {
    is_error: bool,
    text: &'a str,
}
