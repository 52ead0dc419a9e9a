//! Saving a run's transcript under `.staged/transcripts/`: the task, the model, every event
//! (streamed deltas excepted) and the whole conversation, as one JSON file per run.

use std::path::PathBuf;

use staged_fs::NewFileMode;
use staged_journal::ConfinedRoot;

use serde::Serialize;

use crate::{AgentEvent, Message, RunReport};

/// The folder, under the workspace's state folder, that holds transcripts.
pub(crate) const TRANSCRIPTS_DIR: &str = "transcripts";

/// Writes the transcript of `report` to `.staged/transcripts/<UTC time>-<pid>.json` (through
/// the workspace's handles, never through a symlink) and returns its path.
///
/// # Errors
/// The IO error, when the folder or the file cannot be written.
pub fn save_transcript(
    workspace: &ConfinedRoot,
    task: &str,
    model: &str,
    report: &RunReport,
) -> std::io::Result<PathBuf> {
    let dir = workspace
        .state_subdir(TRANSCRIPTS_DIR, true)
        .map_err(std::io::Error::other)?
        .ok_or_else(|| std::io::Error::other("the state folder could not be created"))?;
    let now = std::time::SystemTime::now();
    let stamp = humantime::format_rfc3339_millis(now).to_string().replace(':', "-");
    let name = format!("{stamp}-{}.json", std::process::id());
    let transcript = Transcript {
        events: &report.events,
        message: report.outcome.message(),
        messages: &report.messages,
        model,
        outcome: report.outcome.name(),
        task,
        turns: report.turns,
    };
    // Through a `Value`, whose maps are sorted: the events' and messages' keys print sorted at
    // every depth, as they always have.
    let text = serde_json::to_value(&transcript)
        .and_then(|value| serde_json::to_string_pretty(&value))
        .map_err(std::io::Error::other)?;
    dir.write_replace(&name, text.as_bytes(), &NewFileMode::Private)?;
    Ok(workspace.state_dir().join(TRANSCRIPTS_DIR).join(name))
}

/// A transcript file.
#[derive(Serialize)]
struct Transcript<'a> {
    events: &'a [AgentEvent],
    message: Option<String>,
    messages: &'a [Message],
    model: &'a str,
    outcome: &'a str,
    task: &'a str,
    turns: u32,
}
