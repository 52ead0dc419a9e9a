//! What a shell command wrote, exactly: staged runs a command a client's model sends to the
//! shell (Claude Code's `Bash`, Codex's shell) in a private mount namespace, with an overlay
//! filesystem over the workspace, so that every write of the command's processes lands in a
//! folder staged owns (the *upper* layer) and the real tree is untouched while it runs. Once
//! the command is done, the upper layer is exactly what it wrote: new and changed files (whole,
//! with their modes), symlinks, new folders, and deletions (the overlay's whiteouts and opaque
//! folders). Another program's writes to the real tree meanwhile are never in it.
//!
//! - [`Run`]: one command's folder in `.staged/shell/` (the upper layer, the overlay's work
//!   folder, who ran it), locked while the wrapper lives, so a run whose wrapper died (the
//!   command was killed) is found by the session's next hook call ([`Run::leftovers`]).
//!   `.staged/` is in reach of anyone who writes the workspace, so its run files are read,
//!   locked and deleted through `confined` (never through a symlink, never waiting on a FIFO).
//! - [`isolate::Isolation`]: the namespace and the mounts, entered by the wrapper's child
//!   between `fork` and the `exec` of the command's shell (`.staged/` and `.git/` stay the real ones inside: pass-through).
//! - [`upper::written`]: what the upper layer holds, as paths and what each now is.
//! - [`plan::plan`]: those paths against the real tree: the text changes as the journal's
//!   [`FileOp`](staged_journal::FileOp)s, the files that cannot be text changes (binary,
//!   symlinks, over `MAX_TEXT_BYTES`, 64 MiB), the ignored files.
//! - [`harvest`]: what a run that outlives its wrapper (a process its command left running)
//!   wrote since it was last harvested, against the [`Manifest`](harvest::Manifest) of what
//!   was taken.
//! - [`apply`]: record mode (the text changes written through the journal and logged as one
//!   entry of the session, the rest moved in with their before-bytes kept) and gate mode (the
//!   text changes staged as one preview of the session; nothing reaches the tree).
//!
//! - [`snapshot`]: where the overlay is refused (or `STAGED_SHELL_ISOLATION=off`), record
//!   mode's fallback: the tree's stat data before the command (each file's bytes before in git's
//!   index blob or a kept copy, `gitindex`), compared after it and logged as one entry that
//!   says it may hold other programs' writes. A gate never runs a command this way.
//!
//! The contract is `docs/contract/shell.md`: the choice of the overlay, its limits, and what
//! stock Ubuntu and macOS allow.
//!
//! Library API besides what the hooks call: what a run wrote to its upper layer (`Written`,
//! and `After`, what each path is after the run).

pub mod apply;
mod confined;
mod gitindex;
pub mod harvest;
pub mod isolate;
pub mod plan;
mod run;
pub mod snapshot;
pub mod upper;

pub use crate::run::{GONE_PREFIX, Run, RunInfo, delete_gone};

/// The source tool name of a shell command's log entries and previews.
pub const SHELL_SOURCE: &str = "shell";

/// The folder of `.staged/` that holds the runs.
pub const RUNS_DIR: &str = "shell";

/// The longest command a label shows, in characters.
pub(crate) const LABEL_CHARS: usize = 80;

/// A command as a one-line label: `Shell: <command>`, its control characters escaped, cut at
/// `LABEL_CHARS` (80) characters.
pub fn label(command: &str) -> String {
    let one: String = command.trim().escape_debug().collect();
    let one = one.replace("\\'", "'").replace("\\\"", "\"");
    let cut: String = one.chars().take(LABEL_CHARS).collect();
    if cut.len() < one.len() { format!("Shell: {cut}...") } else { format!("Shell: {cut}") }
}

/// What a process a command left running wrote after its wrapper finished, as a one-line
/// label: `Shell (background): <command>`, escaped and cut as [`label`].
pub fn background_label(command: &str) -> String {
    label(command).replacen("Shell: ", "Shell (background): ", 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_background_label_names_the_command_as_its_label_does() {
        assert_eq!(background_label("dev-server &\n"), "Shell (background): dev-server &");
        assert_eq!(background_label("a\nb"), "Shell (background): a\\nb");
    }

    #[test]
    fn a_label_is_one_escaped_line_cut_at_its_length() {
        assert_eq!(label("sed -i 's/a/b/' f\n"), "Shell: sed -i 's/a/b/' f");
        assert_eq!(label("a\nb"), "Shell: a\\nb");
        let long = "x".repeat(100);
        assert_eq!(label(&long), format!("Shell: {}...", "x".repeat(80)));
    }
}
