//! `PluginTool`: a plugin's tool as a staged [`Tool`]. Calling it calls the plugin; a result
//! whose `_meta` carries `staged/pending` stages a [`PluginAction`] on the session's stack.

use std::{collections::BTreeSet, sync::Arc};

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::Value;
use staged_core::{CancelToken, CustomToolApi, Tool, ToolError};
use staged_protocol::{ContentPart, ToolResult};

use crate::{PluginHost, action::PluginAction, protocol::parse_pending_meta};

/// A plugin tool's definition, as listed by the plugin.
#[derive(Debug, Clone)]
pub(crate) struct ToolDef {
    pub(crate) plugin: String,
    pub(crate) name: String,
    pub(crate) title: String,
    pub(crate) description: String,
    pub(crate) schema: Value,
    pub(crate) read_only: bool,
    /// Every tool of the plugin, callbacks included: what `apply` and `reject` may name.
    pub(crate) plugin_tools: Arc<BTreeSet<String>>,
}

/// A plugin's tool, proxied.
pub(crate) struct PluginTool {
    def: ToolDef,
    host: Arc<PluginHost>,
    api: CustomToolApi,
}

impl PluginTool {
    pub(crate) fn new(def: ToolDef, host: Arc<PluginHost>, api: CustomToolApi) -> Self {
        Self { def, host, api }
    }

    /// Stages the preview `result` describes, if it describes one; returns its id.
    fn stage(&self, result: &CallToolResult) -> Result<Option<String>, ToolError> {
        let meta = result.meta.as_ref().map(|meta| &meta.0);
        let invalid = |why: String| {
            ToolError::new(format!(
                "Plugin \"{}\" returned an invalid `staged/pending` from `{}`: {why}; nothing was staged",
                self.def.plugin, self.def.name
            ))
        };
        let Some(pending) = parse_pending_meta(meta).map_err(invalid)? else { return Ok(None) };
        let callbacks = [Some(&pending.apply), pending.reject.as_ref(), pending.undo.as_ref()];
        for callback in callbacks.into_iter().flatten() {
            if !self.def.plugin_tools.contains(callback) {
                return Err(invalid(format!(
                    "it names `{callback}`, which the plugin does not list"
                )));
            }
        }
        let action = PluginAction::new(Arc::clone(&self.host), &self.def, pending);
        let id = self.api.push_pending_action(action.clone())?;
        action.set_id(&id);
        Ok(Some(id.to_string()))
    }
}

#[async_trait::async_trait]
impl Tool for PluginTool {
    fn name(&self) -> &str {
        &self.def.name
    }

    fn label(&self) -> &str {
        &self.def.title
    }

    fn description(&self) -> &str {
        &self.def.description
    }

    fn parameters(&self) -> Value {
        self.def.schema.clone()
    }

    fn strict(&self) -> bool {
        false
    }

    fn deferrable(&self) -> bool {
        true
    }

    fn read_only(&self) -> bool {
        self.def.read_only
    }

    async fn execute(&self, args: Value, _cancel: &CancelToken) -> Result<ToolResult, ToolError> {
        let Value::Object(args) = args else {
            return Err(ToolError::new(format!(
                "Invalid arguments for `{}`: expected a JSON object",
                self.def.name
            )));
        };
        let result = self
            .host
            .call(&self.def.plugin, &self.def.name, args)
            .await
            .map_err(|err| ToolError::new(err.to_string()))?;
        let pending_id = if result.is_error == Some(true) { None } else { self.stage(&result)? };
        let mut res = to_tool_result(result);
        if let Some(id) = pending_id {
            let details = match res.details.take() {
                Some(Value::Object(mut map)) => {
                    map.insert("pendingId".to_owned(), Value::from(id));
                    Value::Object(map)
                }
                other => {
                    serde_json::to_value(Staged { pending_id: &id, structured_content: other })
                        .unwrap_or_default()
                }
            };
            res.details = Some(details);
        }
        Ok(res)
    }
}

/// The details of a plugin result that staged a preview, when the plugin's
/// `structuredContent` is not an object to add the preview's id to.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Staged<'a> {
    pending_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_content: Option<Value>,
}

/// A plugin's result as a staged one: text and image blocks as they are, anything else as
/// its JSON text; `structuredContent` as the details.
pub(crate) fn to_tool_result(result: CallToolResult) -> ToolResult {
    let content: Vec<ContentPart> = result
        .content
        .into_iter()
        .map(|block| match block {
            ContentBlock::Text(text) => ContentPart::Text { text: text.text },
            ContentBlock::Image(image) => {
                ContentPart::Image { data: image.data, mime_type: image.mime_type }
            }
            other => ContentPart::Text { text: serde_json::to_string(&other).unwrap_or_default() },
        })
        .collect();
    ToolResult {
        content,
        details: result.structured_content.filter(|v| !v.is_null()),
        is_error: result.is_error == Some(true),
    }
}
