//! `staged patch` through the real binary: how patches find their place, what a unified diff
//! must hold, and which file kinds it refuses by design (issues 32 and 33).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    io::Write,
    path::Path,
    process::{Command, Output, Stdio},
};

use common::{code, json, pending_ids, read, staged, staged_bin, stderr, workspace};

/// Runs `staged` in `dir` with `args` and `input` on stdin.
fn staged_in(dir: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(staged_bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// The model-facing text of a tool call, from `--json`.
fn text(out: &Output) -> String {
    json(out)["text"].as_str().unwrap_or_default().to_owned()
}

fn apply(dir: &Path) -> Output {
    staged(dir, &["resolve", "apply", "--reason", "test"])
}

/// Issue 32, finding 8: a chunk of 2,000 lines that almost matches at each of 200,000 lines
/// (and matches only with Unicode dashes taken as ASCII, the last way of comparing) was
/// compared at every line in every way: minutes. Now each way numbers the lines once and
/// steps over each once. Measured with the debug binary on this input (`staged patch
/// patch.txt` in a workspace holding big.txt), on a loaded 2-core machine: before, not done
/// after 15 minutes (2 min 27 s of CPU); after, 1.06 s (0.22 s of CPU).
#[test]
fn a_long_chunk_that_almost_matches_everywhere_is_placed_in_linear_time() {
    let mut text = "x-\n".repeat(199_999);
    text.push_str("y-\n");
    let ws = workspace(&[("big.txt", &text)]);
    let dir = ws.path();
    let mut patch = String::from("*** Begin Patch\n*** Update File: big.txt\n@@\n");
    patch.push_str(&"-x\u{2013}\n".repeat(1_999));
    patch.push_str("-y\u{2013}\n+done\n*** End Patch\n");
    let out = staged_in(dir, &["--json", "patch"], patch.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&apply(dir)), 0);
    let mut want = "x-\n".repeat(198_000);
    want.push_str("done\n");
    assert_eq!(read(dir, "big.txt"), want);
    assert!(pending_ids(dir).is_empty());
}

/// Issue 32, finding 13: a hunk whose body goes on past what its `@@` header counts was
/// applied in part, silently (`git apply` refuses it); one that stops short is refused too.
/// The error says which hunk and what was counted, and nothing is staged.
#[test]
fn a_hunk_whose_body_does_not_match_its_header_is_refused_by_name() {
    let ws = workspace(&[("f.txt", "a\nb\nc\nd\ne\n")]);
    let dir = ws.path();
    let under = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n c\n-d\n+D\n";
    let out = staged_in(dir, &["--json", "patch"], under.as_bytes());
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(
        text(&out),
        "invalid patch: line 3: hunk 1 of f.txt ('@@ -1,2 +1,2 @@') counts 2 old and 2 new lines, but its body goes on to line 9 and has 4 old and 4 new lines; fix the counts in its `@@` header (or make the diff again)"
    );
    let over = "--- a/f.txt\n+++ b/f.txt\n@@ -1,4 +1,4 @@\n a\n-b\n+B\n c\n";
    let out = staged_in(dir, &["--json", "patch"], over.as_bytes());
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(
        text(&out),
        "invalid patch: line 3: hunk 1 of f.txt ('@@ -1,4 +1,4 @@') counts 4 old and 4 new lines, but its body ends at line 7 with 3 old and 3 new lines; fix the counts in its `@@` header (or make the diff again)"
    );
    assert!(pending_ids(dir).is_empty());
    assert_eq!(read(dir, "f.txt"), "a\nb\nc\nd\ne\n");
    // Counted right, it applies.
    let right = "--- a/f.txt\n+++ b/f.txt\n@@ -1,4 +1,4 @@\n a\n-b\n+B\n c\n-d\n+D\n";
    assert_eq!(code(&staged_in(dir, &["patch"], right.as_bytes())), 0);
    assert_eq!(code(&apply(dir)), 0);
    assert_eq!(read(dir, "f.txt"), "a\nB\nc\nD\ne\n");
}

/// Issue 32 finding 17 and issue 33 findings 1, 2 and 11: a git patch that adds, deletes,
/// changes or renames a symlink (mode 120000) or a submodule (mode 160000) made a regular
/// file of it, or deleted the link's target. staged does not stage them, by design: each is
/// refused, naming the file and saying why, and nothing is staged or written.
#[test]
fn symlinks_and_submodules_are_refused_by_design_naming_the_file() {
    let ws = workspace(&[("target.txt", "target.txt")]);
    let dir = ws.path();
    std::os::unix::fs::symlink("target.txt", dir.join("link")).unwrap();
    let cases = [
        (
            "diff --git a/new-link b/new-link\nnew file mode 120000\nindex 0000000..1de5659\n--- /dev/null\n+++ b/new-link\n@@ -0,0 +1 @@\n+target.txt\n\\ No newline at end of file\n",
            "line 2: new-link is a symbolic link (`new file mode 120000`): staged does not stage symlinks, only regular text files; make this change to the link yourself (ln -s, rm)",
        ),
        (
            "diff --git a/link b/link\ndeleted file mode 120000\nindex 1de5659..0000000\n--- a/link\n+++ /dev/null\n@@ -1 +0,0 @@\n-target.txt\n\\ No newline at end of file\n",
            "line 2: link is a symbolic link (`deleted file mode 120000`): staged does not stage symlinks, only regular text files; make this change to the link yourself (ln -s, rm)",
        ),
        (
            "diff --git a/link b/link\nindex 1de5659..2b2a9d4 120000\n--- a/link\n+++ b/link\n@@ -1 +1 @@\n-target.txt\n\\ No newline at end of file\n+other.txt\n\\ No newline at end of file\n",
            "line 2: link is a symbolic link (`index 1de5659..2b2a9d4 120000`): staged does not stage symlinks, only regular text files; make this change to the link yourself (ln -s, rm)",
        ),
        (
            "diff --git a/vendor/lib b/vendor/lib\nnew file mode 160000\nindex 0000000..4b825dc\n--- /dev/null\n+++ b/vendor/lib\n@@ -0,0 +1 @@\n+Subproject commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n",
            "line 2: vendor/lib is a submodule (`new file mode 160000`): staged does not stage submodules, only regular text files; make this change with git (git submodule)",
        ),
        (
            "diff --git a/vendor/lib b/vendor/lib\ndeleted file mode 160000\nindex 4b825dc..0000000\n--- a/vendor/lib\n+++ /dev/null\n@@ -1 +0,0 @@\n-Subproject commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n",
            "line 2: vendor/lib is a submodule (`deleted file mode 160000`): staged does not stage submodules, only regular text files; make this change with git (git submodule)",
        ),
        // A rename of a link has no mode line: the link on disk says it.
        (
            "diff --git a/link b/moved-link\nsimilarity index 100%\nrename from link\nrename to moved-link\n",
            "link is a symbolic link: staged does not stage symlinks, only regular text files; move the link yourself (rm, mv)",
        ),
        // Codex's format names no mode either.
        (
            "*** Begin Patch\n*** Delete File: link\n*** End Patch\n",
            "link is a symbolic link: staged does not stage symlinks, only regular text files; delete the link yourself (rm, mv)",
        ),
    ];
    for (patch, want) in cases {
        let out = staged_in(dir, &["--json", "patch"], patch.as_bytes());
        assert_eq!(code(&out), 2, "{patch}\n{}", stderr(&out));
        assert_eq!(text(&out), want, "{patch}");
    }
    assert!(pending_ids(dir).is_empty());
    assert_eq!(read(dir, "target.txt"), "target.txt");
    assert_eq!(std::fs::read_link(dir.join("link")).unwrap(), Path::new("target.txt"));
    let names: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 3, "{names:?}"); // .git, target.txt, link
}

/// Issue 33 finding 3: a last line ending in `\r` with no `\n` (`+x\r` then `\ No newline at
/// end of file`) lost its `\r`; git writes `x\r`. The `\r` is the line's text, as old, new
/// and context lines, and in a deleted file's lines.
#[test]
fn a_carriage_return_before_no_newline_at_end_of_file_is_kept() {
    let ws = workspace(&[("a.txt", "a\nb\n"), ("b.txt", "one\nlast\r"), ("c.txt", "gone\r")]);
    let dir = ws.path();
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+x\r\n\\ No newline at end of file\n--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n last\r\n\\ No newline at end of file\n--- a/c.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\r\n\\ No newline at end of file\n--- /dev/null\n+++ b/d.txt\n@@ -0,0 +1 @@\n+new\r\n\\ No newline at end of file\n";
    let out = staged_in(dir, &["patch"], patch.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&apply(dir)), 0);
    assert_eq!(read(dir, "a.txt"), "a\nx\r");
    assert_eq!(read(dir, "b.txt"), "ONE\nlast\r");
    assert!(!dir.join("c.txt").exists());
    assert_eq!(read(dir, "d.txt"), "new\r");
    // The old side's `\r` is matched too.
    let patch =
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n a\n-x\r\n\\ No newline at end of file\n+y\n";
    assert_eq!(code(&staged_in(dir, &["patch"], patch.as_bytes())), 0);
    assert_eq!(code(&apply(dir)), 0);
    assert_eq!(read(dir, "a.txt"), "a\ny\n");
}

/// Issue 33 findings 4 and 8: GNU `diff -N` dates a side that is not there at the epoch
/// instead of naming `/dev/null`. A deletion (`+++ b/old.txt<TAB>1970-01-01 ...`, `@@ -1 +0,0
/// @@`) left an empty file; a new file (`--- a/new.txt<TAB>1970-01-01 ...`) got "it does not
/// exist". The epoch in any zone counts; another time is a change as before.
#[test]
fn gnu_diff_n_epoch_sides_create_and_delete() {
    let ws = workspace(&[("old.txt", "bye\n"), ("keep.txt", "\n")]);
    let dir = ws.path();
    let patch = "diff -uN a/old.txt b/old.txt\n--- a/old.txt\t2024-05-01 10:00:00.000000000 +0200\n+++ b/old.txt\t1970-01-01 00:00:00.000000000 +0000\n@@ -1 +0,0 @@\n-bye\ndiff -uN a/new.txt b/new.txt\n--- a/new.txt\t1969-12-31 16:00:00.000000000 -0800\n+++ b/new.txt\t2024-05-01 10:00:00.000000000 +0200\n@@ -0,0 +1,2 @@\n+hello\n+there\n--- a/keep.txt\t1970-01-01 00:00:00.000000001 +0000\n+++ b/keep.txt\t2024-05-01 10:00:00.000000000 +0200\n@@ -1 +1 @@\n-\n+kept\n";
    let out = staged_in(dir, &["--json", "patch"], patch.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json(&out)["pending"]["label"], "Patch: 3 files (1 added, 1 deleted, 1 updated)");
    assert_eq!(code(&apply(dir)), 0);
    assert!(!dir.join("old.txt").exists());
    assert_eq!(read(dir, "new.txt"), "hello\nthere\n");
    assert_eq!(read(dir, "keep.txt"), "kept\n");
}

/// Issue 33 finding 9: `diff -ruN old new` names `old/f.txt` and `new/f.txt`; only `a/` and
/// `b/` were dropped, so `old/f.txt` was looked for. Two names that differ only in their first
/// folder lose it, as with `git apply` and `patch -p1`; a `diff --git` line without prefixes
/// is read as it is (`--no-prefix`).
#[test]
fn diff_ru_n_folders_are_dropped_when_only_they_differ() {
    let ws = workspace(&[("src/f.txt", "one\n"), ("src/gone.txt", "x\n")]);
    let dir = ws.path();
    let patch = "diff -ruN old/src/f.txt new/src/f.txt\n--- old/src/f.txt\t2024-05-01 10:00:00.000000000 +0000\n+++ new/src/f.txt\t2024-05-01 10:00:01.000000000 +0000\n@@ -1 +1 @@\n-one\n+two\ndiff -ruN old/src/gone.txt new/src/gone.txt\n--- old/src/gone.txt\t2024-05-01 10:00:00.000000000 +0000\n+++ new/src/gone.txt\t1970-01-01 00:00:00.000000000 +0000\n@@ -1 +0,0 @@\n-x\ndiff -ruN old/src/new.txt new/src/new.txt\n--- old/src/new.txt\t1970-01-01 00:00:00.000000000 +0000\n+++ new/src/new.txt\t2024-05-01 10:00:00.000000000 +0000\n@@ -0,0 +1 @@\n+made\n";
    let out = staged_in(dir, &["patch"], patch.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&apply(dir)), 0);
    assert_eq!(read(dir, "src/f.txt"), "two\n");
    assert!(!dir.join("src/gone.txt").exists());
    assert_eq!(read(dir, "src/new.txt"), "made\n");
    // `--no-prefix`: the names are the paths.
    let patch = "diff --git src/f.txt src/f.txt\nindex 1..2 100644\n--- src/f.txt\n+++ src/f.txt\n@@ -1 +1 @@\n-two\n+three\n";
    assert_eq!(code(&staged_in(dir, &["patch"], patch.as_bytes())), 0);
    assert_eq!(code(&apply(dir)), 0);
    assert_eq!(read(dir, "src/f.txt"), "three\n");
}

/// Issue 33 finding 5: GNU diff's `Binary files a/x and b/x differ` was skipped and the rest
/// applied; alone, it got "The first line of the patch must be '*** Begin Patch'". Both are
/// refused, naming the file and why.
#[test]
fn a_gnu_binary_files_line_is_refused_naming_the_file() {
    let ws = workspace(&[("f.txt", "one\n")]);
    let dir = ws.path();
    let with_text = "diff -ruN old/f.txt new/f.txt\n--- old/f.txt\t2024-05-01 10:00:00.000000000 +0000\n+++ new/f.txt\t2024-05-01 10:00:01.000000000 +0000\n@@ -1 +1 @@\n-one\n+two\nBinary files old/img.png and new/img.png differ\n";
    let out = staged_in(dir, &["--json", "patch"], with_text.as_bytes());
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(
        text(&out),
        "line 7: img.png is a binary file (`Binary files old/img.png and new/img.png differ`): the diff does not hold its bytes, and staged previews changes to text files only"
    );
    let alone = "Binary files a/x.bin and b/x.bin differ\n";
    let out = staged_in(dir, &["--json", "patch"], alone.as_bytes());
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(
        text(&out),
        "line 1: x.bin is a binary file (`Binary files a/x.bin and b/x.bin differ`): the diff does not hold its bytes, and staged previews changes to text files only"
    );
    assert!(pending_ids(dir).is_empty());
    assert_eq!(read(dir, "f.txt"), "one\n");
}

/// Issue 33 finding 9: `staged patch -p N` drops N leading folders from a unified diff's
/// paths, as `git apply -p N` (and `patch -pN`).
#[test]
fn p_n_drops_that_many_leading_folders() {
    let ws = workspace(&[("f.txt", "one\n"), ("a/f.txt", "nested\n")]);
    let dir = ws.path();
    let deep = "--- x/y/f.txt\n+++ x/y/f.txt\n@@ -1 +1 @@\n-one\n+two\n";
    let out = staged_in(dir, &["patch", "-p", "2"], deep.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&apply(dir)), 0);
    assert_eq!(read(dir, "f.txt"), "two\n");
    // -p 0: `a/f.txt` is the path.
    let zero =
        "diff --git a/f.txt a/f.txt\n--- a/f.txt\n+++ a/f.txt\n@@ -1 +1 @@\n-nested\n+NESTED\n";
    let out = staged_in(dir, &["patch", "-p", "0"], zero.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&apply(dir)), 0);
    assert_eq!(read(dir, "a/f.txt"), "NESTED\n");
    assert_eq!(read(dir, "f.txt"), "two\n");
    let out = staged_in(dir, &["--json", "patch", "-p", "3"], deep.as_bytes());
    assert_eq!(code(&out), 2);
    assert_eq!(
        text(&out),
        "invalid patch: line 1: -p 3 drops 3 folders, but 'x/y/f.txt' has fewer"
    );
    let codex = "*** Begin Patch\n*** Delete File: f.txt\n*** End Patch\n";
    let out = staged_in(dir, &["--json", "patch", "-p", "1"], codex.as_bytes());
    assert_eq!(code(&out), 2);
    assert_eq!(
        text(&out),
        "-p 1 drops folders from a unified diff's paths, but this is not a unified diff (no `---`/`+++` file headers were found)"
    );
    assert!(pending_ids(dir).is_empty());
}

/// Issue 33 finding 7: a `--no-prefix` rename (`diff --git old.txt new.txt`) got "cannot
/// read the file names": its `rename from`/`rename to` lines say them.
#[test]
fn a_no_prefix_rename_applies() {
    let ws = workspace(&[("old.txt", "a\nb\n"), ("src/one.txt", "x\n")]);
    let dir = ws.path();
    let patch = "diff --git old.txt new.txt\nsimilarity index 100%\nrename from old.txt\nrename to new.txt\ndiff --git src/one.txt lib/two.txt\nsimilarity index 50%\nrename from src/one.txt\nrename to lib/two.txt\nindex 1..2 100644\n--- src/one.txt\n+++ lib/two.txt\n@@ -1 +1 @@\n-x\n+y\n";
    let out = staged_in(dir, &["--json", "patch"], patch.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json(&out)["pending"]["label"], "Patch: 2 files (2 moved)");
    assert_eq!(code(&apply(dir)), 0);
    assert_eq!(read(dir, "new.txt"), "a\nb\n");
    assert_eq!(read(dir, "lib/two.txt"), "y\n");
    assert!(!dir.join("old.txt").exists() && !dir.join("src/one.txt").exists());
}

/// Issue 33 finding 6: a patch saved with CRLF endings, applied to LF files, mixed endings
/// (`a\nc\n` with `-a\r\n`, `+b\r\n`, ` c\r\n` gave `b\r\nc\n`). staged refuses it there, as
/// `git apply` does, naming the file and why; on a file whose lines all end with CRLF it
/// applies as the bytes say.
#[test]
fn a_crlf_saved_patch_is_refused_on_lf_files_and_never_mixes_endings() {
    let ws = workspace(&[("lf.txt", "a\nc\n"), ("crlf.txt", "a\r\nc\r\n")]);
    let dir = ws.path();
    let patch = |path: &str| {
        format!("--- a/{path}\r\n+++ b/{path}\r\n@@ -1,2 +1,2 @@\r\n-a\r\n+b\r\n c\r\n")
    };
    let out = staged_in(dir, &["--json", "patch"], patch("lf.txt").as_bytes());
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(
        text(&out),
        "lf.txt's lines end with LF, but the patch's end with CRLF (it was saved with Windows line endings): applying it would mix line endings in lf.txt. Convert the patch to LF (dos2unix) and apply it again"
    );
    assert!(pending_ids(dir).is_empty());
    assert_eq!(read(dir, "lf.txt"), "a\nc\n");
    let out = staged_in(dir, &["patch"], patch("crlf.txt").as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&apply(dir)), 0);
    assert_eq!(read(dir, "crlf.txt"), "b\r\nc\r\n");
}

/// The folder of data shared beside the checkout: `STAGED_SHARED_DIR`, else `shared/` next to
/// the repository's root (CI lays it there). Missing, the test fails: it never skips.
fn shared_dir() -> std::path::PathBuf {
    let dir = std::env::var_os("STAGED_SHARED_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        std::path::PathBuf::from,
    );
    assert!(
        dir.is_dir(),
        "the shared data folder {} is missing: lay `shared/` beside the checkout, or set STAGED_SHARED_DIR",
        dir.display()
    );
    dir
}

/// Every file under `dir` but `.git` and `.staged`, with its text.
fn files(dir: &Path) -> std::collections::BTreeMap<String, String> {
    let mut res = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if rel == ".git" || rel == ".staged" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                res.insert(rel, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    res
}

/// Issue 33: Codex's own apply-patch scenarios (read at test time from
/// `shared/patch_history/codex/scenarios.json`; they are Codex's fixtures, never copied here)
/// through `staged patch` and `resolve apply`: each gives Codex's files, or is refused
/// naming what the scenario names. 015 differs by contract: staged is all-or-nothing, so it
/// writes nothing and names the missing file. 024 (a lone `\r` ends a line in Codex's
/// format) is Codex's rule since issue 33.
#[test]
fn codex_apply_patch_scenarios_give_codex_files() {
    let path = shared_dir().join("patch_history/codex/scenarios.json");
    let data: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let scenarios = data["scenarios"].as_array().unwrap();
    assert!(scenarios.len() >= 26, "{} scenarios", scenarios.len());
    let as_files = |v: &serde_json::Value| -> std::collections::BTreeMap<String, String> {
        v.as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
            .collect()
    };
    let mut wrong = Vec::new();
    for scenario in scenarios {
        let name = scenario["name"].as_str().unwrap();
        let input = as_files(&scenario["input"]);
        let inputs: Vec<(&str, &str)> =
            input.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let ws = workspace(&inputs);
        let dir = ws.path();
        let out =
            staged_in(dir, &["--json", "patch"], scenario["patch"].as_str().unwrap().as_bytes());
        let staged_ok = code(&out) == 0 && code(&apply(dir)) == 0;
        let got = files(dir);
        match scenario["expect"].as_str().unwrap() {
            "expected" => {
                if !staged_ok || got != as_files(&scenario["expected"]) {
                    wrong.push(format!("{name}: {got:?} ({})", text(&out)));
                }
            }
            _ => {
                // Refused (by Codex, or by staged's all-or-nothing contract): nothing written,
                // and the error names what the scenario says.
                let said = text(&out);
                let words: Vec<&str> = scenario["refusal_words"]
                    .as_array()
                    .map(|w| w.iter().filter_map(|w| w.as_str()).collect())
                    .unwrap_or_default();
                if staged_ok || got != input || !words.iter().all(|w| said.contains(w)) {
                    wrong.push(format!("{name}: refusal expected, got {got:?} ({said})"));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} scenarios differ:\n{}",
        wrong.len(),
        scenarios.len(),
        wrong.join("\n")
    );
}

/// Runs git in `dir`, failing the test when it fails; its stdout.
fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.autocrlf=false"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// Issue 33: `staged patch -R` reverses a diff, as `git apply -R`: `git show <commit> |
/// staged patch -R` stages the preview that undoes the commit (edits, a new file, a deleted
/// one, a rename, a last line without a newline).
#[test]
fn reverse_stages_the_undoing_of_a_commit() {
    let ws = workspace(&[]);
    let dir = ws.path();
    std::fs::remove_dir(dir.join(".git")).unwrap();
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(dir.join("gone.txt"), "bye\n").unwrap();
    std::fs::write(dir.join("old.txt"), "moving\nalong\nquietly\n").unwrap();
    std::fs::write(dir.join("tail.txt"), "x\nlast").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "base"]);
    let before = files(dir);
    std::fs::write(dir.join("a.txt"), "one\nTWO\nthree\nfour\n").unwrap();
    std::fs::remove_file(dir.join("gone.txt")).unwrap();
    std::fs::write(dir.join("new.txt"), "fresh\n").unwrap();
    std::fs::remove_file(dir.join("old.txt")).unwrap();
    std::fs::write(dir.join("moved.txt"), "moving\nalong\nquietly\nand on\n").unwrap();
    std::fs::write(dir.join("tail.txt"), "x\nlast line").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "change"]);
    let show = git(dir, &["show", "-M", "HEAD"]);
    let out = staged_in(dir, &["--json", "patch", "-R"], &show);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        json(&out)["pending"]["label"],
        "Patch: 5 files (1 added, 1 deleted, 2 updated, 1 moved)"
    );
    assert_eq!(code(&apply(dir)), 0);
    assert_eq!(files(dir), before);
    // Reversed twice is the commit again.
    let out = staged_in(dir, &["patch"], &show);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // A Codex patch has no reverse.
    let codex = "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n";
    let out = staged_in(dir, &["--json", "patch", "-R"], codex.as_bytes());
    assert_eq!(code(&out), 2);
    assert_eq!(
        text(&out),
        "-R reverses a unified diff, but this is not a unified diff (no `---`/`+++` file headers were found)"
    );
}

/// Every file under `dir` but `.git` and `.staged`, with its bytes.
fn file_bytes(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut res = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if rel == ".git" || rel == ".staged" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                res.insert(rel, format!("-> {}", target.display()).into_bytes());
            } else {
                res.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    res
}

/// The files under `dir` (but `.git` and `.staged`) that their owner may execute.
fn executables(dir: &Path) -> std::collections::BTreeSet<String> {
    use std::os::unix::fs::PermissionsExt;
    file_bytes(dir)
        .into_keys()
        .filter(|rel| {
            std::fs::symlink_metadata(dir.join(rel))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o100 != 0)
        })
        .collect()
}

/// `commit`'s version of `paths` (those it has) written under `dir`.
fn extract(repo: &Path, commit: &str, paths: &[String], dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let mut args = vec!["ls-tree", "-r", "-z", "--name-only", commit, "--"];
    args.extend(paths.iter().map(String::as_str));
    let listed = git(repo, &args);
    let present: Vec<&str> = listed
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| std::str::from_utf8(p).unwrap())
        .collect();
    if present.is_empty() {
        return;
    }
    let mut args = vec!["archive", "--format=tar", commit, "--"];
    args.extend(present.iter().copied());
    let tar = git(repo, &args);
    let mut child =
        Command::new("tar").args(["-x", "-C"]).arg(dir).stdin(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(&tar).unwrap();
    assert!(child.wait().unwrap().success());
}

/// A copy of `from` (files and folders) at `to`.
fn copy_tree(from: &Path, to: &Path) {
    let status = Command::new("cp").arg("-a").arg(from).arg(to).status().unwrap();
    assert!(status.success());
}

/// Issue 33's differential: the repository's own last 200 commits (without merges), each
/// as `git diff -M`, `git diff -M --no-prefix`, `git format-patch`, `git diff -M -U0` and
/// GNU `diff -ruN old new`, applied with `staged patch` and `resolve apply` to the parent's
/// version of the files the commit touches, and compared byte for byte with the commit's,
/// and with what `git apply` makes of the same diff in the same run. No apply may be wrong,
/// and every refusal must say why (binary files, symlinks, submodules, modes, non-UTF-8
/// text: refusals by design). The executable bits are compared too, but for GNU `diff -ruN`,
/// which does not carry modes.
#[test]
fn the_repositorys_own_history_applies_as_the_commits_wrote_it() {
    // Other repositories' history too, by hand (not in CI): `STAGED_PATCH_HISTORY` lists git
    // folders (a bare clone will do), `:`-separated, and `STAGED_PATCH_HISTORY_COMMITS` how
    // many of each one's last commits to take (200).
    let own = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let repos: Vec<std::path::PathBuf> = match std::env::var_os("STAGED_PATCH_HISTORY") {
        Some(list) => std::env::split_paths(&list).collect(),
        None => vec![own],
    };
    let n: usize = std::env::var("STAGED_PATCH_HISTORY_COMMITS")
        .map_or(200, |n| n.parse().expect("STAGED_PATCH_HISTORY_COMMITS is a number"));
    let wrong: Vec<String> =
        repos.iter().flat_map(|repo| history_applies_as_the_commits_wrote_it(repo, n)).collect();
    assert!(wrong.is_empty(), "{} runs wrong:\n{}", wrong.len(), wrong.join("\n"));
}

/// The differential on `repo`'s last `n` commits (see above): the runs that went wrong.
#[allow(clippy::print_stderr, reason = "the counts, for whoever runs it by hand")]
fn history_applies_as_the_commits_wrote_it(repo: &Path, n: usize) -> Vec<String> {
    let repo = repo.to_path_buf();
    let last = format!("-{n}");
    let log =
        String::from_utf8(git(&repo, &["log", "--no-merges", &last, "--format=%H %P"])).unwrap();
    let commits: Vec<(String, String)> = log
        .lines()
        .filter_map(|l| {
            let mut parts = l.split(' ');
            Some((parts.next()?.to_owned(), parts.next().filter(|p| !p.is_empty())?.to_owned()))
        })
        .collect();
    assert!(!commits.is_empty(), "no history to compare");
    let reasons = ["binary", "symbolic link", "submodule", "mode", "UTF-8"];
    let forms = ["diff -M", "--no-prefix", "format-patch", "-U0", "diff -ruN"];
    let results = std::sync::Mutex::new((0usize, 0usize, Vec::<String>::new()));
    // The peer on the same diffs: git apply's exact, failed and wrong applies.
    let peer = std::sync::Mutex::new((0usize, 0usize, 0usize));
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((commit, parent)) = commits.get(k) else { break };
                    let tmp = tempfile::tempdir().unwrap();
                    let changed = git(
                        &repo,
                        &["diff", "--no-renames", "--name-only", "-z", parent, commit],
                    );
                    let paths: Vec<String> = changed
                        .split(|b| *b == 0)
                        .filter(|p| !p.is_empty())
                        .map(|p| String::from_utf8(p.to_vec()).unwrap())
                        .collect();
                    if paths.is_empty() {
                        continue;
                    }
                    let (old, new) = (tmp.path().join("old"), tmp.path().join("new"));
                    extract(&repo, parent, &paths, &old);
                    extract(&repo, commit, &paths, &new);
                    let want = file_bytes(&new);
                    let want_exec = executables(&new);
                    for form in forms {
                        let patch = match form {
                            "diff -M" => git(&repo, &["diff", "-M", parent, commit]),
                            "--no-prefix" => {
                                git(&repo, &["diff", "-M", "--no-prefix", parent, commit])
                            }
                            "format-patch" => {
                                git(&repo, &["format-patch", "-1", "--stdout", commit])
                            }
                            "-U0" => git(&repo, &["diff", "-M", "-U0", parent, commit]),
                            _ => {
                                Command::new("diff")
                                    .args(["-ruN", "old", "new"])
                                    .current_dir(tmp.path())
                                    .output()
                                    .unwrap()
                                    .stdout
                            }
                        };
                        let ws = tmp.path().join(format!("ws-{}", form.replace(' ', "")));
                        copy_tree(&old, &ws);
                        std::fs::create_dir_all(ws.join(".git")).unwrap();
                        let by_git = tmp.path().join(format!("git-{}", form.replace(' ', "")));
                        copy_tree(&old, &by_git);
                        let mut git_args = vec!["apply"];
                        if form == "-U0" {
                            git_args.push("--unidiff-zero");
                        }
                        let mut child = Command::new("git")
                            .args(&git_args)
                            .current_dir(&by_git)
                            .stdin(Stdio::piped())
                            .stdout(Stdio::null())
                            .stderr(Stdio::null())
                            .spawn()
                            .unwrap();
                        child.stdin.take().unwrap().write_all(&patch).unwrap();
                        let git_ok = child.wait().unwrap().success();
                        let by_git_files = file_bytes(&by_git);
                        let git_right = git_ok
                            && (by_git_files == want
                                || (form == "diff -ruN"
                                    && by_git_files
                                        .iter()
                                        .filter(|(_, v)| !v.is_empty())
                                        .eq(want.iter().filter(|(_, v)| !v.is_empty()))));
                        {
                            let mut peer = peer.lock().unwrap();
                            match (git_ok, git_right) {
                                (_, true) => peer.0 += 1,
                                (false, _) => peer.1 += 1,
                                (true, false) => peer.2 += 1,
                            }
                        }
                        let out = staged_in(&ws, &["--json", "patch"], &patch);
                        let what = format!("{commit} as {form}");
                        let mut res = results.lock().unwrap();
                        res.0 += 1;
                        if code(&out) != 0 {
                            let said = if out.stdout.is_empty() {
                                stderr(&out)
                            } else {
                                text(&out)
                            };
                            if reasons.iter().any(|r| said.contains(r)) {
                                res.1 += 1;
                            } else {
                                res.2.push(format!(
                                    "{what}: refused without a reason by design (git apply {}): {said}",
                                    if git_right { "applies it" } else { "fails too" }
                                ));
                            }
                            continue;
                        }
                        drop(res);
                        let applied = apply(&ws);
                        let mut got = file_bytes(&ws);
                        let mut want = want.clone();
                        if form == "diff -ruN" {
                            // GNU diff -N cannot say that an empty file is made or deleted
                            // (absent reads as empty): such files are not in its diff.
                            let blind = |a: &std::collections::BTreeMap<String, Vec<u8>>,
                                         b: &std::collections::BTreeMap<String, Vec<u8>>| {
                                a.iter()
                                    .filter(|(k, v)| v.is_empty() && !b.contains_key(*k))
                                    .map(|(k, _)| k.clone())
                                    .collect::<Vec<_>>()
                            };
                            for key in blind(&want, &got).into_iter().chain(blind(&got, &want)) {
                                want.remove(&key);
                                got.remove(&key);
                            }
                        }
                        let mut res = results.lock().unwrap();
                        if code(&applied) != 0 {
                            res.2.push(format!("{what}: staged, then not applied: {}", stderr(&applied)));
                        } else if form != "diff -ruN" && executables(&ws) != want_exec {
                            res.2.push(format!(
                                "{what}: WRONG modes: executables {:?}, the commit's {want_exec:?}",
                                executables(&ws)
                            ));
                        } else if got != want {
                            let differ: Vec<&String> = want
                                .keys()
                                .chain(got.keys())
                                .filter(|k| want.get(*k) != got.get(*k))
                                .collect();
                            res.2.push(format!(
                                "{what}: WRONG: {differ:?} differ from the commit (git apply {})",
                                if git_right { "gets them right" } else { "does not either" }
                            ));
                        }
                    }
                }
            });
        }
    });
    let (runs, refused, wrong) = results.into_inner().unwrap();
    let (git_exact, git_failed, git_wrong) = peer.into_inner().unwrap();
    eprintln!(
        "{}: {} commits, {runs} runs: {} applied as the commit wrote them, {refused} refused by design, {} wrong; git apply: {git_exact} exact, {git_failed} failed, {git_wrong} wrong",
        repo.display(),
        commits.len(),
        runs - refused - wrong.len(),
        wrong.len()
    );
    assert!(runs >= forms.len() * commits.len() / 2, "{}: {runs} runs", repo.display());
    wrong
}

/// Issue 33: the modes a git diff gives are set. A new file with `new file mode 100755` is
/// created executable (0777 less the umask), `old mode`/`new mode` between 100644 and 100755
/// sets or clears the executable bits (with or without a rename and edits), in the apply's
/// one commit; the preview and the log show the mode lines, and the summaries say them;
/// `staged undo` puts back the old modes exactly, and `-R` reverses them. A mode staged
/// cannot represent is refused naming why (symlinks and submodules: see above).
#[test]
fn modes_a_diff_gives_are_set_shown_logged_and_undone() {
    use std::os::unix::fs::PermissionsExt;
    let mode_of = |dir: &Path, path: &str| {
        std::fs::metadata(dir.join(path)).unwrap().permissions().mode() & 0o777
    };
    let ws = workspace(&[]);
    let dir = ws.path();
    std::fs::remove_dir(dir.join(".git")).unwrap();
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("a.sh"), "echo a\n").unwrap();
    std::fs::write(dir.join("b.sh"), "echo b\n").unwrap();
    std::fs::set_permissions(dir.join("b.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("mv.sh"), "x\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "base"]);
    let before: Vec<u32> = ["a.sh", "b.sh", "mv.sh"].iter().map(|p| mode_of(dir, p)).collect();
    assert_eq!(before, [0o644, 0o755, 0o644]);
    std::fs::set_permissions(dir.join("a.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(dir.join("b.sh"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(dir.join("new.sh"), "echo new\n").unwrap();
    std::fs::set_permissions(dir.join("new.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    git(dir, &["mv", "mv.sh", "moved.sh"]);
    std::fs::write(dir.join("moved.sh"), "x\ny\n").unwrap();
    std::fs::set_permissions(dir.join("moved.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "modes"]);
    let after = file_bytes(dir);
    let show = git(dir, &["show", "-M", "HEAD"]);
    git(dir, &["checkout", "-q", "HEAD~1"]);
    assert_eq!(mode_of(dir, "a.sh"), 0o644);

    let out = staged_in(dir, &["--json", "patch"], &show);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let details = &json(&out)["details"];
    let summaries: Vec<&str> = details["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["summary"].as_str().unwrap())
        .collect();
    assert_eq!(
        summaries,
        [
            "mode 100644 → 100755",
            "mode 100755 → 100644",
            "moved from mv.sh, +2 -1, mode 100644 → 100755",
            "new file, 1 line, mode 100755"
        ]
    );
    let shown = details["diff"].as_str().unwrap();
    let want_diff = "diff --git a/a.sh b/a.sh\nold mode 100644\nnew mode 100755\ndiff --git a/b.sh b/b.sh\nold mode 100755\nnew mode 100644\ndiff --git a/mv.sh b/moved.sh\nold mode 100644\nnew mode 100755\nrename from mv.sh\nrename to moved.sh\n--- a/mv.sh\n+++ b/moved.sh\n@@ -1 +1,2 @@\n x\n+y\ndiff --git a/new.sh b/new.sh\nnew file mode 100755\n--- /dev/null\n+++ b/new.sh\n@@ -0,0 +1 @@\n+echo new\n";
    assert_eq!(shown, want_diff);
    let applied = apply(dir);
    assert_eq!(code(&applied), 0, "{}", stderr(&applied));
    assert_eq!(file_bytes(dir), after);
    assert_eq!(mode_of(dir, "a.sh"), 0o755);
    assert_eq!(mode_of(dir, "b.sh"), 0o644);
    assert_eq!(mode_of(dir, "moved.sh"), 0o755);
    // A new executable gets what any new executable gets: 0777 less the umask (staged's is
    // this process's).
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let umask = status.lines().find_map(|l| l.strip_prefix("Umask:")).unwrap().trim();
    let umask = u32::from_str_radix(umask, 8).unwrap();
    assert_eq!(mode_of(dir, "new.sh"), 0o777 & !umask);
    // The log keeps the diff with its mode lines.
    let log = staged(dir, &["--json", "log", "show", "1"]);
    assert_eq!(code(&log), 0, "{}", stderr(&log));
    assert_eq!(json(&log)["diff"].as_str(), Some(want_diff), "{}", json(&log));

    let undone = staged(dir, &["undo", "--yes"]);
    assert_eq!(code(&undone), 0, "{}", stderr(&undone));
    let now: Vec<u32> = ["a.sh", "b.sh", "mv.sh"].iter().map(|p| mode_of(dir, p)).collect();
    assert_eq!(now, before);
    assert!(!dir.join("new.sh").exists() && !dir.join("moved.sh").exists());
    let redone = staged(dir, &["redo", "--yes"]);
    assert_eq!(code(&redone), 0, "{}", stderr(&redone));
    assert_eq!(file_bytes(dir), after);
    assert_eq!(mode_of(dir, "a.sh"), 0o755);
    assert_eq!(mode_of(dir, "moved.sh"), 0o755);

    // -R takes the modes back.
    let out = staged_in(dir, &["--json", "patch", "-R"], &show);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&apply(dir)), 0);
    let now: Vec<u32> = ["a.sh", "b.sh", "mv.sh"].iter().map(|p| mode_of(dir, p)).collect();
    assert_eq!(now, before);

    // A mode staged does not set, named.
    let odd = "diff --git a/a.sh b/a.sh\nold mode 100644\nnew mode 100600\n";
    let out = staged_in(dir, &["--json", "patch"], odd.as_bytes());
    assert_eq!(code(&out), 2);
    assert_eq!(
        text(&out),
        "line 3: `new mode 100600` gives a.sh a mode staged does not set: staged sets a file executable (100755) or not (100644); change the mode with chmod"
    );
    // A mode it already has is no change.
    let same = "diff --git a/b.sh b/b.sh\nold mode 100755\nnew mode 100755\n";
    let out = staged_in(dir, &["--json", "patch"], same.as_bytes());
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}

/// Issue 33, finding 10: a commit in which files become folders and a folder becomes a file
/// (`a` deleted and `a/b` created; `tool` renamed to `tool/tool`; every file of `d/`
/// deleted and a file `d` created) applies in one all-or-nothing apply, as the commit wrote
/// it, modes kept; `staged undo` puts back exactly the tree before. Before, it was refused
/// ("a folder on its path is a file", "is a directory, not a file").
#[test]
fn files_that_become_folders_and_back_apply_and_undo_exactly() {
    use std::os::unix::fs::PermissionsExt;
    let ws = workspace(&[]);
    let dir = ws.path();
    std::fs::remove_dir(dir.join(".git")).unwrap();
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("a"), "one\n").unwrap();
    std::fs::write(dir.join("tool"), "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(dir.join("tool"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::create_dir_all(dir.join("d/e")).unwrap();
    std::fs::write(dir.join("d/x"), "x\n").unwrap();
    std::fs::write(dir.join("d/e/y"), "y\n").unwrap();
    std::fs::write(dir.join("keep.txt"), "kept\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "base"]);
    let before = file_bytes(dir);
    std::fs::remove_file(dir.join("a")).unwrap();
    std::fs::create_dir(dir.join("a")).unwrap();
    std::fs::write(dir.join("a/b"), "two\n").unwrap();
    git(dir, &["mv", "tool", "tool.tmp"]);
    std::fs::create_dir(dir.join("tool")).unwrap();
    git(dir, &["mv", "tool.tmp", "tool/tool"]);
    std::fs::remove_dir_all(dir.join("d")).unwrap();
    std::fs::write(dir.join("d"), "now a file\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "kinds"]);
    let after = file_bytes(dir);
    let show = git(dir, &["show", "-M", "HEAD"]);
    git(dir, &["checkout", "-q", "HEAD~1"]);
    assert_eq!(file_bytes(dir), before);

    let out = staged_in(dir, &["--json", "patch"], &show);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json(&out)["pending"]["label"], "Patch: 6 files (2 added, 3 deleted, 1 moved)");
    let applied = apply(dir);
    assert_eq!(code(&applied), 0, "{}", stderr(&applied));
    assert_eq!(file_bytes(dir), after);
    let mode = std::fs::metadata(dir.join("tool/tool")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755, "{mode:o}");
    assert!(pending_ids(dir).is_empty());

    let undone = staged(dir, &["undo", "--yes"]);
    assert_eq!(code(&undone), 0, "{}", stderr(&undone));
    assert_eq!(file_bytes(dir), before);
    assert!(dir.join("d/e").is_dir() && dir.join("a").is_file() && dir.join("tool").is_file());
    let mode = std::fs::metadata(dir.join("tool")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755, "{mode:o}");
    // And the undo undone (a redo) is the commit's tree again.
    let redone = staged(dir, &["redo", "--yes"]);
    assert_eq!(code(&redone), 0, "{}", stderr(&redone));
    assert_eq!(file_bytes(dir), after);
}

/// Issue 33, finding 10, in Codex's format, and what stays refused: a file takes a folder's
/// place only when the patch deletes every file in it, and a file becomes a folder only when
/// the patch deletes it; each refusal names the file that stays, and stages nothing.
#[test]
fn a_codex_patch_turns_a_file_into_a_folder_and_refusals_name_what_stays() {
    let ws = workspace(&[("a", "one\n"), ("d/x", "x\n"), ("d/y", "y\n")]);
    let dir = ws.path();
    let patch = "*** Begin Patch\n*** Add File: a/b\n+two\n*** Delete File: a\n*** End Patch\n";
    let out = staged_in(dir, &["--json", "patch"], patch.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&apply(dir)), 0);
    assert_eq!(read(dir, "a/b"), "two\n");

    let over_folder =
        "*** Begin Patch\n*** Delete File: d/x\n*** Add File: d\n+file\n*** End Patch\n";
    let out = staged_in(dir, &["--json", "patch"], over_folder.as_bytes());
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(
        text(&out),
        "d is a folder, and the patch does not delete d/y: a file takes a folder's place only when the patch deletes every file in it"
    );
    let under_file = "*** Begin Patch\n*** Add File: a/b/c\n+deeper\n*** End Patch\n";
    let out = staged_in(dir, &["--json", "patch"], under_file.as_bytes());
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(
        text(&out),
        "a/b/c: a folder on its path, a/b, is a file the patch does not delete: a file becomes a folder only when the patch deletes it"
    );
    assert!(pending_ids(dir).is_empty());
    assert_eq!(read(dir, "d/y"), "y\n");

    // The undo puts the file `a` back only while the folder holds nothing else.
    std::fs::write(dir.join("a/extra"), "mine\n").unwrap();
    let out = staged(dir, &["undo", "--yes"]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(code(&out), 1, "{said}");
    assert_eq!(
        said.trim_end(),
        "Cannot undo log entry 1 (Patch: 2 files (1 added, 1 deleted)): 1 file changed since it was written: a/extra. Nothing was written."
    );
    assert_eq!(read(dir, "a/b"), "two\n");
    assert_eq!(read(dir, "a/extra"), "mine\n");
    std::fs::remove_file(dir.join("a/extra")).unwrap();
    let out = staged(dir, &["undo", "--yes"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(read(dir, "a"), "one\n");
}
