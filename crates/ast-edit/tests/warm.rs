//! The warm index is never stale: after each of 1,000 random changes made behind its back
//! (files written, created, deleted, renamed, made binary or not UTF-8, replaced by symlinks,
//! linked again inside the tree or written through a hard link outside it, folders created,
//! moved and deleted, ignore files edited), and after changes of the ignore files above the
//! root, which no watch of its reports, every query answered from it equals the same query
//! walked cold.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use staged_ast_edit::{
    AstEditParams, AstGrepParams, EngineOptions, Op, WarmIndex, compute_preview_with,
    preview_details, preview_text, search, search_details, search_text,
};
use staged_journal::ConfinedRoot;

/// A small deterministic generator (xorshift), so a failure can be replayed from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const LINES: &[&str] = &[
    "fn a() { let x = std::mem::take(&mut v); }",
    "fn b() { tokio::spawn(async move { run().await }); }",
    "fn c() -> u8 { value.unwrap() }",
    "fn d() { mem::take(&mut w); }",
    "fn e() { let y = 1; }",
    "// std::mem::take(&mut z) in a comment",
    "struct S; impl S { fn f(&self) { helper(self) } }",
    "fn g() { std::mem::replace(&mut a, b); }",
    "fn n() { a.unwrap().unwrap(); }",
];

const JS_LINES: &[&str] = &[
    "baseFlatten(array, 1);",
    "Debug.assert(x > 0, 'positive');",
    "const n = list.length;",
    "function h() { return 1; }",
    "console.log(baseFlatten);",
];

const DIRS: &[&str] = &["", "src", "src/deep", "lib", "ignored", "gen", "src/new"];

fn rust_text(rng: &mut Rng) -> String {
    (0..1 + rng.below(6)).map(|_| format!("{}\n", rng.pick(LINES))).collect()
}

fn js_text(rng: &mut Rng) -> String {
    (0..1 + rng.below(4)).map(|_| format!("{}\n", rng.pick(JS_LINES))).collect()
}

/// Every regular file under `root` the changes may touch (outside `.staged`).
fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() && entry.file_name() != ".staged" {
                stack.push(path);
            } else if kind.is_file() || kind.is_symlink() {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|k| k.is_dir()) && entry.file_name() != ".staged" {
                out.push(entry.path());
                stack.push(entry.path());
            }
        }
    }
    out.sort();
    out
}

/// One random change; returns what it did, for the failure message. `outside` holds hard links
/// to files of the tree, made before the index started.
fn change(root: &Path, outside: &Path, rng: &mut Rng, n: usize) -> String {
    let existing = files(root);
    let mut kind = rng.below(16);
    if existing.len() > 60 && matches!(kind, 4 | 5 | 13) {
        // Keep the tree small: a query after every change walks it cold too.
        kind = 6;
    }
    let dir = root.join(rng.pick(DIRS));
    match kind {
        0..=3 if !existing.is_empty() => {
            let path = rng.pick(&existing).clone();
            let _ = std::fs::remove_file(&path);
            let text = if path.extension().is_some_and(|e| e == "js") {
                js_text(rng)
            } else {
                rust_text(rng)
            };
            std::fs::write(&path, text).ok();
            format!("rewrote {}", path.display())
        }
        4 | 5 => {
            std::fs::create_dir_all(&dir).unwrap();
            let (name, text) = if rng.below(3) == 0 {
                (format!("n{n}.js"), js_text(rng))
            } else {
                (format!("n{n}.rs"), rust_text(rng))
            };
            std::fs::write(dir.join(&name), text).unwrap();
            format!("created {}", dir.join(name).display())
        }
        6 if !existing.is_empty() => {
            let path = rng.pick(&existing).clone();
            std::fs::remove_file(&path).ok();
            format!("deleted {}", path.display())
        }
        7 if !existing.is_empty() => {
            let from = rng.pick(&existing).clone();
            std::fs::create_dir_all(&dir).unwrap();
            let ext =
                from.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
            let to = dir.join(format!("m{n}.{ext}"));
            std::fs::rename(&from, &to).ok();
            format!("renamed {} to {}", from.display(), to.display())
        }
        8 => {
            // Appending in place (same inode): only the write's event tells.
            if let Some(path) = existing.get(rng.below(existing.len().max(1))) {
                use std::io::Write;
                if let Ok(mut file) = std::fs::OpenOptions::new().append(true).open(path) {
                    let _ = file.write_all(rng.pick(LINES).as_bytes());
                    let _ = file.write_all(b"\n");
                }
                format!("appended to {}", path.display())
            } else {
                "nothing".to_owned()
            }
        }
        9 => {
            let gitignore = root.join(".gitignore");
            let lines = ["ignored/\n", "gen/*.rs\n", "*.js\n", "src/deep/\n", ""];
            let text: String = (0..rng.below(3)).map(|_| *rng.pick(&lines)).collect();
            std::fs::write(&gitignore, &text).unwrap();
            format!("wrote .gitignore: {text:?}")
        }
        10 => {
            // A folder made, filled and moved, or removed.
            let existing_dirs = dirs(root);
            if rng.below(2) == 0 || existing_dirs.is_empty() {
                let new = root.join(format!("d{n}"));
                std::fs::create_dir_all(new.join("inner")).unwrap();
                std::fs::write(new.join("inner/x.rs"), rust_text(rng)).unwrap();
                std::fs::write(new.join("y.rs"), rust_text(rng)).unwrap();
                format!("made folder {}", new.display())
            } else {
                let victim = rng.pick(&existing_dirs).clone();
                if rng.below(2) == 0 {
                    let to = root.join(format!("moved{n}"));
                    std::fs::rename(&victim, &to).ok();
                    format!("moved folder {} to {}", victim.display(), to.display())
                } else {
                    std::fs::remove_dir_all(&victim).ok();
                    format!("removed folder {}", victim.display())
                }
            }
        }
        11 if !existing.is_empty() => {
            // Binary, or not UTF-8: reported by every query, so never skipped.
            let path = rng.pick(&existing).clone();
            let bytes: &[u8] = if rng.below(2) == 0 {
                b"fn a() {}\0 std::mem::take"
            } else {
                b"fn a() { \xff\xfe }"
            };
            std::fs::write(&path, bytes).ok();
            format!("made {} binary or not UTF-8", path.display())
        }
        12 if !existing.is_empty() => {
            // (A symlinked ignore file makes the index stand aside: its own test below.)
            let path = rng.pick(&existing).clone();
            if path.ends_with(".gitignore") {
                return "nothing".to_owned();
            }
            let target = rng.pick(&existing).clone();
            std::fs::remove_file(&path).ok();
            std::os::unix::fs::symlink(&target, &path).ok();
            format!("replaced {} by a symlink", path.display())
        }
        14 => {
            // Written in place through a link outside the tree: no watch of the index sees it.
            let links = files(outside);
            let path = rng.pick(&links).clone();
            let text = if path.extension().is_some_and(|e| e == "js") {
                js_text(rng)
            } else {
                rust_text(rng)
            };
            std::fs::write(&path, text).unwrap();
            format!("wrote {} (a hard link from outside)", path.display())
        }
        15 if !existing.is_empty() => {
            // Another name for a file in a folder the index watches (the root: one the walk
            // ignores is not watched, and a link made there is not seen, as documented).
            let from = rng.pick(&existing).clone();
            let ext =
                from.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
            let to = root.join(format!("h{n}.{ext}"));
            std::fs::hard_link(&from, &to).ok();
            format!("linked {} as {}", from.display(), to.display())
        }
        _ => {
            // A burst: several files at once.
            std::fs::create_dir_all(&dir).unwrap();
            for i in 0..5 {
                std::fs::write(dir.join(format!("b{n}_{i}.rs")), rust_text(rng)).unwrap();
            }
            format!("burst of 5 in {}", dir.display())
        }
    }
}

fn grep(
    workspace: &ConfinedRoot,
    index: Option<&WarmIndex>,
    pattern: &str,
    lang: &str,
    path: &str,
) -> String {
    let params = AstGrepParams {
        pattern: pattern.to_owned(),
        paths: vec![path.to_owned()],
        lang: Some(lang.to_owned()),
        selector: None,
        strictness: None,
        limit: None,
    };
    match search(workspace, &params, index, None) {
        Ok(result) => format!("{}\n{}", search_text(&result), search_details(&result)),
        Err(err) => format!("error: {err}"),
    }
}

fn edit(workspace: &ConfinedRoot, index: Option<&WarmIndex>, pat: &str, out: &str) -> String {
    let params = AstEditParams {
        ops: vec![Op { pat: pat.to_owned(), out: out.to_owned() }],
        paths: vec![".".to_owned()],
        lang: Some("rust".to_owned()),
        selector: None,
        strictness: None,
        limit: None,
        max_files: None,
        include_parse_errors: None,
    }
    .validate()
    .unwrap();
    match compute_preview_with(workspace, &params, EngineOptions::preview(), index, None) {
        Ok(preview) => format!(
            "{}\n{}",
            preview_text(&preview),
            serde_json::to_string(&preview_details(&preview)).unwrap()
        ),
        Err(err) => format!("error: {err}"),
    }
}

#[test]
fn a_thousand_random_changes_never_make_it_stale() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let links = tempfile::tempdir().unwrap();
    let outside = links.path().canonicalize().unwrap();
    // STAGED_WARM_SEED replays or varies the run (the stress loop sets it).
    let seed = std::env::var("STAGED_WARM_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0x5eed_1234_abcd_0001)
        | 1;
    let mut rng = Rng(seed);
    for (i, d) in DIRS.iter().enumerate() {
        std::fs::create_dir_all(root.join(d)).unwrap();
        std::fs::write(root.join(d).join(format!("start{i}.rs")), rust_text(&mut rng)).unwrap();
        std::fs::write(root.join(d).join(format!("start{i}.js")), js_text(&mut rng)).unwrap();
        for ext in ["rs", "js"] {
            let name = format!("start{i}.{ext}");
            std::fs::hard_link(root.join(d).join(&name), outside.join(format!("{i}_{name}")))
                .unwrap();
        }
    }
    std::fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
    let workspace = ConfinedRoot::new(&root).unwrap();
    let index = WarmIndex::start(workspace.clone()).unwrap();
    assert!(index.wait_indexed(Duration::from_secs(30)), "the index never became ready");
    let queries: &[(&str, &str, &str)] = &[
        ("std::mem::take($A)", "rust", "."),
        ("tokio::spawn($A)", "rust", "src"),
        ("baseFlatten($$$A)", "js", "."),
        ("$A.unwrap()", "rust", "**/*.rs"),
        ("helper($A)", "rust", "src/deep"),
        // A keyword, a name, then a needle (`fn`, a name, `self`).
        ("fn $F(&self) { $$$B }", "rust", "."),
    ];
    let mut served = 0;
    for n in 0..1000 {
        let what = change(&root, &outside, &mut rng, n);
        for &(pattern, lang, path) in queries {
            let before = index.stats().served;
            let warm = grep(&workspace, Some(&index), pattern, lang, path);
            served += usize::from(index.stats().served > before);
            let cold = grep(&workspace, None, pattern, lang, path);
            assert_eq!(
                warm, cold,
                "seed {seed}, change {n} ({what}): `{pattern}` in {path} differs from a cold walk"
            );
        }
        if n % 10 == 0 {
            let warm = edit(&workspace, Some(&index), "std::mem::take($A)", "core::mem::take($A)");
            let cold = edit(&workspace, None, "std::mem::take($A)", "core::mem::take($A)");
            assert_eq!(
                warm, cold,
                "seed {seed}, change {n} ({what}): the preview differs from a cold walk"
            );
            // A keyword, a name, then a bracket (`fn`, a name, `(`).
            let warm = edit(&workspace, Some(&index), "fn $F() { $$$B }", "fn $F() -> () { $$$B }");
            let cold = edit(&workspace, None, "fn $F() { $$$B }", "fn $F() -> () { $$$B }");
            assert_eq!(
                warm, cold,
                "seed {seed}, change {n} ({what}): the name-pair preview differs from a cold walk"
            );
            // Nested matches compose by parsing again from the file's tree: twice in a row, so
            // that the second may start from a kept tree the first edited a copy of.
            let cold = edit(&workspace, None, "$A.unwrap()", "$A.expect(\"n\")");
            for _ in 0..2 {
                let warm = edit(&workspace, Some(&index), "$A.unwrap()", "$A.expect(\"n\")");
                assert_eq!(
                    warm, cold,
                    "seed {seed}, change {n} ({what}): the nested preview differs from a cold walk"
                );
            }
        }
    }
    // The queries were answered from the index, not all walked cold behind its back.
    assert!(served > 5880, "only {served} of 6000 queries were answered from the index");
}

#[test]
fn a_file_changed_after_indexing_is_found_by_the_next_query() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a.rs"), "fn a() {}\n").unwrap();
    let workspace = ConfinedRoot::new(&root).unwrap();
    let index = WarmIndex::start(workspace.clone()).unwrap();
    assert!(index.wait_indexed(Duration::from_secs(30)));
    let none = grep(&workspace, Some(&index), "std::mem::take($A)", "rust", ".");
    assert!(none.starts_with("No matches found"), "{none}");
    // Written in place at once, and asked right after: no waiting for the indexer.
    std::fs::write(root.join("a.rs"), "fn a() { std::mem::take(&mut x); }\n").unwrap();
    let found = grep(&workspace, Some(&index), "std::mem::take($A)", "rust", ".");
    assert!(found.contains("a.rs:1:10"), "{found}");
    let stats = index.stats();
    assert!(stats.ready && stats.files == 1, "{stats:?}");
}

#[test]
fn an_ignore_file_edited_hides_and_shows_files_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    std::fs::write(root.join("src/deep/a.js"), "baseFlatten(x, 1);\n").unwrap();
    std::fs::write(root.join("b.js"), "baseFlatten(y, 2);\n").unwrap();
    let workspace = ConfinedRoot::new(&root).unwrap();
    let index = WarmIndex::start(workspace.clone()).unwrap();
    assert!(index.wait_indexed(Duration::from_secs(30)));
    let query = |index: Option<&WarmIndex>| grep(&workspace, index, "baseFlatten($$$A)", "js", ".");
    assert!(query(Some(&index)).contains("src/deep/a.js:1:1"));
    for ignore in ["*.js\n", "src/deep/\n", "", "deep\n", "!b.js\n"] {
        std::fs::write(root.join(".gitignore"), ignore).unwrap();
        assert_eq!(query(Some(&index)), query(None), "after .gitignore {ignore:?}");
        std::fs::write(root.join("src/.ignore"), ignore).unwrap();
        assert_eq!(query(Some(&index)), query(None), "after src/.ignore {ignore:?}");
    }
    assert!(index.stats().served >= 11);
}

#[test]
fn an_ignore_file_that_is_a_symlink_or_a_git_file_makes_queries_walk() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.js"), "baseFlatten(x, 1);\n").unwrap();
    std::fs::write(root.join("rules.txt"), "").unwrap();
    let workspace = ConfinedRoot::new(&root).unwrap();
    let index = WarmIndex::start(workspace.clone()).unwrap();
    assert!(index.wait_indexed(Duration::from_secs(30)));
    let query = |index: Option<&WarmIndex>| grep(&workspace, index, "baseFlatten($$$A)", "js", ".");
    // What a symlinked .gitignore says changes when its target is written, which no event in
    // the index's folders need tell: the index must not answer then.
    std::os::unix::fs::symlink(root.join("rules.txt"), root.join(".gitignore")).unwrap();
    assert_eq!(query(Some(&index)), query(None));
    let served = index.stats().served;
    std::fs::write(root.join("rules.txt"), "src/\n").unwrap();
    assert_eq!(query(Some(&index)), query(None));
    assert!(query(None).starts_with("No matches found"));
    assert_eq!(index.stats().served, served, "answered from the index while unsure");
    // Gone again: the index answers again.
    std::fs::remove_file(root.join(".gitignore")).unwrap();
    assert_eq!(query(Some(&index)), query(None));
    assert!(index.stats().served > served);
    // A `.git` file (a worktree): its exclude file lies elsewhere.
    std::fs::write(root.join(".git"), "gitdir: /elsewhere\n").unwrap();
    let served = index.stats().served;
    assert_eq!(query(Some(&index)), query(None));
    assert_eq!(index.stats().served, served);
}

#[test]
fn git_info_exclude_is_watched() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git/info")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.js"), "baseFlatten(x, 1);\n").unwrap();
    let workspace = ConfinedRoot::new(&root).unwrap();
    let index = WarmIndex::start(workspace.clone()).unwrap();
    assert!(index.wait_indexed(Duration::from_secs(30)));
    let query = |index: Option<&WarmIndex>| grep(&workspace, index, "baseFlatten($$$A)", "js", ".");
    assert!(query(Some(&index)).contains("src/a.js"));
    std::fs::write(root.join(".git/info/exclude"), "src/\n").unwrap();
    let warm = query(Some(&index));
    assert_eq!(warm, query(None));
    assert!(warm.starts_with("No matches found"), "{warm}");
    std::fs::remove_dir_all(root.join(".git/info")).unwrap();
    assert_eq!(query(Some(&index)), query(None));
    assert!(query(None).contains("src/a.js"));
}

#[test]
fn a_file_written_through_another_hard_link_is_seen() {
    // A write through a link outside the watched folders is reported to no watch of the
    // index (inotify tells the folder of the path written through): a file with more than
    // one link is checked again at every query.
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().canonicalize().unwrap();
    let (root, outside) = (top.join("ws"), top.join("outside"));
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("lib")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("src/a.rs"), "fn a() {}\n").unwrap();
    std::fs::hard_link(root.join("src/a.rs"), outside.join("a.rs")).unwrap();
    std::fs::write(root.join("lib/c.rs"), "fn c() {}\n").unwrap();
    std::fs::write(root.join("lib/d.rs"), "fn d() {}\n").unwrap();
    std::fs::write(root.join(".gitignore"), "*.hidden\n").unwrap();
    let workspace = ConfinedRoot::new(&root).unwrap();
    let index = WarmIndex::start(workspace.clone()).unwrap();
    assert!(index.wait_indexed(Duration::from_secs(30)));
    let query =
        |index: Option<&WarmIndex>| grep(&workspace, index, "std::mem::take($A)", "rust", ".");
    assert!(query(Some(&index)).starts_with("No matches found"));
    // Written in place (the same inode) through the outside name, and asked at once.
    std::fs::write(outside.join("a.rs"), "fn a() { std::mem::take(&mut x); }\n").unwrap();
    let warm = query(Some(&index));
    assert_eq!(warm, query(None));
    assert!(warm.contains("src/a.rs:1:10"), "{warm}");
    // Without the text, then the same length with it again once the indexer has read the
    // first, asked when the change is no longer recent (whole seconds of change time, 2 of
    // them recent): only the change time tells.
    std::fs::write(outside.join("a.rs"), "fn a() { std::mem::swap(&mut x); }\n").unwrap();
    assert!(query(Some(&index)).starts_with("No matches found"));
    std::thread::sleep(Duration::from_millis(3100));
    assert!(query(Some(&index)).starts_with("No matches found"));
    assert!(index.wait_indexed(Duration::from_secs(30)));
    assert_eq!(index.stats().indexed, 4, "{:?}", index.stats());
    std::fs::write(outside.join("a.rs"), "fn a() { std::mem::take(&mut x); }\n").unwrap();
    std::thread::sleep(Duration::from_millis(3100));
    let warm = query(Some(&index));
    assert_eq!(warm, query(None));
    assert!(warm.contains("src/a.rs:1:10"), "{warm}");
    // A second name made inside the tree after the index listed the first: a write through
    // the new name is reported at the new name's folder only.
    std::fs::hard_link(root.join("lib/c.rs"), root.join("src/c2.rs")).unwrap();
    assert_eq!(query(Some(&index)), query(None));
    assert!(index.wait_indexed(Duration::from_secs(30)));
    std::thread::sleep(Duration::from_millis(3100));
    std::fs::write(root.join("src/c2.rs"), "fn c() { std::mem::take(&mut y); }\n").unwrap();
    let warm = query(Some(&index));
    assert_eq!(warm, query(None));
    assert!(warm.contains("lib/c.rs:1:10") && warm.contains("src/c2.rs:1:10"), "{warm}");
    // The same under a name the walk ignores, in a folder it watches.
    std::fs::hard_link(root.join("lib/d.rs"), root.join("src/d.hidden")).unwrap();
    assert_eq!(query(Some(&index)), query(None));
    assert!(index.wait_indexed(Duration::from_secs(30)));
    std::thread::sleep(Duration::from_millis(3100));
    std::fs::write(root.join("src/d.hidden"), "fn d() { std::mem::take(&mut z); }\n").unwrap();
    let warm = query(Some(&index));
    assert_eq!(warm, query(None));
    assert!(warm.contains("lib/d.rs:1:10"), "{warm}");
    assert_eq!(index.stats().served, 9, "{:?}", index.stats());
}

#[test]
fn ignore_files_above_the_root_are_checked_at_every_query() {
    // The walk reads `.gitignore`, `.ignore` and `.git/info/exclude` (or a worktree's, through
    // its `.git` file) in every folder above the root too, where the index has no watch.
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().canonicalize().unwrap();
    let parent = top.join("parent");
    let root = parent.join("ws");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.js"), "baseFlatten(x, 1);\n").unwrap();
    std::fs::write(root.join("b.js"), "baseFlatten(y, 2);\n").unwrap();
    let workspace = ConfinedRoot::new(&root).unwrap();
    let index = WarmIndex::start(workspace.clone()).unwrap();
    assert!(index.wait_indexed(Duration::from_secs(30)));
    let query = |index: Option<&WarmIndex>| grep(&workspace, index, "baseFlatten($$$A)", "js", ".");
    assert!(query(Some(&index)).contains("src/a.js:1:1"));
    let mut served = index.stats().served;
    let mut check = |what: &str, hidden: &[&str]| {
        let (warm, cold) = (query(Some(&index)), query(None));
        assert_eq!(warm, cold, "after {what}");
        for (path, line) in [("src/a.js", "src/a.js:1:1"), ("b.js", "b.js:1:1")] {
            assert_eq!(!warm.contains(line), hidden.contains(&path), "after {what}: {warm}");
        }
        let now = index.stats().served;
        assert!(now > served, "after {what}: not answered from the index");
        served = now;
    };
    std::fs::write(parent.join(".gitignore"), "ws/src/\n").unwrap();
    check("parent/.gitignore ws/src/", &["src/a.js"]);
    std::fs::write(parent.join(".gitignore"), "*.js\n").unwrap();
    check("parent/.gitignore *.js", &["src/a.js", "b.js"]);
    std::fs::remove_file(parent.join(".gitignore")).unwrap();
    check("parent/.gitignore removed", &[]);
    std::fs::write(top.join(".ignore"), "b.js\n").unwrap();
    check("top/.ignore b.js", &["b.js"]);
    std::fs::write(top.join(".ignore"), "").unwrap();
    check("top/.ignore emptied", &[]);
    std::fs::create_dir_all(parent.join(".git/info")).unwrap();
    std::fs::write(parent.join(".git/info/exclude"), "src\n").unwrap();
    check("parent/.git/info/exclude src", &["src/a.js"]);
    std::fs::remove_dir_all(parent.join(".git")).unwrap();
    check("parent/.git removed", &[]);
    // A worktree: `.git` is a file naming its git folder, whose `commondir` holds the exclude.
    let common = top.join("main.git");
    let gitdir = common.join("worktrees/ws");
    std::fs::create_dir_all(&gitdir).unwrap();
    std::fs::create_dir_all(common.join("info")).unwrap();
    std::fs::write(gitdir.join("commondir"), "../..\n").unwrap();
    std::fs::write(parent.join(".git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
    check("a worktree's .git file", &[]);
    std::fs::write(common.join("info/exclude"), "*.js\n").unwrap();
    check("the worktree's common exclude *.js", &["src/a.js", "b.js"]);
    std::fs::write(common.join("info/exclude"), "/ws/b.js\n").unwrap();
    check("the worktree's common exclude /ws/b.js", &["b.js"]);
}
