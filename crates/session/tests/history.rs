//! A session's files and their histories, from log entries as the store keeps them: entries of
//! other sessions and a person's, changes made outside staged between them and after them,
//! created, deleted and moved files.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::type_complexity)]

use std::collections::HashMap;

use staged_core::FileChange;
use staged_journal::{Applied, Edit, fingerprint, replay};
use staged_session::{
    FileHistory, LoggedChange, Step, Texts, file_diff, file_histories, net_change, revert_edits,
};

/// A workspace in memory, and its log.
#[derive(Default)]
struct World {
    files: HashMap<String, String>,
    kept: HashMap<String, String>,
    log: Vec<(u64, Option<u64>, Vec<Applied>, Vec<FileChange>)>,
}

impl Texts for World {
    fn text(&self, hash: &str) -> Option<String> {
        self.kept.get(hash).cloned()
    }
    fn now(&self, path: &str) -> Option<String> {
        self.files.get(path).cloned()
    }
}

fn hash(text: &str) -> String {
    fingerprint(text.as_bytes())
}

impl World {
    /// A logged entry of `session`: replaces `old` by `new` in `path` (`old` empty and the file
    /// absent: creates it; `new` empty and `old` the whole file: deletes it).
    fn entry(&mut self, session: Option<u64>, path: &str, old: &str, new: &str) {
        let before = self.files.get(path).cloned();
        let (op, after) = match &before {
            None => (
                Applied::Create { path: path.into(), content: new.into(), mode: None },
                Some(new.to_owned()),
            ),
            Some(text) if text == old && new.is_empty() => {
                (Applied::Delete { path: path.into(), content: text.clone(), mode: 0o644 }, None)
            }
            Some(text) => {
                let start = text.find(old).expect("the old text is there");
                let edits = vec![Edit { start, before: old.into(), after: new.into() }];
                let after = replay(text, &edits).unwrap();
                (Applied::Update { path: path.into(), edits }, Some(after))
            }
        };
        self.commit(session, vec![op], vec![(path, before, after)]);
    }

    fn moved(&mut self, session: Option<u64>, from: &str, to: &str) {
        let text = self.files.remove(from).unwrap();
        self.files.insert(to.into(), text.clone());
        let seq = self.log.len() as u64 + 1;
        self.kept.insert(hash(&text), text.clone());
        let files = vec![
            FileChange { path: from.into(), before: Some(hash(&text)), after: None },
            FileChange { path: to.into(), before: None, after: Some(hash(&text)) },
        ];
        let op = Applied::Move { from: from.into(), to: to.into(), edits: Vec::new() };
        self.log.push((seq, session, vec![op], files));
    }

    fn commit(
        &mut self,
        session: Option<u64>,
        ops: Vec<Applied>,
        texts: Vec<(&str, Option<String>, Option<String>)>,
    ) {
        let seq = self.log.len() as u64 + 1;
        let mut files = Vec::new();
        for (path, before, after) in texts {
            match &after {
                Some(text) => {
                    self.kept.insert(hash(text), text.clone());
                    self.files.insert(path.into(), text.clone());
                }
                None => {
                    self.files.remove(path);
                }
            }
            files.push(FileChange {
                path: path.into(),
                before: before.as_deref().map(hash),
                after: after.as_deref().map(hash),
            });
        }
        self.log.push((seq, session, ops, files));
    }

    /// A change made outside staged: nothing is logged.
    fn outside(&mut self, path: &str, old: &str, new: &str) {
        let text = self.files.get_mut(path).unwrap();
        *text = text.replacen(old, new, 1);
    }

    fn histories(&self, session: u64) -> Vec<FileHistory> {
        let entries: Vec<LoggedChange<'_>> = self
            .log
            .iter()
            .map(|(seq, session, ops, files)| LoggedChange {
                seq: *seq,
                session: *session,
                ops,
                files,
            })
            .collect();
        file_histories(session, &entries, self).unwrap()
    }
}

fn diff_of(history: &FileHistory) -> (String, staged_session::NetChange, staged_session::FileDiff) {
    let steps: Vec<Step<'_>> =
        history.steps.iter().map(|(author, edits)| Step { author, edits }).collect();
    let net = net_change(&steps, &history.now).unwrap();
    let diff = file_diff(&history.path, &net).unwrap();
    (diff.diff.clone(), net, diff)
}

const A: &str = "fn a() {\n    retry(3);\n}\n\nfn b() {\n    b();\n    b1();\n    b2();\n    b3();\n    b4();\n}\n\nfn c() {\n    c();\n}\n";

#[test]
fn a_session_among_others_and_changes_outside_staged() {
    let mut w = World::default();
    w.files.insert("src/a.rs".into(), A.into());
    w.files.insert("src/b.rs".into(), "b\n".into());
    w.entry(Some(1), "src/a.rs", "retry(3)", "retry(5)");
    w.entry(Some(2), "src/a.rs", "c();", "other_c();");
    w.outside("src/a.rs", "b();", "person_b();");
    w.entry(Some(1), "src/a.rs", "fn c() {", "pub fn c() {");
    w.entry(None, "src/b.rs", "b\n", "b by a person\n");
    w.entry(Some(1), "src/new.rs", "", "new\n");
    w.outside("src/a.rs", "fn a() {", "fn a2() {");
    let histories = w.histories(1);
    let paths: Vec<&str> = histories.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths, ["src/a.rs", "src/new.rs"], "b.rs was never the session's");
    let (diff, net, hunks) = diff_of(&histories[0]);
    // Only the session's lines: not session 2's `other_c`, not the person's `person_b`, nor
    // the later rename of `a`.
    assert!(diff.contains("-    retry(3);\n+    retry(5);\n"), "{diff}");
    assert!(diff.contains("-fn c() {\n+pub fn c() {\n"), "{diff}");
    assert!(!diff.contains("+    other_c();") && !diff.contains("-    c();"), "{diff}");
    assert!(!diff.contains("+    person_b();") && !diff.contains("+fn a2"), "{diff}");
    assert_eq!(hunks.hunks.len(), 2, "{diff}");
    // Reverting the first hunk only keeps everyone else's changes and the second hunk.
    let edits = revert_edits("src/a.rs", &net, &hunks, &[1]).unwrap();
    let reverted = replay(&histories[0].now, &edits).unwrap();
    assert_eq!(reverted, histories[0].now.replace("retry(5)", "retry(3)"));
    // The new file is all the session's.
    let (diff, _, _) = diff_of(&histories[1]);
    assert!(!histories[1].existed_before && histories[1].exists_now);
    assert!(diff.contains("+new\n"), "{diff}");
}

#[test]
fn a_later_change_to_the_sessions_lines_is_changed_since() {
    let mut w = World::default();
    w.files.insert("a.txt".into(), "one\ntwo\nthree\n".into());
    w.entry(Some(1), "a.txt", "two", "TWO");
    w.entry(Some(3), "a.txt", "TWO", "Two!");
    let histories = w.histories(1);
    let (_, net, hunks) = diff_of(&histories[0]);
    assert!(hunks.hunks[0].changed_since.is_some());
    assert!(revert_edits("a.txt", &net, &hunks, &[1]).is_err());
}

#[test]
fn a_moved_file_is_followed() {
    let mut w = World::default();
    w.files.insert("old.txt".into(), "x\ny\n".into());
    w.entry(Some(1), "old.txt", "y", "Y");
    w.moved(None, "old.txt", "new.txt");
    w.outside("new.txt", "x", "X");
    let histories = w.histories(1);
    assert_eq!(
        (histories[0].first_path.as_str(), histories[0].path.as_str()),
        ("old.txt", "new.txt")
    );
    let (diff, _, _) = diff_of(&histories[0]);
    assert!(diff.contains("-y\n+Y\n") && !diff.contains("+X"), "{diff}");
}

#[test]
fn a_gap_staged_kept_no_text_for_is_a_clear_error() {
    let mut w = World::default();
    w.files.insert("a.txt".into(), "1\n2\n".into());
    w.entry(Some(1), "a.txt", "1", "one");
    w.outside("a.txt", "2", "two");
    w.entry(Some(2), "a.txt", "one", "ONE");
    // The store lost every kept text (pruned, or tampered with).
    w.kept.clear();
    let entries: Vec<LoggedChange<'_>> = w
        .log
        .iter()
        .map(|(seq, session, ops, files)| LoggedChange { seq: *seq, session: *session, ops, files })
        .collect();
    let err = file_histories(1, &entries, &w).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the history of a.txt cannot be read: staged kept no copy of the text log entry 1 read or wrote, and it cannot be rebuilt from the entries around it (the file was changed outside staged in between)"
    );
}

#[test]
fn the_session_diff_says_what_it_created_deleted_and_moved() {
    use staged_session::{FileKind, session_files};
    let mut w = World::default();
    w.files.insert("gone.txt".into(), "bye\n".into());
    w.files.insert("a.txt".into(), "a\nz\n".into());
    w.files.insert("m.txt".into(), "m\n".into());
    w.entry(Some(4), "new.txt", "", "hello\n");
    w.entry(Some(4), "gone.txt", "bye\n", "");
    w.entry(Some(4), "a.txt", "a", "A");
    w.moved(Some(4), "m.txt", "moved.txt");
    // Another session's change: not in session 4's diff.
    w.entry(Some(5), "a.txt", "z", "Z");
    let entries: Vec<LoggedChange<'_>> = w
        .log
        .iter()
        .map(|(seq, session, ops, files)| LoggedChange { seq: *seq, session: *session, ops, files })
        .collect();
    let files = session_files(4, &entries, &w).unwrap();
    let kinds: Vec<(&str, &FileKind)> = files.iter().map(|f| (f.path.as_str(), &f.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("new.txt", &FileKind::Created),
            ("gone.txt", &FileKind::Deleted),
            ("a.txt", &FileKind::Changed),
            ("moved.txt", &FileKind::Moved { from: "m.txt".to_owned() }),
        ]
    );
    let diff: String = files.iter().map(|f| f.diff.diff.as_str()).collect();
    assert_eq!(
        diff,
        "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n\
         diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\
         diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n Z\n\
         diff --git a/m.txt b/moved.txt\nrename from m.txt\nrename to moved.txt\n"
    );
    // Session 5's diff is its own line only.
    let five = session_files(5, &entries, &w).unwrap();
    assert_eq!(five.len(), 1);
    assert!(five[0].diff.diff.ends_with("@@ -1,2 +1,2 @@\n A\n-z\n+Z\n"), "{}", five[0].diff.diff);
}

/// A session alone on its files is read without rebuilding the texts in between (the quick
/// reading); it must give exactly the histories the full reading gives.
#[test]
fn a_session_alone_on_its_files_reads_as_the_full_reading_does() {
    let session = |w: &mut World| {
        w.files.insert("a.txt".into(), "1\n2\n3\n4\n5\n6\n7\n8\n9\n".into());
        w.files.insert("b.txt".into(), "b\n".into());
        w.entry(Some(1), "a.txt", "2", "two");
        w.entry(Some(1), "b.txt", "b\n", "B\n");
        w.entry(Some(1), "a.txt", "8", "eight");
        w.entry(Some(1), "new.txt", "", "new\n");
        w.entry(Some(1), "a.txt", "two", "TWO");
        w.entry(Some(1), "new.txt", "new", "newer");
    };
    let mut alone = World::default();
    session(&mut alone);
    // The same, and a file another session wrote after this one: that one file makes the
    // whole session read in full.
    let mut shared = World::default();
    session(&mut shared);
    shared.files.insert("z.txt".into(), "z\n".into());
    shared.entry(Some(1), "z.txt", "z", "Z");
    shared.entry(Some(2), "z.txt", "Z", "ZZ");
    let quick = alone.histories(1);
    let full = shared.histories(1);
    assert_eq!(full.len(), 4);
    assert_eq!(quick[..], full[..3]);
    assert_eq!(quick[0].steps.len(), 3);
    assert!(!quick[2].existed_before && quick[2].exists_now);
}

/// A logged edit that does not give the text its entry says it wrote (a log changed outside
/// staged): the quick reading does not take it as it is; the full reading shows the gap as a
/// change made outside staged.
#[test]
fn a_logged_edit_that_does_not_give_the_file_now_is_not_read_quickly() {
    let mut w = World::default();
    w.files.insert("a.txt".into(), "1\n2\n3\n".into());
    // The store keeps a file's text before its first logged change.
    w.kept.insert(hash("1\n2\n3\n"), "1\n2\n3\n".into());
    w.entry(Some(1), "a.txt", "2", "two");
    // The entry's edit says it wrote "TWO", its hashes and the file say "two".
    if let Applied::Update { edits, .. } = &mut w.log[0].2[0] {
        edits[0].after = "TWO".into();
    }
    let histories = w.histories(1);
    let authors: Vec<&staged_session::Author> = histories[0].steps.iter().map(|(a, _)| a).collect();
    assert_eq!(
        authors,
        [
            &staged_session::Author::Mine { entry: 1 },
            &staged_session::Author::Other(staged_session::Origin::Outside)
        ]
    );
}

/// A long session's files are drawn on two threads: in the order the session first changed
/// them, each with its own diff, as one thread draws them.
#[test]
fn a_long_sessions_files_keep_their_order_and_diffs() {
    use staged_session::session_files;
    let mut w = World::default();
    let names: Vec<String> = (0..70).map(|i| format!("f{:02}.txt", (i * 37) % 70)).collect();
    for name in &names {
        w.files.insert(name.clone(), format!("{name}\nsame\n"));
    }
    for (i, name) in names.iter().enumerate() {
        let session = if i == 40 { Some(2) } else { Some(1) };
        w.entry(session, name, "same", &format!("changed by {i}"));
    }
    let entries: Vec<LoggedChange<'_>> = w
        .log
        .iter()
        .map(|(seq, session, ops, files)| LoggedChange { seq: *seq, session: *session, ops, files })
        .collect();
    let files = session_files(1, &entries, &w).unwrap();
    let mut expected = names.clone();
    expected.remove(40);
    assert_eq!(files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), expected);
    for f in &files {
        let i = names.iter().position(|n| *n == f.path).unwrap();
        assert!(f.diff.diff.ends_with(&format!("-same\n+changed by {i}\n")), "{}", f.diff.diff);
    }
}
