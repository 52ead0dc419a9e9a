//! `staged pending`: the stack, newest first.
//!
//! `--json` prints `{"pending": [{"id", "label", "source", "createdAt", "ageSeconds",
//! "session"}]}`, newest first; `createdAt` is RFC 3339 UTC, `session` the agent session that
//! staged it (`S3`; `null` for a person's). The table has a SESSION column when any preview is
//! an agent session's.

use serde::Serialize;
use staged_render::escape_line;

use crate::{
    args::GlobalArgs,
    cmd::{age, age_seconds, cell, timestamp},
    context,
    exit::Exit,
    output::Output,
};

pub(crate) fn run(global: &GlobalArgs, out: &Output) -> anyhow::Result<Exit> {
    let ws = context::open_existing(global)?;
    // Summaries: a listing needs no entry's details or payload (a big preview's diff).
    let entries = ws.store().summaries().map_err(|err| anyhow::anyhow!("{err}"))?;
    if out.json {
        let pending = entries
            .iter()
            .map(|e| PendingJson {
                age_seconds: age_seconds(e.created_at),
                created_at: timestamp(e.created_at),
                id: e.id.as_str(),
                label: &e.label,
                session: e.session.map(|s| format!("S{s}")),
                source: &e.source_tool_name,
            })
            .collect();
        out.json_line(&PendingList { pending })?;
        return Ok(Exit::Success);
    }
    if entries.is_empty() {
        out.line("No pending previews.")?;
        return Ok(Exit::Success);
    }
    let sessions = entries.iter().any(|e| e.session.is_some());
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|e| {
            let mut row = vec![
                escape_line(e.id.as_str()).into_owned(),
                cell(&e.label),
                escape_line(&e.source_tool_name).into_owned(),
                age(e.created_at),
            ];
            if sessions {
                row.push(e.session.map_or_else(|| "person".to_owned(), |s| format!("S{s}")));
            }
            row
        })
        .collect();
    let mut header: Vec<String> = ["ID", "LABEL", "SOURCE", "AGE"].map(str::to_owned).to_vec();
    if sessions {
        header.push("SESSION".to_owned());
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|col| rows.iter().chain([&header]).map(|r| r[col].chars().count()).max().unwrap_or(0))
        .collect();
    for row in [&header].into_iter().chain(&rows) {
        let line: Vec<String> =
            row.iter().zip(&widths).map(|(cell, width)| format!("{cell:<width$}")).collect();
        out.line(line.join("  ").trim_end())?;
    }
    Ok(Exit::Success)
}

/// `pending --json`.
#[derive(Serialize)]
struct PendingList<'a> {
    pending: Vec<PendingJson<'a>>,
}

/// A preview of `pending --json`, its fields in the order they are printed (by name).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PendingJson<'a> {
    age_seconds: u64,
    created_at: String,
    id: &'a str,
    label: &'a str,
    session: Option<String>,
    source: &'a str,
}
