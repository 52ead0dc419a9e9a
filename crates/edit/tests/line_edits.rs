//! `line_edits` (what `write`, a multi-replacement `edit`, a Codex `*** Add File` over a file
//! and record mode's undo data stage) against random texts: its edits must rebuild the asked
//! text exactly, always (issue 32, finding 5: a compacted diff once put a line in the wrong
//! place, and the diff shown matched what was written, so nobody was warned).
//!
//! The texts are lines of a small alphabet of code lines that repeat (`}`, `    x();`, an empty
//! line, a non-ASCII one), each ending with LF or CRLF (one ending for the whole text, or
//! mixed, with a stray `\r` now and then), with or without a final line ending; the new text is
//! either another such text or the old one with lines inserted, deleted, duplicated, changed
//! or given another ending.
//!
//! Each case checks that:
//! - replaying the edits on the old text ([`staged_journal::replay`], what an apply writes)
//!   gives the new text, byte for byte, and each edit starts at a line start of the old text;
//! - the preview's diff, read back by staged's own unified-diff parser and applied to the old
//!   text, gives the new text too: what is shown is what is written (but for a stray `\r`
//!   that ends no line, which that parser reads as a line ending);
//! - a second, independent diff (the longest common subsequence of the lines, by dynamic
//!   programming, in this file) also replays to the new text, and our edits change exactly as
//!   many lines as it does: Myers' diff without its deadline (these texts are far too small to
//!   reach it) is minimal, and the common start and end `line_edits` keeps are whole lines of
//!   both texts, so the count is the minimal count, not merely near it. (A count is the lines
//!   of every edit's old text plus those of its new text; a last line without a line ending
//!   counts as a line.)
//!
//! Cases in CI: [`CI_CASES`] (about a second of a debug build); `PROPTEST_CASES` overrides:
//! `scripts/stress.py --only line-edits` runs a million.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use staged_journal::Edit;

/// Cases in CI; `PROPTEST_CASES` overrides.
const CI_CASES: u32 = 10_000;

/// The lines texts are made of: code lines that repeat, an empty one, a non-ASCII one.
const LINES: [&str; 9] = ["}", "{", "    x();", "    return 1;", "fn f() {", "// c", "", "é", "a"];

/// How a text's lines end.
#[derive(Debug, Clone, Copy)]
enum Endings {
    Lf,
    Crlf,
    /// Each line its own: LF, CRLF, or now and then a stray `\r` (not a line ending).
    Mixed,
}

/// A text as lines: for each, its index in [`LINES`] and its ending (0 and 1: LF, 2: CRLF,
/// 3: a `\r` that joins it to the next line, in a mixed text), then whether the last line
/// ends.
#[derive(Debug, Clone)]
struct Lines {
    lines: Vec<(usize, u8)>,
    endings: Endings,
    final_ending: bool,
}

impl Lines {
    fn text(&self) -> String {
        let mut res = String::new();
        let n = self.lines.len();
        for (i, &(line, ending)) in self.lines.iter().enumerate() {
            res.push_str(LINES[line]);
            if i + 1 == n && !self.final_ending {
                break;
            }
            res.push_str(match (self.endings, ending) {
                (Endings::Lf, _) | (Endings::Mixed, 0 | 1) => "\n",
                (Endings::Crlf, _) | (Endings::Mixed, 2) => "\r\n",
                (Endings::Mixed, _) => "\r",
            });
        }
        res
    }
}

fn lines(max: usize) -> impl Strategy<Value = Lines> {
    (
        prop::collection::vec((0..LINES.len(), 0..4u8), 0..max),
        prop_oneof![Just(Endings::Lf), Just(Endings::Crlf), Just(Endings::Mixed)],
        prop::bool::weighted(0.8),
    )
        .prop_map(|(lines, endings, final_ending)| Lines { lines, endings, final_ending })
}

/// One change of a text's lines: 0 insert, 1 delete, 2 duplicate, 3 replace, 4 another
/// ending; at a position (modulo the length), with a line and an ending.
type Change = (u8, usize, usize, u8);

fn mutated(mut text: Lines, changes: Vec<Change>, final_ending: Option<bool>) -> Lines {
    for (kind, at, line, ending) in changes {
        let len = text.lines.len();
        match kind {
            0 => text.lines.insert(at % (len + 1), (line, ending)),
            _ if len == 0 => {}
            1 => {
                text.lines.remove(at % len);
            }
            2 => {
                let copy = text.lines[at % len];
                text.lines.insert(at % len, copy);
            }
            3 => text.lines[at % len].0 = line,
            _ => text.lines[at % len].1 = ending,
        }
    }
    if let Some(final_ending) = final_ending {
        text.final_ending = final_ending;
    }
    text
}

/// An old text and a new one: unrelated, or the old one changed here and there.
fn pair() -> impl Strategy<Value = (String, String)> {
    let change = (0..5u8, any::<usize>(), 0..LINES.len(), 0..4u8);
    prop_oneof![
        (lines(16), lines(16)).prop_map(|(old, new)| (old.text(), new.text())),
        lines(40)
            .prop_flat_map(move |old| {
                (
                    Just(old),
                    prop::collection::vec(change.clone(), 1..6),
                    prop::option::weighted(0.2, any::<bool>()),
                )
            })
            .prop_map(|(old, changes, final_ending)| {
                let new = mutated(old.clone(), changes, final_ending);
                (old.text(), new.text())
            }),
    ]
}

/// How many lines `text` has (a last line without a line ending counts).
fn line_count(text: &str) -> usize {
    text.split_inclusive('\n').count()
}

/// The lines `edits` change: those of each one's old text and of its new text.
fn changed_lines(edits: &[Edit]) -> usize {
    edits.iter().map(|e| line_count(&e.before) + line_count(&e.after)).sum()
}

/// The second diff: the longest common subsequence of the two texts' lines (dynamic
/// programming over every pair of lines), and the lines between two kept ones as one edit.
fn lcs_edits(old: &str, new: &str) -> Vec<Edit> {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    // `common[i][j]`: the longest common subsequence of `a[i..]` and `b[j..]`.
    let mut common = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            common[i][j] = if a[i] == b[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let mut edits: Vec<Edit> = Vec::new();
    let (mut i, mut j, mut at) = (0, 0, 0);
    let mut open: Option<Edit> = None;
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] && common[i][j] == common[i + 1][j + 1] + 1 {
            edits.extend(open.take());
            at += a[i].len();
            (i, j) = (i + 1, j + 1);
            continue;
        }
        let edit = open.get_or_insert_with(|| Edit {
            start: at,
            before: String::new(),
            after: String::new(),
        });
        if j == b.len() || (i < a.len() && common[i + 1][j] >= common[i][j + 1]) {
            edit.before.push_str(a[i]);
            at += a[i].len();
            i += 1;
        } else {
            edit.after.push_str(b[j]);
            j += 1;
        }
    }
    edits.extend(open);
    edits
}

fn config() -> ProptestConfig {
    let cases =
        std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(CI_CASES);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

/// The text the preview's diff (as the model and the person see it) makes of `old`, read back
/// as a unified diff by staged's own patch parser.
fn through_the_diff(old: &str, edits: &[Edit]) -> Option<String> {
    use staged_edit::patch::{PatchFile, apply_chunks, parse_unified};
    let header = staged_journal::DiffHeader::Modify { path: "a.txt" };
    let diff =
        staged_journal::file_diff_indexed(&header, &staged_journal::LineIndex::new(old), edits)
            .ok()?;
    let patch = parse_unified(&diff).ok()?;
    let [PatchFile::Update { chunks, style, .. }] = patch.files.as_slice() else { return None };
    let edits = apply_chunks("a.txt", old, chunks, *style).ok()?;
    staged_journal::replay(old, &edits)
}

fn check(old: &str, new: &str) -> Result<(), TestCaseError> {
    let edits = staged_edit::line_edits(old, new);
    let rebuilt = staged_journal::replay(old, &edits);
    prop_assert_eq!(rebuilt.as_deref(), Some(new), "{:?}", edits);
    // (A `\r` that ends no line is read back as a line ending by the patch parser.)
    let stray_cr = |text: &str| text.replace("\r\n", "").contains('\r');
    if !edits.is_empty() && !stray_cr(old) && !stray_cr(new) {
        let shown = through_the_diff(old, &edits);
        prop_assert_eq!(shown.as_deref(), Some(new), "the diff of {:?}", edits);
    }
    for edit in &edits {
        prop_assert!(edit.start == 0 || old.as_bytes()[edit.start - 1] == b'\n', "{:?}", edit);
    }
    let second = lcs_edits(old, new);
    let rebuilt = staged_journal::replay(old, &second);
    prop_assert_eq!(rebuilt.as_deref(), Some(new), "{:?}", second);
    prop_assert_eq!(changed_lines(&edits), changed_lines(&second), "{:?} / {:?}", edits, second);
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn line_edits_rebuild_the_asked_text_with_a_minimal_diff((old, new) in pair()) {
        check(&old, &new)?;
    }
}

/// The texts of issue 32 and a few edges, whatever the random cases were.
#[test]
fn known_cases() {
    let cases = [
        (
            "    x();\n}\n}\n    x();\n// c\n",
            "}\nfn f() {\n}\n    return 1;\n}\n    x();\n    return 1;\n",
        ),
        ("a\nb\n", "ab\n"),
        ("a\nb", "a\nb\n"),
        ("a\r\nb\r\n", "a\nb\n"),
        ("", "}\n"),
        ("}\n}\n}\n", "}\n"),
        ("x\ry\n", "x\ny\n"),
    ];
    for (old, new) in cases {
        check(old, new).unwrap_or_else(|err| panic!("{old:?} -> {new:?}: {err}"));
        check(new, old).unwrap_or_else(|err| panic!("{new:?} -> {old:?}: {err}"));
    }
}
