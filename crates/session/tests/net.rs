//! The net change of a session in one file: exact cases, and random histories checked against a
//! second, independent model (a character weave).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use staged_journal::{Edit, replay};
use staged_session::{Author, NetChange, Origin, RegionState, Step, net::regions, net_change};

fn edit(start: usize, before: &str, after: &str) -> Edit {
    Edit { start, before: before.to_owned(), after: after.to_owned() }
}

const MINE: Author = Author::Mine { entry: 1 };

fn other(seq: u64) -> Author {
    Author::Other(Origin::Entry { seq, session: Some("B".to_owned()) })
}

/// A person's log entry (`staged session revert`, `staged undo`).
fn person(seq: u64) -> Author {
    Author::Other(Origin::Entry { seq, session: None })
}

/// The text after `steps` on `base`.
fn text_after(base: &str, steps: &[(Author, Vec<Edit>)]) -> String {
    let mut text = base.to_owned();
    for (_, edits) in steps {
        text = replay(&text, edits).expect("the test's edits fit");
    }
    text
}

fn steps(history: &[(Author, Vec<Edit>)]) -> Vec<Step<'_>> {
    history.iter().map(|(author, edits)| Step { author, edits }).collect()
}

/// The text after `history` on `base`, and the session's net change in it.
fn net_after(base: &str, history: &[(Author, Vec<Edit>)]) -> (String, NetChange) {
    let now = text_after(base, history);
    let net = net_change(&steps(history), &now).unwrap();
    (now, net)
}

#[test]
fn one_edit_is_the_net_change() {
    let base = "a\nb\nc\n";
    let history = vec![(MINE, vec![edit(2, "b\n", "B\n")])];
    let (_, net) = net_after(base, &history);
    assert_eq!(net.without, base);
    assert_eq!(net.edits, vec![edit(2, "b\n", "B\n")]);
}

#[test]
fn another_writers_edit_elsewhere_is_not_the_sessions() {
    let base = "a\nb\nc\nd\n";
    let history = vec![
        (MINE, vec![edit(2, "b\n", "B\n")]),
        (other(2), vec![edit(6, "d\n", "D\n")]),
        (other(3), vec![edit(0, "", "zero\n")]),
    ];
    let now = text_after(base, &history);
    assert_eq!(now, "zero\na\nB\nc\nD\n");
    let net = net_change(&steps(&history), &now).unwrap();
    assert_eq!(net.without, "zero\na\nb\nc\nD\n");
    assert_eq!(replay(&net.without, &net.edits).unwrap(), now);
}

#[test]
fn two_entries_of_the_session_on_neighbouring_text_make_one_region() {
    let base = "a\nb\nc\n";
    let history = vec![
        (Author::Mine { entry: 1 }, vec![edit(2, "b\n", "B\n")]),
        (Author::Mine { entry: 4 }, vec![edit(4, "c\n", "C\n")]),
        (Author::Mine { entry: 5 }, vec![edit(2, "B\n", "BB\n")]),
    ];
    let (_, net) = net_after(base, &history);
    assert_eq!(net.regions.len(), 1);
    assert_eq!(net.regions[0].entries, vec![1, 4, 5]);
    assert_eq!(net.without, base);
    assert_eq!(net.edits, vec![edit(2, "b\nc\n", "BB\nC\n")]);
}

#[test]
fn a_change_the_session_takes_back_leaves_nothing() {
    let base = "a\nb\n";
    let history = vec![
        (Author::Mine { entry: 1 }, vec![edit(0, "a\n", "x\n")]),
        (Author::Mine { entry: 2 }, vec![edit(0, "x\n", "a\n")]),
    ];
    let net = net_change(&steps(&history), base).unwrap();
    assert!(net.regions.is_empty());
    assert_eq!(net.without, base);
}

#[test]
fn another_writer_reaching_into_a_region_marks_it_changed_since() {
    let base = "a\nb\nc\n";
    let history = vec![
        (MINE, vec![edit(2, "b\n", "B1\nB2\n")]),
        (other(7), vec![edit(5, "B2\n", "other\n")]),
    ];
    let (_, net) = net_after(base, &history);
    assert_eq!(net.regions.len(), 1);
    assert_eq!(
        net.regions[0].state,
        RegionState::ChangedSince {
            by: Origin::Entry { seq: 7, session: Some("B".to_owned()) },
            mine: "B1\nB2\n".to_owned()
        }
    );
    assert_eq!(net.without, base);
}

#[test]
fn an_insertion_at_a_regions_edge_is_beside_it() {
    let base = "a\nb\nc\n";
    let history = vec![
        (MINE, vec![edit(2, "b\n", "B\n")]),
        (other(2), vec![edit(2, "", "before\n"), edit(4, "", "after\n")]),
    ];
    let now = text_after(base, &history);
    assert_eq!(now, "a\nbefore\nB\nafter\nc\n");
    let net = net_change(&steps(&history), &now).unwrap();
    assert_eq!(net.regions[0].state, RegionState::Live);
    assert_eq!(net.without, "a\nbefore\nb\nafter\nc\n");
}

#[test]
fn an_exact_revert_takes_a_region_out_and_its_undo_puts_it_back() {
    let base = "a\nb\nc\n";
    let mut history = vec![
        (MINE, vec![edit(2, "b\n", "B\n")]),
        (other(2), vec![edit(0, "a\n", "A\n")]),
        // A person reverts the session's hunk.
        (person(3), vec![edit(2, "B\n", "b\n")]),
    ];
    let (now, net) = net_after(base, &history);
    assert!(net.regions.is_empty(), "{net:?}");
    assert_eq!(net.without, now);
    // `staged undo` of that revert.
    history.push((person(4), vec![edit(2, "b\n", "B\n")]));
    let (_, net) = net_after(base, &history);
    assert_eq!(net.regions.len(), 1);
    assert_eq!(net.regions[0].state, RegionState::Live);
    assert_eq!(net.without, "A\nb\nc\n");
}

#[test]
fn the_revert_of_a_deletion_takes_it_out_and_its_undo_puts_it_back() {
    let base = "a\nX\nb\n";
    let mut history = vec![
        (MINE, vec![edit(2, "X\n", "")]),
        // A person reverts the session's deletion: the line comes back at its place.
        (person(2), vec![edit(2, "", "X\n")]),
    ];
    let now = text_after(base, &history);
    assert_eq!(now, base);
    let net = net_change(&steps(&history), &now).unwrap();
    assert!(net.regions.iter().all(|r| !r.counts()), "{net:?}");
    assert!(net.edits.is_empty(), "a reverted deletion shows no change: {net:?}");
    assert_eq!(net.without, now);
    // `staged undo` of that revert deletes the line again: the session's deletion is back.
    history.push((person(3), vec![edit(2, "X\n", "")]));
    let (_, net) = net_after(base, &history);
    assert_eq!(net.regions.len(), 1);
    assert_eq!(net.regions[0].state, RegionState::Live);
    assert_eq!(net.without, base);
}

#[test]
fn another_insertion_where_the_session_deleted_marks_the_deletion_changed_since() {
    let base = "a\nX\nb\n";
    let history = vec![(MINE, vec![edit(2, "X\n", "")]), (other(2), vec![edit(2, "", "Y\n")])];
    let now = text_after(base, &history);
    assert_eq!(now, "a\nY\nb\n");
    let net = net_change(&steps(&history), &now).unwrap();
    assert_eq!(net.regions.len(), 1);
    // Whether X came before or after Y is not known: a revert must not guess.
    assert!(matches!(net.regions[0].state, RegionState::ChangedSince { .. }), "{net:?}");
    assert_eq!(replay(&net.without, &net.edits).as_deref(), Some(now.as_str()));
}

#[test]
fn the_undo_of_a_change_made_since_makes_the_region_whole_again() {
    let base = "a\nb\nc\n";
    let history = vec![
        (MINE, vec![edit(2, "b\n", "B\n")]),
        // Another session changes the session's line, and that change is undone.
        (other(2), vec![edit(2, "B\n", "B2\n")]),
        (other(3), vec![edit(2, "B2\n", "B\n")]),
    ];
    let (_, net) = net_after(base, &history);
    assert_eq!(net.regions.len(), 1);
    assert_eq!(net.regions[0].state, RegionState::Live);
    assert_eq!(net.without, base);
}

#[test]
fn the_undo_of_a_revert_of_added_lines_makes_them_the_sessions_again() {
    let base = "a\nb\n";
    let mut history = vec![
        (MINE, vec![edit(2, "", "NEW\n")]),
        // A person reverts the session's insertion.
        (person(2), vec![edit(2, "NEW\n", "")]),
    ];
    let net = net_change(&steps(&history), base).unwrap();
    assert!(net.edits.is_empty(), "{net:?}");
    // `staged undo` of that revert puts the line back: the session's again.
    history.push((person(3), vec![edit(2, "", "NEW\n")]));
    let (_, net) = net_after(base, &history);
    assert_eq!(net.regions.len(), 1);
    assert_eq!(net.regions[0].state, RegionState::Live);
    assert_eq!(net.without, base);
}

#[test]
fn the_undo_of_another_writers_deletion_of_the_sessions_lines_makes_them_whole_again() {
    let base = "a\nb\nc\n";
    let history = vec![
        (MINE, vec![edit(2, "b\n", "B\n")]),
        (other(2), vec![edit(2, "B\n", "")]),
        (other(3), vec![edit(2, "", "B\n")]),
    ];
    let now = text_after(base, &history);
    assert_eq!(now, "a\nB\nc\n");
    let net = net_change(&steps(&history), &now).unwrap();
    assert_eq!(net.regions.len(), 1);
    assert_eq!(net.regions[0].state, RegionState::Live);
    assert_eq!(net.without, base);
}

#[test]
fn the_session_writing_over_a_change_made_since_makes_its_text_whole_again() {
    let base = "a\nb\nc\n";
    let history = vec![
        (MINE, vec![edit(2, "b\n", "B\n")]),
        (other(2), vec![edit(2, "B\n", "B2\n")]),
        (Author::Mine { entry: 3 }, vec![edit(2, "B2\n", "B3\n")]),
    ];
    let (_, net) = net_after(base, &history);
    assert_eq!(net.regions.len(), 1);
    assert_eq!(net.regions[0].state, RegionState::Live);
    assert_eq!(net.without, base);
    // Over part of it only, it stays changed since.
    let history = vec![
        (MINE, vec![edit(2, "b\n", "B\n")]),
        (other(2), vec![edit(2, "B\n", "B2\nX\n")]),
        (Author::Mine { entry: 3 }, vec![edit(2, "B2\n", "B3\n")]),
    ];
    let (_, net) = net_after(base, &history);
    assert!(matches!(net.regions[0].state, RegionState::ChangedSince { .. }), "{net:?}");
}

#[test]
fn another_session_writing_a_reverted_text_again_does_not_give_it_back_to_the_session() {
    let base = "a\nb\n";
    let history = vec![
        (MINE, vec![edit(2, "", "NEW\n")]),
        (person(2), vec![edit(2, "NEW\n", "")]),
        // Another session adds the same line on its own: its change, not an undo of the revert.
        (other(3), vec![edit(2, "", "NEW\n")]),
    ];
    let (now, net) = net_after(base, &history);
    assert!(net.edits.is_empty(), "{net:?}");
    assert_eq!(net.without, now);
}

#[test]
fn a_person_undoing_another_sessions_change_does_not_give_back_a_text_it_took_out() {
    let base = "1\n2\n4\n";
    let history = vec![
        // This session adds 3; another session deletes it; a person's revert of that other
        // session puts it back.
        (MINE, vec![edit(4, "", "3\n")]),
        (other(2), vec![edit(4, "3\n", "")]),
        (person(3), vec![edit(4, "", "3\n")]),
    ];
    let (now, net) = net_after(base, &history);
    assert!(net.edits.is_empty(), "the line is not this session's again: {net:?}");
    assert_eq!(net.without, now);
}

#[test]
fn a_history_that_does_not_fit_is_an_error() {
    let history = vec![(MINE, vec![edit(0, "a", "b")]), (other(2), vec![edit(0, "zz", "")])];
    assert!(regions(&steps(&history)).is_err());
}

// --- random histories ---------------------------------------------------------------------

/// A small deterministic generator (xorshift), so that a failure names its seed.
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

    fn text(&mut self, max: usize) -> String {
        let len = self.below(max + 1);
        (0..len).map(|_| ['a', 'b', 'c', '\n'][self.below(4)]).collect()
    }
}

/// Random sorted, non-overlapping edits of `text`.
fn random_edits(rng: &mut Rng, text: &str) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut at = 0;
    let n = 1 + rng.below(3);
    for _ in 0..n {
        if at > text.len() {
            break;
        }
        let start = at + rng.below(text.len() - at + 1);
        let len = rng.below((text.len() - start).min(4) + 1);
        let after = rng.text(3);
        let before = &text[start..start + len];
        if before != after {
            edits.push(Edit { start, before: before.to_owned(), after });
        }
        at = start + len + 1;
    }
    edits
}

/// The independent model: every character ever written, in order, with the step that wrote it
/// and the step that removed it.
#[derive(Clone, Copy)]
struct Atom {
    byte: u8,
    born: Option<usize>,
    died: Option<usize>,
}

fn weave(base: &str, history: &[(Author, Vec<Edit>)]) -> Vec<Atom> {
    let mut atoms: Vec<Atom> =
        base.bytes().map(|byte| Atom { byte, born: None, died: None }).collect();
    for (k, (_, edits)) in history.iter().enumerate() {
        for edit in edits.iter().rev() {
            let alive: Vec<usize> = (0..atoms.len()).filter(|&i| atoms[i].died.is_none()).collect();
            for &i in &alive[edit.start..edit.start + edit.before.len()] {
                atoms[i].died = Some(k);
            }
            // New text goes after what it replaced, before the next living character.
            let at = if edit.before.is_empty() {
                alive.get(edit.start).copied().unwrap_or(atoms.len())
            } else {
                alive[edit.start + edit.before.len() - 1] + 1
            };
            let new: Vec<Atom> =
                edit.after.bytes().map(|byte| Atom { byte, born: Some(k), died: None }).collect();
            atoms.splice(at..at, new);
        }
    }
    atoms
}

#[test]
fn random_histories_agree_with_a_character_weave() {
    let mut compared = 0;
    let mut all_mine_cases = 0;
    let cases: usize =
        std::env::var("STAGED_NET_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(20_000);
    for seed in 1..=cases as u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let base = rng.text(24);
        let mut history: Vec<(Author, Vec<Edit>)> = Vec::new();
        let mut text = base.clone();
        let all_mine = rng.below(4) == 0;
        for k in 0..1 + rng.below(6) {
            let author = if all_mine || rng.below(2) == 0 {
                Author::Mine { entry: k as u64 }
            } else {
                other(k as u64)
            };
            let edits = random_edits(&mut rng, &text);
            text = replay(&text, &edits).unwrap();
            history.push((author, edits));
        }
        let net = net_change(&steps(&history), &text)
            .unwrap_or_else(|err| panic!("seed {seed}: {err}: {base:?} {history:?}"));
        assert_eq!(replay(&net.without, &net.edits).as_deref(), Some(text.as_str()), "seed {seed}");
        if all_mine {
            assert_eq!(net.without, base, "seed {seed}: {history:?}");
            all_mine_cases += 1;
            continue;
        }
        // Compare with the weave where it has one answer: no other writer touched the
        // session's text or wrote right beside it.
        let mine =
            |k: Option<usize>| k.is_some_and(|k| matches!(history[k].0, Author::Mine { .. }));
        let atoms = weave(&base, &history);
        let touched = |a: &Atom| mine(a.born) || mine(a.died);
        let others = |a: &Atom| {
            a.born.is_some_and(|k| !mine(Some(k))) || a.died.is_some_and(|k| !mine(Some(k)))
        };
        let ambiguous =
            atoms.iter().any(|a| mine(a.born) && a.died.is_some_and(|k| !mine(Some(k))))
                || atoms.windows(2).any(|w| {
                    (touched(&w[0]) && others(&w[1])) || (others(&w[0]) && touched(&w[1]))
                });
        if ambiguous {
            continue;
        }
        let without: Vec<u8> = atoms
            .iter()
            .filter(|a| !mine(a.born) && (a.died.is_none() || mine(a.died)))
            .map(|a| a.byte)
            .collect();
        assert_eq!(net.without.as_bytes(), without.as_slice(), "seed {seed}: {base:?} {history:?}");
        assert!(net.regions.iter().all(|r| r.state == RegionState::Live), "seed {seed}");
        compared += 1;
    }
    eprintln!("compared {compared}, all mine {all_mine_cases} of {cases}");
    assert!(compared > cases / 10, "only {compared} of {cases} histories were unambiguous");
    assert!(all_mine_cases > cases / 10);
}

// --- hunks --------------------------------------------------------------------------------

use staged_session::{RevertError, file_diff, revert_edits};

#[test]
fn hunks_are_numbered_as_a_preview_and_revert_alone() {
    let base: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let history = vec![
        (
            Author::Mine { entry: 1 },
            vec![edit(base.find("line 3\n").unwrap(), "line 3\n", "LINE 3\n")],
        ),
        (other(2), vec![edit(base.find("line 12\n").unwrap(), "line 12\n", "other 12\n")]),
        (
            Author::Mine { entry: 3 },
            vec![edit(base.find("line 25\n").unwrap() + 1, "line 25\n", "LINE 25\n")],
        ),
    ];
    let now = text_after(&base, &history);
    let net = net_change(&steps(&history), &now).unwrap();
    let diff = file_diff("src/a.txt", &net).unwrap();
    assert_eq!(diff.hunks.len(), 2, "{}", diff.diff);
    assert!(diff.diff.contains("-line 3\n+LINE 3\n") && diff.diff.contains("-line 25\n+LINE 25\n"));
    assert!(!diff.diff.contains("other 12\n+") && !diff.diff.contains("-line 12"), "{}", diff.diff);
    assert_eq!((diff.hunks[0].entries.clone(), diff.hunks[1].entries.clone()), (vec![1], vec![3]));
    // Revert the first entry's hunk only: the session's second hunk and the other writer's
    // change stay.
    let edits = revert_edits("src/a.txt", &net, &diff, &[1]).unwrap();
    let reverted = replay(&now, &edits).unwrap();
    assert_eq!(reverted, now.replace("LINE 3\n", "line 3\n"));
    assert_eq!(
        revert_edits("src/a.txt", &net, &diff, &[3]),
        Err(RevertError::NoSuchHunk { path: "src/a.txt".to_owned(), number: 3, count: 2 })
    );
}

#[test]
fn a_hunks_key_survives_changes_around_it_and_not_its_own() {
    let base: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    let at = base.find("line 10\n").unwrap();
    let first = vec![(Author::Mine { entry: 1 }, vec![edit(at, "line 10\n", "TEN\n")])];
    let key = |history: &Vec<(Author, Vec<Edit>)>| {
        let now = text_after(&base, history);
        let net = net_change(&steps(history), &now).unwrap();
        file_diff("a", &net).unwrap().hunks[0].key.clone()
    };
    let mut around = first.clone();
    around.push((other(2), vec![edit(0, "line 1\n", "ONE\n")]));
    let eleven = text_after(&base, &around).find("line 11\n").unwrap();
    around.push((other(3), vec![edit(eleven, "line 11\n", "eleven\n")]));
    assert_eq!(key(&first), key(&around));
    let mut again = first.clone();
    again.push((Author::Mine { entry: 4 }, vec![edit(at, "TEN\n", "TEN!\n")]));
    assert_ne!(key(&first), key(&again));
}

#[test]
fn a_hunk_changed_since_is_refused_naming_who() {
    let base = "a\nb\nc\n";
    let history =
        vec![(MINE, vec![edit(2, "b\n", "B\n")]), (other(9), vec![edit(2, "B\n", "BB\n")])];
    let (_, net) = net_after(base, &history);
    let diff = file_diff("f", &net).unwrap();
    assert_eq!(
        revert_edits("f", &net, &diff, &[1]),
        Err(RevertError::ChangedSince {
            path: "f".to_owned(),
            number: 1,
            by: "log entry 9 (session B)".to_owned()
        })
    );
}
