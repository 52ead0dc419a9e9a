//! A folder swapped for a symlink to the outside in the middle of a commit that creates,
//! deletes and moves files: the commit writes through the directory handles it opened, so the
//! outside is never written or deleted from, whatever the names point at by then. The swap
//! happens inside the commit's observer, at each step in turn.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use staged_fs::RelPath;
use staged_journal::{
    CommitOptions, CommitStep, ConfinedRoot, Expect, RecoverOptions, Step, StepChange, StepMode,
    commit, fingerprint, recover,
};

fn rel(path: &str) -> RelPath {
    RelPath::new(path).unwrap()
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Moves `folder` aside (to `<folder>.moved`) and puts a symlink to `outside` at its name.
fn swap(root: &Path, folder: &str, outside: &Path) {
    let at = root.join(folder);
    if std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir()) {
        std::fs::rename(&at, root.join(format!("{folder}.moved"))).unwrap();
        std::os::unix::fs::symlink(outside, &at).unwrap();
    }
}

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut res = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                res.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    res.sort();
    res
}

#[test]
fn a_folder_swapped_at_any_step_of_a_create_delete_and_move_redirects_nothing() {
    let steps = |root: &Path| {
        vec![
            // A new file in a folder that exists, and one in folders the commit creates.
            Step {
                target: rel("src/new.txt"),
                expect: Expect::Absent,
                change: StepChange::Write { bytes: b"new\n".to_vec(), mode: StepMode::Default },
            },
            Step {
                target: rel("src/deep/er/made.txt"),
                expect: Expect::Absent,
                change: StepChange::Write { bytes: b"made\n".to_vec(), mode: StepMode::Default },
            },
            // A delete, and a move (a create and a delete).
            Step {
                target: rel("src/gone.txt"),
                expect: Expect::Fingerprint(fingerprint(
                    &std::fs::read(root.join("src/gone.txt")).unwrap(),
                )),
                change: StepChange::Delete,
            },
            Step {
                target: rel("src/moved.txt"),
                expect: Expect::Absent,
                change: StepChange::Write {
                    bytes: b"moving\n".to_vec(),
                    mode: StepMode::Of(rel("src/moving.txt")),
                },
            },
            Step {
                target: rel("src/moving.txt"),
                expect: Expect::Fingerprint(fingerprint(b"moving\n")),
                change: StepChange::Delete,
            },
        ]
    };
    let setup = |root: &Path| {
        write(root, "src/gone.txt", "gone\n");
        write(root, "src/moving.txt", "moving\n");
    };
    // How many steps a commit reports, undisturbed.
    let reference = tempfile::tempdir().unwrap();
    setup(reference.path());
    let ws = ConfinedRoot::new(reference.path()).unwrap();
    let mut n_steps = 0;
    let mut observer = |_: CommitStep| n_steps += 1;
    commit(
        &ws,
        &steps(reference.path()),
        CommitOptions { observer: Some(&mut observer), ..Default::default() },
    )
    .unwrap();
    let mut outcomes = Vec::new();
    for swap_at in 0..n_steps {
        for folder in ["src", "src/deep"] {
            let dir = tempfile::tempdir().unwrap();
            let outside = tempfile::tempdir().unwrap();
            // The outside twin holds the same files, so only the handles can tell them apart.
            setup(outside.path());
            let twin = outside.path().join("src");
            write(outside.path(), "src/gone.txt", "gone\n");
            let before_outside = listing(outside.path());
            let root = dir.path().canonicalize().unwrap();
            setup(&root);
            let ws = ConfinedRoot::new(&root).unwrap();
            let mut seen = 0;
            let mut observer = |_step: CommitStep| {
                if seen == swap_at {
                    swap(&root, folder, &twin);
                }
                seen += 1;
            };
            let res = commit(
                &ws,
                &steps(&root),
                CommitOptions { observer: Some(&mut observer), ..Default::default() },
            );
            assert_eq!(
                listing(outside.path()),
                before_outside,
                "swap of {folder} at step {swap_at}"
            );
            // Whatever happened inside, the next start leaves no journal behind.
            recover(&ws, RecoverOptions::default()).unwrap();
            let journal: Vec<String> = std::fs::read_dir(root.join(".staged/journal"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".json"))
                .collect();
            assert!(journal.is_empty(), "swap of {folder} at step {swap_at}: {journal:?}");
            outcomes.push(res.is_ok());
        }
    }
    // Some swaps come too late to matter, and some make the commit refuse: both happen.
    assert!(outcomes.iter().any(|ok| *ok), "{outcomes:?}");
}
