//! `staged ast-grep`: structural search, read-only.

use serde_json::json;
use staged_core::Tool;

use crate::{
    args::{AstGrepArgs, GlobalArgs},
    cmd::{error_result, head, tool_json},
    context,
    exit::Exit,
    output::Output,
    progress::Progress,
};

pub(crate) fn run(global: &GlobalArgs, args: &AstGrepArgs, out: &Output) -> anyhow::Result<Exit> {
    let ws = context::open(global)?;
    let tool = ws.ast_grep_tool();
    let mut params = json!({"pattern": args.pattern, "paths": args.paths});
    if let Some(lang) = &args.lang {
        params["lang"] = json!(lang);
    }
    if let Some(selector) = &args.selector {
        params["selector"] = json!(selector);
    }
    if let Some(strictness) = args.strictness {
        params["strictness"] = json!(strictness.as_str());
    }
    if let Some(limit) = args.limit {
        params["limit"] = json!(limit);
    }
    let res = {
        let _progress = Progress::start("searching files");
        context::block_on(|cancel| async move { tool.execute(params, &cancel).await })?
    };
    let head = head(ws.store().as_ref());
    match res {
        Ok(result) => {
            if out.json {
                out.json_line(&tool_json(&result, head.as_ref()))?;
            } else {
                out.line(&result.text_content())?;
            }
            Ok(if result.is_error { Exit::ToolError } else { Exit::Success })
        }
        Err(err) => {
            if out.json {
                out.json_line(&tool_json(&error_result(&err), head.as_ref()))?;
            }
            Err(anyhow::anyhow!("{}", err.message()))
        }
    }
}
