//! A `.staged/journal/` that someone else wrote (a repository that ships one, or a file
//! planted beside a workspace) can never make recovery write, rename or delete anything but
//! staged's own temp files and targets inside the root, reached without a symlink. Anything
//! else is refused with a message, and nothing is touched.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{os::unix::fs::symlink, path::Path};

use serde_json::json;
use staged_journal::{ConfinedRoot, RecoverOptions, recover};

const ID: &str = "4242-1700000000000000000-0";

struct Planted {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
}

impl Planted {
    fn new() -> Planted {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join(".staged/journal")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("victim.txt"), "victim").unwrap();
        std::fs::write(outside.join("delete-me.txt"), "keep").unwrap();
        std::fs::write(root.join("src/a.ts"), "inside").unwrap();
        Planted { root: root.canonicalize().unwrap(), outside, _tmp: tmp }
    }

    fn journal(&self, journal: &serde_json::Value) {
        std::fs::write(
            self.root.join(format!(".staged/journal/{ID}.json")),
            serde_json::to_vec(journal).unwrap(),
        )
        .unwrap();
    }

    fn snapshot(&self) -> Vec<(String, Vec<u8>)> {
        let mut res = Vec::new();
        for base in [&self.root, &self.outside] {
            let mut stack = vec![base.clone()];
            while let Some(dir) = stack.pop() {
                for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                    let path = entry.path();
                    if path.ends_with(".staged/journal/commit.lock") {
                        // Recovery's own lock, created empty and never deleted.
                        continue;
                    }
                    let meta = std::fs::symlink_metadata(&path).unwrap();
                    if meta.is_dir() {
                        stack.push(path);
                    } else if meta.is_file() {
                        res.push((path.display().to_string(), std::fs::read(&path).unwrap()));
                    } else {
                        res.push((path.display().to_string(), b"<symlink>".to_vec()));
                    }
                }
            }
        }
        res.sort();
        res
    }

    /// Recovers, expecting this journal to be refused with `why`, and nothing changed.
    fn assert_refused(&self, why: &str) {
        let before = self.snapshot();
        let report =
            recover(&ConfinedRoot::new(&self.root).unwrap(), RecoverOptions::default()).unwrap();
        assert_eq!((report.rolled_back, report.rolled_forward), (0, 0), "{report:?}");
        assert_eq!(report.refused.len(), 1, "{report:?}");
        assert!(report.refused[0].contains(why), "{}", report.refused[0]);
        assert!(report.refused[0].contains(&format!("{ID}.json")), "{}", report.refused[0]);
        assert_eq!(self.snapshot(), before, "recovery touched something");
        assert_eq!(std::fs::read_to_string(self.outside.join("victim.txt")).unwrap(), "victim");
        assert_eq!(std::fs::read_to_string(self.outside.join("delete-me.txt")).unwrap(), "keep");
    }
}

fn committed(target: &str) -> serde_json::Value {
    json!({"version": 2, "state": "committed", "entries": [{"target": target}]})
}

fn temp(dir: &Path, name: &str) -> std::path::PathBuf {
    dir.join(format!(".{name}.staged-{ID}-0.tmp"))
}

#[test]
fn a_target_that_climbs_out_is_refused() {
    let fx = Planted::new();
    std::fs::write(temp(&fx.outside, "victim.txt"), "pwned").unwrap();
    fx.journal(&committed("../outside/victim.txt"));
    fx.assert_refused("`..` components are not allowed");
}

#[test]
fn an_absolute_target_is_refused() {
    let fx = Planted::new();
    let victim = fx.outside.join("victim.txt");
    std::fs::write(temp(&fx.outside, "victim.txt"), "pwned").unwrap();
    fx.journal(&committed(victim.to_str().unwrap()));
    fx.assert_refused("it is absolute");
}

#[test]
fn a_target_through_a_symlinked_folder_is_refused() {
    let fx = Planted::new();
    symlink(&fx.outside, fx.root.join("link")).unwrap();
    std::fs::write(temp(&fx.outside, "victim.txt"), "pwned").unwrap();
    fx.journal(&committed("link/victim.txt"));
    fx.assert_refused("cannot be opened without following a symlink");
}

#[test]
fn a_target_that_is_a_symlink_is_refused() {
    let fx = Planted::new();
    symlink(fx.outside.join("victim.txt"), fx.root.join("src/v.txt")).unwrap();
    std::fs::write(temp(&fx.root.join("src"), "v.txt"), "pwned").unwrap();
    fx.journal(&committed("src/v.txt"));
    fx.assert_refused("is not a regular file");
}

#[test]
fn a_temp_that_staged_did_not_write_is_never_renamed_in() {
    let fx = Planted::new();
    // The right name and place, but not the file a commit wrote (no identity recorded).
    std::fs::write(temp(&fx.root.join("src"), "a.ts"), "planted").unwrap();
    fx.journal(&committed("src/a.ts"));
    fx.assert_refused("is not the file staged wrote");
    // Nor with an identity copied from somewhere else.
    let fx = Planted::new();
    std::fs::write(temp(&fx.root.join("src"), "a.ts"), "planted").unwrap();
    fx.journal(&json!({"version": 2, "state": "committed", "entries": [
        {"target": "src/a.ts", "temp": {"dev": 1, "ino": 2, "ctime": 3, "ctimeNsec": 4}}
    ]}));
    fx.assert_refused("is not the file staged wrote");
}

#[test]
fn a_temp_that_is_a_symlink_is_refused() {
    let fx = Planted::new();
    symlink(fx.outside.join("delete-me.txt"), temp(&fx.root.join("src"), "a.ts")).unwrap();
    fx.journal(&json!({"version": 2, "state": "preparing", "entries": [{"target": "src/a.ts"}]}));
    fx.assert_refused("the temp file of `src/a.ts` is not a regular file");
}

#[test]
fn the_old_absolute_journal_format_is_refused() {
    let fx = Planted::new();
    let victim = fx.outside.join("victim.txt");
    let planted_temp = fx.root.join("src/payload.tmp");
    std::fs::write(&planted_temp, "pwned").unwrap();
    fx.journal(&json!({"state": "committed", "entries": [
        {"target": victim, "temp": planted_temp},
        {"target": fx.outside.join("x"), "temp": fx.outside.join("delete-me.txt")},
    ]}));
    fx.assert_refused("it is not a journal");
}

#[test]
fn junk_and_unknown_fields_are_refused() {
    let fx = Planted::new();
    fx.journal(&json!({"version": 2, "state": "committed", "entries": [], "run": "rm -rf /"}));
    fx.assert_refused("unknown field");
    let fx = Planted::new();
    std::fs::write(fx.root.join(format!(".staged/journal/{ID}.json")), [0xff, 0x00, 0x13]).unwrap();
    fx.assert_refused("it is not a journal");
    let fx = Planted::new();
    fx.journal(&json!({"version": 9, "state": "committed", "entries": []}));
    fx.assert_refused("journal format 9");
}

#[test]
fn a_planted_journal_symlink_is_refused() {
    let fx = Planted::new();
    std::fs::write(fx.outside.join("j.json"), committed("src/a.ts").to_string()).unwrap();
    symlink(fx.outside.join("j.json"), fx.root.join(format!(".staged/journal/{ID}.json"))).unwrap();
    fx.assert_refused("it cannot be read");
}

#[test]
fn a_symlinked_state_or_journal_folder_is_an_error_and_never_followed() {
    for link in [".staged", ".staged/journal"] {
        let fx = Planted::new();
        std::fs::remove_dir_all(fx.root.join(link)).unwrap();
        let dest = fx.outside.join("state");
        std::fs::create_dir_all(dest.join("journal")).unwrap();
        std::fs::write(dest.join(format!("journal/{ID}.json")), committed("src/a.ts").to_string())
            .unwrap();
        std::fs::write(dest.join(format!("{ID}.json")), committed("src/a.ts").to_string()).unwrap();
        symlink(&dest, fx.root.join(link)).unwrap();
        let before = fx.snapshot();
        let err =
            recover(&ConfinedRoot::new(&fx.root).unwrap(), RecoverOptions::default()).unwrap_err();
        assert!(matches!(err, staged_journal::JournalError::StateDir { .. }), "{err}");
        assert!(err.to_string().contains("it is a symlink"), "{err}");
        assert_eq!(fx.snapshot(), before);
    }
}

#[test]
fn a_valid_planted_preparing_journal_only_deletes_staged_temps_inside() {
    let fx = Planted::new();
    let ours = temp(&fx.root.join("src"), "a.ts");
    std::fs::write(&ours, "half-written").unwrap();
    fx.journal(&json!({"version": 2, "state": "preparing", "entries": [{"target": "src/a.ts"}]}));
    let report = recover(&ConfinedRoot::new(&fx.root).unwrap(), RecoverOptions::default()).unwrap();
    assert_eq!(report.rolled_back, 1, "{report:?}");
    assert!(!ours.exists());
    assert_eq!(std::fs::read_to_string(fx.root.join("src/a.ts")).unwrap(), "inside");
    assert_eq!(std::fs::read_to_string(fx.outside.join("delete-me.txt")).unwrap(), "keep");
}
