//! `staged tools`: the tools a model or an MCP client gets in this workspace, the plugins'
//! included (their `_`-prefixed callbacks never are), and `pending`, which only `staged mcp`
//! serves. Starts the plugins to list them. Each row says where the tool comes from:
//! `built-in`, `mcp` (served by `staged mcp` only), or the plugin (`plugin "refactor"`).
//!
//! `--json` prints `{"tools": [{"name", "label", "description", "source", "plugin",
//! "readOnly", "hidden", "parameters"}], "loadErrors": [...]}`, where `source` is `built-in`,
//! `mcp` or `plugin`, and `plugin` the plugin's name (null for the others).

use serde::Serialize;
use serde_json::Value;
use staged_mcp::{PENDING_DESCRIPTION, PENDING_TOOL_LABEL, PENDING_TOOL_NAME, pending_schema};
use staged_render::escape_line;

use crate::{args::GlobalArgs, cmd::Effect, context, exit::Exit, output::Output};

/// One row of the listing.
struct Row {
    name: String,
    label: String,
    description: String,
    /// `built-in`, `mcp` or `plugin`.
    source: &'static str,
    /// The plugin's name, for a plugin tool.
    plugin: Option<String>,
    read_only: bool,
    hidden: bool,
    parameters: Value,
}

pub(crate) fn run(global: &GlobalArgs, out: &Output) -> anyhow::Result<Exit> {
    let runtime = context::runtime()?;
    let (ws, host) = context::open_with_plugins(global, &runtime, Effect::ReadOnly)?;
    runtime.block_on(host.shutdown());
    let mut rows: Vec<Row> = ws
        .tools()
        .iter()
        .map(|t| {
            // An origin reads `plugin "<name>"`.
            let plugin = ws.tool_origin(t.name()).map(|origin| {
                origin
                    .strip_prefix("plugin \"")
                    .and_then(|o| o.strip_suffix('"'))
                    .unwrap_or(origin)
                    .to_owned()
            });
            Row {
                name: t.name().to_owned(),
                label: t.label().to_owned(),
                description: t.description().to_owned(),
                source: if plugin.is_some() { "plugin" } else { "built-in" },
                plugin,
                read_only: t.read_only(),
                hidden: t.hidden(),
                parameters: t.parameters(),
            }
        })
        .collect();
    // Served beside the others by `staged mcp`, before the hidden `resolve`.
    let at = rows.iter().position(|r| r.hidden).unwrap_or(rows.len());
    rows.insert(
        at,
        Row {
            name: PENDING_TOOL_NAME.to_owned(),
            label: PENDING_TOOL_LABEL.to_owned(),
            description: PENDING_DESCRIPTION.to_owned(),
            source: "mcp",
            plugin: None,
            read_only: true,
            hidden: false,
            parameters: pending_schema(),
        },
    );
    if out.json {
        let tools = rows
            .iter()
            .map(|r| ToolJson {
                description: &r.description,
                hidden: r.hidden,
                label: &r.label,
                name: &r.name,
                parameters: &r.parameters,
                plugin: r.plugin.as_deref(),
                read_only: r.read_only,
                source: r.source,
            })
            .collect();
        let load_errors = ws.load_errors().iter().map(ToString::to_string).collect();
        out.json_line(&ToolsJson { load_errors, tools })?;
        return Ok(Exit::Success);
    }
    let kind = |r: &Row| match (&r.plugin, r.hidden) {
        (_, true) => "hidden".to_owned(),
        (Some(plugin), false) => format!("plugin {}", escape_line(plugin)),
        (None, false) => r.source.to_owned(),
    };
    let width = rows.iter().map(|r| r.name.chars().count()).max().unwrap_or(0);
    let kind_width = rows.iter().map(|r| kind(r).chars().count()).max().unwrap_or(0);
    for row in &rows {
        let summary = row.description.lines().next().unwrap_or_default();
        out.line(&format!("{:<width$}  {:<kind_width$}  {summary}", row.name, kind(row)))?;
    }
    Ok(Exit::Success)
}

/// `tools --json`, its fields (and its tools') in the order they are printed (by name).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolsJson<'a> {
    load_errors: Vec<String>,
    tools: Vec<ToolJson<'a>>,
}

/// A tool of `tools --json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolJson<'a> {
    description: &'a str,
    hidden: bool,
    label: &'a str,
    name: &'a str,
    parameters: &'a Value,
    plugin: Option<&'a str>,
    read_only: bool,
    source: &'a str,
}
