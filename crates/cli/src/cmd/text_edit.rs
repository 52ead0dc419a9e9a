//! `staged edit`, `staged write` and `staged patch`: text changes staged as previews.

use std::{io::Read, path::Path};

use anyhow::{Context, bail};
use staged_protocol::ToolResult;
use staged_workspace::{
    ApplyPatchParams, ChangeDetails, EditItem, EditParams, WorkspaceSession, WriteParams,
};

use crate::{
    args::{EditArgs, GlobalArgs, PatchArgs, WriteArgs},
    cmd::{self, Effect},
    context,
    exit::Exit,
    output::Output,
};

pub(crate) fn edit(global: &GlobalArgs, args: &EditArgs, out: &Output) -> anyhow::Result<Exit> {
    if args.old.len() != args.new.len() {
        bail!(
            "give as many --new as --old ({} --old, {} --new): each --old is replaced by the --new at its place",
            args.old.len(),
            args.new.len()
        );
    }
    let path = workspace_path(global, &args.path)?;
    let only = |old: Option<&String>, new: Option<&String>| EditParams {
        path: path.clone(),
        old_string: old.cloned(),
        new_string: new.cloned(),
        replace_all: old.map(|_| args.all),
        edits: None,
    };
    let params = match (args.old.as_slice(), args.new.as_slice()) {
        ([old], [new]) => only(Some(old), Some(new)),
        (olds, news) => {
            let edits = olds.iter().zip(news).map(|(old, new)| EditItem {
                old_string: old.clone(),
                new_string: new.clone(),
                replace_all: Some(args.all),
            });
            EditParams { edits: Some(edits.collect()), ..only(None, None) }
        }
    };
    cmd::run_tool(global, out, Effect::Stages, WorkspaceSession::edit_tool, params, print_preview)
}

pub(crate) fn write(global: &GlobalArgs, args: &WriteArgs, out: &Output) -> anyhow::Result<Exit> {
    let path = workspace_path(global, &args.path)?;
    let content = read_input(args.file.as_deref(), "the new file's text")?;
    let params = WriteParams { path, content };
    cmd::run_tool(global, out, Effect::Stages, WorkspaceSession::write_tool, params, print_preview)
}

pub(crate) fn patch(global: &GlobalArgs, args: &PatchArgs, out: &Output) -> anyhow::Result<Exit> {
    let input = read_input(args.file.as_deref(), "the patch")?;
    let params = ApplyPatchParams { input, strip: args.strip, reverse: args.reverse };
    cmd::run_tool(
        global,
        out,
        Effect::Stages,
        WorkspaceSession::apply_patch_tool,
        params,
        print_preview,
    )
}

/// A path a person typed, relative to the workspace root (see [`context::scope_paths`]).
fn workspace_path(global: &GlobalArgs, path: &str) -> anyhow::Result<String> {
    let root = context::workspace_root(global)?;
    let mut rebased = context::scope_paths(&root, &[path.to_owned()])?;
    Ok(rebased.pop().unwrap_or_else(|| path.to_owned()))
}

/// The text of `file`, or of stdin for `-` or no file. It must be UTF-8: staged previews
/// text.
fn read_input(file: Option<&Path>, what: &str) -> anyhow::Result<String> {
    let (bytes, name) = match file {
        Some(file) if file != Path::new("-") => (
            std::fs::read(file)
                .with_context(|| format!("reading {what} from {}", file.display()))?,
            file.display().to_string(),
        ),
        _ => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .with_context(|| format!("reading {what} from stdin"))?;
            (bytes, "stdin".to_owned())
        }
    };
    String::from_utf8(bytes).map_err(|_| {
        anyhow::anyhow!(
            "{what} ({name}) is not UTF-8 text: staged previews changes to text files only"
        )
    })
}

/// For a person: the diff (coloured on a terminal) and how to resolve it.
fn print_preview(result: &ToolResult, out: &Output) -> anyhow::Result<()> {
    let details = result.details.as_ref().and_then(|d| ChangeDetails::parse(d).ok());
    let Some((details, id)) = details.and_then(|d| d.pending_id.clone().map(|id| (d, id))) else {
        return out.line(&result.text_content()).context("writing the result");
    };
    // On a terminal, hunks are numbered as `resolve apply --only FILE:N` names them.
    if out.terminal {
        out.diff(&crate::pick::number_hunks(&details.diff))?;
    } else {
        out.diff(&details.diff)?;
    }
    out.line(&format!("\nStaged {id}: {}. Nothing is written yet.", details.label))?;
    out.line(&format!("  apply:   staged resolve apply --id {id} --reason \"<why>\""))?;
    out.line(&format!("  discard: staged resolve discard --id {id} --reason \"<why>\""))?;
    Ok(())
}
