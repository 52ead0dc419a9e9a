//! A commit that only renames temps into place (replaces, and creates that are not late)
//! deletes its journal without syncing the journal folder: a power loss right after may bring
//! the journal back, committed. Its roll forward must then change nothing, however the files
//! changed since (a later edit, a created file deleted again), and settle the log's record
//! again without harm; this is the argument for that missing sync (`Run::finish`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use staged_journal::{CommitOptions, CommitStep, ConfinedRoot, RecoverOptions, RecoveryHooks};

/// The journals in the journal folder, by name, with their bytes.
fn journals(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut res: Vec<(String, Vec<u8>)> = std::fs::read_dir(root.join(".staged/journal"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .map(|n| {
            let bytes = std::fs::read(root.join(".staged/journal").join(&n)).unwrap();
            (n, bytes)
        })
        .collect();
    res.sort();
    res
}

#[derive(Default)]
struct Told {
    finished: Vec<String>,
    rolled_back: usize,
}

impl RecoveryHooks for Told {
    fn finished(&mut self, journal: &str, _origin: Option<&str>) -> bool {
        self.finished.push(journal.to_owned());
        true
    }
    fn rolled_back(&mut self, _journal: &str, _origin: Option<&str>) -> bool {
        self.rolled_back += 1;
        true
    }
}

#[test]
fn a_finished_replace_and_create_journal_found_again_after_a_power_loss_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "old\n").unwrap();
    let steps = common::replace_and_create("made/b.txt");
    let ws = ConfinedRoot::new(root).unwrap();
    // The committed journal, as it is when the commit retires its record (its last step
    // before the journal's deletion).
    let mut committed = Vec::new();
    let mut retired = 0;
    let mut retire = || {
        retired += 1;
        true
    };
    let mut observer = |step: CommitStep| {
        if step == CommitStep::Retired {
            committed = journals(root);
        }
    };
    let options = CommitOptions {
        retire: Some(&mut retire),
        observer: Some(&mut observer),
        ..CommitOptions::default()
    };
    staged_journal::commit(&ws, &steps, options).unwrap();
    assert_eq!(retired, 1);
    assert_eq!(committed.len(), 1, "one journal while the commit retired its record");
    assert!(String::from_utf8_lossy(&committed[0].1).contains("committed"), "{committed:?}");
    assert!(journals(root).is_empty(), "the finished commit deleted its journal");
    // Later edits: the replaced file changed again, the created file deleted again.
    std::fs::write(root.join("a.txt"), "later\n").unwrap();
    std::fs::remove_file(root.join("made/b.txt")).unwrap();
    // A power loss lost the journal's deletion: it is there again, committed.
    let (name, bytes) = &committed[0];
    std::fs::write(root.join(".staged/journal").join(name), bytes).unwrap();

    let mut told = Told::default();
    let report = staged_journal::recover(&ws, RecoverOptions { hooks: Some(&mut told) }).unwrap();
    assert!(report.refused.is_empty(), "{:?}", report.refused);
    assert!(report.kept.is_empty(), "{:?}", report.kept);
    assert_eq!(report.rolled_forward, 1);
    assert_eq!(told.finished.len(), 1, "the record is settled again (a no-op for a final one)");
    assert_eq!(told.rolled_back, 0);
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "later\n");
    assert!(!root.join("made/b.txt").exists(), "the created file is not made again");
    let left: Vec<String> = std::fs::read_dir(root.join("made"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "no temp left: {left:?}");
    assert!(journals(root).is_empty(), "recovery deleted the journal");
}
