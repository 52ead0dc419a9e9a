//! `staged ast-grep`: structural search, read-only.

use anyhow::bail;
use serde_json::json;
use staged_workspace::{ArgNames, WorkspaceSession};

use crate::{
    args::{AstGrepArgs, GlobalArgs},
    cmd::{self, Effect},
    exit::Exit,
    output::Output,
};

pub(crate) fn run(global: &GlobalArgs, args: &AstGrepArgs, out: &Output) -> anyhow::Result<Exit> {
    if args.rewrite.is_some() {
        // ast-grep's `-r` rewrites; staged's search never writes, and a rewrite is staged.
        bail!(
            "`staged ast-grep` only searches; to preview a rewrite and stage it, run `staged ast-edit -p PATTERN -r REWRITE [PATH...]`"
        );
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
