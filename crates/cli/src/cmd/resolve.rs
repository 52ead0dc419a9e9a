//! `staged resolve apply|discard --reason TEXT [--extra JSON]`: resolve the head of the stack
//! and print the resolve block.

use anyhow::{Context, bail};
use staged_core::{JsonObject, ResolveAction, ResolveParams};
use staged_render::{render_resolve_call, render_resolve_result};

use crate::{
    args::{ActionArg, GlobalArgs, ResolveArgs},
    cmd::{error_result, head, print_tool_json},
    context,
    exit::Exit,
    output::Output,
};

pub(crate) fn run(global: &GlobalArgs, args: &ResolveArgs, out: &Output) -> anyhow::Result<Exit> {
    // Validate the input before touching the workspace.
    let extra = args.extra.as_deref().map(parse_extra).transpose()?;
    let action = match args.action {
        ActionArg::Apply => ResolveAction::Apply,
        ActionArg::Discard => ResolveAction::Discard,
    };
    let ws = context::open(global)?;
    let params = ResolveParams { action, reason: args.reason.clone(), extra };
    let session = ws.session().clone();
    let result = context::block_on(|cancel| async move { session.resolve(params, &cancel).await })?
        .unwrap_or_else(|err| error_result(&err));
    if out.json {
        print_tool_json(out, &result, head(&ws).as_ref())?;
    } else {
        out.line(&render_resolve_call(action, &args.reason, &out.render))?;
        out.line(&render_resolve_result(result.details.as_ref(), result.is_error, &out.render))?;
        out.line(&result.text_content())?;
    }
    Ok(if result.is_error { Exit::ToolError } else { Exit::Success })
}

fn parse_extra(text: &str) -> anyhow::Result<JsonObject> {
    let value: serde_json::Value =
        serde_json::from_str(text).with_context(|| format!("--extra is not valid JSON: {text}"))?;
    match value {
        serde_json::Value::Object(map) => Ok(map),
        other => bail!("--extra must be a JSON object, not {}", kind(&other)),
    }
}

fn kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
