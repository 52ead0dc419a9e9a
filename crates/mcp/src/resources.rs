//! MCP resources: the whole diff of each pending preview, `staged://preview/<id>.diff`.
//!
//! A tool result too big to hand the model whole links here (`reply.rs`); `resources/list`
//! lists one resource per pending preview that has a diff (in the scope the server acts in, so
//! a stdio server never shows another agent session's), and `resources/read` serves the diff
//! byte for byte, as the preview's details hold it (what `staged show <id>` prints).
//!
//! A URI is never a path: `resources/read` looks the URI up among the URIs of the previews
//! pending now, which [`diff_uri`] builds from their ids, and reads nothing else. A URI that
//! names no pending preview gets a "resource not found" error that says why: not one of ours,
//! or a preview no longer pending (what the log says became of it). The diff is served only
//! while its preview is pending: once it is resolved, the log's entry has what was written.

use std::fmt::Write as _;

use rmcp::{
    ErrorData,
    model::{CacheScope, ListResourcesResult, ReadResourceResult, Resource, ResourceContents},
};
use staged_core::{LogOutcome, PendingActionStore, PendingEntry, PendingId};

/// Every diff URI starts with this.
pub(crate) const DIFF_URI_PREFIX: &str = "staged://preview/";

/// Every diff URI ends with this.
pub(crate) const DIFF_URI_SUFFIX: &str = ".diff";

/// The MIME type of a diff resource.
pub(crate) const DIFF_MIME: &str = "text/x-diff";

/// How much of a URI an error message repeats.
const URI_SHOWN_CHARS: usize = 200;

/// The URI of the diff of the pending preview `id`: its bytes outside `A-Za-z0-9-._~:` are
/// percent-encoded, so that a plugin's tool name cannot add a path segment or a query.
pub(crate) fn diff_uri(id: &PendingId) -> String {
    let mut uri = String::from(DIFF_URI_PREFIX);
    for byte in id.as_str().bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~:".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri.push_str(DIFF_URI_SUFFIX);
    uri
}

/// The pending id a diff URI names, when it has the form [`diff_uri`] builds: used only to say
/// what became of a preview no longer pending, never to read anything.
fn id_of_uri(uri: &str) -> Option<String> {
    let encoded = uri.strip_prefix(DIFF_URI_PREFIX)?.strip_suffix(DIFF_URI_SUFFIX)?;
    let mut bytes = Vec::with_capacity(encoded.len());
    let mut rest = encoded.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first == b'%' {
            let hex = tail.get(..2)?;
            let text = std::str::from_utf8(hex).ok()?;
            bytes.push(u8::from_str_radix(text, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(first);
            rest = tail;
        }
    }
    let id = String::from_utf8(bytes).ok()?;
    // Only the one spelling `diff_uri` gives names a preview.
    (diff_uri(&PendingId::from_string(id.clone())) == uri && !id.is_empty()).then_some(id)
}

/// The diff of `entry`, when its preview has one.
fn entry_diff(entry: &PendingEntry) -> Option<&str> {
    entry.action.details().and_then(staged_protocol::preview_diff)
}

/// The resource of `entry`'s diff `diff`.
pub(crate) fn diff_resource(id: &PendingId, label: &str, diff: &str) -> Resource {
    let uri = diff_uri(id);
    let name = uri.strip_prefix(DIFF_URI_PREFIX).unwrap_or(&uri).to_owned();
    Resource::new(uri, name)
        .with_title(format!("Diff of {label}"))
        .with_description(format!(
            "The whole unified diff of the pending preview {id} ({label}), served while it is pending."
        ))
        .with_mime_type(DIFF_MIME)
        .with_size(u64::try_from(diff.len()).unwrap_or(u64::MAX))
}

/// `resources/list`: one resource per pending preview with a diff, newest first.
pub(crate) fn list(store: &dyn PendingActionStore) -> Result<ListResourcesResult, ErrorData> {
    let entries = store.list().map_err(|err| {
        ErrorData::internal_error(format!("Could not read the pending stack: {err}"), None)
    })?;
    let resources = entries
        .iter()
        .filter_map(|entry| {
            entry_diff(entry).map(|diff| diff_resource(&entry.id, entry.label(), diff))
        })
        .collect();
    let mut res = ListResourcesResult::with_all_items(resources);
    // The list changes whenever the stack does: never fresh, and this user's.
    res.ttl_ms = Some(0);
    res.cache_scope = Some(CacheScope::Private);
    Ok(res)
}

/// `resources/read`: the diff of the pending preview `uri` names, whole.
pub(crate) fn read(
    store: &dyn PendingActionStore,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let entries = store.list().map_err(|err| {
        ErrorData::internal_error(format!("Could not read the pending stack: {err}"), None)
    })?;
    if let Some((entry, diff)) = entries
        .iter()
        .find(|entry| diff_uri(&entry.id) == uri)
        .and_then(|entry| entry_diff(entry).map(|diff| (entry, diff)))
    {
        let contents = ResourceContents::TextResourceContents {
            uri: diff_uri(&entry.id),
            mime_type: Some(DIFF_MIME.to_owned()),
            text: diff.to_owned(),
            meta: None,
        };
        let mut res = ReadResourceResult::new(vec![contents]);
        // Gone as soon as the preview is resolved: a client must not serve it from a cache.
        res.ttl_ms = Some(0);
        res.cache_scope = Some(CacheScope::Private);
        return Ok(res);
    }
    Err(ErrorData::resource_not_found(not_found_text(store, uri), None))
}

/// Why `uri` names no diff this server serves.
pub(crate) fn not_found_text(store: &dyn PendingActionStore, uri: &str) -> String {
    let Some(id) = id_of_uri(uri) else {
        return format!(
            "Unknown resource {}: this server serves only the diffs of pending previews, as `{DIFF_URI_PREFIX}<id>{DIFF_URI_SUFFIX}` (`resources/list` lists them).",
            shown(uri)
        );
    };
    // An id from a URI is the client's to choose: shown cut, and escaped when it is odd.
    let named = if id.chars().count() <= URI_SHOWN_CHARS && !id.chars().any(char::is_control) {
        id.clone()
    } else {
        shown(&id)
    };
    let logged = store.log().and_then(|log| {
        let entries = log.entries(LOG_SEARCHED, false).ok()?;
        // The outcomes that take a preview off the stack (a failed apply leaves it pending).
        entries.into_iter().find(|entry| {
            entry.record.id.as_str() == id
                && matches!(
                    entry.record.outcome,
                    LogOutcome::Applied | LogOutcome::Discarded | LogOutcome::Stale
                )
        })
    });
    match logged {
        Some(entry) => format!(
            "{named} is no longer pending: it was {} (log entry {}), and a preview's diff is served only while it is pending. `staged log show {}` shows what was resolved.",
            entry.record.outcome.as_str(),
            entry.seq,
            entry.seq
        ),
        None => format!(
            "{named} is not a pending preview this server can show (it was resolved, or it belongs to another agent session), and a preview's diff is served only while it is pending. `pending` lists the previews that are."
        ),
    }
}

/// How many of the log's newest entries are searched for a preview no longer pending.
const LOG_SEARCHED: usize = 200;

/// `uri` for a message: quoted as JSON (control characters escaped), at most
/// [`URI_SHOWN_CHARS`] characters of it.
fn shown(uri: &str) -> String {
    let count = uri.chars().count();
    let cut: String = uri.chars().take(URI_SHOWN_CHARS).collect();
    let quoted = serde_json::to_string(&cut).unwrap_or_default();
    if count > URI_SHOWN_CHARS { format!("{quoted} (cut; {count} characters)") } else { quoted }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_round_trips_only_in_the_spelling_diff_uri_gives() {
        let id = PendingId::from_string("pending-action:ast_edit:7".to_owned());
        let uri = diff_uri(&id);
        assert_eq!(uri, "staged://preview/pending-action:ast_edit:7.diff");
        assert_eq!(id_of_uri(&uri).as_deref(), Some("pending-action:ast_edit:7"));
        // Another spelling of the same bytes names nothing.
        assert_eq!(id_of_uri("staged://preview/pending-action%3Aast_edit%3A7.diff"), None);
        let odd = PendingId::from_string("pending-action:my tool/../x?:1".to_owned());
        let uri = diff_uri(&odd);
        assert_eq!(uri, "staged://preview/pending-action:my%20tool%2F..%2Fx%3F:1.diff");
        assert_eq!(id_of_uri(&uri).as_deref(), Some(odd.as_str()));
        for hostile in [
            "",
            "staged://preview/.diff",
            "staged://preview/%zz.diff",
            "staged://preview/%4.diff",
            "staged://preview/%FF.diff",
            "file:///etc/passwd",
            "staged://preview/../../etc/passwd",
        ] {
            assert_eq!(id_of_uri(hostile), None, "{hostile}");
        }
    }

    #[test]
    fn a_long_uri_is_cut_and_control_characters_are_escaped_in_messages() {
        assert_eq!(shown("a\nb"), "\"a\\nb\"");
        let long = "x".repeat(1000);
        let text = shown(&long);
        assert!(text.ends_with("(cut; 1000 characters)"), "{text}");
        assert!(text.len() < 250, "{text}");
    }
}
