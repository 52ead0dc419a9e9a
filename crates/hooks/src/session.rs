//! The client's session behind a hook event: each event's `session_id` names a staged session
//! (made on first sight, with the client's process, and titled from the first prompt), the
//! store acts for it (what the hook stages or records is that session's, and only its own
//! previews are its model's), and the notices a person left for it (a revert's reason) ride
//! on the next event that can carry text to the model.

use staged_store::SessionScope;
use staged_workspace::WorkspaceSession;

use crate::event::{Client, EventName, HookEvent, Reply};

/// Enters the event's session: the store acts for it from now on. An event that names none
/// (no `session_id`, or a blank one) is an agent's all the same, never a person's: it is the
/// session of the client's process (`process <pid>:<start>`), or when that cannot be found,
/// of the client's events that name none. `None` when the workspace keeps no durable store.
pub(crate) fn enter(client: Client, event: &HookEvent, ws: &WorkspaceSession) -> Option<u64> {
    let store = ws.sqlite()?;
    let process = staged_session::process::client_of_this_process().map(|p| p.key());
    let named = event.session_id.as_deref().filter(|id| !id.trim().is_empty());
    let id = match (named, &process) {
        (Some(id), _) => id.to_owned(),
        (None, Some(process)) => format!("process {process}"),
        (None, None) => "no session id".to_owned(),
    };
    let row = store.open_session(client.name(), &id, process.as_deref()).ok()?;
    if event.hook_event_name == EventName::UserPromptSubmit
        && row.title.is_none()
        && let Some(prompt) = &event.prompt
        && let Some(first) = prompt.lines().map(str::trim).find(|l| !l.is_empty())
    {
        let _ = store.title_session(row.number, first);
    }
    store.set_scope(SessionScope::model(row.number));
    Some(row.number)
}

/// Every session's pending previews (a person's view), whatever the store acts for.
pub(crate) fn all_pending(
    ws: &WorkspaceSession,
) -> Result<Vec<staged_core::PendingSummary>, staged_core::StoreError> {
    let Some(store) = ws.sqlite() else { return ws.store().summaries() };
    let scope = store.scope();
    store.set_scope(SessionScope { own_stack: false, ..scope });
    let res = ws.store().summaries();
    store.set_scope(scope);
    res
}

/// The notices waiting for session `number`, taken (each is told once), as one text.
pub(crate) fn take_notices(ws: &WorkspaceSession, number: Option<u64>) -> Option<String> {
    let notices = ws.sqlite()?.take_notices(number?).ok()?;
    (!notices.is_empty()).then(|| notices.join("\n"))
}

/// `reply` with the notices added where the client shows text to the model: appended to a
/// deny's or a block's reason, or as context after a prompt or a tool call. Notices an event
/// cannot carry stay for the next one.
pub(crate) fn with_notices(
    client: Client,
    event: &HookEvent,
    ws: &WorkspaceSession,
    number: Option<u64>,
    reply: Reply,
) -> Reply {
    let carries = match (&reply, &event.hook_event_name) {
        (Reply::Deny(_) | Reply::Block(_), _) => true,
        (Reply::Nothing, EventName::UserPromptSubmit | EventName::PostToolUse) => {
            client.carries_context()
        }
        _ => false,
    };
    if !carries {
        return reply;
    }
    let Some(notices) = take_notices(ws, number) else { return reply };
    match reply {
        Reply::Deny(text) => Reply::Deny(format!("{text}\n\n{notices}")),
        Reply::Block(text) => Reply::Block(format!("{text}\n\n{notices}")),
        _ => Reply::Context { event: event.hook_event_name.clone(), text: notices },
    }
}
