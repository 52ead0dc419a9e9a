//! The sessions view of the review: the workspace's sessions, the files and hunks of the one
//! opened, and keep and revert with a reason (through `cmd::session`).

use staged_core::FrontEnd;

use staged_session::{FileKind, Pick};

use staged_workspace::sessions::{self as shared, Listed, Loaded, Reverted};

use crate::cmd::session as sessions;

use super::{Mode, Review, Row};

/// The sessions view.
impl Review {
    /// Switches between the pending previews and the sessions, read afresh.
    pub(crate) fn toggle_sessions(&mut self) {
        if matches!(self.mode, Mode::Browse) {
            self.mode = Mode::Sessions { cursor: 0 };
            self.scroll = 0;
            self.status.clear();
            self.list_top.set(0);
            self.reload_sessions();
        } else {
            self.session = None;
            self.back_to_browse();
            self.reload();
        }
    }

    /// Re-reads the sessions, and the files of the one under the cursor.
    fn reload_sessions(&mut self) {
        let Some(store) = self.ws.sqlite().cloned() else {
            self.sessions.clear();
            self.session = None;
            return;
        };
        match shared::listed(&self.ws, &store) {
            Ok(listed) => self.sessions = listed,
            Err(err) => self.status = format!("Could not read the sessions: {err}"),
        }
        let n = self.sessions.len();
        if let Mode::Sessions { cursor } = &mut self.mode {
            *cursor = (*cursor).min(n.saturating_sub(1));
        }
        self.load_session();
    }

    /// Reads the files of the session under the cursor (or the opened one).
    fn load_session(&mut self) {
        let number = match self.mode {
            Mode::Sessions { cursor } => self.sessions.get(cursor).map(|l| l.row.number),
            _ => self.session.as_ref().map(|l| l.row.number),
        };
        let row = number.and_then(|n| self.sessions.iter().find(|l| l.row.number == n));
        self.session = match row.map(|l| Loaded::of(&self.ws, l.row.clone())) {
            None => None,
            Some(Ok(loaded)) => Some(loaded),
            Some(Err(err)) => {
                self.status = format!("Could not read the session's change: {err}");
                None
            }
        };
    }

    /// The sessions, the one active last first.
    pub(crate) fn sessions(&self) -> &[Listed] {
        &self.sessions
    }

    /// The session under the cursor, or the opened one, with its files.
    pub(crate) fn session(&self) -> Option<&Loaded> {
        self.session.as_ref()
    }

    /// Moves the cursor of the session list or of the session's files.
    pub(crate) fn move_session_cursor(&mut self, delta: isize) {
        match &mut self.mode {
            Mode::Sessions { cursor } => {
                let n = self.sessions.len();
                if n == 0 {
                    return;
                }
                *cursor = (*cursor as isize + delta).clamp(0, n as isize - 1) as usize;
                self.scroll = 0;
                self.load_session();
            }
            Mode::SessionFiles { cursor } => {
                let n = self.session.as_ref().map_or(0, |l| session_rows(l).len());
                if n > 0 {
                    *cursor = (*cursor as isize + delta).clamp(0, n as isize - 1) as usize;
                    self.scroll = 0;
                }
            }
            _ => {}
        }
        self.status.clear();
    }

    /// Lists the files and hunks of the session under the cursor.
    pub(crate) fn open_session(&mut self) {
        let Mode::Sessions { .. } = self.mode else { return };
        match &self.session {
            None => self.status = "No session to open.".to_owned(),
            Some(loaded) if loaded.files.is_empty() => {
                self.status = format!(
                    "{} changed nothing that is still in the files (or everything it changed was reverted).",
                    loaded.name
                );
            }
            Some(_) => {
                self.mode = Mode::SessionFiles { cursor: 0 };
                self.list_top.set(0);
                self.scroll = 0;
                self.status.clear();
            }
        }
    }

    /// Back from a session's files to the session list, the cursor on that session.
    pub(crate) fn close_session(&mut self) {
        let number = self.session.as_ref().map(|l| l.row.number);
        let cursor =
            number.and_then(|n| self.sessions.iter().position(|l| l.row.number == n)).unwrap_or(0);
        self.mode = Mode::Sessions { cursor };
        self.list_top.set(0);
        self.scroll = 0;
        self.status.clear();
        self.reload_sessions();
    }

    /// The rows of the opened session: each file, and the hunks of a changed file of more
    /// than one.
    pub(crate) fn session_rows(&self) -> Vec<Row> {
        self.session.as_ref().map(session_rows).unwrap_or_default()
    }

    /// Asks for the reason to revert (or keep) the file or hunk under the cursor.
    pub(crate) fn start_session_reason(&mut self, revert: bool) {
        let Mode::SessionFiles { cursor } = self.mode else {
            self.status =
                "Open a session (Enter) to keep or revert its files and hunks.".to_owned();
            return;
        };
        if self.session_rows().get(cursor).is_none() {
            return;
        }
        self.mode = Mode::SessionReason { revert, input: String::new(), cursor };
        self.status.clear();
    }

    /// What the reason prompt acts on: `a.txt`, `hunk 2 of a.txt`.
    pub(crate) fn session_target(&self, cursor: usize) -> String {
        let Some(loaded) = &self.session else { return String::new() };
        match session_rows(loaded).get(cursor) {
            Some(Row::File(f)) => loaded.files[*f].path.clone(),
            Some(Row::Hunk(f, h)) => format!("hunk {} of {}", h + 1, loaded.files[*f].path),
            None => String::new(),
        }
    }

    /// Reverts or keeps the file or hunk the prompt names, through the same code as `staged
    /// session revert|keep`, then reads the session afresh.
    pub(super) fn submit_session_reason(&mut self) {
        let Mode::SessionReason { revert, input, cursor } = self.mode.clone() else { return };
        let reason = input.trim().to_owned();
        if revert && reason.is_empty() {
            self.status = "Type a reason first: a revert says why (Esc cancels).".to_owned();
            return;
        }
        if let Err(err) = shared::check_reason(&reason, revert) {
            self.status = err.to_string();
            return;
        }
        let (Some(loaded), Some(store)) = (&self.session, self.ws.sqlite().cloned()) else {
            self.mode = Mode::SessionFiles { cursor };
            return;
        };
        let rows = session_rows(loaded);
        let Some(row) = rows.get(cursor) else {
            self.mode = Mode::SessionFiles { cursor };
            return;
        };
        let mut picks: Vec<Option<Pick>> = vec![None; loaded.files.len()];
        match *row {
            Row::File(f) => picks[f] = Some(Pick::Whole),
            Row::Hunk(f, h) => picks[f] = Some(Pick::Hunks(vec![h + 1])),
        }
        let res = if revert {
            sessions::revert_picked_now(&self.ws, loaded, &picks, &reason, &FrontEnd::Review).map(
                |done| match done {
                    Reverted::Done { text, .. } => (text, true),
                    Reverted::Refused(text) => (text, false),
                },
            )
        } else {
            shared::keep_picked(&store, loaded, &picks, &reason)
                .map(|kept| (kept.text, true))
                .map_err(anyhow::Error::from)
        };
        match res {
            Ok((text, true)) => {
                self.log.push(text.clone());
                self.status = text;
            }
            Ok((text, false)) => self.status = text,
            Err(err) => self.status = format!("{err:#}"),
        }
        self.mode = Mode::SessionFiles { cursor };
        let status = std::mem::take(&mut self.status);
        self.reload_sessions();
        if self.status.is_empty() {
            self.status = status;
        }
        // The cursor stays where it was, on what is left.
        let n = self.session_rows().len();
        if n == 0 {
            self.close_session();
            self.status = self.log.last().cloned().unwrap_or_default();
        } else {
            self.mode = Mode::SessionFiles { cursor: cursor.min(n - 1) };
        }
    }
}

/// The rows of `loaded`'s file list: each file, and the hunks of a changed file of more than
/// one (a created, deleted or moved file is kept or reverted whole).
fn session_rows(loaded: &Loaded) -> Vec<Row> {
    let mut rows = Vec::new();
    for (idx, file) in loaded.files.iter().enumerate() {
        rows.push(Row::File(idx));
        if file.kind == FileKind::Changed && file.diff.hunks.len() > 1 {
            rows.extend((0..file.diff.hunks.len()).map(|h| Row::Hunk(idx, h)));
        }
    }
    rows
}
