//! The read-only `pending` tool: lists the workspace's pending stack, newest first.
//!
//! Every call reads the durable store, so it shows previews staged by any process (another
//! MCP session, the `staged` CLI) and omits those resolved elsewhere.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;
use staged_core::{PendingActionStore, PendingEntry};
use staged_protocol::ToolResult;

/// The tool's name.
pub const PENDING_TOOL_NAME: &str = "pending";

/// The tool's human label.
pub const PENDING_TOOL_LABEL: &str = "Pending";

/// The model-facing description.
pub const PENDING_DESCRIPTION: &str = "List the staged previews waiting for `resolve`, newest first. \
Read-only: it changes nothing. `resolve` always acts on the first (newest) entry. \
The list is the workspace's shared stack, so it also shows previews staged from a terminal.";

/// `pending`'s arguments: none.
#[derive(schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("properties" = {}))]
struct PendingParams {}

/// The parameter schema: no parameters.
pub fn pending_schema() -> Value {
    staged_core::parameters_schema::<PendingParams>()
}

/// Lists `store`: readable text, and `{count, pending: [{id, label, source, createdAt,
/// ageSeconds}]}` as details.
pub(crate) fn list_pending(store: &dyn PendingActionStore, now: SystemTime) -> ToolResult {
    let entries = match store.list() {
        Ok(entries) => entries,
        Err(err) => return ToolResult::error(format!("Could not read the pending stack: {err}")),
    };
    let rows: Vec<PendingRow<'_>> =
        entries.iter().map(|entry| PendingRow::of(entry, now)).collect();
    let text = if entries.is_empty() {
        "No pending actions.".to_owned()
    } else {
        let mut text = format!(
            "{} pending {}, newest first (`resolve` acts on #1):",
            entries.len(),
            if entries.len() == 1 { "action" } else { "actions" }
        );
        for (idx, entry) in entries.iter().enumerate() {
            text.push_str(&format!(
                "\n{}. {} [{}] from {}, staged {}",
                idx + 1,
                entry.label(),
                entry.id,
                entry.source_tool_name(),
                age_text(age_seconds(entry.created_at, now))
            ));
        }
        text
    };
    ToolResult::text(text).with_details_of(&PendingList { count: entries.len(), pending: rows })
}

/// `pending`'s details: how many previews wait, and each, newest first.
#[derive(Serialize)]
struct PendingList<'a> {
    count: usize,
    pending: Vec<PendingRow<'a>>,
}

/// A preview in `pending`'s details.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PendingRow<'a> {
    age_seconds: u64,
    created_at: String,
    id: &'a str,
    label: &'a str,
    source: &'a str,
}

impl<'a> PendingRow<'a> {
    fn of(entry: &'a PendingEntry, now: SystemTime) -> Self {
        PendingRow {
            age_seconds: age_seconds(entry.created_at, now),
            created_at: rfc3339_utc(entry.created_at),
            id: entry.id.as_str(),
            label: entry.label(),
            source: entry.source_tool_name(),
        }
    }
}

fn age_seconds(created_at: SystemTime, now: SystemTime) -> u64 {
    now.duration_since(created_at).map(|d| d.as_secs()).unwrap_or(0)
}

fn age_text(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s ago"),
        60..3600 => format!("{}m ago", secs / 60),
        3600..86_400 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` for a time at or after the Unix epoch (earlier times clamp to it).
fn rfc3339_utc(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// The proleptic Gregorian date `days` days after 1970-01-01 (the era-based conversion).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::{sync::Arc, time::Duration};

    use serde_json::json;

    use staged_core::{FnPendingAction, InMemoryStore};

    use super::*;

    #[test]
    fn dates_format_as_rfc3339() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_709_210_096);
        assert_eq!(rfc3339_utc(t), "2024-02-29T12:34:56Z");
    }

    #[test]
    fn empty_stack_says_so() {
        let store = InMemoryStore::new();
        let res = list_pending(&store, SystemTime::now());
        assert_eq!(res.text_content(), "No pending actions.");
        assert_eq!(res.details, Some(json!({"count": 0, "pending": []})));
    }

    #[test]
    fn lists_newest_first_with_source_and_age() {
        let store = InMemoryStore::new();
        for label in ["First", "Second"] {
            let action = FnPendingAction::new(label, |_| async { Ok(ToolResult::text("ok")) })
                .with_source_tool_name("demo");
            store.push(Arc::new(action)).unwrap();
        }
        let res = list_pending(&store, SystemTime::now() + Duration::from_secs(90));
        let text = res.text_content();
        assert!(text.starts_with("2 pending actions, newest first"), "{text}");
        let second = text.find("1. Second").unwrap();
        let first = text.find("2. First").unwrap();
        assert!(second < first, "{text}");
        assert!(text.contains("from demo, staged 1m ago"), "{text}");
        let details = res.details.unwrap();
        assert_eq!(details["count"], 2);
        assert_eq!(details["pending"][0]["label"], "Second");
        assert_eq!(details["pending"][0]["source"], "demo");
    }
}
