//! `staged undo [ID] [--reason R]`: revert an entry of the resolve log (by default the newest
//! applied one), without git. It writes only if every file is still byte-identical to what
//! the entry wrote; otherwise it writes nothing and names the files that changed (exit 1).
//! Undoing an undo redoes the change. `--json` prints the tool-result object
//! `{"text", "isError", "details", "pending"}`.

use anyhow::bail;
use staged_core::{FrontEnd, ToolResult};

use crate::{
    args::{GlobalArgs, UndoArgs},
    cmd::{error_result, head, log::find_entry, print_tool_json},
    context,
    exit::Exit,
    output::Output,
};

pub(crate) fn run(global: &GlobalArgs, args: &UndoArgs, out: &Output) -> anyhow::Result<Exit> {
    let ws = context::open_existing(global)?;
    let target = match &args.id {
        Some(id) => {
            let Some(log) = ws.store().log() else {
                bail!("this workspace's pending stack keeps no log")
            };
            match find_entry(log, id, true)? {
                Some(seq) => Some(seq),
                None => bail!("no log entry `{id}` that wrote files (see `staged log`)"),
            }
        }
        None => None,
    };
    let session = ws.session().clone();
    let reason = args.reason.trim().to_owned();
    let result: ToolResult = context::block_on(|cancel| async move {
        session.undo(target, &reason, &FrontEnd::Cli, &cancel).await
    })?
    .unwrap_or_else(|err| error_result(&err));
    if out.json {
        print_tool_json(out, &result, head(&ws).as_ref())?;
    } else {
        out.line(&result.text_content())?;
    }
    Ok(if result.is_error { Exit::ToolError } else { Exit::Success })
}
