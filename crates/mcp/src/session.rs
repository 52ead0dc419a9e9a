//! Which agent session a stdio server acts for (`docs/contract/sessions.md#identity`).
//!
//! A client starts its stdio server as a child, so the client's process is the server's
//! nearest ancestor that is not a shell, the same process a hook of that client finds above
//! itself. The session is the newest one a hook recorded for that process (so a session id that
//! changes under a running server, Claude Code's `/clear` or a resume, is followed); before any
//! hook ran, Claude Code's `CLAUDE_CODE_SESSION_ID`; else the server's own connection. The
//! server enters it at every call, and hands the session's model the notices a person left.

use staged_store::{SessionScope, SqliteStore};

/// The client id under which a server's own connection is its session.
const OWN_CLIENT: &str = "mcp";

/// Finds the session a call acts for and makes the store act for it; its number.
pub(crate) fn enter(store: &SqliteStore, client_name: Option<&str>) -> Option<u64> {
    let client = staged_session::process::client_of_this_process();
    let key = client.as_ref().map(staged_session::process::ProcessInfo::key);
    let found = key.as_deref().and_then(|key| {
        ["claude-code", "codex"]
            .iter()
            .find_map(|c| store.session_of_process(c, key).ok().flatten())
    });
    let row = match found {
        Some(row) => Some(row),
        None => match std::env::var("CLAUDE_CODE_SESSION_ID") {
            Ok(id) if !id.trim().is_empty() => {
                store.open_session("claude-code", id.trim(), key.as_deref()).ok()
            }
            _ => {
                let own = staged_session::process::process(std::process::id())
                    .map_or_else(|| std::process::id().to_string(), |p| p.key());
                let client = match client_name {
                    Some(name) => format!("{OWN_CLIENT}:{name}"),
                    None => OWN_CLIENT.to_owned(),
                };
                store.open_session(&client, &own, key.as_deref()).ok()
            }
        },
    };
    let row = row?;
    store.set_scope(SessionScope::model(row.number));
    Some(row.number)
}

/// The notices left for session `number`, taken: each is told once.
pub(crate) fn notices(store: &SqliteStore, number: u64) -> Option<String> {
    let taken = store.take_notices(number).ok()?;
    (!taken.is_empty()).then(|| taken.join("\n"))
}
