//! `AstEditAction`: the pending action an `ast_edit` preview stages.
//!
//! Applying re-runs the same rewrite and writes only if every touched file is byte-identical to
//! what the preview read and the recomputed edits equal the previewed ones; otherwise nothing
//! is written and the result is the stale error. Its payload is replayable, so a durable store
//! in another process can rebuild it with [`AstEditAction::from_payload`].

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use staged_core::{ActionError, CancelToken, JsonObject, PendingAction, ToolResult};

use crate::{
    AstEditError, AstEditParams, EditPreview, EngineOptions, Workspace, compute_preview_with,
    fingerprint::fingerprint,
    journal::commit_from,
    render::{action_label, file_replacements, plural},
};

/// The name of the tool that stages these actions.
pub const AST_EDIT_TOOL_NAME: &str = "ast_edit";

/// The payload format version.
const PAYLOAD_VERSION: u64 = 1;

/// What the preview saw in one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpectedFile {
    /// Display path.
    pub path: String,
    /// SHA-256 of the bytes the preview read.
    pub fingerprint: String,
    /// Replacements in this file.
    pub count: usize,
}

/// What the preview promised: the apply must find exactly this.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Expected {
    /// Total replacements.
    pub total_replacements: usize,
    /// Touched files, sorted by path.
    pub files: Vec<ExpectedFile>,
    /// [`EditPreview::edits_digest`] of the preview.
    pub edits_digest: String,
}

impl Expected {
    /// What `preview` promises.
    pub fn of(preview: &EditPreview) -> Expected {
        Expected {
            total_replacements: preview.total_replacements(),
            files: preview
                .files
                .iter()
                .map(|f| ExpectedFile {
                    path: f.path.clone(),
                    fingerprint: f.fingerprint.clone(),
                    count: f.edits.len(),
                })
                .collect(),
            edits_digest: preview.edits_digest(),
        }
    }
}

/// A staged `ast_edit` rewrite.
#[derive(Debug, Clone)]
pub struct AstEditAction {
    workspace: Workspace,
    params: AstEditParams,
    expected: Expected,
    label: String,
    details: Value,
}

impl AstEditAction {
    /// The action for a preview of `params`, with the preview's details.
    pub fn new(
        workspace: Workspace,
        params: AstEditParams,
        preview: &EditPreview,
        details: Value,
    ) -> AstEditAction {
        let expected = Expected::of(preview);
        let label = action_label(expected.total_replacements, expected.files.len());
        AstEditAction { workspace, params, expected, label, details }
    }

    /// Rebuilds an action from [`PendingAction::payload`] output.
    ///
    /// # Errors
    /// [`AstEditError::InvalidPayload`] when the payload is malformed, of another version, or
    /// recorded for another workspace root.
    pub fn from_payload(
        workspace: Workspace,
        payload: &Value,
    ) -> Result<AstEditAction, AstEditError> {
        let bad = |msg: &str| AstEditError::InvalidPayload(msg.to_owned());
        if payload.get("tool").and_then(Value::as_str) != Some(AST_EDIT_TOOL_NAME) {
            return Err(bad("not an ast_edit payload"));
        }
        if payload.get("version").and_then(Value::as_u64) != Some(PAYLOAD_VERSION) {
            return Err(bad("unsupported payload version"));
        }
        let root =
            payload.get("root").and_then(Value::as_str).ok_or_else(|| bad("missing root"))?;
        if std::path::Path::new(root) != workspace.root() {
            return Err(AstEditError::InvalidPayload(format!(
                "recorded for workspace {root}, not {}",
                workspace.root().display()
            )));
        }
        let params: AstEditParams =
            serde_json::from_value(payload.get("params").cloned().unwrap_or(Value::Null))
                .map_err(|err| AstEditError::InvalidPayload(format!("params: {err}")))?;
        params.validate()?;
        let expected: Expected =
            serde_json::from_value(payload.get("expected").cloned().unwrap_or(Value::Null))
                .map_err(|err| AstEditError::InvalidPayload(format!("expected: {err}")))?;
        let label = action_label(expected.total_replacements, expected.files.len());
        let details = payload.get("details").cloned().unwrap_or_else(|| json!({}));
        Ok(AstEditAction { workspace, params, expected, label, details })
    }

    /// The preview's details, given up.
    pub(crate) fn into_details(self) -> Value {
        self.details
    }

    /// The arguments this action re-runs.
    pub fn params(&self) -> &AstEditParams {
        &self.params
    }

    /// What the preview promised.
    pub fn expected(&self) -> &Expected {
        &self.expected
    }

    /// Applies synchronously (the async `apply` runs this on a blocking thread).
    ///
    /// # Errors
    /// [`ActionError::Cancelled`] when `cancel` fired before anything was written;
    /// [`ActionError::Other`] when a write failed.
    pub fn apply_blocking(&self, cancel: &CancelToken) -> Result<ToolResult, ActionError> {
        if cancel.is_cancelled() {
            return Err(ActionError::Cancelled);
        }
        if let Some(drifted) = self.first_drifted_file() {
            return Ok(self.stale(&format!("{drifted} changed since the preview")));
        }
        let validated = match self.params.validate() {
            Ok(v) => v,
            Err(err) => return Ok(self.stale(&err.to_string())),
        };
        let preview = match compute_preview_with(
            &self.workspace,
            &validated,
            EngineOptions::apply(),
            Some(cancel),
        ) {
            Ok(p) => p,
            Err(AstEditError::Cancelled) => return Err(ActionError::Cancelled),
            Err(err) => return Ok(self.stale(&err.to_string())),
        };
        if Expected::of(&preview) != self.expected {
            return Ok(self.stale("the recomputed edits differ from the preview"));
        }
        if cancel.is_cancelled() {
            return Err(ActionError::Cancelled);
        }
        let Some(writes) = preview.writes() else {
            return Err(ActionError::other("ast_edit apply lost the rewritten contents"));
        };
        // The origin lets start-up recovery retire this preview if a crash interrupts the
        // apply after its commit point.
        match commit_from(&self.workspace, &writes, &self.expected.edits_digest) {
            Ok(()) => {}
            Err(AstEditError::Drifted(path)) => {
                return Ok(self.stale(&format!("{path} changed since the preview")));
            }
            Err(err) => return Err(ActionError::other(err)),
        }
        let total = preview.total_replacements();
        let files = preview.files_touched();
        Ok(ToolResult::text(format!(
            "Applied {} in {}.",
            plural(total, "replacement"),
            plural(files, "file")
        ))
        .with_details(json!({
            "totalReplacements": total,
            "filesTouched": files,
            "filesSearched": preview.files_searched,
            "applied": true,
            "limitReached": preview.limit_reached,
            "fileReplacements": file_replacements(&preview),
        })))
    }

    fn first_drifted_file(&self) -> Option<String> {
        self.expected.files.iter().find_map(|file| {
            let same = self
                .workspace
                .absolute(&file.path)
                .ok()
                .and_then(|abs| std::fs::read(abs).ok())
                .is_some_and(|bytes| fingerprint(&bytes) == file.fingerprint);
            (!same).then(|| file.path.clone())
        })
    }

    fn stale(&self, cause: &str) -> ToolResult {
        let text = format!(
            "Preview is stale / no longer matches; no replacements were applied. Preview expected {} in {}.",
            plural(self.expected.total_replacements, "replacement"),
            plural(self.expected.files.len(), "file")
        );
        ToolResult::error(text).with_details(json!({
            "totalReplacements": 0,
            "filesTouched": 0,
            "applied": false,
            "stale": true,
            "expectedReplacements": self.expected.total_replacements,
            "expectedFiles": self.expected.files.len(),
            "cause": cause,
        }))
    }
}

#[async_trait::async_trait]
impl PendingAction for AstEditAction {
    fn label(&self) -> &str {
        &self.label
    }

    fn source_tool_name(&self) -> &str {
        AST_EDIT_TOOL_NAME
    }

    fn details(&self) -> Option<&Value> {
        Some(&self.details)
    }

    fn payload(&self) -> Option<Value> {
        Some(json!({
            "tool": AST_EDIT_TOOL_NAME,
            "version": PAYLOAD_VERSION,
            "root": self.workspace.root().to_string_lossy(),
            "params": self.params,
            "scope": { "paths": self.params.paths, "maxFiles": self.params.max_files },
            "options": {
                "lang": self.params.lang,
                "selector": self.params.selector,
                "strictness": self.params.strictness,
                "limit": self.params.limit,
            },
            "expected": self.expected,
            "details": self.details,
        }))
    }

    async fn apply(
        &self,
        _reason: &str,
        _extra: Option<&JsonObject>,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        if cancel.is_cancelled() {
            return Err(ActionError::Cancelled);
        }
        let this = self.clone();
        let cancel = cancel.clone();
        tokio::task::spawn_blocking(move || this.apply_blocking(&cancel))
            .await
            .map_err(|err| ActionError::other(format!("ast_edit apply worker failed: {err}")))?
    }
}
