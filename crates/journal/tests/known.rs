//! `check_known`: a change computed on texts its caller read (a session's history) rather than
//! read again. A file changed after those texts were read is refused by the commit's own check
//! under its lock, with nothing written; a known text that is not the one an op expects is not
//! used (the file is read, as `check` reads it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use staged_journal::{
    CheckError, CommitOptions, ConfinedRoot, Edit, FileOp, JournalError, check, check_known,
    fingerprint,
};

/// Three files of four lines; an op for each that rewrites its line 2, expecting the text.
fn workspace(root: &std::path::Path) -> (Vec<FileOp>, HashMap<String, String>) {
    let mut ops = Vec::new();
    let mut texts = HashMap::new();
    for name in ["a.txt", "b.txt", "c.txt"] {
        let text = format!("one {name}\ntwo\nthree\nfour\n");
        std::fs::write(root.join(name), &text).unwrap();
        let start = text.find("two").unwrap();
        ops.push(FileOp::Update {
            path: name.to_owned(),
            fingerprint: fingerprint(text.as_bytes()),
            edits: vec![Edit { start, before: "two".into(), after: "TWO".into() }],
            executable: None,
        });
        texts.insert(name.to_owned(), text);
    }
    (ops, texts)
}

/// Every file of the root but the state folder, with its bytes, and whether a journal is
/// left.
fn snapshot(root: &std::path::Path) -> (Vec<(String, Vec<u8>)>, bool) {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name() != ".staged")
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    let journals = std::fs::read_dir(root.join(".staged/journal"))
        .map(|d| d.flatten().any(|e| e.file_name().to_string_lossy().ends_with(".json")))
        .unwrap_or(false);
    (files, journals)
}

#[test]
fn a_file_changed_after_its_known_text_was_read_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (ops, texts) = workspace(root);
    let ws = ConfinedRoot::new(root).unwrap();
    let refs: Vec<&FileOp> = ops.iter().collect();
    let known = |path: &str| texts.get(path).map(String::as_str);
    let checked = check_known(&ws, &refs, &known).unwrap();
    // What the commit writes, and the log's record of it, are those of a check that reads.
    let read = check(&ws, &refs).unwrap();
    // (Steps have no `PartialEq`: their debug forms hold every field, bytes included.)
    assert_eq!(format!("{:?}", checked.steps), format!("{:?}", read.steps));
    assert_eq!(checked.diff, read.diff);
    assert_eq!(checked.files, read.files);
    assert_eq!(checked.undo, read.undo);
    assert_eq!(checked.texts, read.texts);

    // A person edits b.txt after the texts were read, before the commit.
    std::fs::write(root.join("b.txt"), "one b.txt\ntwo, by a person\nthree\nfour\n").unwrap();
    let before = snapshot(root);
    let err = staged_journal::commit(&ws, &checked.steps, CommitOptions::default()).unwrap_err();
    assert!(matches!(&err, JournalError::Drifted(path) if path == "b.txt"), "{err}");
    assert_eq!(snapshot(root), before, "every file as it was, no temp, no journal");
}

#[test]
fn a_known_text_that_is_not_the_expected_one_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (ops, mut texts) = workspace(root);
    let ws = ConfinedRoot::new(root).unwrap();
    let refs: Vec<&FileOp> = ops.iter().collect();
    // The caller's text of a.txt is not the one its op was computed on: the file is read,
    // and the change is computed on the disk's text, which is.
    texts.insert("a.txt".into(), "something else\ntwo\n".into());
    let known = |path: &str| texts.get(path).map(String::as_str);
    let checked = check_known(&ws, &refs, &known).unwrap();
    assert_eq!(format!("{:?}", checked.steps), format!("{:?}", check(&ws, &refs).unwrap().steps));
    // And when the disk's is not either, the check refuses, naming the file.
    std::fs::write(root.join("a.txt"), "changed\n").unwrap();
    let Err(CheckError::Stale(stale)) = check_known(&ws, &refs, &known) else {
        panic!("a.txt changed: the check must refuse");
    };
    assert_eq!(stale.path, "a.txt");
}
