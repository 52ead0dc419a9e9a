//! `staged log [-n N] [--keep N]` and `staged log show ID`: the resolve log, newest first.
//!
//! `--json` prints `{"entries": [...]}`; `log show --json` prints one entry. An entry is
//! `{"entry", "id", "label", "source", "outcome", "action", "reason", "extra", "result",
//! "at", "frontEnd", "session", "files": [{"path", "before", "after"}], "diff", "reverts",
//! "revertedBy"}`: `entry` is its number (what `staged log show` and `staged undo` take),
//! `session` the agent session whose change it is (`S3`, `null` for a person's),
//! `id` the preview's pending id, `outcome` one of `applied`, `discarded`, `failed`, `stale`,
//! `undone`, `redone`, `at` RFC 3339 UTC, `before`/`after` SHA-256 hex. Listing never
//! creates a state folder; `--keep` sets how many entries this workspace keeps.

use anyhow::{Context, bail};
use serde::Serialize;
use serde_json::Value;
use staged_core::{LogEntry, ResolveLog};
use staged_protocol::JsonObject;
use staged_render::escape_line;

use crate::{
    args::{GlobalArgs, LogArgs, LogCommand},
    cmd::{cell, ids, timestamp},
    context,
    exit::Exit,
    output::Output,
};

/// How many entries `staged log` shows by default.
const DEFAULT_SHOWN: usize = 20;

pub(crate) fn run(global: &GlobalArgs, args: &LogArgs, out: &Output) -> anyhow::Result<Exit> {
    if let Some(keep) = args.keep {
        return set_keep(global, usize::try_from(keep).unwrap_or(usize::MAX), out);
    }
    let ws = context::open_existing(global)?;
    let Some(log) = ws.store().log() else { bail!("this workspace's pending stack keeps no log") };
    if let Some(LogCommand::Show(show)) = &args.command {
        return show_entry(log, &show.id, out);
    }
    let limit = args.max_count.unwrap_or(DEFAULT_SHOWN);
    let entries = log.entries(limit, out.json).map_err(|err| anyhow::anyhow!("{err}"))?;
    if out.json {
        let entries = entries.iter().map(entry_json).collect::<Result<Vec<_>, _>>()?;
        out.json_line(&Entries { entries })?;
        return Ok(Exit::Success);
    }
    if entries.is_empty() {
        out.line("The log is empty: nothing was applied, discarded or undone here yet.")?;
        return Ok(Exit::Success);
    }
    let rows: Vec<[String; 8]> = entries
        .iter()
        .map(|e| {
            let r = &e.record;
            let outcome = match e.reverted_by {
                Some(by) => format!("{} (reverted by {by})", r.outcome),
                None => r.outcome.to_string(),
            };
            [
                e.seq.to_string(),
                outcome,
                session_of(e).unwrap_or_else(|| "-".to_owned()),
                escape_line(r.id.as_str()).into_owned(),
                cell(&r.label),
                cell(&r.front_end),
                timestamp(e.at),
                cell(&one_line(&r.reason)),
            ]
        })
        .collect();
    let header = ["ENTRY", "OUTCOME", "SESSION", "ID", "LABEL", "FRONT END", "AT", "REASON"]
        .map(str::to_owned);
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

fn set_keep(global: &GlobalArgs, keep: usize, out: &Output) -> anyhow::Result<Exit> {
    let ws = context::open(global)?;
    let Some(log) = ws.store().log() else { bail!("this workspace's pending stack keeps no log") };
    log.set_keep(keep).map_err(|err| anyhow::anyhow!("{err}"))?;
    // The kept bytes of the entries retention dropped go with them.
    crate::cmd::shell_run::prune_kept(&ws, true);
    if out.json {
        out.json_line(&Keep { keep })?;
    } else {
        out.line(&format!("The log now keeps the newest {keep} entries."))?;
    }
    Ok(Exit::Success)
}

fn show_entry(log: &dyn ResolveLog, id: &str, out: &Output) -> anyhow::Result<Exit> {
    let Some(seq) = find_entry(log, id, false)? else {
        bail!("no log entry `{id}` (see `staged log`)");
    };
    let Some(entry) = log.entry(seq).map_err(|err| anyhow::anyhow!("{err}"))? else {
        bail!("no log entry `{id}` (see `staged log`)");
    };
    if out.json {
        out.json_line(&entry_json(&entry)?)?;
        return Ok(Exit::Success);
    }
    let r = &entry.record;
    let esc = |text: &str| escape_line(text).into_owned();
    out.line(&format!("entry {}: {}  {}", entry.seq, r.outcome, esc(&r.label)))?;
    out.line(&format!("id:        {} ({})", esc(r.id.as_str()), esc(&r.source_tool_name)))?;
    out.line(&format!("at:        {}", timestamp(entry.at)))?;
    out.line(&format!("front end: {}", esc(&r.front_end)))?;
    out.line(&format!(
        "session:   {}",
        session_of(&entry).unwrap_or_else(|| "none (a person's)".to_owned())
    ))?;
    out.line(&format!("action:    {}", r.action.as_str()))?;
    out.line(&format!("reason:    {}", esc(&r.reason)))?;
    if let Some(extra) = &r.extra {
        out.line(&format!("extra:     {}", esc(&Value::Object(extra.clone()).to_string())))?;
    }
    if let Some(reverts) = r.reverts {
        out.line(&format!("reverts:   entry {reverts}"))?;
    }
    if let Some(by) = entry.reverted_by {
        out.line(&format!("reverted:  by entry {by}"))?;
    }
    out.line(&format!("result:    {}", esc(&r.result)))?;
    for file in &r.files {
        out.line(&format!(
            "file:      {}  {} -> {}",
            esc(&file.path),
            esc(file.before.as_deref().unwrap_or("(none)")),
            esc(file.after.as_deref().unwrap_or("(none)"))
        ))?;
    }
    if let Some(diff) = &r.diff {
        out.line("")?;
        out.diff(diff)?;
    }
    Ok(Exit::Success)
}

/// The entry number `id` names: a number (`3`, `#3`) is one; a pending id, whole or short
/// (`ast_edit:3`: a number alone is an entry number here), names its newest entry (with
/// `undoable`, its newest entry that wrote files); `newest` names the newest entry (with
/// `undoable`, the one a bare undo reverts). `Ok(None)` when nothing matches; a short
/// id that names entries of several previews is an input error listing them.
pub(crate) fn find_entry(
    log: &dyn ResolveLog,
    id: &str,
    undoable: bool,
) -> anyhow::Result<Option<u64>> {
    let id = id.trim();
    if let Ok(seq) = id.trim_start_matches('#').parse::<u64>() {
        return Ok(Some(seq));
    }
    if id.is_empty() {
        bail!("the entry is empty: give its number (see `staged log`) or a preview's id");
    }
    if id == ids::NEWEST {
        // The newest entry (with `undoable`, what a bare `staged undo` reverts).
        if undoable {
            return log.newest_applied().map_err(|err| anyhow::anyhow!("{err}"));
        }
        let newest = log.entries(1, false).map_err(|err| anyhow::anyhow!("{err}"))?;
        return Ok(newest.first().map(|e| e.seq));
    }
    let keep = log.keep().map_err(|err| anyhow::anyhow!("{err}"))?;
    let entries = log
        .entries(keep, false)
        .map_err(|err| anyhow::anyhow!("{err}"))
        .context("reading the log")?;
    let wanted = |e: &&LogEntry| !undoable || e.record.outcome.is_undoable();
    if let Some(exact) = entries.iter().filter(wanted).find(|e| e.record.id.as_str() == id) {
        return Ok(Some(exact.seq));
    }
    // Newest first, so the first entry of each preview is its newest.
    let mut found: Vec<&LogEntry> = Vec::new();
    for entry in entries.iter().filter(wanted) {
        if ids::names(entry.record.id.as_str(), id)
            && !found.iter().any(|f| f.record.id == entry.record.id)
        {
            found.push(entry);
        }
    }
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.seq)),
        many => {
            let names: Vec<&str> = many.iter().map(|e| e.record.id.as_str()).collect();
            bail!("{}", ids::ambiguous(id, &names))
        }
    }
}

/// An entry as `--json` prints it: a JSON value of [`EntryJson`], whose members are in the order
/// a JSON value keeps them.
/// `log --json`.
#[derive(Serialize)]
struct Entries {
    entries: Vec<Value>,
}

/// `log --keep N --json`.
#[derive(Serialize)]
struct Keep {
    keep: usize,
}

/// The agent session whose change `entry` is, as `staged session` names it (`S3`); `None` for
/// a person's.
fn session_of(entry: &LogEntry) -> Option<String> {
    entry.session.map(|number| format!("S{number}"))
}

fn entry_json(entry: &LogEntry) -> serde_json::Result<Value> {
    serde_json::to_value(EntryJson::of(entry))
}

/// An entry as `--json` prints it, borrowing the entry.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EntryJson<'a> {
    entry: u64,
    id: &'a str,
    label: &'a str,
    source: &'a str,
    outcome: &'static str,
    action: &'static str,
    reason: &'a str,
    extra: Option<&'a JsonObject>,
    result: &'a str,
    at: String,
    front_end: &'a str,
    session: Option<String>,
    files: Vec<FileJson<'a>>,
    diff: Option<&'a str>,
    reverts: Option<u64>,
    reverted_by: Option<u64>,
}

/// A file an entry wrote: `{"path", "before", "after"}`.
#[derive(Serialize)]
struct FileJson<'a> {
    path: &'a str,
    before: Option<&'a str>,
    after: Option<&'a str>,
}

impl<'a> EntryJson<'a> {
    fn of(entry: &'a LogEntry) -> Self {
        let r = &entry.record;
        EntryJson {
            entry: entry.seq,
            id: r.id.as_str(),
            label: &r.label,
            source: &r.source_tool_name,
            outcome: r.outcome.as_str(),
            action: r.action.as_str(),
            reason: &r.reason,
            extra: r.extra.as_ref(),
            result: &r.result,
            at: timestamp(entry.at),
            front_end: &r.front_end,
            session: session_of(entry),
            files: r
                .files
                .iter()
                .map(|f| FileJson {
                    path: &f.path,
                    before: f.before.as_deref(),
                    after: f.after.as_deref(),
                })
                .collect(),
            diff: r.diff.as_deref(),
            reverts: r.reverts,
            reverted_by: entry.reverted_by,
        }
    }
}

/// `text` on one line, for a table cell.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
