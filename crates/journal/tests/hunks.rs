//! Hunk by hunk, property-tested: cutting a file's edits by the hunks of its diff
//! ([`cut_hunks`]) writes exactly the chosen hunks as the diff showed them, leaves exactly the
//! others (as the diff showed them, on the text the chosen ones leave), and the two together
//! are the whole preview; every hunk chosen is the whole file; a selection that splits the
//! hunks one edit shows in is refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use staged_journal::{Edit, LineIndex, cut_hunks, diff_files, edit_hunks, file_diff, replay};

/// The body of each hunk of `diff` (its lines after the `@@` line): what a person reads,
/// whatever the line numbers.
fn bodies(diff: &str) -> Vec<String> {
    diff_files(diff)
        .iter()
        .flat_map(|file| file.hunks.iter())
        .map(|hunk| {
            let text = &diff[hunk.clone()];
            text.split_once('\n').map_or("", |(_, body)| body).to_owned()
        })
        .collect()
}

/// A text of short lines, with or without a final newline.
fn text() -> impl Strategy<Value = String> {
    (prop::collection::vec("[a-c]{0,2}", 1..80), any::<bool>()).prop_map(|(lines, last_nl)| {
        let mut text = lines.join("\n");
        if last_nl {
            text.push('\n');
        }
        text
    })
}

/// Sorted, non-overlapping edits of `text`, from random cut points (a line, and an offset
/// in it) and replacements (which may add or remove lines).
fn edits_of(text: &str, cuts: &[(usize, usize, usize, String)]) -> Vec<Edit> {
    let len = text.len();
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|&i| i <= len)
        .collect();
    let mut spans: Vec<(usize, usize, &str)> = cuts
        .iter()
        .map(|(line, off, w, after)| {
            ((starts[line % starts.len()] + off % 3).min(len), *w, after.as_str())
        })
        .collect();
    spans.sort_by_key(|s| s.0);
    let mut res = Vec::new();
    let mut at = 0;
    for (start, width, after) in spans {
        if start < at {
            continue;
        }
        let end = (start + width).min(len);
        if text[start..end] == *after {
            continue;
        }
        res.push(Edit { start, before: text[start..end].to_owned(), after: after.to_owned() });
        at = end.max(start + 1);
    }
    res
}

/// The cut points of up to `n` edits.
fn cuts(width: usize, n: usize) -> impl Strategy<Value = Vec<(usize, usize, usize, String)>> {
    prop::collection::vec((0usize..80, 0usize..3, 0usize..width, "[a-cX\n]{0,4}"), 1..n)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn a_subset_then_the_rest_is_the_whole_preview(
        text in text(),
        cuts in cuts(6, 8),
        mask in any::<u64>(),
    ) {
        let edits = edits_of(&text, &cuts);
        let whole = replay(&text, &edits).unwrap();
        let diff = file_diff("f", &text, &edits).unwrap();
        let map = edit_hunks(&LineIndex::new(&text), &edits).unwrap();
        let all = bodies(&diff);
        prop_assert_eq!(map.hunks, all.len());
        prop_assume!(map.hunks > 0);

        // Every hunk: the whole file, as the preview.
        let every: Vec<usize> = (0..map.hunks).collect();
        prop_assert!(cut_hunks("f", &text, &edits, &every, Some(map.hunks)).unwrap().is_none());

        // A subset of the groups (hunks one edit binds go together).
        let groups = map.groups();
        prop_assume!(groups.len() > 1);
        let mut chosen: Vec<usize> = groups
            .iter()
            .enumerate()
            .filter(|(i, _)| mask >> (i % 64) & 1 == 1)
            .flat_map(|(_, g)| g.clone())
            .collect();
        if chosen.is_empty() || chosen.len() == map.hunks {
            // Not every mask picks some but not all: then the first group alone.
            chosen = groups[0].clone().collect();
        }
        let cut = cut_hunks("f", &text, &edits, &chosen, Some(map.hunks)).unwrap().unwrap();
        prop_assert_eq!(cut.of, map.hunks);
        // What is written is the chosen edits, and the rest on top is the whole preview.
        prop_assert_eq!(&replay(&text, &cut.mine).unwrap(), &cut.text);
        prop_assert_eq!(&replay(&cut.text, &cut.left).unwrap(), &whole);
        // Written as previewed: the chosen hunks, and only those, read as in the preview.
        let written = bodies(&file_diff("f", &text, &cut.mine).unwrap());
        let want: Vec<String> = chosen.iter().map(|&h| all[h].clone()).collect();
        prop_assert_eq!(written, want);
        // The rest shows exactly the other hunks, on the text as it is after the apply.
        let left = bodies(&file_diff("f", &cut.text, &cut.left).unwrap());
        let want: Vec<String> =
            (0..map.hunks).filter(|h| !chosen.contains(h)).map(|h| all[h].clone()).collect();
        prop_assert_eq!(left, want);
    }

    #[test]
    fn a_selection_that_splits_one_edit_is_refused(
        lines in 30usize..90,
        wide in prop::collection::vec((0usize..90, 8usize..20), 1..4),
        cuts in cuts(3, 6),
        mask in any::<u64>(),
    ) {
        // Edits that change the first and last lines of a long run they keep in the middle:
        // one edit shows in two hunks.
        let text: String = (0..lines).map(|i| format!("line {i}\n")).collect();
        let starts: Vec<usize> = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let mut edits: Vec<Edit> = Vec::new();
        let mut at = 0;
        let mut spans: Vec<(usize, usize)> =
            wide.iter().map(|(l, w)| (l % lines, (l % lines + w).min(lines))).collect();
        spans.sort_unstable();
        for (first, last) in spans {
            let (start, end) = (starts[first], starts[last]);
            if start < at || end <= start {
                continue;
            }
            let before = &text[start..end];
            edits.push(Edit { start, before: before.to_owned(), after: format!("X{before}Y\n") });
            at = end + 1;
        }
        // And small edits where there is room.
        for edit in edits_of(&text, &cuts) {
            let span = edit.start..edit.start + edit.before.len();
            if edits.iter().all(|e| span.end < e.start || span.start > e.start + e.before.len()) {
                edits.push(edit);
            }
        }
        edits.sort_by_key(|e| e.start);
        let map = edit_hunks(&LineIndex::new(&text), &edits).unwrap();
        prop_assume!(map.hunks > 1);
        let mut chosen: Vec<usize> = (0..map.hunks).filter(|h| mask >> (h % 64) & 1 == 1).collect();
        if chosen.is_empty() || chosen.len() == map.hunks {
            chosen = vec![0];
        }
        let splits = map.groups().iter().any(|g| {
            let n = g.clone().filter(|h| chosen.contains(h)).count();
            n > 0 && n < g.clone().count()
        });
        let res = cut_hunks("f", &text, &edits, &chosen, Some(map.hunks));
        prop_assert_eq!(res.is_err(), splits);
        if let Ok(Some(cut)) = res {
            prop_assert_eq!(&replay(&cut.text, &cut.left).unwrap(), &replay(&text, &edits).unwrap());
        }
    }
}

#[test]
fn a_hunk_count_that_is_not_the_previews_is_refused() {
    let text = "a\nb\n";
    let edits = [Edit { start: 0, before: "a".to_owned(), after: "x".to_owned() }];
    assert!(cut_hunks("f", text, &edits, &[0], Some(2)).is_err());
    assert!(cut_hunks("f", text, &edits, &[1], Some(1)).is_err());
}
