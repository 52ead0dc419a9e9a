//! Agent sessions on the page: `GET /api/session?id=S3[&plain=1]` (a session's net change: its
//! files, each hunk numbered and noted as `staged session show` numbers and notes it, with the
//! hunk's identity), and `POST /api/session` (`{"session", "action": "keep"|"revert",
//! "reason", "files"?, "hunks"?, "seen"}`), which keeps or reverts whole files or hunks by
//! number through `staged_workspace::sessions`, the code of `staged session keep|revert`.
//!
//! `seen` maps each picked file to the identities (keys) of its hunks as the person saw them:
//! when the session's change is not that any more (another process reverted, kept or changed
//! it, or someone wrote into the lines), nothing is written and the answer says which hunk
//! changed under them.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{
    body::Bytes,
    extract::{RawQuery, State},
    http::{HeaderMap, StatusCode},
};
use serde::{Deserialize, Serialize};
use staged_core::{CancelToken, FrontEnd};
use staged_journal::DiffKind;
use staged_session::{FileKind, Pick, origin_text};
use staged_workspace::Unnamed;
use staged_workspace::sessions::{
    Loaded, Reverted, hunk_note, keep_picked, kind_name, listed, revert_picked,
};

use crate::{
    App,
    api::{Answer, ApiError, Json, bad, body, internal, query_param, reason_of},
    diff::{self, FileView, HunkView},
};

/// How long the sessions list is kept when nothing staged knows of changed: a change made
/// outside staged (which can mark a hunk changed since) shows within this.
const SESSIONS_MAX_AGE: Duration = Duration::from_secs(10);

/// The sessions list as last read, and what it was read for.
#[derive(Debug, Default)]
pub(crate) struct SessionsCache(Mutex<Option<(String, Instant, Vec<SessionRowJson>)>>);

/// The sessions as the list shows them, the one active last first; empty when the workspace
/// keeps no durable store yet. Reading them composes every session's net change, so the page's
/// poll reads them afresh only when the log (`newest` entry), the pending previews (`pending`),
/// a session or its review states changed, or the list is older than [`SESSIONS_MAX_AGE`].
pub(crate) fn rows(app: &App, newest: u64, pending: &str) -> Result<Vec<SessionRowJson>, ApiError> {
    let Some(store) = app.ws.sqlite() else { return Ok(Vec::new()) };
    let mut key = format!("{newest}|{pending}");
    for row in store.sessions().map_err(internal)? {
        let reviewed = store.reviewed(row.number).map_err(internal)?.len();
        key.push_str(&format!("|{}:{}:{reviewed}", row.number, row.active_ms));
    }
    let mut cache = app.sessions.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((was, at, rows)) = cache.as_ref()
        && *was == key
        && at.elapsed() < SESSIONS_MAX_AGE
    {
        return Ok(rows.clone());
    }
    let listed = listed(&app.ws, store).map_err(internal)?;
    let rows: Vec<SessionRowJson> = listed
        .iter()
        .map(|l| SessionRowJson {
            active_ms: l.row.active_ms,
            client: l.row.client.clone(),
            client_session_id: l.row.external_id.clone(),
            entries: l.entries,
            error: l.error.clone(),
            files: l.files,
            hunks: l.hunks,
            id: l.row.short_id(),
            pending: l.pending,
            reviewed: l.reviewed,
            title: l.row.title.clone(),
        })
        .collect();
    *cache = Some((key, Instant::now(), rows.clone()));
    Ok(rows)
}

/// A session of the list. Its fields are in the order of their names, as the JSON the page
/// reads (and the state's revision, which holds the list) has them.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionRowJson {
    active_ms: i64,
    client: String,
    /// The id its client gave it (Claude Code's, Codex's), which names it too.
    client_session_id: String,
    entries: usize,
    error: Option<String>,
    files: usize,
    hunks: usize,
    id: String,
    pending: usize,
    reviewed: usize,
    title: Option<String>,
}

/// A session's change as the page draws it.
#[derive(Serialize)]
struct SessionView<'a> {
    id: &'a str,
    client: &'a str,
    #[serde(rename = "clientSessionId")]
    client_session_id: &'a str,
    title: Option<&'a str>,
    hunks: usize,
    reviewed: usize,
    files: Vec<SessionFileView<'a>>,
}

/// A file of a session's change as the page draws it: the diff's file, what the session did
/// to it, whether it is reverted hunk by hunk, and its hunks with their keys and review states.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionFileView<'a> {
    path: String,
    /// Absent when the diff draws no file.
    #[serde(flatten)]
    head: Option<DrawnHead>,
    change: &'static str,
    by_hunk: bool,
    keys: Vec<&'a str>,
    hunks: Vec<SessionHunkView<'a>>,
}

/// What the diff says of a file besides its path and hunks.
#[derive(Serialize)]
struct DrawnHead {
    from: Option<String>,
    kind: &'static str,
    header: Vec<String>,
}

/// A drawn hunk, with the session's state of it when the session has that hunk.
#[derive(Serialize)]
struct SessionHunkView<'a> {
    #[serde(flatten)]
    drawn: HunkView,
    #[serde(flatten)]
    state: Option<HunkState<'a>>,
}

/// A session hunk's key, the change made to its lines since, and the person's review.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HunkState<'a> {
    key: &'a str,
    changed_since: Option<String>,
    review: Option<&'a str>,
}

/// Session `typed` (`S3` or `3`), read afresh.
fn load(app: &App, typed: &str) -> Result<Loaded, ApiError> {
    let Some(store) = app.ws.sqlite() else {
        return Err(ApiError(StatusCode::NOT_FOUND, "this workspace has no sessions".to_owned()));
    };
    let row = store.session_named(typed).map_err(internal)?.map_err(|why| match why {
        Unnamed::NoSession(_) => ApiError(StatusCode::NOT_FOUND, why.to_string()),
        _ => bad(why.to_string()),
    })?;
    Loaded::of(&app.ws, row).map_err(internal)
}

pub(crate) async fn show(
    State(app): State<Arc<App>>,
    RawQuery(query): RawQuery,
) -> Result<Json, ApiError> {
    let Some(id) = query_param(query.as_deref(), "id") else {
        return Err(bad("name the session: /api/session?id=S1"));
    };
    let highlight = query_param(query.as_deref(), "plain").is_none_or(|v| v != "1");
    let loaded = load(&app, &id)?;
    Ok(Json::of(view(&loaded, highlight)))
}

/// A session's change as the page draws it.
fn view(loaded: &Loaded, highlight: bool) -> SessionView<'_> {
    let mut files = Vec::with_capacity(loaded.files.len());
    for file in &loaded.files {
        let from = match &file.kind {
            FileKind::Moved { from } => Some(from.clone()),
            _ => None,
        };
        let names = [(file.path.clone(), from)];
        let note =
            |_: usize, _: DiffKind, idx: usize, n: usize| hunk_note(file, idx, n, &loaded.states);
        let drawn = diff::files_noted(&file.diff.diff, &names, true, highlight, &note);
        let (path, head, hunks) = match drawn.into_iter().next() {
            Some(FileView { path, from, kind, by_hunk: _, header, hunks }) => {
                (path, Some(DrawnHead { from, kind, header }), hunks)
            }
            None => (file.path.clone(), None, Vec::new()),
        };
        let hunks = hunks
            .into_iter()
            .enumerate()
            .map(|(idx, drawn)| SessionHunkView {
                drawn,
                state: file.diff.hunks.get(idx).map(|own| HunkState {
                    key: &own.key,
                    changed_since: own.changed_since.as_ref().map(origin_text),
                    review: loaded.states.get(&own.key).map(String::as_str),
                }),
            })
            .collect();
        files.push(SessionFileView {
            path,
            head,
            change: kind_name(&file.kind),
            by_hunk: file.kind == FileKind::Changed,
            keys: file.diff.hunks.iter().map(|h| h.key.as_str()).collect(),
            hunks,
        });
    }
    SessionView {
        id: &loaded.name,
        client: &loaded.row.client,
        client_session_id: &loaded.row.external_id,
        title: loaded.row.title.as_deref(),
        hunks: loaded.hunk_count(),
        reviewed: loaded.reviewed_count(),
        files,
    }
}

/// A keep or a revert from the page.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionBody {
    session: String,
    /// `keep` or `revert`.
    action: String,
    #[serde(default)]
    reason: String,
    /// Files picked whole.
    #[serde(default)]
    files: Vec<String>,
    /// Hunks picked by number, per file.
    #[serde(default)]
    hunks: BTreeMap<String, Vec<usize>>,
    /// The keys of each picked file's hunks as the person saw them, in order.
    seen: BTreeMap<String, Vec<String>>,
}

pub(crate) async fn act(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Json, ApiError> {
    let body: SessionBody = body(&headers, &bytes)?;
    let revert = match body.action.as_str() {
        "revert" => true,
        "keep" => false,
        other => return Err(bad(format!("`{other}` is not an action: keep or revert"))),
    };
    // As `staged session revert` requires a reason and `keep` takes one.
    let reason = reason_of(&body.reason, revert).map_err(|err| {
        if revert && body.reason.trim().is_empty() {
            bad("A reason is required: say why the session's change is reverted.")
        } else {
            err
        }
    })?;
    let loaded = load(&app, &body.session)?;
    let picks = picks(&loaded, &body)?;
    let Some(store) = app.ws.sqlite() else {
        return Err(internal("this workspace keeps no durable store"));
    };
    if revert {
        let cancel = CancelToken::new();
        let done = revert_picked(&app.ws, &loaded, &picks, &reason, &FrontEnd::Ui, &cancel)
            .await
            .map_err(|err| bad(err.0))?;
        Ok(Json::of(match &done {
            Reverted::Done { text, entry, .. } => {
                Answer { is_error: false, text, entry: Some(*entry) }
            }
            Reverted::Refused(text) => Answer { is_error: true, text, entry: None },
        }))
    } else {
        let kept = keep_picked(store, &loaded, &picks, &reason).map_err(|err| bad(err.0))?;
        Ok(Json::of(Answer { is_error: false, text: &kept.text, entry: None }))
    }
}

/// The picks of `body` on the session's files as they are now, refused (409) when a picked
/// file's hunks are not those the person saw.
fn picks(loaded: &Loaded, body: &SessionBody) -> Result<Vec<Option<Pick>>, ApiError> {
    if body.files.is_empty() && body.hunks.values().all(Vec::is_empty) {
        return Err(bad("Nothing is picked: tick the files or hunks to keep or revert."));
    }
    let mut picks: Vec<Option<Pick>> = vec![None; loaded.files.len()];
    let named =
        body.files.iter().chain(body.hunks.iter().filter(|(_, n)| !n.is_empty()).map(|(p, _)| p));
    for path in named {
        let Some(idx) = loaded.files.iter().position(|f| f.path == *path) else {
            return Err(changed(format!(
                "{path} is no longer part of {}'s change (it was reverted, or changed back, since you looked at it).",
                loaded.name
            )));
        };
        let file = &loaded.files[idx];
        let now: Vec<&str> = file.diff.hunks.iter().map(|h| h.key.as_str()).collect();
        let Some(seen) = body.seen.get(path) else {
            return Err(bad(format!("say which hunks of {path} you saw (`seen`)")));
        };
        let numbers = body.hunks.get(path).filter(|_| !body.files.contains(path));
        let pick = match numbers {
            None => {
                if seen.iter().map(String::as_str).ne(now.iter().copied()) {
                    return Err(changed(format!(
                        "{path}'s part of {}'s change changed since you looked at it (it now has {}).",
                        loaded.name,
                        staged_workspace::sessions::plural(now.len(), "hunk")
                    )));
                }
                Pick::Whole
            }
            Some(numbers) => {
                if file.kind != FileKind::Changed {
                    return Err(bad(format!(
                        "{} was {} by the session: it is reverted or kept whole; pick the file, not its hunks",
                        file.path,
                        kind_name(&file.kind)
                    )));
                }
                for &number in numbers {
                    let was = number.checked_sub(1).and_then(|i| seen.get(i));
                    let is = number.checked_sub(1).and_then(|i| now.get(i));
                    if was.is_none() || was.map(String::as_str) != is.copied() {
                        return Err(changed(format!(
                            "Hunk {number} of {path} changed since you looked at it ({}'s change to {path} now has {}).",
                            loaded.name,
                            staged_workspace::sessions::plural(now.len(), "hunk")
                        )));
                    }
                }
                let mut numbers = numbers.clone();
                numbers.sort_unstable();
                numbers.dedup();
                Pick::Hunks(numbers)
            }
        };
        picks[idx] = Some(pick);
    }
    Ok(picks)
}

/// The refusal of a pick made on a change that is not there any more.
fn changed(text: String) -> ApiError {
    ApiError(
        StatusCode::CONFLICT,
        format!("{text} Nothing was written; the page shows the change as it is now: look again."),
    )
}
