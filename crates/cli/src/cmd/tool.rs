//! `staged tool NAME --args JSON`: calls one tool (a plugin's, or a built-in one) as a model
//! would. A tool that stages a preview leaves it pending for `staged resolve`; the output is
//! the tool's text (then, when it staged a preview, the lines that apply or discard it, as
//! `ast-edit` prints them), or with `--json` the object every tool-like command prints.

use anyhow::{Context, bail};
use serde_json::Value;
use staged_core::RESOLVE_TOOL_NAME;
use staged_render::escape_line;

use crate::{
    args::{GlobalArgs, ToolArgs},
    cmd::{Effect, error_result, head, print_tool_json},
    context,
    exit::Exit,
    output::Output,
};

pub(crate) fn run(global: &GlobalArgs, args: &ToolArgs, out: &Output) -> anyhow::Result<Exit> {
    let params: Value = serde_json::from_str(&args.args)
        .with_context(|| format!("--args is not valid JSON: {}", args.args))?;
    if !params.is_object() {
        bail!("--args must be a JSON object");
    }
    if args.name == RESOLVE_TOOL_NAME {
        bail!(
            "`resolve` is not called as a tool here: use `staged resolve apply|discard --reason TEXT`"
        );
    }
    let runtime = context::runtime()?;
    let (ws, host) = context::open_with_plugins(global, &runtime, Effect::Stages)?;
    let Some(tool) = ws.tools().into_iter().find(|t| t.name() == args.name && !t.hidden()) else {
        runtime.block_on(host.shutdown());
        let names: Vec<String> =
            ws.tools().iter().filter(|t| !t.hidden()).map(|t| t.name().to_owned()).collect();
        bail!("unknown tool `{}`; the tools here are: {}", args.name, names.join(", "));
    };
    // A preview this call stages is the head afterwards, under an id that was not there.
    let before = head(&ws).map(|(id, _)| id);
    let res =
        context::block_on_in(
            &runtime,
            |cancel| async move { tool.execute(params, &cancel).await },
        )?;
    runtime.block_on(host.shutdown());
    let head = head(&ws);
    match res {
        Ok(result) => {
            if out.json {
                print_tool_json(out, &result, head.as_ref())?;
            } else {
                out.line(&result.text_content())?;
                if let Some((id, label)) =
                    head.as_ref().filter(|(id, _)| before.as_ref() != Some(id))
                {
                    // As `ast-edit` prints them: how to resolve what was just staged.
                    out.line(&format!(
                        "\nStaged {id}: {}. Nothing is written yet.",
                        escape_line(label)
                    ))?;
                    out.line(&format!(
                        "  apply:   staged resolve apply --id {id} --reason \"<why>\""
                    ))?;
                    out.line(&format!(
                        "  discard: staged resolve discard --id {id} --reason \"<why>\""
                    ))?;
                }
            }
            Ok(if result.is_error { Exit::ToolError } else { Exit::Success })
        }
        Err(err) => {
            if out.json {
                print_tool_json(out, &error_result(&err), head.as_ref())?;
            }
            Err(anyhow::anyhow!("{}", err.message()))
        }
    }
}
