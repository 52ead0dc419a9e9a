//! The review's state: the pending entries, the selection, the scroll, the reason prompt, and
//! what was decided.

use std::sync::Arc;

use staged_core::{PendingEntry, ResolveAction, ResolveParams};
use staged_workspace::WorkspaceSession;

/// What the keyboard is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Reading previews.
    Browse,
    /// Typing the reason for a decision about `id`.
    Reason { action: ResolveAction, input: String },
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
        self.mode = Mode::Reason { action, input: String::new() };
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

    /// Resolves the previewed head with the typed reason.
    pub(crate) fn submit_reason(&mut self) {
        let Mode::Reason { action, input } = self.mode.clone() else { return };
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
        let params = ResolveParams { action, reason: reason.clone(), extra: None };
        let cancel = staged_core::CancelToken::new();
        let res = self
            .runtime
            .block_on(async { session.resolve_expected(params, &entry.id, &cancel).await });
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
