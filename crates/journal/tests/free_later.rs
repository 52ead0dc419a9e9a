//! A process that frees later (`free_later`, the shell wrapper) commits without freeing any
//! file's blocks on the commit's way: the file a temp replaces and the journal's own files are
//! kept under freed names in the journal folder until `delete_freed` (or recovery) deletes
//! them. Its own test binary: `free_later` is for the whole process.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{os::unix::fs::MetadataExt, path::Path};

use staged_journal::{CommitOptions, ConfinedRoot};

/// The names in the journal folder but its two lock files.
fn journal_names(root: &Path) -> Vec<String> {
    let mut res: Vec<String> = std::fs::read_dir(root.join(".staged/journal"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "commit.lock" && n != "write.lock")
        .collect();
    res.sort();
    res
}

#[test]
fn a_commit_that_frees_later_keeps_the_replaced_file_and_its_journals_until_they_are_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "old\n").unwrap();
    let old_inode = std::fs::metadata(root.join("a.txt")).unwrap().ino();
    let steps = common::replace_and_create("b.txt");
    let ws = ConfinedRoot::new(root).unwrap();
    staged_journal::free_later();
    staged_journal::commit(&ws, &steps, CommitOptions::default()).unwrap();
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "new\n");
    assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "made\n");

    // The prepared journal, the committed one and the replaced `a.txt`, each under a freed
    // name: no journal left, so nothing for recovery to settle.
    let names = journal_names(root);
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names.iter().all(|n| n.contains(".freed-") && !n.ends_with(".json")), "{names:?}");
    assert!(!staged_journal::needs_recovery(&ws));
    let kept: Vec<&String> = names
        .iter()
        .filter(|n| {
            std::fs::metadata(root.join(".staged/journal").join(n)).unwrap().ino() == old_inode
        })
        .collect();
    assert_eq!(kept.len(), 1, "the replaced file's blocks are kept by one link: {names:?}");
    assert_eq!(
        std::fs::read_to_string(root.join(".staged/journal").join(kept[0])).unwrap(),
        "old\n"
    );

    staged_journal::delete_freed(&ws);
    assert!(journal_names(root).is_empty(), "{:?}", journal_names(root));
    assert!(root.join(".staged/journal/commit.lock").exists());
}

#[test]
fn recovery_deletes_freed_names_left_behind_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".staged/journal")).unwrap();
    let journal = root.join(".staged/journal");
    std::fs::write(journal.join("12-345-6.freed-0"), "left by a killed cleaner").unwrap();
    std::fs::write(journal.join("12-345-6.freed-17"), "").unwrap();
    for other in ["notes.freed-1", "12-345-6.freed-x", "12-345.freed-1", "12-345-6.freed-"] {
        std::fs::write(journal.join(other), "not staged's").unwrap();
    }
    let ws = ConfinedRoot::new(root).unwrap();
    let report =
        staged_journal::recover(&ws, staged_journal::RecoverOptions { hooks: None }).unwrap();
    assert!(report.refused.is_empty(), "{:?}", report.refused);
    assert_eq!(
        journal_names(root),
        ["12-345-6.freed-", "12-345-6.freed-x", "12-345.freed-1", "notes.freed-1"]
    );
}
