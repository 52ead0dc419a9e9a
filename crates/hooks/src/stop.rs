//! Gate mode's `Stop`: a turn is held while a preview this session's hook staged is pending
//! (or what is left of it after a partial apply), or while an edit the gate refused because
//! such a preview held its file was never made again.
//!
//! What the gate remembers for it (in the session's state): the ids it staged, and the edits
//! it refused because a pending preview already wrote the file. A partial apply leaves the
//! rest pending under a new id: the apply's log entry names the old id and ends with the
//! rest's ([`staged_core::remainder_text`]), so the rest is the session's too. An edit
//! refused because of a preview this session did not stage (another agent's, a person's) is
//! not the model's to fix: it is named once, and never holds a turn.
//!
//! A turn that ends with previews pending (none the Stop holds it for, or after holding it
//! [`MAX_STOP_BLOCKS`] times) tells the person, in the client's user-facing channel
//! ([`Reply::Notice`]): which previews wait, and that `staged ui` and `staged review` show
//! them. Nothing waits unseen, headless runs included.

use staged_core::{LogAction, PendingSummary, RESOLVE_REMINDER};
use staged_workspace::WorkspaceSession;

use crate::{
    Outcome,
    event::{Client, HookEvent, Reply},
    state::{Refused, SessionFile, SessionState},
};

/// A Stop is held at most this many times in a row (the reference's loop forces `resolve`
/// three times, then gives up).
pub(crate) const MAX_STOP_BLOCKS: u32 = 3;

/// How many of the newest log entries a Stop reads to follow partial applies.
const LOG_LOOKBACK: usize = 512;

/// How [`staged_core::remainder_text`] starts: a log entry's result that holds it names the
/// pending id the rest of a partial apply stays under, last, as `(<id>).`.
const REMAINDER_MARK: &str = "The rest stays pending as the newest preview: ";

/// Remembers that the gate staged `id`, writing `files`, in `session`: an edit of those files
/// refused before is made again now.
pub(crate) fn remember(
    ws: &WorkspaceSession,
    client: Client,
    session: &str,
    id: &str,
    files: &[String],
) -> Result<Option<String>, String> {
    let file = SessionFile::open(ws, client, session)?;
    let (mut state, note) = file.load_or_rebuild(ws);
    if !state.staged.iter().any(|known| known == id) {
        state.staged.push(id.to_owned());
    }
    // (A refusal this very preview caused, by a parallel call, stands.)
    state.refused.retain(|r| r.pending == id || !files.contains(&r.path));
    file.save(&state)?;
    Ok(note)
}

/// Remembers that the gate refused an edit in `event`'s session with `why`, when that is
/// because a pending preview already writes its file; anything else the model sees and fixes
/// in its next call. Returns a note when the state cannot be saved.
pub(crate) fn refused(
    ws: &WorkspaceSession,
    client: Client,
    event: &HookEvent,
    why: &str,
) -> Option<String> {
    let session = event.session_id.as_ref()?;
    // The preview that refused it may be another session's, which this session's own view
    // of the stack does not list.
    let pending = crate::session::all_pending(ws).ok()?;
    let (path, by) = pending.iter().find_map(|p| {
        let marker = format!(" already has a pending preview: {} ({}). ", p.id, p.label);
        let (path, _) = why.split_once(&marker)?;
        Some((path.to_owned(), p))
    })?;
    let mut note = None;
    let res = SessionFile::open(ws, client, session).and_then(|file| {
        let mut state;
        (state, note) = file.load_or_rebuild(ws);
        // What the Stop then knows better (the rest of a partial apply, a staging saved
        // after this) it corrects.
        let ours = state.staged.iter().any(|id| id == by.id.as_str());
        state.refused.retain(|r| r.path != path);
        state.refused.push(Refused {
            path,
            pending: by.id.to_string(),
            label: by.label.clone(),
            ours,
        });
        file.save(&state)
    });
    match res {
        Ok(()) => note,
        Err(why) => Some(
            note.map_or_else(|| format!("staged: {why}"), |note| format!("{note}; staged: {why}")),
        ),
    }
}

/// The pending previews that are the session's: those it staged, and what partial applies of
/// them left. `state.staged` becomes exactly their ids.
fn ours<'a>(
    ws: &WorkspaceSession,
    state: &mut SessionState,
    pending: &'a [PendingSummary],
) -> Vec<&'a PendingSummary> {
    let is_pending = |id: &str| pending.iter().any(|p| p.id.as_str() == id);
    if !state.staged.iter().all(|id| is_pending(id))
        && let Some(log) = ws.store().log()
        && let Ok(mut entries) = log.entries(LOG_LOOKBACK, false)
    {
        // Oldest first, so that the rest of a rest is followed too.
        entries.reverse();
        for entry in entries {
            let record = &entry.record;
            if record.action != LogAction::Apply
                || !state.staged.iter().any(|id| id == record.id.as_str())
            {
                continue;
            }
            if let Some(rest) = remainder_of(&record.result)
                && !state.staged.iter().any(|id| id == rest)
            {
                state.staged.push(rest.to_owned());
            }
        }
    }
    state.staged.retain(|id| is_pending(id));
    pending.iter().filter(|p| state.staged.iter().any(|id| id == p.id.as_str())).collect()
}

/// The pending id a partial apply's result says the rest stays under.
fn remainder_of(result: &str) -> Option<&str> {
    let (_, tail) = result.rsplit_once(REMAINDER_MARK)?;
    let (_, id) = tail.rsplit_once(" (")?;
    id.strip_suffix(").")
}

/// `Stop`: holds the turn while a preview this session staged is pending, or an edit refused
/// for one was never made again, three times in a row at most; then lets it end and says so.
/// An edit refused for another session's preview is named once, and never holds it.
pub(crate) fn stop(client: Client, event: &HookEvent, ws: &WorkspaceSession) -> Outcome {
    let Some(session) = &event.session_id else { return Outcome::reply(Reply::Nothing) };
    let file = match SessionFile::open(ws, client, session) {
        Ok(file) => file,
        Err(why) => return Outcome::reply(Reply::Nothing).note(format!("staged: {why}")),
    };
    // A state that cannot be read is rebuilt from the session's pending previews, so the
    // turn is still held for them: the gate fails closed.
    let (mut state, unreadable) = file.load_or_rebuild(ws);
    let outcome = stop_with(client, event, ws, &file, &mut state);
    match unreadable {
        Some(note) => outcome.note(note),
        None => outcome,
    }
}

/// [`stop`] on the session's `state`, read or rebuilt.
fn stop_with(
    client: Client,
    event: &HookEvent,
    ws: &WorkspaceSession,
    file: &SessionFile,
    state: &mut SessionState,
) -> Outcome {
    // Every session's previews: the session's own are told apart by its state, and the
    // person is told of all that wait.
    let pending = match crate::session::all_pending(ws) {
        Ok(pending) => pending,
        Err(err) => return Outcome::reply(Reply::Nothing).note(format!("staged: {err}")),
    };
    let mut known = state.staged.clone();
    let ours = ours(ws, state, &pending);
    known.extend(ours.iter().map(|p| p.id.to_string()));
    // A refusal by a preview whose staging this session had not saved yet (parallel tool
    // calls) is the session's after all.
    for refusal in &mut state.refused {
        refusal.ours = refusal.ours || known.contains(&refusal.pending);
    }
    // Named once: another session's previews are not this one's to resolve.
    let (theirs, own): (Vec<Refused>, Vec<Refused>) =
        std::mem::take(&mut state.refused).into_iter().partition(|r| !r.ours);
    state.refused = own;
    let theirs_text = (!theirs.is_empty()).then(|| {
        format!(
            "An edit of this session was refused because another session's preview of its file was pending (not yours to resolve): {}.",
            refusals(&theirs)
        )
    });
    if ours.is_empty() && state.refused.is_empty() {
        state.stop_blocks = 0;
        let outcome = saved(file, state, notice(&pending));
        return match theirs_text {
            Some(text) => outcome.note(format!("staged: {text}")),
            None => outcome,
        };
    }
    if event.stop_hook_active == Some(false) {
        state.stop_blocks = 0;
    }
    let listed: Vec<String> = ours.iter().map(|p| format!("{} ({})", p.id, p.label)).collect();
    if state.stop_blocks >= MAX_STOP_BLOCKS {
        state.stop_blocks = 0;
        let still = if listed.is_empty() { "nothing".to_owned() } else { listed.join(", ") };
        let mut note = format!(
            "staged: let the turn end after holding it {MAX_STOP_BLOCKS} times; still pending: {still}"
        );
        if !state.refused.is_empty() {
            note.push_str(&format!("; refused and never made again: {}", refusals(&state.refused)));
            state.refused.clear();
        }
        note.push_str(". Resolve with `staged review` or `staged resolve`.");
        let mut outcome = saved(file, state, notice(&pending)).note(note);
        if let Some(text) = theirs_text {
            outcome = outcome.note(format!("staged: {text}"));
        }
        return outcome;
    }
    state.stop_blocks += 1;
    let mut parts = Vec::new();
    if !listed.is_empty() {
        parts.push(format!(
            "A change staged in this session is still pending: {}. Resolve it before you finish: call {} with action \"apply\" and a one-line reason to write it, or \"discard\" to drop it.",
            listed.join(", "),
            client.resolve_tool()
        ));
    }
    if !state.refused.is_empty() {
        parts.push(format!(
            "An edit refused in this session, because a preview of its file was pending, was never made again: {}. Once that preview is resolved, make the edit again against the file as it is now (Read it first).",
            refusals(&state.refused)
        ));
    }
    parts.extend(theirs_text);
    let reason = format!("{}\n\n{RESOLVE_REMINDER}", parts.join("\n\n"));
    saved(file, state, Reply::Block(reason))
}

/// How many previews a notice names.
const NOTICE_LISTED: usize = 5;

/// What a turn that ends says to the person: nothing when nothing is pending, else the
/// pending previews (newest first, [`NOTICE_LISTED`] at most) and where to review them.
fn notice(pending: &[PendingSummary]) -> Reply {
    if pending.is_empty() {
        return Reply::Nothing;
    }
    let mut listed: Vec<String> =
        pending.iter().take(NOTICE_LISTED).map(|p| format!("{} ({})", p.id, p.label)).collect();
    if pending.len() > NOTICE_LISTED {
        listed.push(format!("and {} more", pending.len() - NOTICE_LISTED));
    }
    let n = pending.len();
    Reply::Notice(format!(
        "staged: {n} preview{} still pending, nothing of {} written: {}. Review {} with `staged ui` (in a browser) or `staged review` (in a terminal).",
        if n == 1 { " is" } else { "s are" },
        if n == 1 { "it" } else { "them" },
        listed.join(", "),
        if n == 1 { "it" } else { "them" },
    ))
}

/// `<path> (refused while <id> (<label>) was pending)`, comma-separated.
fn refusals(refused: &[Refused]) -> String {
    refused
        .iter()
        .map(|r| format!("{} (refused while {} ({}) was pending)", r.path, r.pending, r.label))
        .collect::<Vec<_>>()
        .join(", ")
}

fn saved(file: &SessionFile, state: &SessionState, reply: Reply) -> Outcome {
    match file.save(state) {
        Ok(()) => Outcome::reply(reply),
        Err(why) => Outcome::reply(reply).note(format!("staged: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rest_of_a_partial_apply_is_read_from_its_result() {
        let id = staged_core::PendingId::from_string("p-7".to_owned());
        let text = staged_core::remainder_text("Edit: a (b)", &id);
        assert!(text.starts_with(REMAINDER_MARK), "{text}");
        let result = format!("Applied hunks 1 of Patch: 2 files. {text}");
        assert_eq!(remainder_of(&result), Some("p-7"));
        assert_eq!(remainder_of("Applied Patch: 2 files."), None);
    }
}
