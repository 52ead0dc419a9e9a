//! A session's net change to one file's text, from the file's history.
//!
//! A file's history is a list of [`Step`]s: what each writer did to the text, as edits on the
//! text before it (the log entries of every session and of the person, and the changes made
//! outside staged, found by comparing texts). The steps of *one* session are *mine*; every
//! other step is someone else's.
//!
//! [`net_change`] walks the steps once, keeping the session's *regions*: the spans of the
//! current text that the session wrote, each with the text that was there before the session
//! first touched it (its *original*). An edit of the session merges with the regions it
//! overlaps or touches (so two entries that change neighbouring text make one region, and a
//! change the session makes again to its own text stays one region, whose original is still
//! what was there before the session). Another writer's edit moves the regions after it; one
//! that reaches into a region marks it *changed since*, by that writer, since the session's
//! text is no longer whole there. Two other writers' edits are recognised: one that puts a
//! region's original back exactly (a revert of it) takes the region out of the net change, and
//! one that then writes the session's text back exactly at the same place (the undo of that
//! revert) makes it the session's again; so does one that writes the session's text back over
//! a region changed since (the undo of that change).
//!
//! The result is the file as it is (`now`) and as it would be without the session's live
//! regions (`without`), and the edits that turn one into the other: exactly the lines the
//! session left are shown and reverted, never another writer's.

use staged_journal::Edit;

/// Who made a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Author {
    /// The session whose net change is asked for, in its log entry `entry`.
    Mine {
        /// The log entry.
        entry: u64,
    },
    /// Someone else.
    Other(Origin),
}

/// Who else changed a file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// A log entry of another session, or of a person (`session` is `None`).
    Entry {
        /// The log entry.
        seq: u64,
        /// Its session's short id, if any.
        session: Option<String>,
    },
    /// A change made outside staged (an editor, a script), found by comparing texts.
    Outside,
}

/// One step of a file's history: `edits` (sorted, not overlapping, in the coordinates of the
/// text before the step) made by `author`.
#[derive(Debug, Clone, Copy)]
pub struct Step<'a> {
    /// Who made it.
    pub author: &'a Author,
    /// What it did.
    pub edits: &'a [Edit],
}

/// What became of a region of the session's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegionState {
    /// The session's text is there, whole.
    Live,
    /// Someone else changed it since: `mine` is the session's text as it was then.
    ChangedSince {
        /// The first writer that reached into it.
        by: Origin,
        /// The session's text just before that.
        mine: String,
    },
    /// Someone else put the original back (a revert); `mine` is the session's text it
    /// replaced, which an exact undo of that revert makes live again.
    Reverted {
        /// The session's text that was reverted.
        mine: String,
        /// Whether a person put the original back (a revert a person's undo takes back); when
        /// another agent session's change did, a person restoring the session's text undoes
        /// that session's change, and the text is not given back to this one.
        by_person: bool,
    },
}

/// A span of the current text that the session wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// Where it starts in the current text.
    pub start: usize,
    /// Its text now.
    pub current: String,
    /// What was there before the session first wrote it.
    pub original: String,
    /// The session's log entries that wrote it, in order.
    pub entries: Vec<u64>,
    /// Whether it is still the session's.
    pub state: RegionState,
}

impl Region {
    fn end(&self) -> usize {
        self.start + self.current.len()
    }

    /// Whether the session's change is in the net change (live, or changed since).
    pub fn counts(&self) -> bool {
        !matches!(self.state, RegionState::Reverted { .. })
    }
}

/// Why a history cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// A step's edits do not fit the text the steps before it leave (its offsets or texts
    /// disagree with a region's).
    #[error("step {step} of the file's history does not fit the text before it")]
    Misfit {
        /// The step's index.
        step: usize,
    },
}

/// The session's regions in a file after `steps`, in order of position: each live or changed
/// since (or reverted, kept so that an undo of the revert is recognised).
///
/// # Errors
/// [`NetError::Misfit`] when a step's edits contradict the regions (a history that is not one
/// file's).
pub fn regions(steps: &[Step<'_>]) -> Result<Vec<Region>, NetError> {
    let mut regions: Vec<Region> = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        check_sorted(step.edits).ok_or(NetError::Misfit { step: i })?;
        regions = match step.author {
            Author::Mine { entry } => mine(regions, step.edits, *entry),
            Author::Other(origin) => other(regions, step.edits, origin),
        }
        .ok_or(NetError::Misfit { step: i })?;
    }
    Ok(regions)
}

/// `None` unless the edits are sorted and do not overlap.
fn check_sorted(edits: &[Edit]) -> Option<()> {
    let mut end = 0;
    for edit in edits {
        if edit.start < end {
            return None;
        }
        end = edit.start.checked_add(edit.before.len())?;
    }
    Some(())
}

/// One item of a sweep over a step's edits and the regions, by position in the text before.
enum Item {
    Edit(usize),
    Region(usize),
}

/// The session's own step: each edit, with the regions it overlaps or touches, becomes one
/// live region.
fn mine(regions: Vec<Region>, edits: &[Edit], entry: u64) -> Option<Vec<Region>> {
    let mut items: Vec<(usize, usize, Item)> = Vec::with_capacity(regions.len() + edits.len());
    for (i, e) in edits.iter().enumerate() {
        items.push((e.start, e.start + e.before.len(), Item::Edit(i)));
    }
    for (i, r) in regions.iter().enumerate() {
        items.push((r.start, r.end(), Item::Region(i)));
    }
    items.sort_by_key(|(start, end, item)| (*start, *end, matches!(item, Item::Region(_))));
    let mut res = Vec::with_capacity(regions.len() + edits.len());
    let mut shift: isize = 0;
    let mut at = 0;
    while at < items.len() {
        // A cluster: items that overlap or touch, one after another.
        let mut end = items[at].1;
        let mut next = at + 1;
        while next < items.len() && items[next].0 <= end {
            end = end.max(items[next].1);
            next += 1;
        }
        let cluster = &items[at..next];
        at = next;
        let has_edit = cluster.iter().any(|(_, _, item)| matches!(item, Item::Edit(_)));
        if !has_edit {
            // Regions the step did not touch: moved by what the edits before them did.
            for (_, _, item) in cluster {
                if let Item::Region(i) = item {
                    let mut region = regions[*i].clone();
                    region.start = region.start.checked_add_signed(shift)?;
                    res.push(region);
                }
            }
            continue;
        }
        let lo = cluster[0].0;
        // The text before the step over lo..end, stitched from what each item says is there.
        let mut before = vec![None::<u8>; end - lo];
        for (start, _, item) in cluster {
            let text = match item {
                Item::Edit(i) => &edits[*i].before,
                Item::Region(i) => &regions[*i].current,
            };
            for (k, b) in text.bytes().enumerate() {
                let slot = &mut before[start - lo + k];
                match slot {
                    Some(old) if *old != b => return None,
                    _ => *slot = Some(b),
                }
            }
        }
        let before: Vec<u8> = before.into_iter().collect::<Option<Vec<u8>>>()?;
        // What the session's edits make of it, and what was there before the session.
        let mut after = Vec::with_capacity(before.len());
        let mut original = Vec::with_capacity(before.len());
        let mut entries: Vec<u64> = Vec::new();
        let mut state = RegionState::Live;
        let mut cursor = lo;
        let mut o_cursor = lo;
        for (start, stop, item) in cluster {
            match item {
                Item::Edit(i) => {
                    after.extend_from_slice(&before[cursor - lo..*start - lo]);
                    after.extend_from_slice(edits[*i].after.as_bytes());
                    cursor = *stop;
                }
                Item::Region(i) => {
                    let region = &regions[*i];
                    original.extend_from_slice(&before[o_cursor - lo..*start - lo]);
                    match &region.state {
                        // A reverted region the session writes over again is plain text now.
                        RegionState::Reverted { .. } => {
                            original.extend_from_slice(&before[*start - lo..*stop - lo]);
                        }
                        RegionState::Live => original.extend_from_slice(region.original.as_bytes()),
                        RegionState::ChangedSince { .. } => {
                            original.extend_from_slice(region.original.as_bytes());
                            // The session writing over all of it makes the text its own again.
                            let covered = !region.current.is_empty()
                                && edits.iter().any(|e| {
                                    e.start <= region.start
                                        && e.start + e.before.len() >= region.end()
                                });
                            if state == RegionState::Live && !covered {
                                state = region.state.clone();
                            }
                        }
                    }
                    o_cursor = *stop;
                    for e in &region.entries {
                        if !entries.contains(e) {
                            entries.push(*e);
                        }
                    }
                }
            }
        }
        after.extend_from_slice(&before[cursor - lo..]);
        original.extend_from_slice(&before[o_cursor - lo..]);
        entries.push(entry);
        let grown = after.len() as isize - before.len() as isize;
        let start = lo.checked_add_signed(shift)?;
        shift += grown;
        let current = String::from_utf8(after).ok()?;
        let original = String::from_utf8(original).ok()?;
        if current == original && state == RegionState::Live {
            // The session put back what was there: nothing of it is left here.
            continue;
        }
        res.push(Region { start, current, original, entries, state });
    }
    Some(res)
}

/// Whether `edit`, someone else's, reaches into `region`: it overlaps it, or inserts strictly
/// inside it (an insertion at a region's start or end is beside it). A region of no text is
/// reached by an insertion at its place as follows. Where the session deleted text (a live
/// region), by any: one of exactly the deleted text is its revert, and any other makes it
/// changed since, since which of the two comes first in the file is not known (a revert
/// that guessed would write the deleted lines in the wrong order, or onto a last line with
/// no line feed). Where a revert or another writer took the session's text out, only by one
/// of exactly the session's text (the undo of that revert, or of that change); any other is
/// beside it, which is reverted or changed since already.
fn reaches_into(edit: &Edit, region: &Region, origin: &Origin) -> bool {
    let (start, end) = (region.start, region.end());
    if edit.before.is_empty() {
        if start == end {
            return edit.start == start
                && match &region.state {
                    RegionState::Live => true,
                    RegionState::Reverted { mine, by_person } => {
                        *by_person && edit.after == *mine && may_undo_a_revert(origin)
                    }
                    RegionState::ChangedSince { mine, .. } => edit.after == *mine,
                };
        }
        start < edit.start && edit.start < end
    } else {
        edit.start < end && edit.start + edit.before.len() > start
    }
}

/// Whether `origin` may be the undo of a revert of the session's text: a person's (a log
/// entry of no session: `staged undo`, or a change made outside staged), never another agent
/// session's, whose writing the same text is its own change (two sessions never claim one
/// line).
fn may_undo_a_revert(origin: &Origin) -> bool {
    !matches!(origin, Origin::Entry { session: Some(_), .. })
}

/// Whether `edit` lies wholly before position `at` (an insertion at `at` does).
fn wholly_before(edit: &Edit, at: usize) -> bool {
    if edit.before.is_empty() { edit.start <= at } else { edit.start + edit.before.len() <= at }
}

fn growth(edit: &Edit) -> isize {
    edit.after.len() as isize - edit.before.len() as isize
}

/// Someone else's step: regions before an edit stay, after it move; the regions an edit
/// reaches into, with every edit that reaches into them, become one region changed since by
/// `origin`, unless it is one edit over exactly one region that puts its original back (a
/// revert), or puts the session's reverted text back (the undo of that revert).
fn other(regions: Vec<Region>, edits: &[Edit], origin: &Origin) -> Option<Vec<Region>> {
    let runs = reaching_runs(&regions, edits, origin);
    let mut res = Vec::with_capacity(regions.len());
    let mut shift: isize = 0;
    let mut next_edit = 0;
    let mut i = 0;
    let mut regions: Vec<Option<Region>> = regions.into_iter().map(Some).collect();
    while i < regions.len() {
        // A group: regions joined by edits that reach into more than one of them.
        let mut j = i + 1;
        let mut edit_end = runs[i].end;
        while j < regions.len() && !runs[j].is_empty() && runs[j].start < edit_end {
            edit_end = edit_end.max(runs[j].end);
            j += 1;
        }
        let group: Vec<Region> = regions[i..j].iter_mut().filter_map(Option::take).collect();
        let run = runs[i].start..edit_end;
        i = j;
        let lo_region = group[0].start;
        let lo = if run.is_empty() { lo_region } else { edits[run.start].start.min(lo_region) };
        // The edits before the group move it.
        while next_edit < edits.len() && next_edit < run.start.max(next_edit) {
            shift += growth(&edits[next_edit]);
            next_edit += 1;
        }
        while next_edit < edits.len() && run.is_empty() && wholly_before(&edits[next_edit], lo) {
            shift += growth(&edits[next_edit]);
            next_edit += 1;
        }
        if run.is_empty() {
            for mut region in group {
                region.start = region.start.checked_add_signed(shift)?;
                res.push(region);
            }
            continue;
        }
        let touching = &edits[run.clone()];
        next_edit = run.end;
        let last = &touching[touching.len() - 1];
        let hi = group
            .iter()
            .map(Region::end)
            .chain(std::iter::once(last.start + last.before.len()))
            .max()
            .unwrap_or(lo);
        let before = stitch_before(lo, hi, &group, touching)?;
        let after = apply_edits(&before, lo, touching);
        let start = lo.checked_add_signed(shift)?;
        shift += touching.iter().map(growth).sum::<isize>();
        let after = String::from_utf8(after).ok()?;
        if let [region] = group.as_slice()
            && touching.len() == 1
            && lo == region.start
            && hi == region.end()
        {
            res.extend(one_edit_over_region(region, start, after, origin));
            continue;
        }
        // Regions reverted before are plain text now; the others are changed since, as one.
        let live: Vec<&Region> = group.iter().filter(|r| r.counts()).collect();
        if live.is_empty() {
            continue;
        }
        res.push(changed_since(&live, before, lo, start, after, origin)?);
    }
    Some(res)
}

/// For each region, the edits that reach into it: a run of edit indexes (edits and regions
/// are both sorted, so the runs move forward).
fn reaching_runs(
    regions: &[Region],
    edits: &[Edit],
    origin: &Origin,
) -> Vec<std::ops::Range<usize>> {
    let mut runs: Vec<std::ops::Range<usize>> = Vec::with_capacity(regions.len());
    let mut first = 0;
    for region in regions {
        while first < edits.len()
            && !reaches_into(&edits[first], region, origin)
            && wholly_before(&edits[first], region.start)
        {
            first += 1;
        }
        let mut last = first;
        while last < edits.len() && reaches_into(&edits[last], region, origin) {
            last += 1;
        }
        runs.push(first..last.max(first));
    }
    runs
}

/// The text before the step over `lo..hi`, stitched from the regions of `group` and the
/// edits `touching` them; `None` when they disagree about a byte, or leave one unknown.
fn stitch_before(lo: usize, hi: usize, group: &[Region], touching: &[Edit]) -> Option<Vec<u8>> {
    let mut before = vec![None::<u8>; hi - lo];
    let mut put = |start: usize, text: &str| -> Option<()> {
        for (k, b) in text.bytes().enumerate() {
            let slot = &mut before[start - lo + k];
            match slot {
                Some(old) if *old != b => return None,
                _ => *slot = Some(b),
            }
        }
        Some(())
    };
    for region in group {
        put(region.start, &region.current)?;
    }
    for edit in touching {
        put(edit.start, &edit.before)?;
    }
    before.into_iter().collect::<Option<Vec<u8>>>()
}

/// What the edits `touching` (sorted, within it) make of `before`, the text from `lo`.
fn apply_edits(before: &[u8], lo: usize, touching: &[Edit]) -> Vec<u8> {
    let mut after = Vec::with_capacity(before.len());
    let mut cursor = lo;
    for edit in touching {
        after.extend_from_slice(&before[cursor - lo..edit.start - lo]);
        after.extend_from_slice(edit.after.as_bytes());
        cursor = edit.start + edit.before.len();
    }
    after.extend_from_slice(&before[cursor - lo..]);
    after
}

/// One edit of someone else's over exactly `region`, which now reads `after` from `start`:
/// an exact revert, an exact undo of a revert, or a change since. `None` when the region
/// leaves the session's history (a reverted region written over is plain text now).
fn one_edit_over_region(
    region: &Region,
    start: usize,
    after: String,
    origin: &Origin,
) -> Option<Region> {
    let mut region = region.clone();
    let state = match std::mem::replace(&mut region.state, RegionState::Live) {
        // An exact revert: the original is back.
        RegionState::Live if after == region.original => Some(RegionState::Reverted {
            mine: region.current.clone(),
            by_person: may_undo_a_revert(origin),
        }),
        // An exact undo of that revert: the session's text is back.
        RegionState::Reverted { mine, by_person: true }
            if after == mine && may_undo_a_revert(origin) =>
        {
            Some(RegionState::Live)
        }
        RegionState::Reverted { .. } => None,
        RegionState::Live => {
            Some(RegionState::ChangedSince { by: origin.clone(), mine: region.current.clone() })
        }
        // The session's text put back exactly (the undo of the change made since): whole again.
        RegionState::ChangedSince { mine, .. } if after == mine => Some(RegionState::Live),
        changed @ RegionState::ChangedSince { .. } => Some(changed),
    };
    let state = state?;
    region.state = state;
    region.start = start;
    region.current = after;
    Some(region)
}

/// The `live` regions of a group that other edits reached into, as one region changed since
/// by `origin` (or by the writer that first changed one of them): `before` is the text from
/// `lo` before the step, `after` what it is now, from `start`. `None` when a text is not UTF-8.
fn changed_since(
    live: &[&Region],
    before: Vec<u8>,
    lo: usize,
    start: usize,
    after: String,
    origin: &Origin,
) -> Option<Region> {
    let mut original = Vec::with_capacity(before.len());
    let mut cursor = lo;
    let mut entries = Vec::new();
    let mut state = None;
    for region in live {
        original.extend_from_slice(&before[cursor - lo..region.start - lo]);
        original.extend_from_slice(region.original.as_bytes());
        cursor = region.end();
        for e in &region.entries {
            if !entries.contains(e) {
                entries.push(*e);
            }
        }
        if state.is_none() && matches!(region.state, RegionState::ChangedSince { .. }) {
            state = Some(region.state.clone());
        }
    }
    original.extend_from_slice(&before[cursor - lo..]);
    let mine = String::from_utf8(before).ok()?;
    Some(Region {
        start,
        current: after,
        original: String::from_utf8(original).ok()?,
        entries,
        state: state.unwrap_or(RegionState::ChangedSince { by: origin.clone(), mine }),
    })
}

/// The session's net change to a file: the regions that count, and the edits that turn the
/// text without them into the text now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetChange {
    /// The regions that count (live or changed since), in order.
    pub regions: Vec<Region>,
    /// The text as it would be without them.
    pub without: String,
    /// The edits that turn `without` into the text now, one per region (offsets in `without`).
    pub edits: Vec<Edit>,
}

/// The net change of the session in a file whose text is now `now`, after `steps`.
///
/// # Errors
/// [`NetError::Misfit`] when the steps are not a history of `now`.
pub fn net_change(steps: &[Step<'_>], now: &str) -> Result<NetChange, NetError> {
    let misfit = NetError::Misfit { step: steps.len() };
    let regions: Vec<Region> = regions(steps)?.into_iter().filter(Region::counts).collect();
    let mut without = String::with_capacity(now.len());
    let mut edits = Vec::with_capacity(regions.len());
    let mut cursor = 0;
    for region in &regions {
        if now.get(region.start..region.end()) != Some(region.current.as_str()) {
            return Err(misfit);
        }
        without.push_str(now.get(cursor..region.start).ok_or(misfit.clone())?);
        edits.push(Edit {
            start: without.len(),
            before: region.original.clone(),
            after: region.current.clone(),
        });
        without.push_str(&region.original);
        cursor = region.end();
    }
    without.push_str(now.get(cursor..).ok_or(misfit)?);
    Ok(NetChange { regions, without, edits })
}
