//! The MCP tool list: the workspace's staged tools plus `pending`, with their annotations.
//!
//! Input schemas and descriptions come from the tools themselves, so MCP clients see exactly
//! what the built-in agent runtime sees. Every tool declares the same output schema, the
//! `{"text", "isError", "details", "pending"}` object of its `structuredContent`. Annotations: `ast_grep` and `pending` are read-only,
//! `resolve` is destructive (it writes the staged change), and the producers (`ast_edit`,
//! `edit`, `write`, `apply_patch`) are neither: they only stage previews.

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
            let destructive = tool.name() == RESOLVE_TOOL_NAME;
            describe(
                tool.name().to_owned(),
                tool.label(),
                tool.description().to_owned(),
                tool.parameters(),
                annotations(tool.label(), tool.read_only(), destructive),
            )
        })
        .collect();
    res.push(describe(
        PENDING_TOOL_NAME.to_owned(),
        PENDING_TOOL_LABEL,
        PENDING_DESCRIPTION.to_owned(),
        pending_schema(),
        annotations(PENDING_TOOL_LABEL, true, false),
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

fn annotations(label: &str, read_only: bool, destructive: bool) -> ToolAnnotations {
    ToolAnnotations::with_title(label)
        .read_only(read_only)
        .destructive(destructive)
        .open_world(false)
}
