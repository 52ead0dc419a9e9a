//! Progress on stderr for work that takes more than about a second, only on a terminal and
//! never with `--json`: how many files were searched or written, out of how many, as the
//! engine and the journal count them on the workspace's [`staged_core::Progress`].

use std::{
    io::IsTerminal,
    sync::{Arc, OnceLock, mpsc},
    thread::JoinHandle,
    time::Duration,
};

use staged_core::Phase;

use crate::output::Output;

/// The counter of this process's command: every session the command opens counts on it
/// (`WorkspaceSessionBuilder::progress`), and [`Progress`] shows it.
pub(crate) fn counter() -> Arc<staged_core::Progress> {
    static COUNTER: OnceLock<Arc<staged_core::Progress>> = OnceLock::new();
    Arc::clone(COUNTER.get_or_init(Arc::default))
}

/// Shows progress after a second, until dropped.
pub(crate) struct Progress {
    done: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts showing `what` (the work, such as "searching files") with the counts, once a
    /// second has passed; nothing when stderr is not a terminal or the output is `--json`.
    pub(crate) fn start(out: &Output, what: &str) -> Self {
        if out.json || !std::io::stderr().is_terminal() {
            return Self { done: None, thread: None };
        }
        let (done, rx) = mpsc::channel::<()>();
        let what = what.to_owned();
        let counter = counter();
        let thread = std::thread::spawn(move || {
            if rx.recv_timeout(Duration::from_secs(1)) != Err(mpsc::RecvTimeoutError::Timeout) {
                return;
            }
            let bar = indicatif::ProgressBar::new_spinner().with_message(what.clone());
            bar.enable_steady_tick(Duration::from_millis(100));
            while rx.recv_timeout(Duration::from_millis(100))
                == Err(mpsc::RecvTimeoutError::Timeout)
            {
                bar.set_message(line(&what, counter.now()));
            }
            bar.finish_and_clear();
        });
        Self { done: Some(done), thread: Some(thread) }
    }
}

/// The line shown: the phase's own words with its counts, or `what` before anything is
/// counted.
fn line(what: &str, (phase, done, total): (Phase, u64, u64)) -> String {
    match phase {
        Phase::Searching if total > 0 => format!("searching files: {done} of {total}"),
        Phase::Writing if total > 0 => format!("writing files: {done} of {total}"),
        _ => what.to_owned(),
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        drop(self.done.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use staged_core::Phase;

    use super::line;

    #[test]
    fn the_line_names_the_phase_and_counts_once_there_are_counts() {
        assert_eq!(line("applying", (Phase::Idle, 0, 0)), "applying");
        assert_eq!(line("applying", (Phase::Searching, 0, 0)), "applying");
        assert_eq!(line("x", (Phase::Searching, 3, 11865)), "searching files: 3 of 11865");
        assert_eq!(line("x", (Phase::Writing, 2884, 2884)), "writing files: 2884 of 2884");
    }
}
