//! `staged ast-grep`: structural search, read-only. With `-r OUT`, as in ast-grep, it stages
//! the rewrite instead (it is `staged ast-edit -p PAT -r OUT`).

use serde_json::json;
use staged_workspace::{ArgNames, WorkspaceSession};

use crate::{
    args::{AstEditArgs, AstGrepArgs, GlobalArgs},
    cmd::{self, Effect},
    exit::Exit,
    output::Output,
};

pub(crate) fn run(global: &GlobalArgs, args: &AstGrepArgs, out: &Output) -> anyhow::Result<Exit> {
    if let Some(rewrite) = &args.rewrite {
        // ast-grep's `-p PAT -r OUT` shows the rewrite without writing it: here, that is a
        // preview, staged as `staged ast-edit -p PAT -r OUT` stages it, so an ast-grep
        // user's command works with `staged` in front.
        let edit = AstEditArgs {
            ops: Vec::new(),
            pattern: Some(args.pattern.clone()),
            rewrite: Some(rewrite.clone()),
            lang: args.lang.clone(),
            selector: args.selector.clone(),
            strictness: args.strictness,
            limit: args.limit,
            max_files: None,
            include_parse_errors: false,
            paths: args.paths.clone(),
        };
        return cmd::ast_edit::run(global, &edit, out);
    }
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
    cmd::run_tool(
        global,
        out,
        Effect::ReadOnly,
        |ws: &WorkspaceSession| ws.ast_grep_tool().naming(ArgNames::Cli),
        params,
        |result, out| Ok(out.line(&result.text_content())?),
    )
}
