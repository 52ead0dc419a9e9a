//! The review's state: the pending entries, the selection, the scroll, the reason prompt, the
//! files and hunks marked for a partial apply, the resolve log, the sessions view (the
//! sessions, the files and hunks of the one under the cursor, keep and revert through
//! `cmd::session`), and what was decided.

use std::{
    cell::Cell,
    collections::{BTreeMap, BTreeSet},
    ops::Range,
    sync::Arc,
};

use serde_json::Value;
use staged_core::{FrontEnd, LogEntry, PendingEntry, ResolveOptions};
use staged_journal::{DiffKind, FILES_EXTRA_KEY, HUNKS_EXTRA_KEY, diff_files, hunk_list};
use staged_protocol::{JsonObject, ResolveAction, ResolveParams};
use staged_render::ResolveShown;
use staged_workspace::{
    WorkspaceSession,
    sessions::{Listed, Loaded},
};

use crate::pick;

mod session_view;

/// How many log entries the log view shows.
const LOG_SHOWN: usize = 200;

/// What the keyboard is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Reading previews.
    Browse,
    /// Marking files and hunks of the newest preview, the cursor on the `cursor`-th row of
    /// [`Review::rows`].
    Files { cursor: usize },
    /// Reading the resolve log.
    Log,
    /// Typing the reason for a decision about the newest preview; `part` is what a partial
    /// apply writes.
    Reason { action: ResolveAction, input: String, part: Option<Part> },
    /// The sessions, the one active last first, the cursor on the `cursor`-th.
    Sessions { cursor: usize },
    /// The files and hunks of the opened session, the cursor on the `cursor`-th row of
    /// [`Review::session_rows`].
    SessionFiles { cursor: usize },
    /// Typing the reason to revert (required) or keep (optional) the file or hunk under the
    /// cursor of [`Mode::SessionFiles`].
    SessionReason { revert: bool, input: String, cursor: usize },
}

/// What a partial apply writes: whole files, and hunks (1-based) of others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    files: Vec<String>,
    hunks: Vec<(String, Vec<u64>, usize)>,
}

impl Part {
    /// One line per file, for the prompt: `src/a.ts`, `src/b.ts: hunks 1 and 3 of 4`.
    pub(crate) fn lines(&self) -> Vec<String> {
        let mut res = self.files.clone();
        res.extend(self.hunks.iter().map(|(path, hunks, of)| {
            let numbers: Vec<usize> = hunks.iter().map(|&h| h as usize).collect();
            format!(
                "{path}: hunk{} {} of {of}",
                if hunks.len() == 1 { "" } else { "s" },
                hunk_list(&numbers)
            )
        }));
        res
    }

    fn extra(&self) -> JsonObject {
        let mut extra = JsonObject::new();
        if !self.files.is_empty() {
            extra.insert(FILES_EXTRA_KEY.to_owned(), self.files.clone().into());
        }
        if !self.hunks.is_empty() {
            let map: serde_json::Map<String, Value> = self
                .hunks
                .iter()
                .map(|(path, hunks, _)| (path.clone(), hunks.clone().into()))
                .collect();
            extra.insert(HUNKS_EXTRA_KEY.to_owned(), Value::Object(map));
        }
        extra
    }
}

/// One file of the newest preview, as the file list shows it.
#[derive(Debug, Clone)]
pub(crate) struct HeadFile {
    pub(crate) path: String,
    /// What happens to it: `3 replacements`, `new file, 4 lines`.
    pub(crate) summary: String,
    pub(crate) kind: DiffKind,
    /// Its part of the diff, and each hunk's (byte ranges of the preview's diff).
    pub(crate) diff: Option<Range<usize>>,
    pub(crate) hunks: Vec<Range<usize>>,
}

impl HeadFile {
    /// Whether its hunks can be marked one by one.
    pub(crate) fn splits(&self) -> bool {
        self.kind.splits() && self.hunks.len() > 1
    }
}

/// A row of the file list: a file, or a hunk (0-based) of an opened file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Row {
    File(usize),
    Hunk(usize, usize),
}

/// How much of a file is marked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mark {
    Whole,
    /// These hunks (0-based), not all of them.
    Hunks(BTreeSet<usize>),
}

/// The review session.
pub(crate) struct Review {
    ws: WorkspaceSession,
    runtime: tokio::runtime::Runtime,
    entries: Vec<PendingEntry>,
    selected: usize,
    scroll: u16,
    mode: Mode,
    status: String,
    log: Vec<String>,
    /// The newest preview's id, its files, and what is marked of them (by file index).
    head: Option<staged_core::PendingId>,
    files: Vec<HeadFile>,
    marked: BTreeMap<usize, Mark>,
    /// The files whose hunks are listed.
    opened: BTreeSet<usize>,
    /// The first row of the file list on screen (the view keeps the cursor's row in sight).
    list_top: Cell<usize>,
    history: Vec<LogEntry>,
    /// The sessions, and the files of the one under the cursor (or opened).
    sessions: Vec<Listed>,
    session: Option<Loaded>,
}

impl Review {
    pub(crate) fn new(ws: WorkspaceSession, runtime: tokio::runtime::Runtime) -> Self {
        Self {
            ws,
            runtime,
            entries: Vec::new(),
            selected: 0,
            scroll: 0,
            mode: Mode::Browse,
            status: String::new(),
            log: Vec::new(),
            head: None,
            files: Vec::new(),
            marked: BTreeMap::new(),
            opened: BTreeSet::new(),
            list_top: Cell::new(0),
            history: Vec::new(),
            sessions: Vec::new(),
            session: None,
        }
    }

    /// Re-reads the stack, keeping the selection on the same preview when it is still there.
    pub(crate) fn reload(&mut self) {
        let selected_id = self.selected().map(|e| e.id.clone());
        match self.ws.store().list() {
            Ok(entries) => self.entries = entries,
            Err(err) => self.status = format!("Could not read the pending stack: {err}"),
        }
        let found = selected_id.and_then(|id| self.entries.iter().position(|e| e.id == id));
        match found {
            Some(idx) => self.selected = idx,
            None => {
                self.selected = 0;
                self.scroll = 0;
            }
        }
        // Marks belong to one preview: a new head starts with none.
        let head = self.entries.first().map(|e| e.id.clone());
        if self.head != head {
            self.head = head;
            self.files = self.entries.first().map(head_files).unwrap_or_default();
            self.marked.clear();
            self.opened.clear();
            self.list_top.set(0);
            if matches!(self.mode, Mode::Files { .. }) {
                self.mode = Mode::Browse;
            }
        }
    }

    /// The files of the newest preview.
    pub(crate) fn head_files(&self) -> &[HeadFile] {
        &self.files
    }

    /// What is marked of file `idx`.
    pub(crate) fn mark_of(&self, idx: usize) -> Option<&Mark> {
        self.marked.get(&idx)
    }

    /// Whether file `idx` lists its hunks.
    pub(crate) fn is_open(&self, idx: usize) -> bool {
        self.opened.contains(&idx)
    }

    /// The rows of the file list: each file, and the hunks of the opened ones.
    pub(crate) fn rows(&self) -> Vec<Row> {
        let mut rows = Vec::with_capacity(self.files.len());
        for (idx, file) in self.files.iter().enumerate() {
            rows.push(Row::File(idx));
            if self.opened.contains(&idx) {
                rows.extend((0..file.hunks.len()).map(|h| Row::Hunk(idx, h)));
            }
        }
        rows
    }

    /// The row under the cursor.
    pub(crate) fn cursor_row(&self) -> Option<Row> {
        let Mode::Files { cursor } = self.mode else { return None };
        self.rows().get(cursor).copied()
    }

    /// Where the file list's top row is, and keeps it so that `cursor` shows in `height` rows.
    pub(crate) fn list_top(&self, cursor: usize, height: usize) -> usize {
        let height = height.max(1);
        let mut top = self.list_top.get();
        if cursor < top {
            top = cursor;
        } else if cursor >= top + height {
            top = cursor + 1 - height;
        }
        self.list_top.set(top);
        top
    }

    /// Opens the file list of the newest preview for marking.
    pub(crate) fn start_files(&mut self) {
        if self.entries.is_empty() {
            self.status = "Nothing is pending.".to_owned();
            return;
        }
        if self.selected != 0 {
            self.status = "Only the newest preview can be resolved (the stack is LIFO); press p to go back to it.".to_owned();
            return;
        }
        if !self.entries[0].action.applies_in_part() || self.files.is_empty() {
            self.status =
                "This preview cannot be applied in part: apply or discard it whole.".to_owned();
            return;
        }
        self.mode = Mode::Files { cursor: 0 };
        self.list_top.set(0);
        self.scroll = 0;
        self.status.clear();
    }

    pub(crate) fn move_cursor(&mut self, delta: isize) {
        let n = self.rows().len();
        if let Mode::Files { cursor } = &mut self.mode
            && n > 0
        {
            *cursor = (*cursor as isize + delta).clamp(0, n as isize - 1) as usize;
            self.scroll = 0;
        }
    }

    /// Moves the cursor to the first or the last row.
    pub(crate) fn cursor_to(&mut self, last: bool) {
        let n = self.rows().len();
        if let Mode::Files { cursor } = &mut self.mode {
            *cursor = if last { n.saturating_sub(1) } else { 0 };
            self.scroll = 0;
        }
    }

    /// Lists the hunks of the file under the cursor (`open`), or folds them.
    pub(crate) fn open_hunks(&mut self, open: bool) {
        let Some(row) = self.cursor_row() else { return };
        let idx = match row {
            Row::File(idx) | Row::Hunk(idx, _) => idx,
        };
        let Some(file) = self.files.get(idx) else { return };
        if open {
            if !file.splits() {
                self.status = if file.kind.splits() {
                    format!("{} has one hunk: mark the file.", file.path)
                } else {
                    format!(
                        "{} is {} here: it applies whole and cannot be split into hunks.",
                        file.path,
                        file.kind.noun()
                    )
                };
                return;
            }
            self.opened.insert(idx);
        } else {
            self.opened.remove(&idx);
        }
        // The cursor stays on the file's row.
        let at = self.rows().iter().position(|r| *r == Row::File(idx)).unwrap_or(0);
        self.mode = Mode::Files { cursor: at };
        self.scroll = 0;
        self.status.clear();
    }

    /// Marks or unmarks the file or hunk under the cursor.
    pub(crate) fn toggle_mark(&mut self) {
        let Some(row) = self.cursor_row() else { return };
        match row {
            Row::File(idx) => {
                if self.marked.get(&idx) == Some(&Mark::Whole) {
                    self.marked.remove(&idx);
                } else {
                    self.marked.insert(idx, Mark::Whole);
                }
            }
            Row::Hunk(idx, hunk) => {
                let n = self.files.get(idx).map_or(0, |f| f.hunks.len());
                let mut set: BTreeSet<usize> = match self.marked.remove(&idx) {
                    None => BTreeSet::new(),
                    Some(Mark::Whole) => (0..n).collect(),
                    Some(Mark::Hunks(set)) => set,
                };
                if !set.remove(&hunk) {
                    set.insert(hunk);
                }
                if set.len() == n {
                    self.marked.insert(idx, Mark::Whole);
                } else if !set.is_empty() {
                    self.marked.insert(idx, Mark::Hunks(set));
                }
            }
        }
        self.status.clear();
    }

    /// Marks every file.
    pub(crate) fn mark_all(&mut self) {
        self.marked = (0..self.files.len()).map(|idx| (idx, Mark::Whole)).collect();
        self.status.clear();
    }

    /// Unmarks everything.
    pub(crate) fn mark_none(&mut self) {
        self.marked.clear();
        self.status.clear();
    }

    /// Marks every file in the folder of the file under the cursor (its subfolders included),
    /// or unmarks them when they all are.
    pub(crate) fn mark_folder(&mut self) {
        let Some(row) = self.cursor_row() else { return };
        let idx = match row {
            Row::File(idx) | Row::Hunk(idx, _) => idx,
        };
        let Some(file) = self.files.get(idx) else { return };
        let folder = match file.path.rsplit_once('/') {
            Some((folder, _)) => format!("{folder}/"),
            None => String::new(),
        };
        let members: Vec<usize> =
            (0..self.files.len()).filter(|&i| self.files[i].path.starts_with(&folder)).collect();
        let all = members.iter().all(|i| self.marked.get(i) == Some(&Mark::Whole));
        for i in &members {
            if all {
                self.marked.remove(i);
            } else {
                self.marked.insert(*i, Mark::Whole);
            }
        }
        let name = if folder.is_empty() { "the workspace root".to_owned() } else { folder };
        self.status = format!(
            "{} {} file{} in {name}.",
            if all { "Unmarked" } else { "Marked" },
            members.len(),
            if members.len() == 1 { "" } else { "s" }
        );
    }

    /// Asks for the reason to apply what is marked (all of it: a whole apply).
    pub(crate) fn apply_marked(&mut self) {
        if self.marked.is_empty() {
            self.status =
                "Mark at least one file or hunk first (space marks; Esc goes back).".to_owned();
            return;
        }
        let whole = self.marked.len() == self.files.len()
            && self.marked.values().all(|m| *m == Mark::Whole);
        let part = (!whole).then(|| {
            let mut part = Part { files: Vec::new(), hunks: Vec::new() };
            for (idx, mark) in &self.marked {
                let Some(file) = self.files.get(*idx) else { continue };
                match mark {
                    Mark::Whole => part.files.push(file.path.clone()),
                    Mark::Hunks(set) => part.hunks.push((
                        file.path.clone(),
                        set.iter().map(|h| *h as u64 + 1).collect(),
                        file.hunks.len(),
                    )),
                }
            }
            part
        });
        self.mode = Mode::Reason { action: ResolveAction::Apply, input: String::new(), part };
        self.status.clear();
    }

    /// Shows the resolve log, read afresh.
    pub(crate) fn show_log(&mut self) {
        match self.ws.store().log().map(|log| log.entries(LOG_SHOWN, false)) {
            Some(Ok(entries)) => self.history = entries,
            Some(Err(err)) => self.status = format!("Could not read the log: {err}"),
            None => self.history.clear(),
        }
        self.mode = Mode::Log;
        self.scroll = 0;
    }

    pub(crate) fn history(&self) -> &[LogEntry] {
        &self.history
    }

    pub(crate) fn back_to_browse(&mut self) {
        self.mode = Mode::Browse;
        self.scroll = 0;
        self.status.clear();
    }

    pub(crate) fn entries(&self) -> &[PendingEntry] {
        &self.entries
    }

    pub(crate) fn selected_index(&self) -> usize {
        self.selected
    }

    pub(crate) fn selected(&self) -> Option<&PendingEntry> {
        self.entries.get(self.selected)
    }

    pub(crate) fn mode(&self) -> &Mode {
        &self.mode
    }

    pub(crate) fn status(&self) -> &str {
        &self.status
    }

    pub(crate) fn scroll_offset(&self) -> u16 {
        self.scroll
    }

    /// The decisions made, one line each, printed after the UI closes.
    pub(crate) fn log(&self) -> &[String] {
        &self.log
    }

    pub(crate) fn select_offset(&mut self, delta: isize) {
        if self.entries.is_empty() {
            return;
        }
        let len = self.entries.len() as isize;
        self.selected = (self.selected as isize + delta).rem_euclid(len) as usize;
        self.scroll = 0;
        self.status.clear();
    }

    pub(crate) fn scroll(&mut self, delta: i32) {
        self.scroll = u16::try_from((i32::from(self.scroll) + delta).max(0)).unwrap_or(u16::MAX);
    }

    pub(crate) fn scroll_to_top(&mut self) {
        self.scroll = 0;
    }

    pub(crate) fn start_reason(&mut self, action: ResolveAction) {
        if self.entries.is_empty() {
            self.status = "Nothing is pending.".to_owned();
            return;
        }
        if self.selected != 0 {
            self.status = "Only the newest preview can be resolved (the stack is LIFO); press p to go back to it.".to_owned();
            return;
        }
        self.mode = Mode::Reason { action, input: String::new(), part: None };
        self.status.clear();
    }

    pub(crate) fn cancel_reason(&mut self) {
        self.mode = match self.mode {
            Mode::SessionReason { cursor, .. } => Mode::SessionFiles { cursor },
            _ => Mode::Browse,
        };
        self.status = "Cancelled; nothing was changed.".to_owned();
    }

    pub(crate) fn push_reason_char(&mut self, ch: char) {
        if let Mode::Reason { input, .. } | Mode::SessionReason { input, .. } = &mut self.mode {
            input.push(ch);
            self.status.clear();
        }
    }

    pub(crate) fn pop_reason_char(&mut self) {
        if let Mode::Reason { input, .. } | Mode::SessionReason { input, .. } = &mut self.mode {
            input.pop();
        }
    }

    /// Resolves the previewed head with the typed reason (only the marked files, for a partial
    /// apply).
    pub(crate) fn submit_reason(&mut self) {
        if matches!(self.mode, Mode::SessionReason { .. }) {
            self.submit_session_reason();
            return;
        }
        let Mode::Reason { action, input, part } = self.mode.clone() else { return };
        let reason = input.trim().to_owned();
        if reason.is_empty() {
            self.status = "Type a reason first (Esc cancels).".to_owned();
            return;
        }
        let Some(entry) = self.selected().cloned() else {
            self.mode = Mode::Browse;
            return;
        };
        let session = Arc::clone(self.ws.session());
        let extra = part.map(|part| part.extra());
        let params = ResolveParams { action, reason: reason.clone(), extra };
        let cancel = staged_core::CancelToken::new();
        let res = self.runtime.block_on(async {
            let options = ResolveOptions {
                front_end: Some(&FrontEnd::Review),
                expected: Some(&entry.id),
                by_person: true,
            };
            session.resolve(params, options, &cancel).await
        });
        let verb = match action {
            ResolveAction::Apply => "applied",
            ResolveAction::Discard => "discarded",
        };
        match res {
            Ok(result) if !result.is_error => {
                // A partial apply is named by what it wrote.
                let shown = ResolveShown::of(result.details.as_ref());
                let label = shown.label.unwrap_or_else(|| entry.label().to_owned());
                self.status = format!("{label}: {}", result.text_content());
                self.log.push(format!("{verb} {} ({label}): {reason}", entry.id));
            }
            Ok(result) => {
                self.status = result.text_content();
                self.log.push(format!(
                    "failed {} ({}): {}",
                    entry.id,
                    entry.label(),
                    result.text_content()
                ));
            }
            Err(err) => {
                self.status = err.message().to_owned();
                self.log.push(format!(
                    "failed {} ({}): {}",
                    entry.id,
                    entry.label(),
                    err.message()
                ));
            }
        }
        self.mode = Mode::Browse;
        self.reload();
    }
}

/// The files of `entry`, each with its part of the diff and its hunks.
fn head_files(entry: &PendingEntry) -> Vec<HeadFile> {
    let files = entry.action.files();
    let parts = pick::preview_parts(entry);
    let sections = entry
        .action
        .details()
        .and_then(staged_protocol::preview_diff)
        .map(diff_files)
        .unwrap_or_default();
    let aligned = sections.len() == files.len();
    files
        .into_iter()
        .enumerate()
        .map(|(idx, file)| {
            let section = sections.get(idx).filter(|_| aligned);
            HeadFile {
                path: file.path,
                summary: file.summary,
                kind: parts.get(idx).map_or(DiffKind::Modify, |p| p.kind),
                diff: section.map(|s| s.span.clone()),
                hunks: section.map(|s| s.hunks.clone()).unwrap_or_default(),
            }
        })
        .collect()
}
