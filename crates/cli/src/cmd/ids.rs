//! The ids a person types. A pending preview is named by its full id
//! (`pending-action:ast_edit:3`), by a tail of it that starts after a `:` (`ast_edit:3`, or
//! the number alone, `3`), or by [`NEWEST`]. A log entry is named by its number (`staged log`'s
//! ENTRY column), or by a preview's id in any of those forms but the bare number, which is
//! always an entry number there.
//!
//! A short form that names several previews (possible only in a database written outside
//! staged, since the store numbers previews once for all tools) is an input error that lists
//! them.

use anyhow::bail;
use staged_core::{PendingActionStore, PendingId, PendingSummary};
use staged_render::escape_line;

/// The name of the newest pending preview, wherever a pending id is taken.
pub(crate) const NEWEST: &str = "newest";

/// The prefix of every pending id the store gives out.
const FULL_PREFIX: &str = "pending-action:";

/// Whether `typed` names the pending id `id`: the whole id, or a tail of it that starts after
/// one of its `:`.
pub(crate) fn names(id: &str, typed: &str) -> bool {
    if typed.is_empty() {
        return false;
    }
    if id == typed {
        return true;
    }
    id.strip_suffix(typed).is_some_and(|head| head.ends_with(':'))
}

/// Whether `typed` is written as a full pending id.
pub(crate) fn is_full(typed: &str) -> bool {
    typed.starts_with(FULL_PREFIX)
}

/// What a typed pending id names among the previews pending now.
#[derive(Debug)]
pub(crate) enum Found {
    /// One preview.
    One(PendingSummary),
    /// None: nothing pending (for [`NEWEST`]), or no id it names.
    Nothing,
}

/// Looks `typed` up among the pending previews. An empty id, or a short form that names
/// several of them, is an input error.
pub(crate) fn find_pending(store: &dyn PendingActionStore, typed: &str) -> anyhow::Result<Found> {
    let typed = typed.trim();
    if typed.is_empty() {
        bail!(
            "the id is empty: give a pending id (see `staged pending`), its number, or `{NEWEST}`"
        );
    }
    if typed == NEWEST {
        let head = store.head_summary().map_err(|err| anyhow::anyhow!("{err}"))?;
        return Ok(head.map_or(Found::Nothing, Found::One));
    }
    let summaries = store.summaries().map_err(|err| anyhow::anyhow!("{err}"))?;
    if let Some(exact) = summaries.iter().find(|s| s.id.as_str() == typed) {
        return Ok(Found::One(exact.clone()));
    }
    let mut matching: Vec<PendingSummary> =
        summaries.into_iter().filter(|s| names(s.id.as_str(), typed)).collect();
    match matching.len() {
        0 => Ok(Found::Nothing),
        1 => Ok(matching.pop().map_or(Found::Nothing, Found::One)),
        _ => {
            let ids: Vec<&str> = matching.iter().map(|s| s.id.as_str()).collect();
            bail!("{}", ambiguous(typed, &ids))
        }
    }
}

/// The pending preview `typed` names; none is an input error.
pub(crate) fn pending(
    store: &dyn PendingActionStore,
    typed: &str,
) -> anyhow::Result<PendingSummary> {
    match find_pending(store, typed)? {
        Found::One(summary) => Ok(summary),
        Found::Nothing if typed.trim() == NEWEST => bail!("no preview is pending"),
        Found::Nothing => bail!(
            "no pending preview has id `{}` (see `staged pending`)",
            escape_line(typed.trim())
        ),
    }
}

/// The error of a short id that names several previews or entries.
pub(crate) fn ambiguous(typed: &str, ids: &[&str]) -> String {
    let ids: Vec<String> = ids.iter().map(|id| format!("`{}`", escape_line(id))).collect();
    format!(
        "`{}` names {} previews: {}; give the whole id",
        escape_line(typed),
        ids.len(),
        ids.join(", ")
    )
}

/// The full id that a `--id` guard compares with the head: the preview `typed` names, or,
/// when it names none pending, `typed` itself if it is a full id (the guard then says it is no
/// longer the newest). `None` when a short form names no pending preview.
pub(crate) fn guard_id(
    store: &dyn PendingActionStore,
    typed: &str,
) -> anyhow::Result<Option<PendingId>> {
    match find_pending(store, typed)? {
        Found::One(summary) => Ok(Some(summary.id)),
        Found::Nothing if is_full(typed.trim()) => {
            Ok(Some(PendingId::from_string(typed.trim().to_owned())))
        }
        Found::Nothing => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_after_a_colon_names_the_id() {
        let id = "pending-action:ast_edit:3";
        for typed in ["pending-action:ast_edit:3", "ast_edit:3", "3"] {
            assert!(names(id, typed), "{typed}");
        }
        for typed in ["", "edit:3", ":3", "t:3", "action:ast_edit:3", "33", "ast_edit", "pending"] {
            assert!(!names(id, typed), "{typed}");
        }
        assert!(names("pending-action:edit:0", "edit:0"));
        assert!(!names("pending-action:ast_edit:0", "edit:0"));
        assert!(!names("pending-action:edit:10", "0"));
    }
}
