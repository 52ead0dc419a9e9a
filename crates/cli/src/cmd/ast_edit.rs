//! `staged ast-edit`: preview a structural rewrite and stage it.

use anyhow::Context;
use staged_protocol::ToolResult;
use staged_workspace::{ArgNames, AstEditParams, Op, PreviewDetails, WorkspaceSession};

use crate::{
    args::{AstEditArgs, GlobalArgs, StrictnessArg},
    cmd::{self, Effect},
    exit::Exit,
    output::Output,
};

pub(crate) fn run(global: &GlobalArgs, args: &AstEditArgs, out: &Output) -> anyhow::Result<Exit> {
    let params = params(args);
    cmd::run_tool(
        global,
        out,
        Effect::Stages,
        |ws: &WorkspaceSession| ws.ast_edit_tool().naming(ArgNames::Cli),
        params,
        print_preview,
    )
}

fn params(args: &AstEditArgs) -> AstEditParams {
    let ops: Vec<Op> = match (&args.pattern, &args.rewrite) {
        // `-p PAT -r OUT`, as ast-grep takes one rewrite; clap requires both or `--op`.
        (Some(pat), Some(out)) => vec![Op { pat: pat.clone(), out: out.clone() }],
        // clap takes `--op` values two at a time.
        _ => args
            .ops
            .chunks_exact(2)
            .map(|op| Op { pat: op[0].clone(), out: op[1].clone() })
            .collect(),
    };
    let scope = &args.scope;
    AstEditParams {
        ops,
        paths: scope.paths.clone(),
        lang: scope.lang.clone(),
        selector: scope.selector.clone(),
        strictness: scope.strictness.map(StrictnessArg::to_strictness),
        limit: args.limit.map(|n| n as f64),
        // A person asking for a bulk rewrite wants all of it: without `--max-files` there is
        // no cap (`null`), where a model gets the tool's default.
        max_files: Some(args.max_files.map(|n| n as f64)),
        include_parse_errors: args.include_parse_errors.then_some(true),
    }
}

/// For a person: the diff (coloured on a terminal), any notes, and how to resolve it.
fn print_preview(result: &ToolResult, out: &Output) -> anyhow::Result<()> {
    let Some(details) = &result.details else {
        return out.line(&result.text_content()).context("writing the preview");
    };
    let details = PreviewDetails::parse(details)?;
    let Some(id) = &details.pending_id else {
        // Nothing staged (no matches): the tool's text says why.
        return out.line(&result.text_content()).context("writing the result");
    };
    // On a terminal, hunks are numbered as `resolve apply --only FILE:N` names them.
    if out.terminal {
        out.diff(&crate::pick::number_hunks(&details.diff))?;
    } else {
        out.diff(&details.diff)?;
    }
    for note in &details.notes {
        out.line(note)?;
    }
    let (total, files) = (details.total_replacements, details.files_touched);
    out.line(&format!(
        "\nStaged {id}: {total} replacement{} in {files} file{}. Nothing is written yet.",
        if total == 1 { "" } else { "s" },
        if files == 1 { "" } else { "s" },
    ))?;
    out.line(&format!("  apply:   staged resolve apply --id {id} --reason \"<why>\""))?;
    out.line(&format!("  discard: staged resolve discard --id {id} --reason \"<why>\""))?;
    // Last, where a person looks: what was left out, and how to include it.
    if let Some(last) = &details.last_line {
        out.line(&format!("\n{last}"))?;
    }
    Ok(())
}
