//! The preview's unified diff is accepted by `git apply --check`, and applying it gives the
//! same bytes as applying the action.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;

use common::{Fixture, details};
use proptest::prelude::*;
use serde_json::json;
use staged_ast_edit::{AstEditError, Edit, file_diff};

fn git_apply(root: &std::path::Path, patch: &str, check: bool) -> std::process::Output {
    let patch_path =
        root.join("..").join(format!("{}.patch", root.file_name().unwrap().to_string_lossy()));
    std::fs::write(&patch_path, patch).unwrap();
    let mut cmd = Command::new("git");
    cmd.arg("apply");
    if check {
        cmd.arg("--check");
    }
    cmd.arg(&patch_path).current_dir(root).env("GIT_CEILING_DIRECTORIES", root.parent().unwrap());
    let out = cmd.output().unwrap();
    let _ = std::fs::remove_file(patch_path);
    out
}

#[tokio::test]
async fn diff_passes_git_apply_check_and_matches_the_apply() {
    let files = [
        ("a.ts", "import x from 'y';\n\nfoo(1);\nconst z = 2;\n"),
        ("src/no_newline.ts", "foo(1); foo(2)"),
        ("src/multi.ts", "function f() {\n  foo(\n    1,\n    2,\n  );\n}\n"),
        ("src/untouched.ts", "baz(1);\n"),
    ];
    let fx = Fixture::new(&files);
    let copy = tempfile::tempdir().unwrap();
    for (p, t) in files {
        common::write(copy.path(), p, t);
    }
    let res = fx
        .edit(json!({"ops": [{"pat": "foo($$$A)", "out": "bar($$$A)"}], "paths": ["."]}))
        .await
        .unwrap();
    let diff = details(&res)["diff"].as_str().unwrap().to_owned();
    assert!(diff.contains("--- a/src/no_newline.ts\n+++ b/src/no_newline.ts\n"), "{diff}");
    assert!(diff.contains("\\ No newline at end of file"), "{diff}");
    let out = git_apply(copy.path(), &diff, true);
    assert!(out.status.success(), "git apply --check: {}", String::from_utf8_lossy(&out.stderr));
    let out = git_apply(copy.path(), &diff, false);
    assert!(out.status.success(), "git apply: {}", String::from_utf8_lossy(&out.stderr));
    let applied = fx.apply().await;
    assert!(!applied.is_error);
    for (p, _) in files {
        assert_eq!(fx.read(p), std::fs::read_to_string(copy.path().join(p)).unwrap(), "{p}");
    }
    // ast-grep's template re-indents a multi-line `$$$` capture; we keep its behaviour.
    assert_eq!(fx.read("src/multi.ts"), "function f() {\n  bar(1,\n  2,);\n}\n");
}

// --- Hunks built from the edits, against the whole-file Myers diff they replaced -------------

/// The diff as the engine made it before it built hunks from the edits: `similar`'s Myers diff
/// of the whole file before and after.
fn myers_diff(path: &str, original: &str, updated: &str) -> String {
    let diff = similar::TextDiff::from_lines(original, updated);
    let mut res = format!("diff --git a/{path} b/{path}\n");
    res.push_str(
        &diff
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{path}"), &format!("b/{path}"))
            .to_string(),
    );
    res
}

fn edit(original: &str, start: usize, end: usize, after: &str) -> Edit {
    Edit {
        byte_start: start,
        byte_end: end,
        before: original[start..end].to_owned(),
        after: after.to_owned(),
        start_line: 0,
        start_column: 0,
        end_line: 0,
        end_column: 0,
        replacements: 1,
    }
}

fn rewrite(original: &str, edits: &[Edit]) -> String {
    let mut res = String::new();
    let mut cursor = 0;
    for e in edits {
        res.push_str(&original[cursor..e.byte_start]);
        res.push_str(&e.after);
        cursor = e.byte_end;
    }
    res + &original[cursor..]
}

/// A strict `patch` for one file's unified diff: every context and removed line must be the
/// original's, byte for byte, and every hunk header must count its lines right.
fn patch(original: &str, diff: &str) -> Result<String, String> {
    let old: Vec<&str> = original.split_inclusive('\n').collect();
    let mut lines: Vec<&str> = diff.split_inclusive('\n').collect();
    lines.reverse();
    let mut res = String::new();
    let mut cursor = 0;
    let header =
        |l: &str| l.starts_with("diff --git ") || l.starts_with("--- ") || l.starts_with("+++ ");
    while let Some(line) = lines.pop() {
        if header(line) {
            continue;
        }
        let ranges = line
            .strip_prefix("@@ -")
            .and_then(|l| l.strip_suffix(" @@\n"))
            .ok_or_else(|| format!("not a hunk header: {line:?}"))?;
        let (old_range, new_range) = ranges.split_once(" +").ok_or("no new range")?;
        let parse = |r: &str| -> (usize, usize) {
            match r.split_once(',') {
                Some((s, n)) => (s.parse().unwrap(), n.parse().unwrap()),
                None => (r.parse().unwrap(), 1),
            }
        };
        let ((old_start, old_len), (_, new_len)) = (parse(old_range), parse(new_range));
        // `start,0` names the line before the (empty) range.
        let first = if old_len == 0 { old_start } else { old_start - 1 };
        if first < cursor || first > old.len() {
            return Err(format!("hunk at line {old_start} out of order"));
        }
        res.extend(old[cursor..first].iter().copied());
        cursor = first;
        let (mut seen_old, mut seen_new) = (0, 0);
        while seen_old < old_len || seen_new < new_len {
            let line = lines.pop().ok_or("hunk ends early")?;
            let mut body = line[1..].to_owned();
            if lines.last() == Some(&"\\ No newline at end of file\n") {
                lines.pop();
                body = body.strip_suffix('\n').ok_or("marker after a partial line")?.to_owned();
            } else if !body.ends_with('\n') {
                return Err(format!("line without ending or marker: {line:?}"));
            }
            match &line[..1] {
                " " | "-" => {
                    if old.get(cursor) != Some(&body.as_str()) {
                        return Err(format!(
                            "line {} is {:?}, not {body:?}",
                            cursor + 1,
                            old.get(cursor)
                        ));
                    }
                    cursor += 1;
                    seen_old += 1;
                    if &line[..1] == " " {
                        res.push_str(&body);
                        seen_new += 1;
                    }
                }
                "+" => {
                    res.push_str(&body);
                    seen_new += 1;
                }
                _ => return Err(format!("bad line {line:?}")),
            }
        }
        if seen_old != old_len || seen_new != new_len {
            return Err(format!("header {line:?} miscounts"));
        }
    }
    res.extend(old[cursor..].iter().copied());
    Ok(res)
}

/// Whether only one line diff of `old` and `new` is minimal: no line appears twice on either
/// side, and the lines both sides have are in the same order on both (they do not cross). Then
/// every correct minimal diff, the old Myers one included, keeps exactly those lines.
fn one_minimal_diff(old: &str, new: &str) -> bool {
    let old: Vec<&str> = old.split_inclusive('\n').collect();
    let new: Vec<&str> = new.split_inclusive('\n').collect();
    let at: std::collections::HashMap<&str, usize> =
        old.iter().enumerate().map(|(i, l)| (*l, i)).collect();
    let distinct = |lines: &[&str]| {
        lines.iter().collect::<std::collections::HashSet<_>>().len() == lines.len()
    };
    let kept: Vec<usize> = new.iter().filter_map(|l| at.get(l).copied()).collect();
    distinct(&old) && distinct(&new) && kept.windows(2).all(|w| w[0] < w[1])
}

/// Checks the diff of `edits` on `original`: it patches `original` into the rewritten text,
/// and wherever the old Myers diff was right and the only right one (a lone `\r`, which it
/// took for a line ending, makes it wrong; lines that repeat or cross make several diffs right)
/// it equals the old diff byte for byte.
fn check_diff(original: &str, edits: &[Edit]) -> Result<bool, TestCaseError> {
    let updated = rewrite(original, edits);
    let diff = file_diff("f.ts", original, edits).unwrap();
    prop_assert_eq!(
        patch(original, &diff).map_err(TestCaseError::fail)?,
        updated.clone(),
        "{}",
        diff
    );
    let lone_cr = |t: &str| t.replace("\r\n", "").contains('\r');
    let compared = one_minimal_diff(original, &updated) && !lone_cr(original) && !lone_cr(&updated);
    if compared {
        prop_assert_eq!(diff, myers_diff("f.ts", original, &updated));
    }
    Ok(compared)
}

/// A file of distinct lines (`o<i>:<words>:<i>`), or of lines drawn from a few (`a`, `}`, an
/// empty line), with LF or CRLF endings and with or without a final line ending.
fn file() -> impl Strategy<Value = String> {
    let distinct = (proptest::collection::vec("[a-zé ]{0,6}", 0..40), any::<bool>()).prop_map(
        |(words, crlf)| {
            let nl = if crlf { "\r\n" } else { "\n" };
            words.iter().enumerate().map(|(i, w)| format!("o{i}:{w}:{i}{nl}")).collect::<String>()
        },
    );
    let alike = (proptest::collection::vec(prop_oneof!["a", "}", "", "b b"], 0..30), any::<bool>())
        .prop_map(|(lines, crlf)| {
            let nl = if crlf { "\r\n" } else { "\n" };
            lines.iter().map(|l| format!("{l}{nl}")).collect::<String>()
        });
    (prop_oneof![3 => distinct, 1 => alike], any::<bool>()).prop_map(|(text, final_newline)| {
        if final_newline { text } else { text.trim_end_matches(['\n', '\r']).to_owned() }
    })
}

/// Random non-overlapping edits of `text`: ranges between character boundaries (never inside a
/// CRLF), empty (insertions) or not, replaced by upper-case words, line endings of the file's
/// kind, and copies of the lines they replace (so that some lines inside an edit stay).
fn edits_of(text: String) -> impl Strategy<Value = (String, Vec<Edit>)> {
    let bytes = text.as_bytes();
    let cuts: Vec<usize> = (0..=text.len())
        .filter(|&i| {
            text.is_char_boundary(i)
                && !(i > 0 && bytes[i - 1] == b'\r' && bytes.get(i) == Some(&b'\n'))
        })
        .collect();
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let token = prop_oneof![
        "[A-Z]{1,3}".prop_map(Some),
        Just(Some(nl.to_owned())),
        Just(None), // a copy of the replaced text
    ];
    let pieces = proptest::collection::vec(token, 0..4);
    (proptest::collection::vec((0..cuts.len(), 0..4usize, pieces), 0..7)).prop_map(move |picks| {
        let mut starts: Vec<(usize, usize, Vec<Option<String>>)> = picks
            .into_iter()
            .map(|(at, len, pieces)| (cuts[at], cuts[(at + len).min(cuts.len() - 1)], pieces))
            .collect();
        starts.sort_by_key(|(s, _, _)| *s);
        let mut edits: Vec<Edit> = Vec::new();
        for (start, end, pieces) in starts {
            if edits.last().is_some_and(|prev| start < prev.byte_end || start == prev.byte_start) {
                continue;
            }
            let after: String = pieces
                .into_iter()
                .map(|p| p.unwrap_or_else(|| text[start..end].to_owned()))
                .collect();
            edits.push(edit(&text, start, end, &after));
        }
        (text.clone(), edits)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn diff_from_edits_patches_and_equals_the_myers_diff((original, edits) in file().prop_flat_map(edits_of)) {
        check_diff(&original, &edits)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// `git apply --check` accepts the diff, and `git apply` makes the rewritten text.
    #[test]
    fn git_applies_the_diff_from_edits((original, edits) in file().prop_flat_map(edits_of)) {
        let updated = rewrite(&original, &edits);
        let diff = file_diff("f.ts", &original, &edits).unwrap();
        prop_assume!(diff.contains("\n@@ "));
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("f.ts"), &original).unwrap();
        let out = git_apply(&root, &diff, true);
        prop_assert!(out.status.success(), "{}\n{diff:?}", String::from_utf8_lossy(&out.stderr));
        let out = git_apply(&root, &diff, false);
        prop_assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        prop_assert_eq!(std::fs::read_to_string(root.join("f.ts")).unwrap(), updated);
    }
}

#[test]
fn a_lone_carriage_return_stays_inside_its_line() {
    // The old diff took `\r` for a line ending and wrote `-a\rb` as two lines run together.
    let original = "a\rb\nc\n";
    let edits = [edit(original, 2, 3, "B")];
    let diff = file_diff("f.ts", original, &edits).unwrap();
    assert_eq!(
        diff,
        "diff --git a/f.ts b/f.ts\n--- a/f.ts\n+++ b/f.ts\n@@ -1,2 +1,2 @@\n-a\rb\n+a\rB\n c\n"
    );
    assert_eq!(patch(original, &diff).unwrap(), "a\rB\nc\n");
}

#[test]
fn crlf_and_a_missing_final_line_ending_are_kept_byte_for_byte() {
    let original = "one\r\ntwo\r\nthree";
    let edits = [edit(original, 5, 8, "TWO"), edit(original, 15, 15, "!")];
    let diff = file_diff("f.ts", original, &edits).unwrap();
    assert_eq!(
        diff,
        "diff --git a/f.ts b/f.ts\n--- a/f.ts\n+++ b/f.ts\n@@ -1,3 +1,3 @@\n one\r\n-two\r\n-three\n\\ No newline at end of file\n+TWO\r\n+three!\n\\ No newline at end of file\n"
    );
}

#[test]
fn an_edit_that_changes_nothing_leaves_only_the_file_header() {
    // As the whole-file diff did: the file was touched (its edits count), but no line changed.
    let original = "foo(1);\n";
    let diff = file_diff("f.ts", original, &[edit(original, 0, 6, "foo(1)")]).unwrap();
    assert_eq!(diff, "diff --git a/f.ts b/f.ts\n");
}

#[test]
fn long_runs_of_changed_lines_are_diffed_block_by_block() {
    // 1,200 adjacent changed lines that become 1,372 are too many for one line diff: each block
    // is diffed on its own, and the result still patches the file; with no line moved between
    // blocks it is also the diff the whole-file Myers diff gives.
    let mut original = String::new();
    let mut edits = Vec::new();
    for i in 0..1_200 {
        let start = original.len();
        original.push_str(&format!("line {i};\n"));
        let after =
            if i % 7 == 0 { format!("line {i};\nadded {i};") } else { format!("LINE {i};") };
        edits.push((start, original.len() - 1, after));
    }
    let edits: Vec<Edit> =
        edits.iter().map(|(s, e, after)| edit(&original, *s, *e, after)).collect();
    let updated = rewrite(&original, &edits);
    let diff = file_diff("f.ts", &original, &edits).unwrap();
    assert_eq!(patch(&original, &diff).unwrap(), updated);
    assert_eq!(diff, myers_diff("f.ts", &original, &updated));
    assert!(diff.contains("\n@@ -1,1200 +1,1372 @@\n"), "one hunk");
}

#[test]
fn edits_out_of_bounds_or_out_of_order_are_refused() {
    let original = "héllo\n";
    let bad = |start: usize, end: usize| Edit {
        byte_start: start,
        byte_end: end,
        ..edit(original, 0, 0, "x")
    };
    for edits in [vec![bad(0, 99)], vec![bad(2, 2)], vec![bad(3, 1)], vec![bad(3, 5), bad(4, 6)]] {
        assert!(
            matches!(file_diff("f.ts", original, &edits), Err(AstEditError::EditOutOfBounds)),
            "{edits:?}"
        );
    }
}
