//! The MCP tool list: the workspace's staged tools plus `pending`, with their annotations.
//!
//! Input schemas and descriptions come from the tools themselves, so MCP clients see exactly
//! what the built-in agent runtime sees. Every tool declares the same output schema, the
//! `{"text", "isError", "details", "pending"}` object of its `structuredContent`. Every tool
//! has a `title` (its label, also the annotations' `title`) and all four hints, set as the
//! tools behave (`docs/contract/mcp.md#tools`):
//!
//! * `ast_grep`, `pending`: read-only, so not destructive, and idempotent;
//! * the producers (`ast_edit`, `edit`, `write`, `apply_patch`): not read-only (they push a
//!   preview on the stack), not destructive (they write no file), idempotent (the same call
//!   again is refused while its preview of those files is pending, so it adds nothing);
//! * `resolve`: destructive (it writes or drops the newest preview) and not idempotent (a
//!   second call acts on the next preview);
//! * a plugin's tool: read-only as it declares; otherwise neither destructive nor idempotent
//!   is claimed for it (`destructiveHint` is left out, so a client assumes the worst).
//!
//! No tool reaches outside the workspace: `openWorldHint` is false for every built-in tool.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool as McpTool, ToolAnnotations};
use staged_core::{RESOLVE_TOOL_NAME, Tool};

use crate::{
    pending::{PENDING_DESCRIPTION, PENDING_TOOL_LABEL, PENDING_TOOL_NAME, pending_schema},
    reply::output_schema,
};

/// The MCP descriptions of `tools`, followed by `pending`.
pub(crate) fn mcp_tools(tools: &[Arc<dyn Tool>]) -> Vec<McpTool> {
    let mut res: Vec<McpTool> = tools
        .iter()
        .map(|tool| {
            describe(
                tool.name().to_owned(),
                tool.label(),
                tool.description().to_owned(),
                tool.parameters(),
                annotations(tool.as_ref()),
            )
        })
        .collect();
    res.push(describe(
        PENDING_TOOL_NAME.to_owned(),
        PENDING_TOOL_LABEL,
        PENDING_DESCRIPTION.to_owned(),
        pending_schema(),
        ToolAnnotations::with_title(PENDING_TOOL_LABEL)
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    ));
    res
}

fn describe(
    name: String,
    label: &str,
    description: String,
    schema: serde_json::Value,
    annotations: ToolAnnotations,
) -> McpTool {
    let schema = match schema {
        serde_json::Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    let mut tool = McpTool::new(name, description, Arc::new(schema));
    tool.output_schema = Some(output_schema());
    tool.title = Some(label.to_owned());
    tool.annotations = Some(annotations);
    tool
}

/// The built-in tools that stage a preview of file changes: one pending preview per file, so
/// the same call again is refused while the first one's preview is pending.
const PRODUCERS: [&str; 4] = ["ast_edit", "edit", "write", "apply_patch"];

/// The built-in tools that only read.
const READERS: [&str; 1] = ["ast_grep"];

fn annotations(tool: &dyn Tool) -> ToolAnnotations {
    let name = tool.name();
    let base = ToolAnnotations::with_title(tool.label()).read_only(tool.read_only());
    if name == RESOLVE_TOOL_NAME {
        base.destructive(true).idempotent(false).open_world(false)
    } else if PRODUCERS.contains(&name) {
        base.destructive(false).idempotent(true).open_world(false)
    } else if READERS.contains(&name) || tool.read_only() {
        let base = base.destructive(false).idempotent(true);
        if READERS.contains(&name) { base.open_world(false) } else { base }
    } else {
        // A plugin's tool: nothing is known beyond what it declares.
        base
    }
}
