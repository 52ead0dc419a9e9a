//! `staged undo [ENTRY] [--reason R]`: revert an entry of the resolve log (by default the newest
//! applied one that is not reverted yet, so a bare undo run again walks back one apply at a
//! time), without git. It writes only if every file is still byte-identical to what the entry
//! wrote; otherwise it writes nothing and names the files that changed (exit 1). Undoing an
//! undo redoes the change; `staged redo` does that for the newest undo made since the last
//! apply, walking forward when run again. `--json` prints the tool-result object
//! `{"text", "isError", "details", "pending"}`.
//!
//! At a terminal (stdin and stderr both), it first shows the diff it will write and asks; `--yes`
//! (and any run that is not at a terminal, or prints `--json`) does not ask.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::{Context, bail};
use staged_core::{FrontEnd, ResolveLog, StoreError, UndoOptions};
use staged_protocol::ToolResult;
use staged_workspace::WorkspaceSession;

use crate::{
    args::{GlobalArgs, RedoArgs, UndoArgs},
    cmd::{error_result, head, log::find_entry, print_tool_json},
    context,
    diff::colorize,
    exit::Exit,
    output::{Output, escape_diff},
};

/// Which way a command goes: `undo` or `redo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    Undo,
    Redo,
}

pub(crate) fn run(global: &GlobalArgs, args: &UndoArgs, out: &Output) -> anyhow::Result<Exit> {
    let ws = context::open_existing(global)?;
    let target = match &args.id {
        Some(id) => {
            let Some(log) = ws.store().log() else {
                bail!("this workspace's pending stack keeps no log")
            };
            match find_entry(log, id, true)? {
                // A number no entry has is mistyped input, as `staged log show` takes it.
                Some(seq) if log.entry(seq).map_err(|err| anyhow::anyhow!("{err}"))?.is_none() => {
                    bail!("no log entry `{id}` (see `staged log`)")
                }
                Some(seq) => Some(seq),
                None => bail!("no log entry `{id}` that wrote files (see `staged log`)"),
            }
        }
        None => None,
    };
    if !args.only.is_empty() {
        let Some(seq) = target else { bail!("--only names part of one entry: give its number") };
        if args.reason.trim().is_empty() {
            bail!("--reason must not be blank: say why part of log entry {seq} is reverted");
        }
        let pick = crate::args::SessionPickArgs {
            session: None,
            only: args.only.clone(),
            except: args.except.clone(),
            reason: Some(args.reason.clone()),
        };
        return crate::cmd::session::undo_part(&ws, seq, &pick, out);
    }
    revert(&ws, Way::Undo, target, &args.reason, args.yes, out)
}

pub(crate) fn redo(global: &GlobalArgs, args: &RedoArgs, out: &Output) -> anyhow::Result<Exit> {
    let ws = context::open_existing(global)?;
    revert(&ws, Way::Redo, None, &args.reason, args.yes, out)
}

/// Reverts `target`, or the entry `way` picks by default, after asking at a terminal.
fn revert(
    ws: &WorkspaceSession,
    way: Way,
    target: Option<u64>,
    reason: &str,
    yes: bool,
    out: &Output,
) -> anyhow::Result<Exit> {
    let ask =
        !yes && !out.json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let target = if ask {
        match confirm(ws, way, target, out)? {
            Some(seq) => Some(seq),
            None => {
                eprintln!("Nothing was written.");
                return Ok(Exit::ToolError);
            }
        }
    } else {
        target
    };
    let session = ws.session().clone();
    let reason = reason.trim().to_owned();
    let shown = crate::progress::Progress::start(out, "reverting");
    let result: ToolResult = context::block_on(|cancel| async move {
        match (way, target) {
            (_, Some(seq)) => {
                session
                    .undo(
                        &reason,
                        UndoOptions { target: Some(seq), front_end: Some(&FrontEnd::Cli) },
                        &cancel,
                    )
                    .await
            }
            (Way::Undo, None) => {
                session
                    .undo(
                        &reason,
                        UndoOptions { target: None, front_end: Some(&FrontEnd::Cli) },
                        &cancel,
                    )
                    .await
            }
            (Way::Redo, None) => session.redo(&reason, &FrontEnd::Cli, &cancel).await,
        }
    })?
    .unwrap_or_else(|err| error_result(&err));
    drop(shown);
    if out.json {
        print_tool_json(out, &result, head(ws).as_ref())?;
    } else {
        out.line(&result.text_content())?;
    }
    Ok(if result.is_error { Exit::ToolError } else { Exit::Success })
}

/// The entry `way` reverts by default.
fn default_target(log: &dyn ResolveLog, way: Way) -> Result<Option<u64>, StoreError> {
    match way {
        Way::Undo => log.newest_applied(),
        Way::Redo => log.newest_undo(),
    }
}

/// Shows what reverting the entry (`target`, or the one `way` picks) writes and asks the
/// person. `Some(entry)` to go on (with the entry shown, so a newer apply is not reverted in
/// its place), `None` when they said no. An entry that cannot be shown is left to the undo,
/// which says why.
fn confirm(
    ws: &WorkspaceSession,
    way: Way,
    target: Option<u64>,
    out: &Output,
) -> anyhow::Result<Option<u64>> {
    let Some(log) = ws.store().log() else { return Ok(target) };
    let Some(seq) = (match target {
        Some(seq) => Some(seq),
        None => default_target(log, way).map_err(|err| anyhow::anyhow!("{err}"))?,
    }) else {
        return Ok(target);
    };
    let Some(entry) = log.entry(seq).map_err(|err| anyhow::anyhow!("{err}"))? else {
        return Ok(Some(seq));
    };
    // With the files a shell command replaced whole, as the undo writes them back: an entry
    // that replaced only such files is asked about like any other.
    let entry = staged_session::with_kept(&entry);
    let Ok(plan) = staged_journal::undo_plan(ws.workspace(), &entry) else {
        // Not a built-in tool's entry, or one that cannot be undone: the undo says why.
        return Ok(Some(seq));
    };
    let mut diff = plan.diff.clone();
    diff.push_str(&kept_lines(&entry));
    let verb = match (way, entry.record.outcome) {
        (_, staged_core::LogOutcome::Undone) => "Redo the change that log entry",
        _ => "Undo log entry",
    };
    let what = match entry.record.outcome {
        staged_core::LogOutcome::Undone => " undid",
        _ => "",
    };
    let mut err = std::io::stderr().lock();
    err.write_all(colorize(&escape_diff(&diff), out.render.color).as_bytes())?;
    write!(
        err,
        "\n{verb} {seq}{what} ({})? This writes the diff above. [y/N] ",
        staged_render::escape_line(&entry.record.label)
    )?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).context("reading the answer")?;
    Ok(matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes").then_some(seq))
}

/// One line for each file `entry` replaced whole (its undo data's `kept`), as its undo writes
/// it back: `Binary files a/<path> and b/<path> differ [not a text diff: <why>; restored
/// whole]` (`/dev/null` for the side where no file is).
fn kept_lines(entry: &staged_core::LogEntry) -> String {
    let kept: Vec<staged_journal::KeptChange> = entry
        .record
        .undo
        .as_ref()
        .and_then(|undo| staged_journal::KeptInUndo::of(undo).kept.0)
        .unwrap_or_default();
    let mut lines = String::new();
    for change in kept {
        // The undo goes from the bytes after back to the bytes before.
        let from = match change.after {
            Some(_) => staged_journal::quote("a/", &change.path),
            None => "/dev/null".to_owned(),
        };
        let to = match change.before {
            Some(_) => staged_journal::quote("b/", &change.path),
            None => "/dev/null".to_owned(),
        };
        lines.push_str(&format!(
            "Binary files {from} and {to} differ [not a text diff: {}; restored whole]\n",
            change.why
        ));
    }
    lines
}
