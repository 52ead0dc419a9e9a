//! `staged tools`: the tools a model or an MCP client gets in this workspace, the plugins'
//! included (their `_`-prefixed callbacks never are). Starts the plugins to list them.
//!
//! `--json` prints `{"tools": [{"name", "label", "description", "source", "readOnly",
//! "parameters"}], "loadErrors": [...]}`.

use serde_json::json;

use crate::{args::GlobalArgs, cmd::Effect, context, exit::Exit, output::Output};

pub(crate) fn run(global: &GlobalArgs, out: &Output) -> anyhow::Result<Exit> {
    let runtime = context::runtime()?;
    let (ws, host) = context::open_with_plugins(global, &runtime, Effect::ReadOnly)?;
    runtime.block_on(host.shutdown());
    let custom: Vec<&str> = ws.custom_tools().iter().map(|t| t.name()).collect();
    let tools = ws.tools();
    let source = |name: &str| {
        if custom.contains(&name) { "plugin" } else { "built-in" }
    };
    if out.json {
        let rows: Vec<_> = tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name(),
                    "label": t.label(),
                    "description": t.description(),
                    "source": source(t.name()),
                    "readOnly": t.read_only(),
                    "hidden": t.hidden(),
                    "parameters": t.parameters(),
                })
            })
            .collect();
        let errors: Vec<String> = ws.load_errors().iter().map(ToString::to_string).collect();
        out.json_line(&json!({"tools": rows, "loadErrors": errors}))?;
        return Ok(Exit::Success);
    }
    let width = tools.iter().map(|t| t.name().chars().count()).max().unwrap_or(0);
    for tool in &tools {
        let summary = tool.description().lines().next().unwrap_or_default();
        let kind = if tool.hidden() { "hidden" } else { source(tool.name()) };
        out.line(&format!("{:<width$}  {kind:<8}  {summary}", tool.name()))?;
    }
    Ok(Exit::Success)
}
