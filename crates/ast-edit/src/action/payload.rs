//! What a pending `ast_edit` keeps in the store: its arguments and what the preview promised,
//! versioned, so that a preview staged by an older staged still applies or is refused by name.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use staged_journal::ConfinedRoot;
use staged_protocol::lenient::Header;

use crate::{
    engine::LeftOut,
    error::AstEditError,
    params::AstEditParams,
    render::{ArgNames, capped_label},
};

use super::{AST_EDIT_TOOL_NAME, Expected, Replay};

/// The payload format version: 2 adds the preview's edits and walk ([`Replay`]); 1 is still
/// read (its apply searches again).
pub(super) const PAYLOAD_VERSION: u64 = 2;

const OLDEST_PAYLOAD_VERSION: u64 = 1;

/// The replayable payload of an `ast_edit` preview, as the durable stack stores it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AstEditPayload {
    /// Always [`AST_EDIT_TOOL_NAME`].
    pub(super) tool: String,
    /// [`PAYLOAD_VERSION`].
    pub(super) version: u64,
    /// The canonical workspace root it was staged in.
    pub(super) root: String,
    /// The arguments the apply re-runs.
    pub(super) params: AstEditParams,
    /// What the preview promised.
    pub(super) expected: Expected,
    /// What a cap left out of the preview, for the label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) left_out: Option<LeftOut>,
    /// How the label names the cap's argument.
    #[serde(default)]
    pub(super) names: ArgNames,
    /// The preview's details, for listings.
    #[serde(default)]
    pub(super) details: Option<Value>,
    /// The preview's edits and walk (version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) replay: Option<Replay>,
}

/// Keys earlier builds wrote (copies of `params`), ignored when read.
const LEGACY_PAYLOAD_KEYS: [&str; 2] = ["scope", "options"];

impl AstEditPayload {
    pub(super) fn parse(payload: &Value) -> Result<AstEditPayload, AstEditError> {
        let bad = |msg: String| AstEditError::InvalidPayload(msg);
        let header = Header::of(payload);
        if header.tool.0 != Some(AST_EDIT_TOOL_NAME) {
            return Err(bad("not an ast_edit payload".to_owned()));
        }
        let version = header.version.number;
        if !version.is_some_and(|v| (OLDEST_PAYLOAD_VERSION..=PAYLOAD_VERSION).contains(&v)) {
            return Err(bad("unsupported payload version".to_owned()));
        }
        let mut payload = payload.clone();
        if let Some(object) = payload.as_object_mut() {
            for key in LEGACY_PAYLOAD_KEYS {
                object.remove(key);
            }
        }
        serde_json::from_value(payload).map_err(|err| bad(err.to_string()))
    }

    /// [`AstEditPayload::parse`] of a payload read in `workspace`: refused when it was
    /// recorded for another workspace root.
    pub(super) fn parse_in(
        workspace: &ConfinedRoot,
        payload: &Value,
    ) -> Result<AstEditPayload, AstEditError> {
        let payload = AstEditPayload::parse(payload)?;
        if std::path::Path::new(&payload.root) != workspace.root() {
            return Err(AstEditError::InvalidPayload(format!(
                "recorded for workspace {}, not {}",
                payload.root,
                workspace.root().display()
            )));
        }
        Ok(payload)
    }

    /// The checks of what a listing of the preview shows: its replayed edits match its
    /// expected files, and each expected file is inside `workspace`.
    pub(super) fn check_files(&self, workspace: &ConfinedRoot) -> Result<(), AstEditError> {
        if let Some(replay) = &self.replay
            && replay.edits.len() != self.expected.files.len()
        {
            return Err(AstEditError::InvalidPayload(
                "the replayed edits do not match the expected files".to_owned(),
            ));
        }
        for file in &self.expected.files {
            workspace
                .rel(&file.path)
                .map_err(|err| AstEditError::InvalidPayload(format!("expected file: {err}")))?;
        }
        Ok(())
    }

    /// The preview's label, as its action shows it.
    pub(super) fn label(&self) -> String {
        capped_label(
            self.expected.total_replacements,
            self.expected.files.len(),
            self.left_out.as_ref(),
            self.names,
        )
    }
}
