//! The review's state: the pending entries, the selection, the scroll, the reason prompt, the
//! files marked for a partial apply, the resolve log, and what was decided.

use std::{collections::BTreeSet, sync::Arc};

use staged_core::{FrontEnd, JsonObject, LogEntry, PendingEntry, ResolveAction, ResolveParams};
use staged_workspace::WorkspaceSession;

/// How many log entries the log view shows.
const LOG_SHOWN: usize = 200;

/// What the keyboard is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Reading previews.
    Browse,
    /// Marking files of the newest preview, the cursor on the `cursor`-th.
    Files { cursor: usize },
    /// Reading the resolve log.
    Log,
    /// Typing the reason for a decision about the newest preview; `files` are the files of a
    /// partial apply.
    Reason { action: ResolveAction, input: String, files: Option<Vec<String>> },
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
    /// The files marked in the newest preview, and its id.
    marked: (Option<staged_core::PendingId>, BTreeSet<String>),
    history: Vec<LogEntry>,
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
            marked: (None, BTreeSet::new()),
            history: Vec::new(),
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
        if self.marked.0 != head {
            self.marked = (head, BTreeSet::new());
            if matches!(self.mode, Mode::Files { .. }) {
                self.mode = Mode::Browse;
            }
        }
    }

    /// The files of the newest preview, with what happens to each (`3 replacements`).
    pub(crate) fn head_files(&self) -> Vec<(String, String)> {
        self.entries
            .first()
            .map(|e| e.action.files().into_iter().map(|f| (f.path, f.summary)).collect())
            .unwrap_or_default()
    }

    pub(crate) fn is_marked(&self, path: &str) -> bool {
        self.marked.1.contains(path)
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
        if !self.entries[0].action.applies_in_part() || self.head_files().is_empty() {
            self.status =
                "This preview cannot be applied in part: apply or discard it whole.".to_owned();
            return;
        }
        self.mode = Mode::Files { cursor: 0 };
        self.scroll = 0;
        self.status.clear();
    }

    pub(crate) fn move_cursor(&mut self, delta: isize) {
        let n = self.head_files().len();
        if let Mode::Files { cursor } = &mut self.mode
            && n > 0
        {
            *cursor = (*cursor as isize + delta).clamp(0, n as isize - 1) as usize;
            self.scroll = 0;
        }
    }

    /// Marks or unmarks the file under the cursor.
    pub(crate) fn toggle_mark(&mut self) {
        let Mode::Files { cursor } = self.mode else { return };
        let Some((path, _)) = self.head_files().into_iter().nth(cursor) else { return };
        if !self.marked.1.remove(&path) {
            self.marked.1.insert(path);
        }
        self.status.clear();
    }

    /// Asks for the reason to apply the marked files (all of them: a whole apply).
    pub(crate) fn apply_marked(&mut self) {
        let files = self.head_files();
        let marked: Vec<String> = files
            .iter()
            .filter(|(p, _)| self.marked.1.contains(p))
            .map(|(p, _)| p.clone())
            .collect();
        if marked.is_empty() {
            self.status = "Mark at least one file first (space marks; Esc goes back).".to_owned();
            return;
        }
        let files = (marked.len() < files.len()).then_some(marked);
        self.mode = Mode::Reason { action: ResolveAction::Apply, input: String::new(), files };
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
        self.mode = Mode::Reason { action, input: String::new(), files: None };
        self.status.clear();
    }

    pub(crate) fn cancel_reason(&mut self) {
        self.mode = Mode::Browse;
        self.status = "Cancelled; nothing was changed.".to_owned();
    }

    pub(crate) fn push_reason_char(&mut self, ch: char) {
        if let Mode::Reason { input, .. } = &mut self.mode {
            input.push(ch);
            self.status.clear();
        }
    }

    pub(crate) fn pop_reason_char(&mut self) {
        if let Mode::Reason { input, .. } = &mut self.mode {
            input.pop();
        }
    }

    /// Resolves the previewed head with the typed reason (only the marked files, for a partial
    /// apply).
    pub(crate) fn submit_reason(&mut self) {
        let Mode::Reason { action, input, files } = self.mode.clone() else { return };
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
        let extra = files.map(|files| {
            let mut extra = JsonObject::new();
            extra.insert("files".to_owned(), files.into());
            extra
        });
        let params = ResolveParams { action, reason: reason.clone(), extra };
        let cancel = staged_core::CancelToken::new();
        let res = self.runtime.block_on(async {
            session.resolve_expected_as(params, &entry.id, &FrontEnd::Review, &cancel).await
        });
        let verb = match action {
            ResolveAction::Apply => "applied",
            ResolveAction::Discard => "discarded",
        };
        match res {
            Ok(result) if !result.is_error => {
                self.status = format!("{}: {}", entry.label(), result.text_content());
                self.log.push(format!("{verb} {} ({}): {reason}", entry.id, entry.label()));
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
