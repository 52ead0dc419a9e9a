//! Saving a run's transcript under `.staged/transcripts/`: the task, the model, every event
//! (streamed deltas excepted) and the whole conversation, as one JSON file per run.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::RunReport;

/// The folder, under the workspace's state folder, that holds transcripts.
pub const TRANSCRIPTS_DIR: &str = "transcripts";

/// Writes the transcript of `report` to `<state_dir>/transcripts/<UTC time>-<pid>.json` and
/// returns its path.
///
/// # Errors
/// The IO error, when the folder or the file cannot be written.
pub fn save_transcript(
    state_dir: &Path,
    task: &str,
    model: &str,
    report: &RunReport,
) -> std::io::Result<PathBuf> {
    let dir = state_dir.join(TRANSCRIPTS_DIR);
    std::fs::create_dir_all(&dir)?;
    let now = std::time::SystemTime::now();
    let stamp = humantime::format_rfc3339_millis(now).to_string().replace(':', "-");
    let path = dir.join(format!("{stamp}-{}.json", std::process::id()));
    let value = json!({
        "task": task,
        "model": model,
        "outcome": report.outcome.name(),
        "message": report.outcome.message(),
        "turns": report.turns,
        "events": report.events,
        "messages": report.messages,
    });
    let text = serde_json::to_string_pretty(&value).map_err(std::io::Error::other)?;
    staged_ast_edit::write_atomic(&path, text.as_bytes()).map_err(std::io::Error::other)?;
    Ok(path)
}
