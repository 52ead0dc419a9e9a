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
//! `staged review`'s sessions view calls the same code: [`listed`] for the sessions,
//! [`Loaded`] for a session's files, [`revert_picked`] and [`keep_picked`] (which print
//! nothing) for a revert or a keep.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use staged_core::{
    FrontEnd, LogAction, LogOutcome, LogRecord, MAX_REASON_CHARS, PendingAction, PendingId,
    Retirement,
};
use staged_journal::{
    ChangeAction, ChangeDetails, ChangeKind, ChangedFile, DiffKind, FileOp, PartFile, diff_files,
};
use staged_session::{FileKind, Hunk, Pick, REVERT_SOURCE, SessionFile, origin_text, revert_ops};
use staged_store::{SessionRow, SqliteStore};
use staged_workspace::WorkspaceSession;

use crate::{
    args::{GlobalArgs, SessionArgs, SessionCommand, SessionPickArgs},
    context,
    exit::Exit,
    output::Output,
    pick,
};

/// The review state of a kept hunk.
const KEPT: &str = "kept";

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
        Some(typed) => {
            let number =
                typed.strip_prefix(['S', 's']).unwrap_or(typed).parse::<u64>().map_err(|_| {
                    anyhow::anyhow!(
                        "`{typed}` is not a session id (S1, S2, ...; see `staged session list`)"
                    )
                })?;
            store.session(number).map_err(err)?.with_context(|| {
                format!("there is no session S{number}; see `staged session list`")
            })
        }
    }
}

/// A session's files, with the hunks' review states.
pub(crate) struct Loaded {
    pub(crate) row: SessionRow,
    /// What is reverted: `S3`, or `log entry 14` for part of one entry.
    pub(crate) name: String,
    /// The session whose model is told of a revert.
    notify: Option<u64>,
    pub(crate) files: Vec<SessionFile>,
    pub(crate) states: HashMap<String, String>,
}

impl Loaded {
    fn load(
        ws: &WorkspaceSession,
        store: &SqliteStore,
        typed: Option<&str>,
    ) -> anyhow::Result<Loaded> {
        Self::of(ws, find_session(store, typed)?)
    }

    /// Session `row`'s files and review states, read afresh.
    pub(crate) fn of(ws: &WorkspaceSession, row: SessionRow) -> anyhow::Result<Loaded> {
        let review = ws.review().context("this workspace keeps no durable store")?;
        let files = review.session_files(row.number).map_err(|err| anyhow::anyhow!("{err}"))?;
        let states = review.review_states(row.number).map_err(|err| anyhow::anyhow!("{err}"))?;
        Ok(Loaded { name: row.short_id(), notify: Some(row.number), row, files, states })
    }

    /// Log entry `seq`'s own change on the files as they are now, read as a session.
    fn entry(ws: &WorkspaceSession, seq: u64) -> anyhow::Result<Loaded> {
        let store = ws.sqlite().context("this workspace keeps no resolve log")?;
        let review = ws.review().context("this workspace keeps no resolve log")?;
        let entry = staged_core::ResolveLog::entry(store.as_ref(), seq)
            .map_err(|err| anyhow::anyhow!("{err}"))?
            .with_context(|| format!("there is no log entry {seq}; see `staged log`"))?;
        if !review.entry_is_consistent(seq).map_err(|err| anyhow::anyhow!("{err}"))? {
            bail!(
                "log entry {seq}'s recorded diff is not what its undo data would write back (the log entry was changed outside staged), or its texts are no longer known"
            );
        }
        let files = review.entry_files(seq).map_err(|err| anyhow::anyhow!("{err}"))?;
        Ok(Loaded {
            row: SessionRow {
                number: entry.session.unwrap_or_default(),
                client: entry.record.front_end.clone(),
                external_id: String::new(),
                title: Some(entry.record.label.clone()),
                process: None,
                started_ms: 0,
                active_ms: 0,
            },
            name: format!("log entry {seq}"),
            notify: entry.session,
            files,
            states: HashMap::new(),
        })
    }

    pub(crate) fn hunk_count(&self) -> usize {
        self.files.iter().map(|f| f.diff.hunks.len()).sum()
    }

    pub(crate) fn reviewed_count(&self) -> usize {
        self.files
            .iter()
            .flat_map(|f| &f.diff.hunks)
            .filter(|h| self.states.contains_key(&h.key))
            .count()
    }

    /// The files as `--only` and `--except` pick from them.
    fn parts(&self) -> Vec<PartFile> {
        self.files
            .iter()
            .map(|f| PartFile {
                path: f.path.clone(),
                from: match &f.kind {
                    FileKind::Moved { from } => Some(from.clone()),
                    _ => None,
                },
                kind: diff_kind(&f.kind),
                hunks: Some(f.diff.hunks.len()),
            })
            .collect()
    }
}

fn diff_kind(kind: &FileKind) -> DiffKind {
    match kind {
        FileKind::Changed => DiffKind::Modify,
        FileKind::Created => DiffKind::Create,
        FileKind::Deleted => DiffKind::Delete,
        FileKind::Moved { .. } => DiffKind::Rename,
    }
}

fn kind_name(kind: &FileKind) -> &'static str {
    match kind {
        FileKind::Changed => "changed",
        FileKind::Created => "created",
        FileKind::Deleted => "deleted",
        FileKind::Moved { .. } => "moved",
    }
}

/// One session as `staged session list` and `staged review` show it.
pub(crate) struct Listed {
    pub(crate) row: SessionRow,
    pub(crate) entries: usize,
    pub(crate) pending: usize,
    pub(crate) files: usize,
    pub(crate) hunks: usize,
    pub(crate) reviewed: usize,
    /// Why its net change could not be read.
    pub(crate) error: Option<String>,
}

/// Every session, the one active last first, with its progress.
pub(crate) fn listed(ws: &WorkspaceSession, store: &SqliteStore) -> anyhow::Result<Vec<Listed>> {
    let rows = store.sessions().map_err(|err| anyhow::anyhow!("{err}"))?;
    let pending = ws.store().summaries().map_err(|err| anyhow::anyhow!("{err}"))?;
    let review = ws.review().context("this workspace keeps no durable store")?;
    let mut listed = Vec::new();
    for row in rows {
        let entries = store.entry_count_of(row.number).map_err(|err| anyhow::anyhow!("{err}"))?;
        let n_pending = pending.iter().filter(|p| p.session == Some(row.number)).count();
        let (files, hunks, reviewed, error) = match review.session_files(row.number) {
            Ok(files) => {
                let states = review.review_states(row.number).unwrap_or_default();
                let hunks: Vec<&Hunk> = files.iter().flat_map(|f| &f.diff.hunks).collect();
                let reviewed = hunks.iter().filter(|h| states.contains_key(&h.key)).count();
                (files.len(), hunks.len(), reviewed, None)
            }
            Err(err) => (0, 0, 0, Some(err.to_string())),
        };
        listed.push(Listed { row, entries, pending: n_pending, files, hunks, reviewed, error });
    }
    Ok(listed)
}

/// `3 of 7 hunks reviewed`.
pub(crate) fn progress(reviewed: usize, hunks: usize) -> String {
    format!("{reviewed} of {} reviewed", plural(hunks, "hunk"))
}

fn list(ws: &WorkspaceSession, store: &SqliteStore, out: &Output) -> anyhow::Result<Exit> {
    let listed = listed(ws, store)?;
    if out.json {
        let value: Vec<Value> = listed
            .iter()
            .map(|Listed { row, entries, pending: n_pending, files, hunks, reviewed, error }| {
                json!({
                    "id": row.short_id(),
                    "client": row.client,
                    "clientSessionId": row.external_id,
                    "title": row.title,
                    "startedMs": row.started_ms,
                    "activeMs": row.active_ms,
                    "files": files,
                    "entries": entries,
                    "pending": n_pending,
                    "hunks": hunks,
                    "reviewed": reviewed,
                    "error": error,
                })
            })
            .collect();
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

fn show(
    ws: &WorkspaceSession,
    store: &SqliteStore,
    typed: Option<&str>,
    entry: Option<u64>,
    out: &Output,
) -> anyhow::Result<Exit> {
    let loaded = match entry {
        Some(seq) => Loaded::entry(ws, seq)?,
        None => Loaded::load(ws, store, typed)?,
    };
    if out.json {
        let files: Vec<Value> = loaded
            .files
            .iter()
            .map(|f| {
                let hunks: Vec<Value> = f
                    .diff
                    .hunks
                    .iter()
                    .map(|h| {
                        json!({
                            "number": h.number,
                            "key": h.key,
                            "entries": h.entries,
                            "changedSince": h.changed_since.as_ref().map(origin_text),
                            "review": loaded.states.get(&h.key),
                        })
                    })
                    .collect();
                json!({
                    "path": f.path,
                    "change": kind_name(&f.kind),
                    "from": match &f.kind { FileKind::Moved { from } => Some(from), _ => None },
                    "diff": f.diff.diff,
                    "hunks": hunks,
                })
            })
            .collect();
        let value = json!({
            "session": loaded.name,
            "client": loaded.row.client,
            "title": loaded.row.title,
            "hunks": loaded.hunk_count(),
            "reviewed": loaded.reviewed_count(),
            "files": files,
        });
        out.line(&serde_json::to_string_pretty(&value)?)?;
        return Ok(Exit::Success);
    }
    if loaded.files.is_empty() {
        out.line(&format!(
            "{} changed nothing that is still in the files (or everything it changed was reverted).",
            loaded.name
        ))?;
        return Ok(Exit::Success);
    }
    eprintln!(
        "{} {}: {}, {} of {} reviewed",
        loaded.name,
        loaded.row.client,
        plural(loaded.files.len(), "file"),
        loaded.reviewed_count(),
        plural(loaded.hunk_count(), "hunk")
    );
    let mut diff = String::new();
    for file in &loaded.files {
        diff.push_str(&numbered(file, &loaded.states));
    }
    out.diff(&diff)?;
    Ok(Exit::Success)
}

/// `file`'s diff with each hunk header numbered and marked; still a diff `git apply` takes.
pub(crate) fn numbered(file: &SessionFile, states: &HashMap<String, String>) -> String {
    let diff = &file.diff.diff;
    let Some(section) = diff_files(diff).into_iter().next() else { return diff.clone() };
    let n = section.hunks.len();
    let mut res = String::with_capacity(diff.len() + 48 * n);
    let mut cursor = 0;
    for (idx, range) in section.hunks.iter().enumerate() {
        let mut note = match file.kind {
            FileKind::Changed => format!("[hunk {} of {n}]", idx + 1),
            _ if idx > 0 => continue,
            FileKind::Created => "[new file, reverted whole]".to_owned(),
            FileKind::Deleted => "[deleted file, reverted whole]".to_owned(),
            FileKind::Moved { .. } => "[moved file, reverted whole]".to_owned(),
        };
        if let Some(hunk) = file.diff.hunks.get(idx) {
            if let Some(by) = &hunk.changed_since {
                note.push_str(&format!(" [changed since by {}]", origin_text(by)));
            }
            if let Some(state) = states.get(&hunk.key) {
                note.push_str(&format!(" [{state}]"));
            }
        }
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
    let only = context::scope_paths(root, &args.only)?;
    let except = context::scope_paths(root, &args.except)?;
    let keep: Vec<Option<Option<BTreeSet<u64>>>> =
        pick::keep_of(&parts, &only, &args.only, &except, &args.except, &loaded.name)?;
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
                Some(Pick::Hunks(set.into_iter().map(|n| usize::try_from(n).unwrap_or(usize::MAX)).collect()))
            }
        });
    }
    if res.iter().all(Option::is_none) {
        bail!("--except leaves nothing of the session's change to pick");
    }
    Ok(res)
}

/// The hunks `picks` names, file by file, as `(file, hunk)`.
fn picked_hunks<'a>(
    loaded: &'a Loaded,
    picks: &[Option<Pick>],
) -> Vec<(&'a SessionFile, &'a Hunk)> {
    let mut res = Vec::new();
    for (file, pick) in loaded.files.iter().zip(picks) {
        match pick {
            None => {}
            Some(Pick::Whole) => res.extend(file.diff.hunks.iter().map(|h| (file, h))),
            Some(Pick::Hunks(numbers)) => res.extend(
                numbers
                    .iter()
                    .filter_map(|n| file.diff.hunks.get(n.wrapping_sub(1)))
                    .map(|h| (file, h)),
            ),
        }
    }
    res
}

pub(crate) fn check_reason(reason: &str, required: bool) -> anyhow::Result<()> {
    if required && reason.trim().is_empty() {
        bail!("--reason must not be blank: say why the session's change is reverted");
    }
    let chars = reason.chars().count();
    if chars > MAX_REASON_CHARS {
        bail!(
            "--reason is {chars} characters long; a reason is at most {MAX_REASON_CHARS} characters"
        );
    }
    Ok(())
}

fn revert(
    ws: &WorkspaceSession,
    store: &Arc<SqliteStore>,
    args: &SessionPickArgs,
    out: &Output,
) -> anyhow::Result<Exit> {
    let reason = args.reason.clone().unwrap_or_default();
    check_reason(&reason, true)?;
    let loaded = Loaded::load(ws, store, args.session.as_deref())?;
    revert_loaded(ws, store, &loaded, args, &reason, out)
}

/// `staged undo ENTRY --only ...`: reverts part of log entry `seq`'s own change, on the files
/// as they are now (the entry itself stays undoable for the rest).
pub(crate) fn undo_part(
    ws: &WorkspaceSession,
    seq: u64,
    args: &SessionPickArgs,
    out: &Output,
) -> anyhow::Result<Exit> {
    let store = ws.sqlite().cloned().context("this workspace keeps no resolve log")?;
    let loaded = Loaded::entry(ws, seq)?;
    revert_loaded(ws, &store, &loaded, args, args.reason.as_deref().unwrap_or_default(), out)
}

fn revert_loaded(
    ws: &WorkspaceSession,
    store: &Arc<SqliteStore>,
    loaded: &Loaded,
    args: &SessionPickArgs,
    reason: &str,
    out: &Output,
) -> anyhow::Result<Exit> {
    if loaded.files.is_empty() {
        bail!("{} has no change left to revert; nothing was written", loaded.name);
    }
    let picks = picks(ws, loaded, args)?;
    let (text, entry, hunks) =
        match revert_picked(ws, store, loaded, &picks, reason, &FrontEnd::Cli)? {
            Reverted::Done { text, entry, hunks } => (text, entry, hunks),
            Reverted::Refused(text) => return refused(out, &text),
        };
    if out.json {
        out.line(&serde_json::to_string_pretty(&json!({
            "text": text,
            "isError": false,
            "entry": entry,
            "session": loaded.name,
            "hunks": hunks.iter().map(|(path, hunk)| json!({"path": path, "hunk": hunk})).collect::<Vec<_>>(),
        }))?)?;
    } else {
        out.line(&text)?;
    }
    Ok(Exit::Success)
}

/// What a revert did.
pub(crate) enum Reverted {
    /// Written and logged: the answer, the log entry, and the hunks as `(path, number)`.
    Done { text: String, entry: Option<u64>, hunks: Vec<(String, usize)> },
    /// Refused, nothing written: why.
    Refused(String),
}

/// Reverts the hunks `picks` names of `loaded`'s change, all or nothing, as one log entry of
/// `front_end` with `reason`, and leaves the session's model a notice. Prints nothing.
pub(crate) fn revert_picked(
    ws: &WorkspaceSession,
    store: &Arc<SqliteStore>,
    loaded: &Loaded,
    picks: &[Option<Pick>],
    reason: &str,
    front_end: &FrontEnd,
) -> anyhow::Result<Reverted> {
    let reason = reason.to_owned();
    let short = loaded.name.clone();
    if loaded.files.is_empty() {
        bail!("{short} has no change left to revert; nothing was written");
    }
    let ops = match revert_ops(&loaded.files, picks) {
        Ok(ops) => ops,
        Err(err) => {
            return Ok(Reverted::Refused(format!(
                "Cannot revert {short}'s change: {err}. Nothing was written."
            )));
        }
    };
    if ops.is_empty() {
        bail!("the hunks picked change nothing; nothing was written");
    }
    let hunks = picked_hunks(loaded, picks);
    let described: Vec<String> = described_picks(loaded, picks);
    let label = format!("Revert of {short}: {}", described.join(", "));
    let action = revert_action(ws, &label, ops)?;
    let mut base = LogRecord::new(
        PendingId::from_string(format!("revert:{}", short.replace(' ', "-"))),
        label.clone(),
        REVERT_SOURCE,
        LogOutcome::Applied,
        LogAction::Apply,
        front_end,
    );
    base.reason = reason.trim().to_owned();
    let mut extra = staged_core::JsonObject::new();
    extra.insert("session".to_owned(), Value::String(short.clone()));
    extra.insert(
        "hunks".to_owned(),
        Value::Array(
            hunks
                .iter()
                .map(|(f, h)| json!({"path": f.path, "hunk": h.number, "key": h.key}))
                .collect(),
        ),
    );
    base.extra = Some(extra);
    let retirement = Retirement::for_undo(ws.store().clone(), base);
    let result = context::block_on(|cancel| {
        let action = action.clone();
        let retirement = retirement.clone();
        let reason = reason.clone();
        async move { action.apply_retiring(&reason, None, &cancel, &retirement).await }
    })?;
    let result = match result {
        Ok(result) => result,
        Err(err) => bail!("the revert failed: {err}"),
    };
    if result.is_error {
        return Ok(Reverted::Refused(format!(
            "Cannot revert {short}'s change: {}",
            result.text_content()
        )));
    }
    let seq = newest_entry(ws);
    // The session's model hears of it once, at its next chance.
    let notice = notice_text("reverted", &hunks, reason.trim());
    if let Some(number) = loaded.notify {
        let _ = store.notify_session(number, &notice);
    }
    let text = format!(
        "Reverted {} of {short} ({}): {}.{}",
        plural(hunks.len(), "hunk"),
        described.join(", "),
        reason.trim(),
        seq.map(|s| format!(" Logged as entry {s}; `staged undo {s}` restores what it reverted."))
            .unwrap_or_default()
    );
    let hunks = hunks.iter().map(|(f, h)| (f.path.clone(), h.number)).collect();
    Ok(Reverted::Done { text, entry: seq, hunks })
}

fn keep(
    ws: &WorkspaceSession,
    store: &Arc<SqliteStore>,
    args: &SessionPickArgs,
    out: &Output,
) -> anyhow::Result<Exit> {
    let reason = args.reason.clone().unwrap_or_default();
    check_reason(&reason, false)?;
    let loaded = Loaded::load(ws, store, args.session.as_deref())?;
    if loaded.files.is_empty() {
        bail!("{} has no change left to keep", loaded.name);
    }
    let picks = picks(ws, &loaded, args)?;
    let kept = keep_picked(store, &loaded, &picks, &reason)?;
    if out.json {
        out.line(&serde_json::to_string_pretty(&json!({
            "text": kept.text,
            "session": loaded.name,
            "kept": kept.kept,
            "reviewed": kept.reviewed,
            "hunks": loaded.hunk_count(),
        }))?)?;
    } else {
        out.line(&kept.text)?;
    }
    Ok(Exit::Success)
}

/// What a keep did: the answer, how many hunks it kept, and how many of the session's are
/// reviewed now.
pub(crate) struct Kept {
    pub(crate) text: String,
    pub(crate) kept: usize,
    pub(crate) reviewed: usize,
}

/// Marks the hunks `picks` names of `loaded`'s change reviewed and kept, and with a reason
/// leaves the session's model a notice. Prints nothing.
pub(crate) fn keep_picked(
    store: &SqliteStore,
    loaded: &Loaded,
    picks: &[Option<Pick>],
    reason: &str,
) -> anyhow::Result<Kept> {
    let short = &loaded.name;
    if loaded.files.is_empty() {
        bail!("{short} has no change left to keep");
    }
    let hunks = picked_hunks(loaded, picks);
    let keys: Vec<&str> = hunks.iter().map(|(_, h)| h.key.as_str()).collect();
    let reason = reason.trim();
    store
        .mark_reviewed(loaded.row.number, &keys, KEPT, (!reason.is_empty()).then_some(reason))
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    if !reason.is_empty() {
        let _ = store.notify_session(loaded.row.number, &notice_text("kept", &hunks, reason));
    }
    let reviewed = loaded.reviewed_count()
        + hunks.iter().filter(|(_, h)| !loaded.states.contains_key(&h.key)).count();
    let text = format!(
        "Kept {} of {short}; {reviewed} of {} reviewed.",
        plural(hunks.len(), "hunk"),
        plural(loaded.hunk_count(), "hunk")
    );
    Ok(Kept { text, kept: hunks.len(), reviewed })
}

/// Each picked file as a person reads it: `src/a.ts (hunks 1, 3)`, `new.txt (new file)`.
fn described_picks(loaded: &Loaded, picks: &[Option<Pick>]) -> Vec<String> {
    loaded
        .files
        .iter()
        .zip(picks)
        .filter_map(|(file, pick)| {
            let pick = pick.as_ref()?;
            Some(match (pick, &file.kind) {
                (Pick::Whole, FileKind::Changed) => file.path.clone(),
                (Pick::Whole, kind) => format!(
                    "{} ({} file)",
                    file.path,
                    match kind {
                        FileKind::Created => "new",
                        FileKind::Deleted => "deleted",
                        _ => "moved",
                    }
                ),
                (Pick::Hunks(numbers), _) => format!(
                    "{} (hunk{} {})",
                    file.path,
                    if numbers.len() == 1 { "" } else { "s" },
                    numbers.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
                ),
            })
        })
        .collect()
}

/// What the session's model is told: the files, the hunks' lines (as the session left them)
/// and the person's reason.
fn notice_text(what: &str, hunks: &[(&SessionFile, &Hunk)], reason: &str) -> String {
    let mut by_file: Vec<(String, Vec<String>)> = Vec::new();
    for (file, hunk) in hunks {
        let lines = hunk_lines(file, hunk.number);
        match by_file.iter_mut().find(|(p, _)| *p == file.path) {
            Some((_, list)) => list.extend(lines),
            None => by_file.push((file.path.clone(), lines.into_iter().collect())),
        }
    }
    let parts: Vec<String> = by_file
        .into_iter()
        .map(
            |(path, lines)| {
                if lines.is_empty() { path } else { format!("{path} ({})", lines.join(", ")) }
            },
        )
        .collect();
    let mut text = format!("A person {what} your change to {}", parts.join(", "));
    if reason.is_empty() {
        text.push('.');
    } else {
        text.push_str(": ");
        text.push_str(reason);
        if !reason.ends_with(['.', '!', '?']) {
            text.push('.');
        }
    }
    text
}

/// `lines 12-18` for hunk `number` of `file`: the lines the session's change holds (its `+`
/// lines; for a deletion, where the lines were), without the context around them.
fn hunk_lines(file: &SessionFile, number: usize) -> Option<String> {
    let diff = &file.diff.diff;
    let section = diff_files(diff).into_iter().next()?;
    let range = section.hunks.get(number.checked_sub(1)?)?.clone();
    let mut body = diff[range].lines();
    let header = body.next()?;
    let deleted = file.kind == FileKind::Deleted;
    let side = if deleted { '-' } else { '+' };
    let spec = header.split_whitespace().find(|w| w.starts_with(side))?.trim_start_matches(side);
    let mut line: u64 = spec.split(',').next()?.parse().ok()?;
    let (mut first, mut last, mut removed_at) = (None, None, None);
    for text in body {
        match text.chars().next() {
            Some(c) if c == side => {
                first.get_or_insert(line);
                last = Some(line);
                line += 1;
            }
            Some('+' | '-') => {
                removed_at.get_or_insert(line);
            }
            Some(' ') => line += 1,
            _ => {}
        }
    }
    Some(match (first, last, removed_at) {
        (Some(a), Some(b), _) if a == b => format!("line {a}"),
        (Some(a), Some(b), _) => format!("lines {a}-{b}"),
        (_, _, Some(at)) => format!("at line {at}"),
        _ => return None,
    })
}

/// The preview that writes `ops`, as a person's: applied at once, never left pending.
fn revert_action(
    ws: &WorkspaceSession,
    label: &str,
    ops: Vec<FileOp>,
) -> anyhow::Result<Arc<ChangeAction>> {
    let refs: Vec<&FileOp> = ops.iter().collect();
    let checked = match staged_journal::check(ws.workspace(), &refs) {
        Ok(checked) => checked,
        Err(staged_journal::CheckError::Stale(stale)) => {
            bail!("{} {}; nothing was written (run the command again)", stale.path, stale.why)
        }
        Err(staged_journal::CheckError::Failed(err)) => bail!("{err}"),
    };
    let files: Vec<ChangedFile> = ops
        .iter()
        .map(|op| {
            let (change, from) = match op {
                FileOp::Update { .. } => (ChangeKind::Updated, None),
                FileOp::Create { .. } => (ChangeKind::Added, None),
                FileOp::Delete { .. } => (ChangeKind::Deleted, None),
                FileOp::Move { from, .. } => (ChangeKind::Moved, Some(from.clone())),
            };
            ChangedFile {
                path: op.path().to_owned(),
                from,
                change,
                summary: "reverted".to_owned(),
                lines_added: 0,
                lines_removed: 0,
            }
        })
        .collect();
    let details = ChangeDetails {
        label: label.to_owned(),
        files,
        applied: false,
        diff: checked.diff,
        pending_id: None,
        remainder: None,
        staged_by: None,
        needs_person: None,
    };
    Ok(Arc::new(ChangeAction::new(
        ws.workspace().clone(),
        REVERT_SOURCE,
        label.to_owned(),
        ops,
        details,
    )))
}

/// The newest log entry, which a revert just wrote.
fn newest_entry(ws: &WorkspaceSession) -> Option<u64> {
    ws.store().log()?.entries(1, false).ok()?.first().map(|e| e.seq)
}

fn refused(out: &Output, text: &str) -> anyhow::Result<Exit> {
    if out.json {
        out.line(&serde_json::to_string_pretty(&json!({"text": text, "isError": true}))?)?;
    } else {
        out.line(text)?;
    }
    Ok(Exit::ToolError)
}

pub(crate) fn plural(n: usize, word: &str) -> String {
    match (n, word) {
        (1, _) => format!("1 {word}"),
        (_, "entry") => format!("{n} entries"),
        _ => format!("{n} {word}s"),
    }
}

/// RFC 3339 (UTC) for milliseconds since the Unix epoch.
fn time(ms: i64) -> String {
    let at = std::time::UNIX_EPOCH
        + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or_default());
    crate::cmd::timestamp(at)
}
