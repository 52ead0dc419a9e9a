//! `staged ast-grep`: structural search, read-only. With `-r OUT`, as in ast-grep, it stages
//! the rewrite instead (it is `staged ast-edit -p PAT -r OUT`).

use staged_workspace::{ArgNames, AstGrepParams, WorkspaceSession};

use crate::{
    args::{AstEditArgs, AstGrepArgs, GlobalArgs, StrictnessArg},
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
            scope: args.scope.clone(),
            limit: args.limit,
            max_files: None,
            include_parse_errors: false,
        };
        return cmd::ast_edit::run(global, &edit, out);
    }
    let scope = &args.scope;
    let params = AstGrepParams {
        pattern: args.pattern.clone(),
        paths: scope.paths.clone(),
        lang: scope.lang.clone(),
        selector: scope.selector.clone(),
        strictness: scope.strictness.map(StrictnessArg::to_strictness),
        limit: args.limit.map(|n| n as f64),
    };
    cmd::run_tool(
        global,
        out,
        Effect::ReadOnly,
        |ws: &WorkspaceSession| ws.ast_grep_tool().naming(ArgNames::Cli),
        params,
        |result, out| Ok(out.line(&result.text_content())?),
    )
}
