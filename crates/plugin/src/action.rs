//! `PluginAction`: a preview a plugin staged. Its durable payload names the plugin, its
//! callbacks and the plugin's own payload (never a command: what runs is always the trusted
//! configuration's), so it can be resolved after a restart or from another process, starting
//! the plugin again if needed.
//!
//! Failures follow the reference: an apply callback that returns `isError` is a `ToolError`
//! carrying its text; a plugin that crashes, times out or answers garbage is
//! `Apply failed: <message>`. Either way the preview stays pending under the same id. A reject
//! callback that returns no content gives the default discard text.
//!
//! A preview that names an `undo` callback is recorded in the resolve log with undo data (the
//! plugin, the callback, the payload and what the apply returned), and [`PluginUndo`] hands
//! them back to that callback for `staged undo`.

use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use staged_core::{
    ActionError, AppliedChange, CancelToken, LogEntry, LogOutcome, PendingAction, PendingId,
    Retirement, ToolError, UndoHandler,
};
use staged_protocol::{JsonObject, ToolResult, preview_diff};
use staged_workspace::StoredAction;

use crate::{
    PluginHost,
    protocol::{PROTOCOL_VERSION, PendingMeta, UNDO_EXTRA_KEY, callback_arguments},
    tool::{ToolDef, to_tool_result},
};

/// How a plugin's record sits in the durable stack's payload and in the log's undo data: under
/// `staged/plugin`, by which the host knows the entry for its own.
#[derive(Serialize, Deserialize)]
pub(crate) struct Envelope<T> {
    #[serde(rename = "staged/plugin")]
    plugin: T,
}

impl Envelope<Value> {
    /// The record a payload or undo data carries (`null` included), or `None` when it carries
    /// none: it is not a plugin's.
    pub(crate) fn read(stored: &Value) -> Option<Value> {
        staged_protocol::lenient::view::<Self>(stored).map(|envelope| envelope.plugin)
    }
}

/// What an `undo` callback learns under [`UNDO_EXTRA_KEY`]: what the apply returned, the log
/// entry, and whether the entry was undone before (then the callback redoes it).
#[derive(Serialize)]
struct UndoExtra<'a> {
    applied: &'a Value,
    entry: u64,
    redo: bool,
}

/// What the durable stack keeps of a plugin preview (besides its id, label, source tool name
/// and details, which every entry has).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    version: u64,
    plugin: String,
    apply: String,
    #[serde(default)]
    reject: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    undo: Option<String>,
    #[serde(default)]
    payload: Value,
}

/// What the resolve log keeps to undo a plugin's apply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct UndoRecord {
    version: u64,
    plugin: String,
    undo: String,
    #[serde(default)]
    payload: Value,
    /// The apply callback's `structuredContent`.
    #[serde(default)]
    applied: Value,
}

/// A plugin's staged preview.
#[derive(Clone)]
pub(crate) struct PluginAction {
    inner: Arc<Inner>,
}

struct Inner {
    host: Arc<PluginHost>,
    tool: String,
    label: String,
    details: Option<Value>,
    record: Record,
    /// The entry's id, the callbacks' idempotency key: known once pushed or rehydrated.
    id: OnceLock<String>,
}

impl std::fmt::Debug for PluginAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginAction")
            .field("plugin", &self.inner.record.plugin)
            .field("tool", &self.inner.tool)
            .field("label", &self.inner.label)
            .field("id", &self.inner.id.get())
            .finish_non_exhaustive()
    }
}

impl PluginAction {
    pub(crate) fn new(host: Arc<PluginHost>, def: &ToolDef, pending: PendingMeta) -> Self {
        let record = Record {
            version: PROTOCOL_VERSION,
            plugin: def.plugin.clone(),
            apply: pending.apply,
            reject: pending.reject,
            undo: pending.undo,
            payload: pending.payload,
        };
        let inner = Inner {
            host,
            tool: def.name.clone(),
            label: pending.label,
            details: pending.details,
            record,
            id: OnceLock::new(),
        };
        Self { inner: Arc::new(inner) }
    }

    /// Rebuilds a stored plugin preview; `Err` says why it cannot be run here.
    pub(crate) fn rehydrate(
        host: &Arc<PluginHost>,
        stored: &StoredAction,
    ) -> Result<Arc<dyn PendingAction>, String> {
        let raw = Envelope::read(&stored.payload).unwrap_or(Value::Null);
        let record: Record = serde_json::from_value(raw)
            .map_err(|err| format!("its stored plugin record is malformed ({err})"))?;
        if record.version != PROTOCOL_VERSION {
            return Err(format!(
                "it was staged with plugin protocol version {}, and this staged speaks {PROTOCOL_VERSION}",
                record.version
            ));
        }
        if !host.has_plugin(&record.plugin) {
            return Err(crate::PluginError::NotConfigured { plugin: record.plugin }.to_string());
        }
        let inner = Inner {
            host: Arc::clone(host),
            tool: stored.source_tool_name.clone(),
            label: stored.label.clone(),
            details: stored.details.clone(),
            record,
            id: OnceLock::from(stored.id.to_string()),
        };
        Ok(Arc::new(PluginAction { inner: Arc::new(inner) }))
    }

    pub(crate) fn set_id(&self, id: &PendingId) {
        let _ = self.inner.id.set(id.to_string());
    }

    fn arguments(&self, reason: &str, extra: Option<&JsonObject>) -> JsonObject {
        let record = &self.inner.record;
        callback_arguments(&record.payload, reason, extra, self.inner.id.get().map(String::as_str))
    }
}

#[async_trait::async_trait]
impl PendingAction for PluginAction {
    fn label(&self) -> &str {
        &self.inner.label
    }

    fn source_tool_name(&self) -> &str {
        &self.inner.tool
    }

    fn details(&self) -> Option<&Value> {
        self.inner.details.as_ref()
    }

    fn payload(&self) -> Option<Value> {
        serde_json::to_value(Envelope { plugin: &self.inner.record }).ok()
    }

    /// Calls the plugin's apply callback. The cancel signal is honoured only before the call
    /// is sent: once the plugin may be writing, staged waits for its answer (up to the
    /// plugin's timeout), so nothing is written behind the caller's back.
    async fn apply(
        &self,
        reason: &str,
        extra: Option<&JsonObject>,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        if cancel.is_cancelled() {
            return Err(ActionError::Cancelled);
        }
        let record = &self.inner.record;
        let result = self
            .inner
            .host
            .call(&record.plugin, &record.apply, self.arguments(reason, extra))
            .await
            .map_err(ActionError::other)?;
        let result = to_tool_result(result);
        if result.is_error {
            let mut err = ToolError::new(result.text_content());
            if let Some(details) = result.details {
                err = err.with_details(details);
            }
            return Err(ActionError::Tool(err));
        }
        Ok(result)
    }

    /// With an `undo` callback, the log keeps what it needs: the plugin, the callback, the
    /// payload and the apply's `structuredContent`. The diff is the preview's `details.diff`,
    /// when it has one; the files are the plugin's to know.
    fn applied_change(&self, result: &ToolResult) -> Option<AppliedChange> {
        let record = &self.inner.record;
        let undo = record.undo.as_ref()?;
        let data = UndoRecord {
            version: PROTOCOL_VERSION,
            plugin: record.plugin.clone(),
            undo: undo.clone(),
            payload: record.payload.clone(),
            applied: result.details.clone().unwrap_or(Value::Null),
        };
        let diff = self.inner.details.as_ref().and_then(preview_diff).map(str::to_owned);
        Some(AppliedChange {
            result: result.text_content(),
            label: None,
            diff,
            files: Vec::new(),
            undo: Some(serde_json::to_value(Envelope { plugin: data }).ok()?),
            remainder: None,
            texts: Vec::new(),
        })
    }

    async fn reject(
        &self,
        reason: &str,
        extra: Option<&JsonObject>,
    ) -> Result<Option<ToolResult>, ActionError> {
        let record = &self.inner.record;
        let Some(reject) = &record.reject else { return Ok(None) };
        let result = self
            .inner
            .host
            .call(&record.plugin, reject, self.arguments(reason, extra))
            .await
            .map_err(ActionError::other)?;
        let result = to_tool_result(result);
        if result.is_error {
            return Err(ActionError::Tool(ToolError::new(result.text_content())));
        }
        if result.content.is_empty() {
            return Ok(None);
        }
        Ok(Some(result))
    }
}

/// Undoes (and redoes) the log entries of plugin applies whose preview named an `undo`
/// callback: it calls that callback with the entry's payload, the undo's reason, the preview's
/// id, and `extra: {"staged/undo": {"redo", "applied", "entry"}}`. The callback checks that
/// what it wrote is still there before it reverts anything (staged cannot see a plugin's
/// files); an error result writes nothing and is not recorded.
pub(crate) struct PluginUndo {
    host: Arc<PluginHost>,
}

impl std::fmt::Debug for PluginUndo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginUndo").finish_non_exhaustive()
    }
}

impl PluginUndo {
    pub(crate) fn new(host: Arc<PluginHost>) -> Self {
        Self { host }
    }
}

fn undo_record(entry: &LogEntry) -> Option<Result<UndoRecord, String>> {
    let raw = Envelope::read(entry.record.undo.as_ref()?)?;
    Some(
        serde_json::from_value::<UndoRecord>(raw)
            .map_err(|err| format!("its stored undo record is malformed ({err})")),
    )
}

#[async_trait::async_trait]
impl UndoHandler for PluginUndo {
    fn accepts(&self, entry: &LogEntry) -> bool {
        undo_record(entry).is_some()
    }

    async fn undo(
        &self,
        entry: &LogEntry,
        retirement: &Retirement,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        let record = match undo_record(entry) {
            Some(Ok(record)) => record,
            Some(Err(why)) => return Err(ActionError::other(why)),
            None => return Err(ActionError::other("the entry holds no plugin undo record")),
        };
        if record.version != PROTOCOL_VERSION {
            return Err(ActionError::other(format!(
                "it was applied with plugin protocol version {}, and this staged speaks {PROTOCOL_VERSION}",
                record.version
            )));
        }
        if !self.host.has_plugin(&record.plugin) {
            return Err(ActionError::other(
                crate::PluginError::NotConfigured { plugin: record.plugin }.to_string(),
            ));
        }
        if cancel.is_cancelled() {
            return Err(ActionError::Cancelled);
        }
        let reason = retirement.base().map(|base| base.reason.as_str()).unwrap_or_default();
        let mut extra = JsonObject::new();
        extra.insert(
            UNDO_EXTRA_KEY.to_owned(),
            serde_json::to_value(UndoExtra {
                applied: &record.applied,
                entry: entry.seq,
                redo: entry.record.outcome == LogOutcome::Undone,
            })
            .unwrap_or_default(),
        );
        let args = callback_arguments(
            &record.payload,
            reason,
            Some(&extra),
            Some(entry.record.id.as_str()),
        );
        let result =
            self.host.call(&record.plugin, &record.undo, args).await.map_err(ActionError::other)?;
        Ok(to_tool_result(result))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::Envelope;

    /// What the host writes under `staged/plugin` it reads back, `null` included; anything
    /// without the member is not a plugin's.
    #[test]
    fn an_envelope_reads_back_what_was_written() {
        let record = json!({"version": 1, "plugin": "p", "apply": "a"});
        let written = serde_json::to_value(Envelope { plugin: &record }).unwrap();
        assert_eq!(written, json!({"staged/plugin": record}));
        assert_eq!(Envelope::read(&written), Some(record));
        assert_eq!(Envelope::read(&json!({"staged/plugin": null})), Some(Value::Null));
        for other in [json!({"tool": "ast_edit"}), json!(null), json!(["staged/plugin"])] {
            assert_eq!(Envelope::read(&other), None, "{other}");
        }
    }
}
