//! A file's history, from the resolve log: the steps [`crate::net`] reads, for each file one
//! session wrote.
//!
//! The log keeps, for every entry that wrote files, what it did to each (its undo data: edits on
//! the text before, a file created or deleted with its text, a file moved) and the SHA-256 of
//! each file before and after. A file's history starts at the session's first change to it and
//! takes every later entry that wrote it, whoever made it, following moves. Between two entries
//! (and after the last one, up to the file on disk now) the file may have been changed outside
//! staged: the texts then differ from what the entry before left, and the difference is a step
//! of its own, by someone else, found line by line. The texts come from the entries themselves
//! where the chain is unbroken, and from the texts the store keeps by hash where it is not.
//! When only the session wrote its files, each chain unbroken up to the file now, no text in
//! between is needed: the entries' edits are the steps, checked by undoing them from the file
//! now back to exactly the text the first entry read (`quick_histories`).

use staged_core::FileChange;
use staged_journal::{Applied, Edit, fingerprint, invert, replay};

use crate::net::{Author, Origin};

/// One log entry's changes, as the log keeps them.
#[derive(Debug, Clone, Copy)]
pub struct LoggedChange<'a> {
    /// The entry's number.
    pub seq: u64,
    /// The session whose change it is (`None`: a person's).
    pub session: Option<u64>,
    /// What it did to each file.
    pub ops: &'a [Applied],
    /// Each file's hashes before and after.
    pub files: &'a [FileChange],
}

/// Where a history's texts come from.
pub trait Texts {
    /// The text whose SHA-256 is `hash`, if it is kept.
    fn text(&self, hash: &str) -> Option<String>;

    /// The file at `path` now, `None` when there is none.
    fn now(&self, path: &str) -> Option<String>;

    /// The files at `paths` now, in order, as [`Texts::now`] reads each: a source that can
    /// read several at once (a disk) reads them so.
    fn now_all(&self, paths: Vec<&str>) -> Vec<Option<String>> {
        paths.into_iter().map(|path| self.now(path)).collect()
    }
}

/// One file's history since the session first changed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHistory {
    /// Where the file is now (after the moves in its history).
    pub path: String,
    /// Where it was when the session first changed it.
    pub first_path: String,
    /// Whether it existed before the session first changed it.
    pub existed_before: bool,
    /// Whether it exists now.
    pub exists_now: bool,
    /// Whether the file's being there or not now is the session's doing: since its last
    /// creation or deletion by one of the session's entries, others made and removed it an even
    /// number of times (none, or a revert and the undo of that revert). A file someone else
    /// deleted (or made again) after the session's change is no creation or deletion of the
    /// session's.
    pub existence_mine: bool,
    /// Where the session's own moves took it from, when it moved the file.
    pub moved_from: Option<String>,
    /// The mode bits of the file when the session deleted it (or created it, when given).
    pub mode: Option<u32>,
    /// Its steps, oldest first.
    pub steps: Vec<(Author, Vec<Edit>)>,
    /// Its text now (empty when it does not exist).
    pub now: String,
}

/// Why a file's history cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the history of {path} cannot be read: {why}")]
pub struct HistoryError {
    /// The file.
    pub path: String,
    /// Why.
    pub why: String,
}

/// A file being followed through the log.
struct Track {
    first_path: String,
    path: String,
    existed_before: bool,
    exists: bool,
    /// The text the last step left.
    known: Option<String>,
    /// Whether the file's existence is the session's doing (see [`FileHistory`]).
    existence_mine: bool,
    steps: Vec<(Author, Vec<Edit>)>,
    moved_from: Option<String>,
    mode: Option<u32>,
}

/// The histories of the files `session` changed, in the order it first changed them.
///
/// # Errors
/// [`HistoryError`] when an entry's text can neither be rebuilt from its neighbours nor found
/// among the kept texts, or an entry's undo data does not fit the text it names.
pub fn file_histories(
    session: u64,
    entries: &[LoggedChange<'_>],
    texts: &dyn Texts,
) -> Result<Vec<FileHistory>, HistoryError> {
    let mut now = std::collections::HashMap::new();
    if let Some(histories) = quick_histories(session, entries, texts, &mut now) {
        return Ok(histories);
    }
    let known = KnownTexts::gather(entries, texts, now);
    let mut tracks: Vec<Track> = Vec::new();
    for entry in entries {
        let mine = entry.session == Some(session);
        let author = if mine {
            Author::Mine { entry: entry.seq }
        } else {
            Author::Other(Origin::Entry {
                seq: entry.seq,
                session: entry.session.map(|s| format!("S{s}")),
            })
        };
        for op in entry.ops {
            let (from, to) = op_paths(op);
            let found = tracks.iter().position(|t| t.path == from && (t.exists || from == to));
            let index = match (found, mine) {
                (Some(i), _) => i,
                (None, true) => {
                    tracks.push(Track {
                        first_path: from.to_owned(),
                        path: from.to_owned(),
                        existed_before: !matches!(op, Applied::Create { .. }),
                        exists: !matches!(op, Applied::Create { .. }),
                        known: None,
                        existence_mine: true,
                        steps: Vec::new(),
                        moved_from: None,
                        mode: None,
                    });
                    tracks.len() - 1
                }
                // A file the session has not changed (yet).
                (None, false) => continue,
            };
            step(&mut tracks[index], entry, op, author.clone(), &known)?;
        }
    }
    tracks.into_iter().map(|track| finish(track, &known, texts)).collect()
}

/// A file the session changed, followed through the log without its texts: its ops, whoever
/// made them.
struct Planned<'a> {
    first_path: &'a str,
    path: &'a str,
    exists: bool,
    /// Its ops in order, with their entries.
    ops: Vec<(&'a LoggedChange<'a>, &'a Applied)>,
    /// Whether every op is the session's.
    mine_only: bool,
}

/// The histories of `session`'s files when each is simple enough to need no text but the file
/// now: only the session wrote it since its first change (updates, and a create first), each
/// entry read exactly what the one before it wrote (by hash), the file now is what the last
/// one wrote, and the entries' edits undone from the file now give back exactly the text the
/// first one read (by hash). Then every step is one of the session's entries as it is logged,
/// and no text in between has to be rebuilt and hashed (what [`KnownTexts`] does for a history
/// with breaks or other writers). `None` when one file is not that simple: the full reading
/// then does them all, as before, with the files read here in `now` (by path).
fn quick_histories<'a>(
    session: u64,
    entries: &'a [LoggedChange<'a>],
    texts: &dyn Texts,
    now: &mut std::collections::HashMap<String, Option<String>>,
) -> Option<Vec<FileHistory>> {
    // The same following of paths as [`file_histories`]'s, without texts; the tracks at each
    // path (by index) are kept by path, so that finding one does not walk them all.
    let mut planned: Vec<Planned<'a>> = Vec::new();
    let mut at: std::collections::HashMap<&'a str, Vec<usize>> = std::collections::HashMap::new();
    for entry in entries {
        let mine = entry.session == Some(session);
        for op in entry.ops {
            let (from, to) = op_paths(op);
            let found = at.get(from).and_then(|here| {
                here.iter().copied().filter(|&i| planned[i].exists || from == to).min()
            });
            let index = match (found, mine) {
                (Some(i), _) => i,
                (None, true) => {
                    at.entry(from).or_default().push(planned.len());
                    planned.push(Planned {
                        first_path: from,
                        path: from,
                        exists: !matches!(op, Applied::Create { .. }),
                        ops: Vec::new(),
                        mine_only: true,
                    });
                    planned.len() - 1
                }
                (None, false) => continue,
            };
            let track = &mut planned[index];
            track.ops.push((entry, op));
            track.mine_only &= mine;
            track.exists = !matches!(op, Applied::Delete { .. });
            if to != from {
                if let Some(here) = at.get_mut(from) {
                    here.retain(|&i| i != index);
                }
                at.entry(to).or_default().push(index);
            }
            track.path = to;
        }
    }
    if planned.iter().any(|t| !t.mine_only) {
        return None;
    }
    let mut read = Vec::with_capacity(planned.len());
    let read_now = texts.now_all(planned.iter().map(|track| track.path).collect());
    for (track, text) in planned.iter().zip(read_now) {
        now.insert(track.path.to_owned(), text.clone());
        read.push((track, text?));
    }
    // Each file's check is its own: a long session's run on two threads.
    crate::files::in_two(read, |(track, text)| quick_history(track, text)).into_iter().collect()
}

/// One file of [`quick_histories`], `None` when it is not that simple.
fn quick_history(track: &Planned<'_>, now: String) -> Option<FileHistory> {
    let mut last: Option<&str> = None;
    let mut mode = None;
    for (k, (entry, op)) in track.ops.iter().enumerate() {
        let (before, after) = hashes(entry, track.path);
        match op {
            Applied::Update { .. } if before.is_some() && (k == 0 || before == last) => {}
            Applied::Create { mode: m, .. } if k == 0 && before.is_none() => mode = *m,
            _ => return None,
        }
        last = Some(after?);
    }
    if fingerprint(now.as_bytes()) != last? {
        return None;
    }
    let steps: Vec<(Author, Vec<Edit>)> = track
        .ops
        .iter()
        .map(|(entry, op)| (Author::Mine { entry: entry.seq }, op_edits(op)))
        .collect();
    // The entries undone, newest first, from the file now: exactly the text the first read.
    let mut text = now.clone();
    for (_, edits) in steps.iter().rev() {
        text = replay(&text, &invert(edits)?)?;
    }
    let (first_entry, first_op) = track.ops.first()?;
    let created = matches!(first_op, Applied::Create { .. });
    let first = hashes(first_entry, track.path).0;
    let fits = match first {
        None => created && text.is_empty(),
        Some(hash) => !created && fingerprint(text.as_bytes()) == hash,
    };
    fits.then(|| FileHistory {
        path: track.path.to_owned(),
        first_path: track.first_path.to_owned(),
        existed_before: !created,
        exists_now: true,
        // Only the session wrote it, up to the file now.
        existence_mine: true,
        moved_from: None,
        mode,
        steps,
        now,
    })
}

/// The text each file had before entry `seq` wrote it (by path), as far as the entries and
/// the kept texts tell: what checks that an entry's recorded diff is its undo data.
pub(crate) fn texts_before(
    seq: u64,
    entries: &[LoggedChange<'_>],
    texts: &dyn Texts,
) -> std::collections::BTreeMap<String, String> {
    let known = KnownTexts::gather(entries, texts, std::collections::HashMap::new());
    let mut res = std::collections::BTreeMap::new();
    for entry in entries.iter().filter(|e| e.seq == seq) {
        for file in entry.files {
            if let Some(text) = file.before.as_deref().and_then(|hash| known.get(hash)) {
                res.insert(file.path.clone(), text.to_owned());
            }
        }
    }
    res
}

/// Where an op reads and where it writes.
fn op_paths(op: &Applied) -> (&str, &str) {
    match op {
        Applied::Update { path, .. }
        | Applied::Create { path, .. }
        | Applied::Delete { path, .. } => (path.as_str(), path.as_str()),
        Applied::Move { from, to, .. } => (from.as_str(), to.as_str()),
    }
}

/// The edits of an op, on the text before (a created file's text is empty before, a deleted
/// file's after).
fn op_edits(op: &Applied) -> Vec<Edit> {
    match op {
        Applied::Update { edits, .. } | Applied::Move { edits, .. } => edits.clone(),
        Applied::Create { content, .. } => {
            vec![Edit { start: 0, before: String::new(), after: content.clone() }]
        }
        Applied::Delete { content, .. } => {
            vec![Edit { start: 0, before: content.clone(), after: String::new() }]
        }
    }
}

/// The hashes the entry gives for `path`.
fn hashes<'a>(entry: &'a LoggedChange<'_>, path: &str) -> (Option<&'a str>, Option<&'a str>) {
    entry
        .files
        .iter()
        .find(|f| f.path == path)
        .map_or((None, None), |f| (f.before.as_deref(), f.after.as_deref()))
}

/// One op's texts, by hash: what it read and wrote, and its edits between them.
struct Wanted<'a> {
    to: &'a str,
    before: Option<&'a str>,
    after: Option<&'a str>,
    edits: Vec<Edit>,
}

/// Every text an entry read or wrote that can be had: kept by its hash, the file on disk now,
/// or rebuilt from one of those through an entry's edits (forwards from what it read, or
/// backwards from what it wrote), by hash.
struct KnownTexts {
    by_hash: std::collections::HashMap<String, String>,
    /// Each file the entries wrote, as it is now (`None`: there is none).
    now: std::collections::HashMap<String, Option<String>>,
}

impl KnownTexts {
    /// `now`: files already read as they are now (by path), not read again.
    fn gather(
        entries: &[LoggedChange<'_>],
        texts: &dyn Texts,
        now: std::collections::HashMap<String, Option<String>>,
    ) -> KnownTexts {
        let mut wanted: Vec<Wanted<'_>> = Vec::new();
        for entry in entries {
            for op in entry.ops {
                let (_, to) = op_paths(op);
                let (before, _) = hashes(entry, op_paths(op).0);
                let (_, after) = hashes(entry, to);
                wanted.push(Wanted { to, before, after, edits: op_edits(op) });
            }
        }
        let mut known = KnownTexts { by_hash: std::collections::HashMap::new(), now };
        for text in known.now.values().flatten().cloned().collect::<Vec<_>>() {
            known.add(text);
        }
        // A deleted file's text is in its entry, as is a created one's.
        for entry in entries {
            for op in entry.ops {
                if let Applied::Delete { content, .. } | Applied::Create { content, .. } = op {
                    known.add(content.clone());
                }
            }
        }
        // Each file as it is now, read once.
        for Wanted { to, .. } in &wanted {
            if !known.now.contains_key(*to) {
                let now = texts.now(to);
                if let Some(text) = &now {
                    known.add(text.clone());
                }
                known.now.insert((*to).to_owned(), now);
            }
        }
        known.rebuild(&wanted);
        // The kept texts are asked only for what the entries and the disk do not give: the
        // texts at the breaks of a chain (a file changed outside staged in between).
        let mut asked = std::collections::HashSet::new();
        let missing: Vec<&str> = wanted
            .iter()
            .flat_map(|w| [w.before, w.after])
            .flatten()
            .filter(|hash| !known.by_hash.contains_key(*hash) && asked.insert(*hash))
            .collect();
        let mut more = false;
        for hash in missing {
            if let Some(text) = texts.text(hash) {
                known.add(text);
                more = true;
            }
        }
        if more {
            known.rebuild(&wanted);
        }
        known
    }

    fn add(&mut self, text: String) {
        self.by_hash.entry(fingerprint(text.as_bytes())).or_insert(text);
    }

    /// Rebuilds texts across the entries until nothing new is found: forwards from what an
    /// entry read, backwards from what it wrote. A pass each way finds a whole unbroken chain,
    /// and each round finds at least one more text, so there is at most one round per entry.
    fn rebuild(&mut self, wanted: &[Wanted<'_>]) {
        for _ in 0..=wanted.len() {
            let mut found = false;
            for w in wanted {
                found |= self.rebuild_one(w);
            }
            for w in wanted.iter().rev() {
                found |= self.rebuild_one(w);
            }
            if !found {
                break;
            }
        }
    }

    /// Rebuilds the one text of `w` that is missing from the other, if it fits its hash.
    fn rebuild_one(&mut self, w: &Wanted<'_>) -> bool {
        let (Some(before), Some(after)) = (w.before, w.after) else { return false };
        match (self.by_hash.get(before), self.by_hash.contains_key(after)) {
            (Some(text), false) => {
                if let Some(text) = replay(text, &w.edits)
                    && fingerprint(text.as_bytes()) == after
                {
                    self.by_hash.insert(after.to_owned(), text);
                    return true;
                }
            }
            (None, true) => {
                if let Some(text) =
                    invert(&w.edits).and_then(|inverse| replay(&self.by_hash[after], &inverse))
                    && fingerprint(text.as_bytes()) == before
                {
                    self.by_hash.insert(before.to_owned(), text);
                    return true;
                }
            }
            _ => {}
        }
        false
    }

    fn get(&self, hash: &str) -> Option<&str> {
        self.by_hash.get(hash).map(String::as_str)
    }
}

/// Adds `op` of `entry` (and any change made outside staged before it) to `track`.
fn step(
    track: &mut Track,
    entry: &LoggedChange<'_>,
    op: &Applied,
    author: Author,
    known: &KnownTexts,
) -> Result<(), HistoryError> {
    let (from, to) = op_paths(op);
    let fail = |why: String| HistoryError { path: track.path.clone(), why };
    let edits = op_edits(op);
    let (before_hash, _) = hashes(entry, from);
    let before = match before_hash {
        None => String::new(),
        Some(hash) => known.get(hash).map(str::to_owned).ok_or_else(|| {
            fail(format!(
                "staged kept no copy of the text log entry {} read or wrote, and it cannot be rebuilt from the entries around it (the file was changed outside staged in between)",
                entry.seq
            ))
        })?,
    };
    if let Some(text) = &track.known
        && *text != before
    {
        track.steps.push((Author::Other(Origin::Outside), line_edits(text, &before)));
    }
    let after = replay(&before, &edits).ok_or_else(|| {
        fail(format!("the undo data of log entry {} does not fit its text", entry.seq))
    })?;
    if let Author::Mine { .. } = author {
        match op {
            Applied::Move { from, to, .. } => {
                let first = track.moved_from.take().unwrap_or_else(|| from.clone());
                track.moved_from = (first != *to).then_some(first);
            }
            Applied::Delete { mode, .. } => track.mode = Some(*mode),
            Applied::Create { mode, .. } => track.mode = *mode,
            Applied::Update { .. } => {}
        }
    }
    if matches!(op, Applied::Create { .. } | Applied::Delete { .. }) {
        // Someone else's creation or deletion undoes the one before it.
        track.existence_mine = matches!(author, Author::Mine { .. }) || !track.existence_mine;
    }
    track.steps.push((author, edits));
    track.exists = !matches!(op, Applied::Delete { .. });
    track.path = to.to_owned();
    track.known = Some(after);
    Ok(())
}

/// The history of `track` up to the file now.
fn finish(
    mut track: Track,
    known: &KnownTexts,
    texts: &dyn Texts,
) -> Result<FileHistory, HistoryError> {
    let now = match known.now.get(&track.path) {
        Some(now) => now.clone(),
        None => texts.now(&track.path),
    };
    let exists_now = now.is_some();
    // Made or removed outside staged since the last entry.
    let existence_mine = track.existence_mine == (exists_now == track.exists);
    let now = now.unwrap_or_default();
    if let Some(known) = &track.known
        && *known != now
    {
        track.steps.push((Author::Other(Origin::Outside), line_edits(known, &now)));
    }
    Ok(FileHistory {
        path: track.path,
        first_path: track.first_path,
        existed_before: track.existed_before,
        exists_now,
        existence_mine,
        moved_from: track.moved_from,
        mode: track.mode,
        steps: track.steps,
        now,
    })
}

/// The edits that turn `old` into `new`, line by line.
fn line_edits(old: &str, new: &str) -> Vec<Edit> {
    staged_edit::line_edits(old, new)
}
