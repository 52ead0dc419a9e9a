//! `Tool`: what the agent runtime, the MCP server and the CLI call; and `assemble_tools`, which
//! builds a tool list with the hidden `resolve` tool always last.

use std::sync::Arc;

use staged_protocol::ToolResult;

use crate::{CancelToken, RESOLVE_TOOL_NAME, ToolError};

/// A tool the model can call.
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls it by, e.g. `ast_edit`.
    fn name(&self) -> &str;

    /// A human label, e.g. `AST Edit`.
    fn label(&self) -> &str;

    /// The model-facing description.
    fn description(&self) -> &str;

    /// The JSON Schema of the parameters.
    fn parameters(&self) -> serde_json::Value;

    /// Whether the schema is strict (no additional properties anywhere).
    fn strict(&self) -> bool {
        true
    }

    /// Hidden tools cannot be requested by name; the runtime adds them itself.
    fn hidden(&self) -> bool {
        false
    }

    /// Whether the tool may stage changes that need an explicit `resolve`.
    fn deferrable(&self) -> bool {
        false
    }

    /// Whether the tool never changes anything (MCP's `readOnlyHint`).
    fn read_only(&self) -> bool {
        false
    }

    /// Runs the tool on JSON arguments. Bad arguments are a [`ToolError`] naming the problem.
    async fn execute(
        &self,
        args: serde_json::Value,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ToolError>;
}

/// Builds the tool list for a session (`docs/contract/resolve.md#tool-list`).
///
/// `requested` names are matched case-insensitively against `available`; unknown names and
/// hidden tools (including `resolve`) are dropped, since hidden tools cannot be requested.
/// `None` means every visible tool. The `resolve` tool is then always appended, last.
///
/// ```
/// # use std::sync::Arc;
/// # use staged_core::{assemble_tools, InMemoryStore, ResolveTool, Session, Tool};
/// let session = Arc::new(Session::new(Arc::new(InMemoryStore::new())));
/// let resolve: Arc<dyn Tool> = Arc::new(ResolveTool::new(session));
/// let tools = assemble_tools(&[], Some(&["resolve"]), resolve);
/// assert_eq!(tools.iter().map(|t| t.name()).collect::<Vec<_>>(), ["resolve"]);
/// ```
pub fn assemble_tools(
    available: &[Arc<dyn Tool>],
    requested: Option<&[&str]>,
    resolve: Arc<dyn Tool>,
) -> Vec<Arc<dyn Tool>> {
    let mut res: Vec<Arc<dyn Tool>> = Vec::new();
    let mut push_unique = |tool: &Arc<dyn Tool>| {
        if !res.iter().any(|t| t.name() == tool.name()) {
            res.push(Arc::clone(tool));
        }
    };
    match requested {
        Some(names) => {
            for name in names {
                let name = name.to_lowercase();
                if name == RESOLVE_TOOL_NAME {
                    continue;
                }
                if let Some(tool) =
                    available.iter().find(|t| !t.hidden() && t.name().to_lowercase() == name)
                {
                    push_unique(tool);
                }
            }
        }
        None => available
            .iter()
            .filter(|t| !t.hidden() && t.name() != RESOLVE_TOOL_NAME)
            .for_each(push_unique),
    }
    res.push(resolve);
    res
}
