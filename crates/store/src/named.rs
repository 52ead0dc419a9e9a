//! The session a person names: by its short id (`S3`, `3`), or by the id its client gave it
//! (Claude Code's or Codex's session id, as their own screens and transcript files show it),
//! whole or its start.

use staged_core::StoreError;

use crate::{SessionRow, SqliteStore, parse_session_number};

/// The shortest start of a client's session id that names a session: shorter ones would name
/// some session by chance (a UUID's first 6 hex digits are one in 16 million).
const MIN_CLIENT_ID_START: usize = 6;

/// Why what a person typed names no session. Its text is the reason alone (the caller adds
/// where to look for the sessions there are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unnamed {
    /// It is neither a short id nor a client's session id (the typed text, escaped and cut
    /// short).
    NotAnId(String),
    /// A short id no session has.
    NoSession(u64),
    /// The start of several sessions' client ids (the typed text, and their short ids).
    Ambiguous(String, Vec<String>),
}

impl std::fmt::Display for Unnamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unnamed::NotAnId(shown) => write!(
                f,
                "`{shown}` is not a session id (S1, S2, ..., or the id its client gave it)"
            ),
            Unnamed::NoSession(number) => write!(f, "there is no session S{number}"),
            Unnamed::Ambiguous(shown, sessions) => write!(
                f,
                "`{shown}` begins the client ids of {}: type more of it, or the short id",
                sessions.join(" and ")
            ),
        }
    }
}

impl SqliteStore {
    /// The session `typed` names: `S3` or `3`; else the session whose client's id is
    /// `typed` (however short), or else the only one whose client's id begins with it (6
    /// characters or more).
    ///
    /// # Errors
    /// A database error; `Ok(Err(why))` when `typed` names no session.
    pub fn session_named(&self, typed: &str) -> Result<Result<SessionRow, Unnamed>, StoreError> {
        let shown = match parse_session_number(typed) {
            Ok(number) => return Ok(self.session(number)?.ok_or(Unnamed::NoSession(number))),
            Err(shown) => shown,
        };
        if typed.is_empty() {
            return Ok(Err(Unnamed::NotAnId(shown)));
        }
        let mut found: Vec<SessionRow> =
            self.sessions()?.into_iter().filter(|row| row.external_id.starts_with(typed)).collect();
        if let Some(exact) = found.iter().position(|row| row.external_id == typed) {
            return Ok(Ok(found.swap_remove(exact)));
        }
        if typed.chars().count() < MIN_CLIENT_ID_START {
            return Ok(Err(Unnamed::NotAnId(shown)));
        }
        Ok(match found.len() {
            0 => Err(Unnamed::NotAnId(shown)),
            1 => Ok(found.swap_remove(0)),
            _ => {
                found.sort_by_key(|row| row.number);
                Err(Unnamed::Ambiguous(shown, found.iter().map(SessionRow::short_id).collect()))
            }
        })
    }
}
