//! `Progress`: how far one long piece of work has come (files searched or written, out of how
//! many), counted by the engine and the journal and read by a front end that shows it. Counts
//! only: nothing here prints.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// What the counted work is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Nothing counted yet.
    Idle,
    /// Reading and matching files.
    Searching,
    /// Writing files durably (an apply or an undo).
    Writing,
}

/// Counts of the work under way, shared between the worker that does it and whoever shows it.
#[derive(Debug, Default)]
pub struct Progress {
    phase: AtomicU8,
    done: AtomicU64,
    total: AtomicU64,
}

impl Progress {
    /// Starts counting `phase`, `total` items long, from zero.
    pub fn begin(&self, phase: Phase, total: u64) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        let code = match phase {
            Phase::Idle => 0,
            Phase::Searching => 1,
            Phase::Writing => 2,
        };
        self.phase.store(code, Ordering::Relaxed);
    }

    /// Counts `n` more items done.
    pub fn advance(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    /// The phase, the items done and the total, as they are now.
    pub fn now(&self) -> (Phase, u64, u64) {
        let phase = match self.phase.load(Ordering::Relaxed) {
            1 => Phase::Searching,
            2 => Phase::Writing,
            _ => Phase::Idle,
        };
        let total = self.total.load(Ordering::Relaxed);
        (phase, self.done.load(Ordering::Relaxed).min(total), total)
    }
}

#[cfg(test)]
mod tests {
    use super::{Phase, Progress};

    #[test]
    fn counts_restart_with_each_phase_and_never_pass_the_total() {
        let progress = Progress::default();
        assert_eq!(progress.now(), (Phase::Idle, 0, 0));
        progress.begin(Phase::Searching, 3);
        progress.advance(2);
        assert_eq!(progress.now(), (Phase::Searching, 2, 3));
        progress.advance(5);
        assert_eq!(progress.now(), (Phase::Searching, 3, 3));
        progress.begin(Phase::Writing, 10);
        progress.advance(1);
        assert_eq!(progress.now(), (Phase::Writing, 1, 10));
    }
}
