//! The kill-at-a-commit-step harness of the crash tests.
//!
//! In-process ([`child_spec`], [`abort_at`], [`run_child`]): a test re-runs its own test
//! binary as a child, limited to one test and told by an environment variable which
//! workspace to use and at which commit step to die; the child commits with an observer that
//! aborts the process at that step (as `kill -9` would end it), and the parent then checks
//! what the next start recovers.
//!
//! Another binary ([`kill_at`]): the test starts the process, watches the workspace's journal,
//! and kills the process (SIGKILL) once the journal is at the given point.

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus},
    time::{Duration, Instant},
};

/// What a crash child was asked to do: the workspace root and the step (counted from 0) at
/// which to die. `None` when `env` is not set: this process is not a crash child.
///
/// # Panics
/// When `env` is set but not `<root>|<step>`, which only [`run_child`] writes.
#[allow(clippy::expect_used)]
pub fn child_spec(env: &str) -> Option<(PathBuf, usize)> {
    let spec = std::env::var(env).ok()?;
    let (root, step) = spec.rsplit_once('|').expect("a crash child's spec is <root>|<step>");
    let step = step.parse().expect("a crash child's step is a number");
    Some((PathBuf::from(root), step))
}

/// An observer that aborts the process when it sees its step number `crash_at` (counted from
/// 0), and counts the steps before.
pub fn abort_at<S>(crash_at: usize) -> impl FnMut(S) {
    let mut seen = 0usize;
    move |_step| {
        if seen == crash_at {
            std::process::abort();
        }
        seen += 1;
    }
}

/// Runs `test` of this test binary again as a crash child for `root` that dies at step
/// `crash_at` (the child reads both back with [`child_spec`] on `env`), and returns how it
/// exited: successfully exactly when `crash_at` is past its last step.
///
/// # Panics
/// When this test binary cannot be found or run.
#[allow(clippy::expect_used)]
pub fn run_child(test: &str, env: &str, root: &Path, crash_at: usize) -> ExitStatus {
    let exe = std::env::current_exe().expect("the test binary's path");
    Command::new(exe)
        .args(["--exact", test, "--test-threads=1", "--nocapture"])
        .env(env, format!("{}|{crash_at}", root.display()))
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("the crash child runs")
        .status
}

/// Where to kill a process that commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillAt {
    /// As soon as the journal exists: temps are being written.
    Preparing,
    /// Once the journal says committed: targets are being renamed.
    Committed,
}

/// The text of the journal in `<root>/.staged/journal`, if there is one.
pub(crate) fn journal_state(root: &Path) -> Option<String> {
    let entries = std::fs::read_dir(root.join(".staged/journal")).ok()?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "json") {
            return std::fs::read_to_string(&path).ok();
        }
    }
    None
}

/// Watches the journal of the workspace at `root` while `child` commits, and kills the child
/// (SIGKILL) once the journal is at `kill_at`. Returns whether the kill landed there: `false`
/// when the child finished before the kill point was seen, or had moved past it when the kill
/// landed (the journal, final once its writer is dead, says which).
///
/// # Panics
/// When the child cannot be waited for or killed, or neither finished nor journaled within a
/// minute (`what` names the command in that message).
#[allow(clippy::unwrap_used)]
pub fn kill_at(child: &mut Child, root: &Path, kill_at: KillAt, what: &str) -> bool {
    let start = Instant::now();
    loop {
        let seen = match (kill_at, journal_state(root)) {
            (KillAt::Preparing, Some(_)) => true,
            (KillAt::Committed, Some(state)) => state.contains("committed"),
            (_, None) => false,
        };
        if seen {
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
            let Some(state) = journal_state(root) else { return false };
            return state.contains("\"committed\"") == (kill_at == KillAt::Committed);
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{what} neither finished nor journaled");
        std::thread::sleep(Duration::from_micros(200));
    }
}
