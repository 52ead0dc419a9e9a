//! A session's net change to one file as a diff with numbered hunks, each hunk's identity
//! (what its review state belongs to), and the edits that revert chosen hunks on the file now.
//!
//! The diff is the journal's (`file_diff_indexed` of the text without the session and the
//! edits back to the text now), so hunks are cut, merged and numbered exactly as `staged show
//! --hunks` numbers a preview's: 3 lines of context, changes closer than that in one hunk.
//!
//! A hunk's identity is its file, the texts each of its regions had before the session and has
//! now, and which occurrence of those texts it is among the file's hunks: it does not move when
//! other writers change lines around it, and it is new when the session changes the hunk again
//! or when it merges with another.

use std::collections::HashMap;

use staged_journal::{DiffHeader, Edit, LineIndex, edit_hunks, file_diff_indexed, fingerprint};

use crate::net::{NetChange, Origin, RegionState};

/// One hunk of a session's diff of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// Its number in the file's diff, from 1.
    pub number: usize,
    /// The regions it shows (indexes into [`NetChange::regions`]).
    pub regions: Vec<usize>,
    /// Its identity: a SHA-256 (hex) of the file, its regions' texts before and now, and the
    /// occurrence.
    pub key: String,
    /// The session's log entries behind it.
    pub entries: Vec<u64>,
    /// Someone else changed its lines after the session: it is shown, never reverted.
    pub changed_since: Option<Origin>,
}

/// A file's session diff: the unified diff (with `diff --git` headers) and its hunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The diff, in the form `git apply` takes: from the file without the session to now.
    pub diff: String,
    /// Its hunks, in order.
    pub hunks: Vec<Hunk>,
}

/// Why a file's session diff could not be drawn: the regions do not fit the text (a history
/// that is not this file's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the session's change to {path} does not fit the file's text")]
pub struct Misfit {
    /// The file.
    pub path: String,
}

/// The diff of `net` for the file at `path`, with its hunks.
///
/// # Errors
/// [`Misfit`] when the net change does not fit its own text.
pub fn file_diff(path: &str, net: &NetChange) -> Result<FileDiff, Misfit> {
    file_diff_as(&DiffHeader::Modify { path }, path, net)
}

/// [`file_diff`] under any header: a file the session created, deleted or moved.
///
/// # Errors
/// [`Misfit`] when the net change does not fit its own text.
pub(crate) fn file_diff_as(
    header: &DiffHeader<'_>,
    path: &str,
    net: &NetChange,
) -> Result<FileDiff, Misfit> {
    let misfit = || Misfit { path: path.to_owned() };
    let index = LineIndex::new(&net.without);
    let diff = file_diff_indexed(header, &index, &net.edits).map_err(|_| misfit())?;
    let map = edit_hunks(&index, &net.edits).map_err(|_| misfit())?;
    let mut hunks: Vec<Hunk> = (1..=map.hunks)
        .map(|number| Hunk {
            number,
            regions: Vec::new(),
            key: String::new(),
            entries: Vec::new(),
            changed_since: None,
        })
        .collect();
    // A region whose change spans several hunks binds them: they go together.
    for (region, hunks_of) in map.of_edit.iter().enumerate() {
        let Some((first, last)) = hunks_of else { continue };
        for hunk in &mut hunks[*first..=*last] {
            hunk.regions.push(region);
            for entry in &net.regions[region].entries {
                if !hunk.entries.contains(entry) {
                    hunk.entries.push(*entry);
                }
            }
            if hunk.changed_since.is_none()
                && let RegionState::ChangedSince { by, .. } = &net.regions[region].state
            {
                hunk.changed_since = Some(by.clone());
            }
        }
    }
    let contents: Vec<String> = hunks
        .iter()
        .map(|hunk| {
            let mut content = String::new();
            for &region in &hunk.regions {
                let r = &net.regions[region];
                content.push_str(&format!(
                    "{}:{}{}:{}",
                    r.original.len(),
                    r.original,
                    r.current.len(),
                    r.current
                ));
            }
            content
        })
        .collect();
    // How many hunks have each content, and how many of them came before (linear: a long
    // session's file has thousands of hunks).
    let mut twins_of: HashMap<&str, usize> = HashMap::new();
    for content in &contents {
        *twins_of.entry(content).or_default() += 1;
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (hunk, content) in hunks.iter_mut().zip(&contents) {
        let twins = twins_of.get(content.as_str()).copied().unwrap_or(1);
        let before = seen.entry(content).or_default();
        let occurrence = *before;
        *before += 1;
        // Hunks of the same texts are told apart by which of how many each is: when one of
        // them is reverted, the others are new hunks, so that the review state of the one
        // reverted never passes to another (and comes back with it when the revert is undone).
        // A hunk of texts of its own keeps the identity it always had.
        let which = if twins == 1 { "0".to_owned() } else { format!("{occurrence} of {twins}") };
        hunk.key = fingerprint(format!("{path}\0{content}\0{which}").as_bytes());
    }
    Ok(FileDiff { diff, hunks })
}

/// Why some hunks cannot be reverted; nothing is written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RevertError {
    /// The file's diff has no such hunk.
    #[error("{path} has no hunk {number} (its session diff has {count})")]
    NoSuchHunk {
        /// The file.
        path: String,
        /// The hunk asked for.
        number: usize,
        /// How many it has.
        count: usize,
    },
    /// Someone else changed the hunk's lines since the session wrote them.
    #[error("hunk {number} of {path} was changed since the session wrote it, by {by}")]
    ChangedSince {
        /// The file.
        path: String,
        /// The hunk.
        number: usize,
        /// Who changed it, for a person.
        by: String,
    },
    /// A file the session created or deleted, reverted whole, that someone else changed,
    /// removed or made again since.
    #[error("{path} was changed since the session wrote it, by {by}")]
    FileChangedSince {
        /// The file.
        path: String,
        /// Who changed it, for a person.
        by: String,
    },
}

/// How a person reads an [`Origin`].
pub fn origin_text(origin: &Origin) -> String {
    match origin {
        Origin::Entry { seq, session: Some(session) } => {
            format!("log entry {seq} (session {session})")
        }
        Origin::Entry { seq, session: None } => format!("log entry {seq} (a person's)"),
        Origin::Outside => "a change made outside staged".to_owned(),
    }
}

/// The edits that revert hunks `numbers` (1-based) of `diff` on the file now: each of their
/// regions' text now put back to what it was before the session. Hunks bound together by one
/// region are reverted together.
///
/// # Errors
/// [`RevertError`] for a hunk the diff does not have, or one changed since by someone else.
pub fn revert_edits(
    path: &str,
    net: &NetChange,
    diff: &FileDiff,
    numbers: &[usize],
) -> Result<Vec<Edit>, RevertError> {
    let mut regions: Vec<usize> = Vec::new();
    for &number in numbers {
        let hunk = number.checked_sub(1).and_then(|i| diff.hunks.get(i)).ok_or_else(|| {
            RevertError::NoSuchHunk { path: path.to_owned(), number, count: diff.hunks.len() }
        })?;
        if let Some(by) = &hunk.changed_since {
            return Err(RevertError::ChangedSince {
                path: path.to_owned(),
                number,
                by: origin_text(by),
            });
        }
        regions.extend(&hunk.regions);
    }
    regions.sort_unstable();
    regions.dedup();
    Ok(regions
        .into_iter()
        .map(|i| {
            let r = &net.regions[i];
            Edit { start: r.start, before: r.current.clone(), after: r.original.clone() }
        })
        .collect())
}
