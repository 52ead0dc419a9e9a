//! `staged show [ID] [--hunks]`: the full diff of a pending preview, the newest by default. `ID`
//! is a pending id or a short form of it (`3`, `ast_edit:3`, `newest`; see `cmd::ids`).
//! On a terminal (or with `--hunks`) each hunk header is numbered as `staged resolve apply
//! --only FILE:N` names it (`@@ -3,7 +3,7 @@ [hunk 2 of 3]`); text after a header's closing
//! `@@` is free, so the output stays a diff `git apply` takes. Piped without `--hunks` the diff
//! is printed byte for byte.
//!
//! `--json` prints `{"id", "label", "source", "createdAt", "ageSeconds", "details", "diff"}`,
//! where `diff` is the unified diff, or null for a preview without one.

use anyhow::bail;
use serde::Serialize;
use serde_json::Value;
use staged_protocol::preview_diff;
use staged_render::escape_line;

use crate::{
    args::{GlobalArgs, ShowArgs},
    cmd::{age, age_seconds, ids, timestamp},
    context,
    exit::Exit,
    output::Output,
    pick,
};

/// The `--json` object, borrowing the preview's details and diff.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Shown<'a> {
    id: &'a str,
    label: &'a str,
    source: &'a str,
    created_at: String,
    age_seconds: u64,
    details: Option<&'a Value>,
    diff: Option<&'a str>,
}

pub(crate) fn run(global: &GlobalArgs, args: &ShowArgs, out: &Output) -> anyhow::Result<Exit> {
    let ws = context::open_existing(global)?;
    let store = ws.store();
    let entry = match &args.id {
        Some(typed) => {
            let wanted = ids::pending(store.as_ref(), typed)?.id;
            match store
                .list()
                .map_err(|err| anyhow::anyhow!("{err}"))?
                .into_iter()
                .find(|entry| entry.id == wanted)
            {
                Some(entry) => entry,
                // Resolved between the two reads.
                None => bail!(
                    "{} is no longer pending (see `staged pending`)",
                    escape_line(wanted.as_str())
                ),
            }
        }
        None => match store.peek().map_err(|err| anyhow::anyhow!("{err}"))? {
            Some(entry) => entry,
            None => {
                if out.json {
                    out.json_line(&Value::Null)?;
                } else {
                    out.line("No pending previews.")?;
                }
                return Ok(Exit::ToolError);
            }
        },
    };
    let details = entry.action.details();
    let diff = details.and_then(preview_diff);
    if out.json {
        // Borrowed: the details and the diff (a big preview's are big) are not copied.
        out.json_line(&Shown {
            id: entry.id.as_str(),
            label: entry.label(),
            source: entry.source_tool_name(),
            created_at: timestamp(entry.created_at),
            age_seconds: age_seconds(entry.created_at),
            details,
            diff,
        })?;
        return Ok(Exit::Success);
    }
    out.line(&format!(
        "{}  {}  ({}, {} ago)",
        escape_line(entry.id.as_str()),
        escape_line(entry.label()),
        escape_line(entry.source_tool_name()),
        age(entry.created_at)
    ))?;
    match (diff, details) {
        (Some(diff), _) if out.terminal || args.hunks => out.diff(&pick::number_hunks(diff))?,
        (Some(diff), _) => out.diff(diff)?,
        (None, Some(details)) => out.line(&serde_json::to_string_pretty(details)?)?,
        (None, None) => out.line("(this preview has no details)")?,
    }
    Ok(Exit::Success)
}
