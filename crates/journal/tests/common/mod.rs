//! Shared helpers of the journal's integration tests.

#![allow(dead_code, clippy::unwrap_used)]

use staged_fs::RelPath;
use staged_journal::{Expect, Step, StepChange, StepMode, fingerprint};

/// A commit's steps that only rename temps into place: `a.txt` (holding `old\n`) replaced by
/// `new\n`, and `created` (absent) made with `made\n`.
pub(crate) fn replace_and_create(created: &str) -> Vec<Step> {
    vec![
        Step {
            target: RelPath::new("a.txt").unwrap(),
            expect: Expect::Fingerprint(fingerprint(b"old\n")),
            change: StepChange::Write { bytes: b"new\n".to_vec(), mode: StepMode::Keep },
        },
        Step {
            target: RelPath::new(created).unwrap(),
            expect: Expect::Absent,
            change: StepChange::Write { bytes: b"made\n".to_vec(), mode: StepMode::Default },
        },
    ]
}
