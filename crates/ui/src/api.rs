//! The page and its endpoints. Reads: `GET /api/state` (the pending previews newest first, the
//! agent sessions (the one active last first), the log's newest entries, and a `revision` that changes whenever the stack or the log does, which
//! the page polls), `GET /api/preview?id=ID[&plain=1]` (a preview's files and hunks, `plain`
//! without highlighting), `GET
//! /api/log?entry=N` (a log entry with its diff). Writes, JSON bodies only: `POST /api/resolve`
//! (`{"id", "action": "apply"|"discard", "reason", "files"?, "hunks"?}`), `POST /api/undo`
//! (`{"entry"?, "reason"}`), `POST /api/redo` (`{"reason"}`). A session's change and its keep and revert:
//! `sessions.rs` (`/api/session`). A write answers
//! `{"isError", "text"}` with the session's result; a bad request gets 400 and
//! `{"error"}`, and nothing is resolved.
//!
//! A resolve names the preview the person looked at (`expected`), so a preview staged
//! meanwhile is never applied in its place; part of a preview (`files` whole, `hunks` by
//! number) is applied only while it is the newest, and only when it can apply in part, as
//! `staged resolve apply --only` does.

use std::{
    collections::BTreeMap,
    sync::Arc,
    time::{SystemTime, UNIX_EPOCH},
};

use axum::{
    Router,
    body::Bytes,
    extract::{RawQuery, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::{get, post},
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use staged_core::{
    CancelToken, FrontEnd, LogEntry, MAX_REASON_CHARS, PendingId, ResolveOptions, ToolError,
};
use staged_journal::{Choice, FILES_EXTRA_KEY, HUNKS_EXTRA_KEY, Selection, preview_parts};
use staged_protocol::{JsonObject, ResolveAction, ResolveParams, ToolResult, preview_diff};

use crate::{App, diff, sessions};

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const APP_CSS: &str = include_str!("../assets/app.css");

/// How many log entries the page lists.
const LOG_SHOWN: usize = 50;

/// The placeholder in `index.html` the CSRF token replaces.
const CSRF_PLACEHOLDER: &str = "{{CSRF}}";

pub(crate) fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/app.js", get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }))
        .route("/app.css", get(|| async { asset("text/css; charset=utf-8", APP_CSS) }))
        .route("/api/state", get(state))
        .route("/api/preview", get(preview))
        .route("/api/log", get(log_entry))
        .route("/api/resolve", post(resolve))
        .route("/api/undo", post(undo))
        .route("/api/redo", post(redo))
        .route("/api/session", get(sessions::show).post(sessions::act))
        .with_state(app)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, HeaderValue::from_static(content_type))], body).into_response()
}

async fn index(State(app): State<Arc<App>>) -> Response {
    let html = INDEX_HTML.replace(CSRF_PLACEHOLDER, app.csrf.as_str());
    ([(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"))], html)
        .into_response()
}

/// A refusal: a status and `{"error"}`.
#[derive(Debug)]
pub(crate) struct ApiError(pub(crate) StatusCode, pub(crate) String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json::of(ErrorBody { error: self.1 })).into_response()
    }
}

/// A JSON response.
#[derive(Debug)]
pub(crate) struct Json(pub(crate) Value);

impl Json {
    /// `shape` as the response's JSON (`null`, as a response that cannot be written, should it
    /// not serialize).
    pub(crate) fn of(shape: impl Serialize) -> Self {
        Json(serde_json::to_value(shape).unwrap_or(Value::Null))
    }
}

/// A refused request's body.
#[derive(Serialize)]
struct ErrorBody {
    error: String,
}

/// The answer to a resolve, an undo, a redo, a keep or a revert: its text, whether it is an
/// error, and the log entry a revert wrote.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Answer<'a> {
    pub(crate) is_error: bool,
    pub(crate) text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) entry: Option<Option<u64>>,
}

/// `/api/state`: what the page polls.
#[derive(Serialize)]
struct StateJson<'a> {
    root: std::borrow::Cow<'a, str>,
    revision: String,
    pending: Vec<PendingRow>,
    sessions: Vec<sessions::SessionRowJson>,
    log: Vec<LogRow>,
    redo: Option<u64>,
}

/// `/api/preview`: a pending preview, its diff drawn (or its details when it has no diff).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PreviewJson<'a> {
    id: &'a str,
    label: &'a str,
    source: &'a str,
    created_at: u64,
    newest: bool,
    partial: bool,
    files: Option<Vec<diff::FileView>>,
    details: Option<&'a Value>,
}

/// `/api/log`: a log entry.
#[derive(Serialize)]
struct LogJson<'a> {
    row: LogRow,
    action: &'a str,
    result: &'a str,
    extra: Option<&'a JsonObject>,
    files: Option<Vec<diff::FileView>>,
}

impl IntoResponse for Json {
    fn into_response(self) -> Response {
        let body = serde_json::to_string(&self.0).unwrap_or_else(|_| "null".to_owned());
        ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body)
            .into_response()
    }
}

/// A write's body: JSON, declared so (a form another site posts is neither), read into `T`.
pub(crate) fn body<T: serde::de::DeserializeOwned>(
    headers: &HeaderMap,
    bytes: &Bytes,
) -> Result<T, ApiError> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err(ApiError(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "a change is sent as JSON (Content-Type: application/json)".to_owned(),
        ));
    }
    serde_json::from_slice(bytes)
        .map_err(|err| bad(format!("the request is not understood: {err}")))
}

/// The value of `name` in a query string, percent-decoded.
pub(crate) fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    let raw = query?.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == name).then_some(value)
    })?;
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

pub(crate) fn bad(text: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, text.into())
}

pub(crate) fn internal(err: impl std::fmt::Display) -> ApiError {
    ApiError(StatusCode::INTERNAL_SERVER_ERROR, err.to_string())
}

fn seconds(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// A pending preview as the list shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PendingRow {
    id: String,
    label: String,
    source: String,
    /// Seconds since the epoch.
    created_at: u64,
    /// Whether it is the newest: only it can be resolved.
    newest: bool,
}

/// A log entry as the list shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct LogRow {
    entry: u64,
    id: String,
    label: String,
    outcome: &'static str,
    reason: String,
    front_end: String,
    at: u64,
    files: usize,
    reverts: Option<u64>,
    reverted_by: Option<u64>,
    /// Whether an undo of it can be tried (it wrote files and is not reverted yet).
    undoable: bool,
}

impl LogRow {
    fn of(entry: &LogEntry) -> LogRow {
        let r = &entry.record;
        LogRow {
            entry: entry.seq,
            id: r.id.as_str().to_owned(),
            label: r.label.clone(),
            outcome: r.outcome.as_str(),
            reason: r.reason.clone(),
            front_end: r.front_end.clone(),
            at: seconds(entry.at),
            files: r.files.len(),
            reverts: r.reverts,
            reverted_by: entry.reverted_by,
            undoable: r.outcome.is_undoable() && entry.reverted_by.is_none() && !r.files.is_empty(),
        }
    }
}

async fn state(State(app): State<Arc<App>>) -> Result<Json, ApiError> {
    let store = app.ws.store();
    let pending: Vec<PendingRow> = store
        .summaries()
        .map_err(internal)?
        .into_iter()
        .enumerate()
        .map(|(idx, s)| PendingRow {
            id: s.id.as_str().to_owned(),
            label: s.label,
            source: s.source_tool_name,
            created_at: seconds(s.created_at),
            newest: idx == 0,
        })
        .collect();
    let (log, redo) = match store.log() {
        Some(log) => {
            let entries = log.entries(LOG_SHOWN, false).map_err(internal)?;
            let redo = log.newest_undo().map_err(internal)?;
            (entries.iter().map(LogRow::of).collect::<Vec<_>>(), redo)
        }
        None => (Vec::new(), None),
    };
    let pending_ids = pending.iter().map(|p| p.id.as_str()).collect::<Vec<_>>().join(",");
    let sessions = sessions::rows(&app, log.first().map_or(0, |e| e.entry), &pending_ids)?;
    // A session changes with the log (its entries, a revert) and with its review states.
    let revision = format!(
        "{}|{}|{}|{}",
        pending_ids,
        log.first().map_or(0, |e| e.entry),
        log.iter().filter(|e| e.reverted_by.is_some()).count(),
        serde_json::to_string(&sessions).unwrap_or_default()
    );
    Ok(Json::of(StateJson {
        root: app.ws.workspace().root().to_string_lossy(),
        revision,
        pending,
        sessions,
        log,
        redo,
    }))
}

async fn preview(State(app): State<Arc<App>>, RawQuery(query): RawQuery) -> Result<Json, ApiError> {
    let Some(id) = query_param(query.as_deref(), "id") else {
        return Err(bad("name the preview: /api/preview?id=ID"));
    };
    let entries = app.ws.store().list().map_err(internal)?;
    let Some((idx, entry)) = entries.iter().enumerate().find(|(_, e)| e.id.as_str() == id) else {
        return Err(ApiError(StatusCode::NOT_FOUND, format!("{id} is no longer pending")));
    };
    let details = entry.action.details();
    let names: Vec<(String, Option<String>)> =
        entry.action.files().into_iter().map(|f| (f.path, f.from)).collect();
    let partial = entry.action.applies_in_part();
    // `plain=1`: escaped, not highlighted, for a first draw that does not wait for the
    // highlighting of a big diff.
    let highlight = query_param(query.as_deref(), "plain").is_none_or(|v| v != "1");
    let files = details.and_then(preview_diff).map(|d| diff::files(d, &names, partial, highlight));
    let details = if files.is_none() { details } else { None };
    Ok(Json::of(PreviewJson {
        id: entry.id.as_str(),
        label: entry.label(),
        source: entry.source_tool_name(),
        created_at: seconds(entry.created_at),
        newest: idx == 0,
        partial,
        files,
        details,
    }))
}

async fn log_entry(
    State(app): State<Arc<App>>,
    RawQuery(query): RawQuery,
) -> Result<Json, ApiError> {
    let Some(seq) = query_param(query.as_deref(), "entry").and_then(|n| n.parse::<u64>().ok())
    else {
        return Err(bad("name the entry by its number: /api/log?entry=N"));
    };
    let Some(log) = app.ws.store().log() else {
        return Err(ApiError(StatusCode::NOT_FOUND, "this workspace keeps no log".to_owned()));
    };
    let Some(entry) = log.entry(seq).map_err(internal)? else {
        return Err(ApiError(StatusCode::NOT_FOUND, format!("no log entry {seq}")));
    };
    let r = &entry.record;
    let names: Vec<(String, Option<String>)> = Vec::new();
    let files = r.diff.as_deref().map(|d| diff::files(d, &names, false, true));
    Ok(Json::of(LogJson {
        row: LogRow::of(&entry),
        action: r.action.as_str(),
        result: &r.result,
        extra: r.extra.as_ref(),
        files,
    }))
}

/// A resolve from the page.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResolveBody {
    /// The preview the person looked at.
    id: String,
    /// `apply` or `discard`.
    action: String,
    reason: String,
    /// Files applied whole, for part of a preview.
    #[serde(default)]
    files: Option<Vec<String>>,
    /// Hunks applied by number, per file, for part of a preview.
    #[serde(default)]
    hunks: Option<BTreeMap<String, Vec<u64>>>,
}

/// The reason, trimmed, or the refusal of a blank or too long one (as `staged resolve`
/// refuses them).
pub(crate) fn reason_of(reason: &str, required: bool) -> Result<String, ApiError> {
    let reason = reason.trim();
    if required && reason.is_empty() {
        return Err(bad("A reason is required: say why the preview is applied or discarded."));
    }
    let chars = reason.chars().count();
    if chars > MAX_REASON_CHARS {
        return Err(bad(format!(
            "The reason is {chars} characters long; a reason is at most {MAX_REASON_CHARS} characters."
        )));
    }
    Ok(reason.to_owned())
}

fn outcome(res: Result<ToolResult, ToolError>) -> Json {
    match res {
        Ok(result) => Json::of(Answer {
            is_error: result.is_error,
            text: &result.text_content(),
            entry: None,
        }),
        Err(err) => Json::of(Answer { is_error: true, text: err.message(), entry: None }),
    }
}

async fn resolve(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Json, ApiError> {
    let body: ResolveBody = body(&headers, &bytes)?;
    let action = match body.action.as_str() {
        "apply" => ResolveAction::Apply,
        "discard" => ResolveAction::Discard,
        other => return Err(bad(format!("`{other}` is not an action: apply or discard"))),
    };
    let reason = reason_of(&body.reason, true)?;
    let id = PendingId::from_string(body.id.clone());
    let picking = body.files.is_some() || body.hunks.is_some();
    let extra = if picking {
        if action == ResolveAction::Discard {
            return Err(bad("A discard drops the whole preview; pick files or hunks to apply."));
        }
        pick(&app, &id, body.files.unwrap_or_default(), body.hunks.unwrap_or_default())?
    } else {
        None
    };
    let params = ResolveParams { action, reason, extra };
    let session = Arc::clone(app.ws.session());
    let cancel = CancelToken::new();
    let options =
        ResolveOptions { front_end: Some(&FrontEnd::Ui), expected: Some(&id), by_person: true };
    Ok(outcome(session.resolve(params, options, &cancel).await))
}

/// The `extra` that applies `files` whole and `hunks` by number of the preview `id`, which
/// must be the newest and apply in part; `None` when that is all of it.
fn pick(
    app: &App,
    id: &PendingId,
    files: Vec<String>,
    hunks: BTreeMap<String, Vec<u64>>,
) -> Result<Option<JsonObject>, ApiError> {
    let head = app.ws.store().peek().map_err(internal)?;
    let Some(head) = head.filter(|h| h.id == *id) else {
        return Err(ApiError(
            StatusCode::CONFLICT,
            format!(
                "{id} is not the newest pending preview; part of a preview is applied only while it is the newest. Nothing was applied."
            ),
        ));
    };
    if !head.action.applies_in_part() {
        return Err(bad(format!(
            "`{}` ({id}) cannot be applied in part; apply it whole or discard it",
            head.label()
        )));
    }
    if files.is_empty() && hunks.values().all(Vec::is_empty) {
        return Err(bad("Nothing is picked: tick the files or hunks to apply."));
    }
    let hunks: Vec<(String, Vec<u64>)> = hunks.into_iter().filter(|(_, h)| !h.is_empty()).collect();
    let selection = Selection {
        files: (!files.is_empty()).then(|| files.clone()),
        hunks: (!hunks.is_empty()).then(|| hunks.clone()),
    };
    let parts = preview_parts(&head);
    let choices = selection.resolve(&parts).map_err(|err| match err {
        staged_core::ActionError::Tool(err) => bad(err.message()),
        other => bad(other.to_string()),
    })?;
    if choices.iter().all(|c| *c == Choice::Whole) {
        return Ok(None);
    }
    let mut extra = JsonObject::new();
    if !files.is_empty() {
        extra.insert(FILES_EXTRA_KEY.to_owned(), files.into());
    }
    if !hunks.is_empty() {
        let map: serde_json::Map<String, Value> =
            hunks.into_iter().map(|(path, numbers)| (path, numbers.into())).collect();
        extra.insert(HUNKS_EXTRA_KEY.to_owned(), Value::Object(map));
    }
    Ok(Some(extra))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UndoBody {
    /// The log entry to revert; the newest applied one when absent.
    #[serde(default)]
    entry: Option<u64>,
    #[serde(default)]
    reason: String,
}

async fn undo(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Json, ApiError> {
    let body: UndoBody = body(&headers, &bytes)?;
    let reason = reason_of(&body.reason, false)?;
    let session = Arc::clone(app.ws.session());
    let cancel = CancelToken::new();
    let options = staged_core::UndoOptions { target: body.entry, front_end: Some(&FrontEnd::Ui) };
    Ok(outcome(session.undo(&reason, options, &cancel).await))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RedoBody {
    #[serde(default)]
    reason: String,
}

async fn redo(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Json, ApiError> {
    let body: RedoBody = body(&headers, &bytes)?;
    let reason = reason_of(&body.reason, false)?;
    let session = Arc::clone(app.ws.session());
    let cancel = CancelToken::new();
    Ok(outcome(session.redo(&reason, &FrontEnd::Ui, &cancel).await))
}
