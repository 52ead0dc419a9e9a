//! Gate mode's `Stop`: a turn is held while a preview this session's hook staged is pending.

use staged_core::RESOLVE_REMINDER;
use staged_workspace::WorkspaceSession;

use crate::{
    Outcome,
    event::{Client, HookEvent, Reply},
    state::{SessionFile, SessionState},
};

/// A Stop is held at most this many times in a row (the reference's loop forces `resolve`
/// three times, then gives up).
pub(crate) const MAX_STOP_BLOCKS: u32 = 3;

/// `Stop`: holds the turn while a preview this session staged is pending, three times in a row
/// at most; then lets it end and says so.
pub(crate) fn stop(client: Client, event: &HookEvent, ws: &WorkspaceSession) -> Outcome {
    let Some(session) = &event.session_id else { return Outcome::reply(Reply::Nothing) };
    let file = match SessionFile::open(ws.workspace(), client, session) {
        Ok(file) => file,
        Err(why) => return Outcome::reply(Reply::Nothing).note(format!("staged: {why}")),
    };
    let mut state = file.load();
    let pending = match ws.store().summaries() {
        Ok(pending) => pending,
        Err(err) => return Outcome::reply(Reply::Nothing).note(format!("staged: {err}")),
    };
    let ours: Vec<_> =
        pending.iter().filter(|p| state.staged.iter().any(|id| *id == p.id.as_str())).collect();
    // Previews resolved since are forgotten.
    state.staged.retain(|id| pending.iter().any(|p| p.id.as_str() == id));
    if ours.is_empty() {
        state.stop_blocks = 0;
        return saved(&file, &state, Reply::Nothing);
    }
    if event.stop_hook_active == Some(false) {
        state.stop_blocks = 0;
    }
    let listed: Vec<String> = ours.iter().map(|p| format!("{} ({})", p.id, p.label)).collect();
    if state.stop_blocks >= MAX_STOP_BLOCKS {
        state.stop_blocks = 0;
        let note = format!(
            "staged: let the turn end after holding it {MAX_STOP_BLOCKS} times; still pending: {}. Resolve with `staged review` or `staged resolve`.",
            listed.join(", ")
        );
        return saved(&file, &state, Reply::Nothing).note(note);
    }
    state.stop_blocks += 1;
    let reason = format!(
        "A change staged in this session is still pending: {}. Resolve it before you finish: call {} with action \"apply\" and a one-line reason to write it, or \"discard\" to drop it.\n\n{RESOLVE_REMINDER}",
        listed.join(", "),
        client.resolve_tool()
    );
    saved(&file, &state, Reply::Block(reason))
}

fn saved(file: &SessionFile, state: &SessionState, reply: Reply) -> Outcome {
    match file.save(state) {
        Ok(()) => Outcome::reply(reply),
        Err(why) => Outcome::reply(reply).note(format!("staged: {why}")),
    }
}
