//! Nested matches: which of them compose, which disappear, and which are an error.
//!
//! ast-grep rewrites the outer of two nested matches and leaves the inner one as it was
//! (`Box::new(Box::new(x))` becomes `Box::from(Box::new(x))`); refusing the whole edit, as
//! staged used to, blocks a rewrite of ten thousand files over one nested site. Here:
//!
//! * a match inside a metavariable capture of the match around it (one its rewrite uses) is
//!   rewritten inside the captured text, bottom-up, and counted: `Box::new(Box::new(x))`
//!   becomes `Box::from(Box::from(x))`, 2 replacements;
//! * a match inside another's text but outside every capture it uses disappears with the outer
//!   rewrite: it is dropped and not counted;
//! * only crossing ranges, where neither contains the other, are an error, naming both.
//!
//! [`plan`] sorts the matches into that forest. [`compose`] then builds each outermost match's
//! final text level by level: the innermost kept matches are applied to the file, the file is
//! parsed again, and the matches one level up are rewritten by ast-grep from the new tree (so
//! their captures hold the rewritten text, indented as ast-grep indents), until the outermost.
//! Each level is parsed again incrementally from the tree of the level below ([`Level`]), so
//! only what the nested rewrites touched is parsed again; nothing is when nothing nests.
//!
//! An outer match that no longer matches once its nested matches are rewritten (its rewrite of
//! a nested statement dropped the `;` the outer one needs, say) is rewritten alone, as ast-grep
//! rewrites it: from the original text, with the matches nested in it left as they were.
//! Only those matches are affected, never the file's others; [`Composed::left`] says which.
//!
//! A rewrite that uses a capture twice doubles what nests in it at every level: `[$A]` to
//! `[$A, $A]` over 40 nested arrays would be 2^40 copies. [`compose`] stops a file whose text
//! would grow past [`MAX_GROWTH`] times its size (at least [`MIN_LIMIT`] bytes): the file is
//! reported as an issue, and left alone, before the text is built.

use std::ops::Range;

/// One match, as the engine found it in the original text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// Index of the rule (op) that matched.
    pub(crate) rule: usize,
    /// The matched byte range.
    pub(crate) range: Range<usize>,
    /// The byte ranges of the captures the rule's rewrite uses.
    pub(crate) captures: Vec<Range<usize>>,
    /// ast-grep's replacement for this match, from the original text.
    pub(crate) replacement: String,
}

/// Two matches whose ranges cross: neither contains the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Crossing {
    /// The earlier match's range.
    pub(crate) first: Range<usize>,
    /// The later match's range.
    pub(crate) second: Range<usize>,
}

/// The matches sorted into a forest of kept matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Forest {
    /// The kept matches, in text order (outer before inner).
    pub(crate) kept: Vec<Found>,
    /// For each kept match, the index (in `kept`) of the kept match it is nested in.
    pub(crate) parent: Vec<Option<usize>>,
    /// How many matches were dropped (inside another's text, outside its captures).
    pub(crate) dropped: usize,
}

impl Forest {
    /// Whether any kept match is nested in another.
    pub(crate) fn nests(&self) -> bool {
        self.parent.iter().any(Option::is_some)
    }

    /// The outermost kept matches, each with how many replacements it stands for (itself and
    /// every kept match nested in it).
    pub(crate) fn roots(&self) -> Vec<(usize, usize)> {
        self.roots_weighted(&vec![1; self.kept.len()])
    }

    /// [`Forest::roots`], each kept match counting `weight[i]` (0 for a match whose rewrite
    /// changes nothing).
    pub(crate) fn roots_weighted(&self, weight: &[usize]) -> Vec<(usize, usize)> {
        let mut counts: Vec<usize> =
            (0..self.kept.len()).map(|i| weight.get(i).copied().unwrap_or(1)).collect();
        for i in (0..self.kept.len()).rev() {
            if let Some(p) = self.parent[i] {
                counts[p] += counts[i];
            }
        }
        (0..self.kept.len()).filter(|&i| self.parent[i].is_none()).map(|i| (i, counts[i])).collect()
    }

    /// Each kept match's level: 0 without kept matches inside, else one more than the highest
    /// level inside it.
    fn levels(&self) -> Vec<usize> {
        let mut levels = vec![0usize; self.kept.len()];
        for i in (0..self.kept.len()).rev() {
            if let Some(p) = self.parent[i] {
                levels[p] = levels[p].max(levels[i] + 1);
            }
        }
        levels
    }
}

/// Sorts `found` into a [`Forest`]: identical matches (same range and replacement, from
/// several ops) count once; two different rewrites of the same range, or crossing ranges, are
/// a [`Crossing`].
pub(crate) fn plan(mut found: Vec<Found>) -> Result<Forest, Crossing> {
    found.sort_by(|a, b| {
        a.range
            .start
            .cmp(&b.range.start)
            .then(b.range.end.cmp(&a.range.end))
            .then(a.rule.cmp(&b.rule))
    });
    found.dedup_by(|later, earlier| {
        later.range == earlier.range && later.replacement == earlier.replacement
    });
    let mut kept: Vec<Found> = Vec::with_capacity(found.len());
    let mut parent: Vec<Option<usize>> = Vec::with_capacity(found.len());
    let mut dropped = 0usize;
    // The matches that contain the current position, outermost first, each with its index
    // in `kept` (`None` when it was dropped).
    let mut open: Vec<(Found, Option<usize>)> = Vec::new();
    for m in found {
        while open.last().is_some_and(|(top, _)| top.range.end <= m.range.start) {
            open.pop();
        }
        let keep = match open.last() {
            None => true,
            Some((top, _)) if m.range == top.range || m.range.end > top.range.end => {
                return Err(Crossing { first: top.range.clone(), second: m.range.clone() });
            }
            Some((_, None)) => false,
            Some((top, Some(_))) => {
                top.captures.iter().any(|c| c.start <= m.range.start && m.range.end <= c.end)
            }
        };
        let index = if keep {
            parent.push(open.last().and_then(|(_, k)| *k));
            kept.push(m.clone());
            Some(kept.len() - 1)
        } else {
            dropped += 1;
            None
        };
        open.push((m, index));
    }
    Ok(Forest { kept, parent, dropped })
}

/// A match to rewrite again from the text as it is at one level: its rule and its range
/// there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rematch {
    /// The rule (op).
    pub(crate) rule: usize,
    /// The range in the current text.
    pub(crate) range: Range<usize>,
}

/// How many times its original size a file may grow to through nested rewrites.
pub(crate) const MAX_GROWTH: usize = 8;

/// The size a small file may always grow to through nested rewrites.
pub(crate) const MIN_LIMIT: usize = 1 << 20;

/// One level of [`compose`]: the text before it, the nested rewrites it applies (sorted,
/// disjoint ranges of `before`, each with its new text), and the text after them, in which
/// the level's matches are rewritten again. A caller that kept `before`'s syntax tree parses
/// `after` incrementally from it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Level<'a> {
    pub(crate) before: &'a str,
    pub(crate) splices: &'a [(Range<usize>, &'a str)],
    pub(crate) after: &'a str,
}

/// Rewrites matches again from the text as it is at one level (see [`compose`]): each one's
/// replacement, or `None` when it no longer matches there.
pub(crate) type Rewrite<'a> =
    dyn FnMut(&Level<'_>, &[Rematch]) -> Result<Vec<Option<String>>, String> + 'a;

/// What [`compose`] built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Composed {
    /// The final replacement of each outermost kept match, in [`Forest::roots`] order.
    pub(crate) finals: Vec<String>,
    /// For each kept match: whether it was left as it was, because a match around it no
    /// longer matched once it was rewritten, and so was rewritten alone.
    pub(crate) left: Vec<bool>,
    /// The kept matches rewritten alone, outermost first: each one's index in `kept`.
    pub(crate) alone: Vec<usize>,
}

/// The final replacement of each outermost kept match (by index in `forest.kept`), built
/// bottom-up. `rematch(text, matches)` parses `text` and returns ast-grep's replacement for
/// each match, or `None` when one no longer matches there: that match is then rewritten from
/// the original text, and every match nested in it is left as it was.
pub(crate) fn compose(
    original: &str,
    forest: &Forest,
    rematch: &mut Rewrite<'_>,
) -> Result<Composed, String> {
    let levels = forest.levels();
    let height = levels.iter().copied().max().unwrap_or(0);
    let limit = original.len().saturating_mul(MAX_GROWTH).max(MIN_LIMIT);
    let mut replacement: Vec<String> = forest.kept.iter().map(|m| m.replacement.clone()).collect();
    let mut failed = vec![false; forest.kept.len()];
    let mut text = original.to_owned();
    // Where each kept match is in `text`.
    let mut ranges: Vec<Range<usize>> = forest.kept.iter().map(|m| m.range.clone()).collect();
    for level in 1..=height {
        // Apply every nested match of the level below inside its parent.
        let mut edits: Vec<(Range<usize>, usize)> = (0..forest.kept.len())
            .filter(|&i| levels[i] == level - 1 && forest.parent[i].is_some())
            .map(|i| (ranges[i].clone(), i))
            .collect();
        edits.sort_by_key(|(r, _)| r.start);
        let grown = edits.iter().fold(text.len(), |len, (range, i)| {
            len.saturating_sub(range.end - range.start).saturating_add(replacement[*i].len())
        });
        if grown > limit {
            return Err(format!(
                "its nested rewrites would grow it past {limit} bytes ({MAX_GROWTH} times its size, at least {MIN_LIMIT}) at nesting level {level}: the rewrite copies a capture that holds further matches; narrow the pattern or rewrite in several steps"
            ));
        }
        let mut next = String::with_capacity(grown);
        let mut last = 0usize;
        let mut shifts: Vec<(usize, usize, isize)> = Vec::with_capacity(edits.len());
        for (range, i) in &edits {
            next.push_str(text.get(last..range.start).ok_or("nested edit out of order")?);
            next.push_str(&replacement[*i]);
            let delta = replacement[*i].len() as isize - (range.end - range.start) as isize;
            shifts.push((range.start, range.end, delta));
            last = range.end;
        }
        next.push_str(text.get(last..).ok_or("nested edit out of bounds")?);
        // The edits are sorted and disjoint, so their ends are sorted too: a position shifts by
        // the edits that end before it (found by binary search over running totals), and by
        // those that end at it, unless it starts a range there and the edit is an insertion.
        let mut before = Vec::with_capacity(shifts.len() + 1);
        before.push(0isize);
        for &(_, _, delta) in &shifts {
            before.push(before[before.len() - 1] + delta);
        }
        let map = |pos: usize, is_end: bool| -> usize {
            let first = shifts.partition_point(|&(_, end, _)| end < pos);
            let mut shift = before[first];
            for &(start, end, delta) in shifts[first..].iter().take_while(|s| s.1 == pos) {
                if is_end || start < end {
                    shift += delta;
                }
            }
            (pos as isize + shift) as usize
        };
        for range in ranges.iter_mut() {
            *range = map(range.start, false)..map(range.end, true);
        }
        let at_level: Vec<usize> = (0..forest.kept.len()).filter(|&i| levels[i] == level).collect();
        let wanted: Vec<Rematch> = at_level
            .iter()
            .map(|&i| Rematch { rule: forest.kept[i].rule, range: ranges[i].clone() })
            .collect();
        let splices: Vec<(Range<usize>, &str)> =
            edits.iter().map(|(range, i)| (range.clone(), replacement[*i].as_str())).collect();
        let fresh = rematch(&Level { before: &text, splices: &splices, after: &next }, &wanted)?;
        drop(splices);
        text = next;
        for (i, new) in at_level.into_iter().zip(fresh) {
            match new {
                Some(new) => replacement[i] = new,
                // As ast-grep rewrites it: from the original text, its nested matches as they
                // were.
                None => {
                    replacement[i] = forest.kept[i].replacement.clone();
                    failed[i] = true;
                }
            }
        }
    }
    // A match is left as it was when any match around it was rewritten alone.
    let mut left = vec![false; forest.kept.len()];
    let mut alone = Vec::new();
    for i in 0..forest.kept.len() {
        let outer_left = forest.parent[i].is_some_and(|p| left[p] || failed[p]);
        left[i] = outer_left;
        if failed[i] && !outer_left {
            alone.push(i);
        }
    }
    let finals = forest.roots().into_iter().map(|(i, _)| replacement[i].clone()).collect();
    Ok(Composed { finals, left, alone })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::single_range_in_vec_init)]

    use super::*;

    fn found(rule: usize, range: Range<usize>, captures: &[Range<usize>], out: &str) -> Found {
        Found { rule, range, captures: captures.to_vec(), replacement: out.to_owned() }
    }

    #[test]
    fn a_match_inside_a_capture_is_kept_and_one_outside_is_dropped() {
        // f(g(x)) + h : the outer f(..) captures g(x); h-like match outside captures.
        let outer = found(0, 0..7, &[2..6], "F");
        let in_capture = found(1, 2..6, &[4..5], "G");
        let outside = found(2, 0..1, &[], "X");
        let forest = plan(vec![in_capture, outer, outside]).unwrap();
        assert_eq!(forest.kept.iter().map(|m| m.rule).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(forest.parent, [None, Some(0)]);
        assert_eq!(forest.dropped, 1);
        assert_eq!(forest.roots(), [(0, 2)]);
    }

    #[test]
    fn crossing_ranges_are_an_error_and_identical_matches_count_once() {
        let err = plan(vec![found(0, 0..5, &[], "a"), found(1, 3..8, &[], "b")]).unwrap_err();
        assert_eq!(err, Crossing { first: 0..5, second: 3..8 });
        let err = plan(vec![found(0, 0..5, &[], "a"), found(1, 0..5, &[], "b")]).unwrap_err();
        assert_eq!(err, Crossing { first: 0..5, second: 0..5 });
        let forest = plan(vec![found(0, 0..5, &[], "a"), found(1, 0..5, &[], "a")]).unwrap();
        assert_eq!(forest.roots(), [(0, 1)]);
        // Adjacent matches do not nest.
        let forest = plan(vec![found(0, 0..3, &[0..3], "a"), found(0, 3..6, &[], "b")]).unwrap();
        assert_eq!(forest.parent, [None, None]);
    }

    #[test]
    fn a_match_inside_a_dropped_match_is_dropped() {
        let outer = found(0, 0..10, &[8..9], "O");
        let middle = found(1, 1..7, &[2..6], "M");
        let inner = found(2, 2..6, &[], "I");
        let forest = plan(vec![outer, middle, inner]).unwrap();
        assert_eq!(forest.kept.len(), 1);
        assert_eq!(forest.dropped, 2);
    }

    #[test]
    fn compose_rewrites_bottom_up_through_reparsed_text() {
        // b(b(x)) with b($A) -> c($A): the inner is applied, then the outer is rewritten from
        // the new text, where its capture holds c(x).
        let text = "b(b(x))";
        let outer = found(0, 0..7, &[2..6], "c(b(x))");
        let inner = found(0, 2..6, &[4..5], "c(x)");
        let forest = plan(vec![outer, inner]).unwrap();
        let mut seen = Vec::new();
        let res = compose(text, &forest, &mut |level, wanted| {
            let now = level.after;
            seen.push((now.to_owned(), wanted.to_vec()));
            Ok(wanted
                .iter()
                .map(|m| Some(format!("c{}", &now[m.range.start + 1..m.range.end])))
                .collect())
        })
        .unwrap();
        assert_eq!(res.finals, ["c(c(x))"]);
        assert_eq!(res.left, [false, false]);
        assert_eq!(seen, [("b(c(x))".to_owned(), vec![Rematch { rule: 0, range: 0..7 }])]);
    }

    #[test]
    fn compose_maps_ranges_past_earlier_edits() {
        // Two independent nestings; the second shifts by the first's length change.
        let text = "f(f(a)) f(f(b))";
        let matches = vec![
            found(0, 0..7, &[2..6], "?"),
            found(0, 2..6, &[4..5], "gg(a)"),
            found(0, 8..15, &[10..14], "?"),
            found(0, 10..14, &[12..13], "gg(b)"),
        ];
        let forest = plan(matches).unwrap();
        let res = compose(text, &forest, &mut |level, wanted| {
            let now = level.after;
            assert_eq!(now, "f(gg(a)) f(gg(b))");
            Ok(wanted
                .iter()
                .map(|m| Some(format!("gg{}", &now[m.range.start + 1..m.range.end])))
                .collect())
        })
        .unwrap();
        assert_eq!(res.finals, ["gg(gg(a))", "gg(gg(b))"]);
    }

    #[test]
    fn an_outer_match_that_no_longer_matches_is_rewritten_alone_and_only_its_inner_ones_stay() {
        // Two nestings; the first outer one no longer matches once its inner one is rewritten.
        let text = "f(f(a)) f(f(b))";
        let matches = vec![
            found(0, 0..7, &[2..6], "F(f(a))"),
            found(0, 2..6, &[4..5], "F(a)"),
            found(0, 8..15, &[10..14], "?"),
            found(0, 10..14, &[12..13], "F(b)"),
        ];
        let forest = plan(matches).unwrap();
        let res = compose(text, &forest, &mut |level, wanted| {
            let now = level.after;
            assert_eq!(now, "f(F(a)) f(F(b))");
            Ok(wanted
                .iter()
                .map(|m| {
                    (m.range.start != 0)
                        .then(|| format!("F{}", &now[m.range.start + 1..m.range.end]))
                })
                .collect())
        })
        .unwrap();
        assert_eq!(res.finals, ["F(f(a))", "F(F(b))"]);
        assert_eq!(res.left, [false, true, false, false]);
        assert_eq!(res.alone, [0]);
    }
}
