//! Which agent session a stdio server acts for (`docs/contract/sessions.md#identity`).
//!
//! A client starts its stdio server as a child, so the client's process is the server's
//! nearest ancestor that is not a shell, the same process a hook of that client finds above
//! itself. The session is the newest one a hook recorded for that process (so a session id that
//! changes under a running server, Claude Code's `/clear` or a resume, is followed); before any
//! hook ran, Claude Code's `CLAUDE_CODE_SESSION_ID`; else the server's own connection. The
//! server enters it at every call (seeing its session's previews and the person's, never
//! another agent session's), and hands the session's model the notices a person left.

use staged_store::{SessionScope, SqliteStore};

/// The client id under which a server's own connection is its session.
const OWN_CLIENT: &str = "mcp";

/// Finds the session a call acts for and makes the store act for it; its number, and whether
/// it is the client's own session (`false`: the server's connection, no tie found).
pub(crate) fn enter(store: &SqliteStore, client_name: Option<&str>) -> Option<(u64, bool)> {
    let client = staged_session::process::client_of_this_process();
    let key = client.as_ref().map(staged_session::process::ProcessInfo::key);
    let found = key.as_deref().and_then(|key| {
        ["claude-code", "codex"]
            .iter()
            .find_map(|c| store.session_of_process(c, key).ok().flatten())
    });
    let row = match found {
        Some(row) => Some((row, true)),
        None => match std::env::var("CLAUDE_CODE_SESSION_ID") {
            Ok(id) if !id.trim().is_empty() => {
                store.open_session("claude-code", id.trim(), key.as_deref()).ok().map(|r| (r, true))
            }
            _ => {
                let own = staged_session::process::process(std::process::id())
                    .map_or_else(|| std::process::id().to_string(), |p| p.key());
                let client = match client_name {
                    Some(name) => format!("{OWN_CLIENT}:{name}"),
                    None => OWN_CLIENT.to_owned(),
                };
                store.open_session(&client, &own, key.as_deref()).ok().map(|r| (r, false))
            }
        },
    };
    let (row, tied) = row?;
    // Its own session's previews, and the person's (staged at a terminal or in `staged review`,
    // which one stack shares with every front end); never another agent session's.
    store.set_scope(SessionScope::agent(row.number));
    Some((row.number, tied))
}

/// For a `resolve` with nothing of the server's session pending: the one other agent session
/// that holds previews, which it then acts for; or why not, naming the previews. A tied server
/// (`tied`) looks only at the sessions of its own client process (a client that runs another
/// client's hooks too, as Copilot CLI runs Claude Code's prompt hook, has two sessions there);
/// an untied one at every session. `Ok(None)`: none to act for.
pub(crate) fn other_session_resolve(
    store: &SqliteStore,
    tied: bool,
) -> Result<Option<u64>, String> {
    let scope = store.scope();
    store.set_scope(SessionScope::person());
    let all = staged_core::PendingActionStore::summaries(store);
    store.set_scope(scope);
    let mut all = all.map_err(|err| err.to_string())?;
    if tied {
        let key = staged_session::process::client_of_this_process()
            .map(|p| p.key())
            .ok_or("the client process is not known")?;
        all.retain(|p| {
            p.session.is_some_and(|s| {
                store
                    .session(s)
                    .ok()
                    .flatten()
                    .is_some_and(|row| row.process.as_deref() == Some(key.as_str()))
            })
        });
    }
    let mut sessions: Vec<u64> = all.iter().filter_map(|p| p.session).collect();
    sessions.sort_unstable();
    sessions.dedup();
    match (all.is_empty(), sessions.as_slice()) {
        (true, _) => Ok(None),
        (false, [one]) if all.iter().all(|p| p.session == Some(*one)) => Ok(Some(*one)),
        _ => {
            let named: Vec<String> = all
                .iter()
                .map(|p| {
                    let whose = p
                        .session
                        .map_or_else(|| "a person's".to_owned(), |s| format!("session S{s}'s"));
                    format!("{} ({}, {whose})", p.id, p.label)
                })
                .collect();
            Err(format!(
                "This connection staged nothing that is pending, and staged cannot tell which session this server serves, so it resolves none of the previews pending here: {}. A person resolves them with `staged review`.",
                named.join(", ")
            ))
        }
    }
}

/// The notices left for session `number`, taken: each is told once.
pub(crate) fn notices(store: &SqliteStore, number: u64) -> Option<String> {
    let taken = store.take_notices(number).ok()?;
    (!taken.is_empty()).then(|| taken.join("\n"))
}
