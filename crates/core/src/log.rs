//! The resolve log: what became of every resolved preview, and the read side a store offers.
//!
//! Every outcome of `resolve` (applied, discarded, failed, stale) and of an undo (undone,
//! redone) becomes a [`LogRecord`], written by the store in the same transaction that takes
//! the entry off the stack, releases it, or finishes the undo's commit. A record keeps the
//! decision (action, reason, `extra`, the front end that made it), what it did (the result
//! text, the diff, each file's SHA-256 before and after) and, for a tool that can revert it,
//! the data its [`UndoHandler`] needs.
//!
//! A `resolve` that found nothing pending and a refused undo change nothing, so they are not
//! outcomes: nothing is recorded for them.

use std::{fmt, str::FromStr, sync::Arc, time::SystemTime};

use staged_protocol::{JsonObject, ToolResult};

use crate::{ActionError, CancelToken, PendingAction, PendingId, Retirement, StoreError};

/// How many log entries a store keeps when nobody said otherwise.
pub const DEFAULT_LOG_KEEP: usize = 1000;

/// What became of a preview (or of an earlier entry, for an undo).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogOutcome {
    /// Applied; it left the stack.
    Applied,
    /// Discarded; it left the stack.
    Discarded,
    /// The apply failed or was cancelled; the preview stays pending.
    Failed,
    /// The apply found the preview stale and wrote nothing; it left the stack.
    Stale,
    /// An undo reverted an applied (or redone) entry.
    Undone,
    /// An undo of an undo wrote the change again.
    Redone,
}

impl LogOutcome {
    /// The stored and JSON spelling: `applied`, `discarded`, `failed`, `stale`, `undone`,
    /// `redone`.
    pub fn as_str(self) -> &'static str {
        match self {
            LogOutcome::Applied => "applied",
            LogOutcome::Discarded => "discarded",
            LogOutcome::Failed => "failed",
            LogOutcome::Stale => "stale",
            LogOutcome::Undone => "undone",
            LogOutcome::Redone => "redone",
        }
    }

    /// Whether an entry with this outcome wrote files that an undo can revert.
    pub fn is_undoable(self) -> bool {
        match self {
            LogOutcome::Applied | LogOutcome::Undone | LogOutcome::Redone => true,
            LogOutcome::Discarded | LogOutcome::Failed | LogOutcome::Stale => false,
        }
    }
}

impl fmt::Display for LogOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LogOutcome {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "applied" => LogOutcome::Applied,
            "discarded" => LogOutcome::Discarded,
            "failed" => LogOutcome::Failed,
            "stale" => LogOutcome::Stale,
            "undone" => LogOutcome::Undone,
            "redone" => LogOutcome::Redone,
            other => return Err(format!("unknown log outcome `{other}`")),
        })
    }
}

/// What was asked for: a `resolve` action, or an undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogAction {
    /// `resolve` with action `apply`.
    Apply,
    /// `resolve` with action `discard`.
    Discard,
    /// `staged undo`.
    Undo,
}

impl LogAction {
    /// `apply`, `discard` or `undo`.
    pub fn as_str(self) -> &'static str {
        match self {
            LogAction::Apply => "apply",
            LogAction::Discard => "discard",
            LogAction::Undo => "undo",
        }
    }
}

impl FromStr for LogAction {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "apply" => LogAction::Apply,
            "discard" => LogAction::Discard,
            "undo" => LogAction::Undo,
            other => return Err(format!("unknown log action `{other}`")),
        })
    }
}

/// Which front end made a decision.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FrontEnd {
    /// `staged resolve` or `staged undo`.
    Cli,
    /// `staged review`, a person at the terminal UI.
    Review,
    /// `staged ui`, a person at the review page in a browser.
    Ui,
    /// An MCP client, by the name it gave in `initialize`.
    Mcp(Option<String>),
    /// `staged agent`, the built-in loop.
    Agent,
    /// A plugin, by name.
    Plugin(Option<String>),
    /// A coding client's hook (`claude-code`, `codex`): an edit that client made, gated or
    /// recorded.
    Hook(String),
    /// A third-party host (an agent built on these crates), by the name it gives itself:
    /// `Session::set_front_end(FrontEnd::Host("my-agent".into()))`. Its model's resolves are a
    /// model's, not a person's.
    Host(String),
}

impl fmt::Display for FrontEnd {
    /// `cli`, `review`, `ui`, `mcp:<client>` (or `mcp`), `agent`, `plugin:<name>` (or `plugin`),
    /// `hook:<client>`, `host:<name>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrontEnd::Cli => f.write_str("cli"),
            FrontEnd::Review => f.write_str("review"),
            FrontEnd::Ui => f.write_str("ui"),
            FrontEnd::Agent => f.write_str("agent"),
            FrontEnd::Mcp(None) => f.write_str("mcp"),
            FrontEnd::Mcp(Some(client)) => write!(f, "mcp:{client}"),
            FrontEnd::Plugin(None) => f.write_str("plugin"),
            FrontEnd::Plugin(Some(name)) => write!(f, "plugin:{name}"),
            FrontEnd::Hook(client) => write!(f, "hook:{client}"),
            FrontEnd::Host(name) => write!(f, "host:{name}"),
        }
    }
}

/// One file an entry wrote: its path relative to the workspace root and the SHA-256 (lower-case
/// hex) of its bytes before and after. `None` stands for no file (created, or deleted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The path, relative to the workspace root, `/`-separated.
    pub path: String,
    /// SHA-256 of the file before the write.
    pub before: Option<String>,
    /// SHA-256 of the file after the write.
    pub after: Option<String>,
}

/// One record of the log, as a front end and an action produce it.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRecord {
    /// The pending id of the preview (for an undo, of the preview it reverts).
    pub id: PendingId,
    /// The preview's label.
    pub label: String,
    /// The tool that staged it.
    pub source_tool_name: String,
    /// What became of it.
    pub outcome: LogOutcome,
    /// What was asked for.
    pub action: LogAction,
    /// The reason given.
    pub reason: String,
    /// The `extra` object given.
    pub extra: Option<JsonObject>,
    /// The result text the caller saw.
    pub result: String,
    /// The unified diff as written, when the entry wrote files.
    pub diff: Option<String>,
    /// Every file written, with its SHA-256 before and after.
    pub files: Vec<FileChange>,
    /// What the source tool's [`UndoHandler`] needs to revert this entry; `None` when it
    /// cannot be reverted.
    pub undo: Option<serde_json::Value>,
    /// Which front end decided: see [`FrontEnd`]'s display form.
    pub front_end: String,
    /// For an undo: the log entry it reverts.
    pub reverts: Option<u64>,
    /// The texts the written files had before this entry wrote them (read from disk by the
    /// writer, so it costs nothing more): the store keeps those its log cannot rebuild, where a
    /// file changed outside staged since the log last wrote it, so that a session's history
    /// reaches across such changes. Never read back: a log entry read from the store has none.
    pub texts: Vec<String>,
}

impl LogRecord {
    /// A record of `outcome` for the preview `id` with nothing written yet: no diff, no files,
    /// no undo data, no result text.
    pub fn new(
        id: PendingId,
        label: impl Into<String>,
        source_tool_name: impl Into<String>,
        outcome: LogOutcome,
        action: LogAction,
        front_end: &FrontEnd,
    ) -> Self {
        Self {
            id,
            label: label.into(),
            source_tool_name: source_tool_name.into(),
            outcome,
            action,
            reason: String::new(),
            extra: None,
            result: String::new(),
            diff: None,
            files: Vec::new(),
            undo: None,
            front_end: front_end.to_string(),
            reverts: None,
            texts: Vec::new(),
        }
    }

    /// This record with `change` (what a writing action reports at its commit point) filled in.
    pub(crate) fn with_change(mut self, change: &AppliedChange) -> Self {
        self.result.clone_from(&change.result);
        if let Some(label) = &change.label {
            self.label.clone_from(label);
        }
        self.diff.clone_from(&change.diff);
        self.files.clone_from(&change.files);
        self.undo.clone_from(&change.undo);
        self.texts.clone_from(&change.texts);
        self
    }

    /// [`LogRecord::with_change`], moving the change's diff, undo data and texts into the
    /// record rather than copying them (a 50 MB rewrite's are hundreds of MB).
    pub(crate) fn taking_change(mut self, change: &mut AppliedChange) -> Self {
        self.result.clone_from(&change.result);
        if let Some(label) = &change.label {
            self.label.clone_from(label);
        }
        self.diff = change.diff.take();
        self.files.clone_from(&change.files);
        self.undo = change.undo.take();
        self.texts = std::mem::take(&mut change.texts);
        self
    }
}

/// A record as the log keeps it: numbered and timed.
#[derive(Debug, Clone, PartialEq)]
pub struct LogEntry {
    /// The entry's number, counting up, never reused.
    pub seq: u64,
    /// When the outcome was recorded.
    pub at: SystemTime,
    /// The record.
    pub record: LogRecord,
    /// The entry of the undo that reverted this one, if any.
    pub reverted_by: Option<u64>,
    /// The agent session whose change this is (its number in the store), `None` for a
    /// person's.
    pub session: Option<u64>,
}

/// What a writing action reports at its commit point, before its record is final: the
/// result text, the diff as written, the files with their hashes, the data an undo needs, and
/// for a partial apply the preview of what is left, which the store pushes as the new head in
/// the same transaction.
#[derive(Clone, Default)]
pub struct AppliedChange {
    /// The result text.
    pub result: String,
    /// The label of what was written, when it is not the preview's (a partial apply): the log
    /// records it, and the result block shows it.
    pub label: Option<String>,
    /// The unified diff as written.
    pub diff: Option<String>,
    /// Every file written.
    pub files: Vec<FileChange>,
    /// The undo data (see [`LogRecord::undo`]).
    pub undo: Option<serde_json::Value>,
    /// What stays pending after a partial apply.
    pub remainder: Option<Arc<dyn PendingAction>>,
    /// The texts the written files had before (see [`LogRecord::texts`]).
    pub texts: Vec<String>,
}

impl fmt::Debug for AppliedChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppliedChange")
            .field("result", &self.result)
            .field("files", &self.files)
            .field("remainder", &self.remainder.as_ref().map(|r| r.label().to_owned()))
            .finish_non_exhaustive()
    }
}

/// The sentence a partial apply's result ends with, once the rest is pending as `id`.
pub fn remainder_text(label: &str, id: &PendingId) -> String {
    format!("The rest stays pending as the newest preview: {label} ({id}).")
}

/// Which entry reverted another, and whether that undo is finished (an interrupted one is
/// finished or rolled back by the next start-up recovery).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reversal {
    /// The undo's entry.
    pub seq: u64,
    /// Whether it is final.
    pub done: bool,
}

/// Held while one undo runs; dropping it lets the next one in.
pub struct UndoLock {
    _guard: Box<dyn std::any::Any + Send>,
}

impl UndoLock {
    /// Wraps whatever keeps a store's undo lock held; dropping `guard` must release it.
    pub fn new(guard: Box<dyn std::any::Any + Send>) -> Self {
        Self { _guard: guard }
    }
}

impl fmt::Debug for UndoLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UndoLock")
    }
}

/// The read side of a store's log, and what an undo needs from it.
pub trait ResolveLog: Send + Sync {
    /// Up to `limit` finished entries, newest first; with `with_diff`, each with its diff.
    fn entries(&self, limit: usize, with_diff: bool) -> Result<Vec<LogEntry>, StoreError>;

    /// The finished entry `seq`, whole (diff and undo data included).
    fn entry(&self, seq: u64) -> Result<Option<LogEntry>, StoreError>;

    /// The newest finished entry that is `applied` or `redone` and that no finished undo
    /// reverted: what a bare `staged undo` reverts, so that undo run again walks back one
    /// apply at a time.
    fn newest_applied(&self) -> Result<Option<u64>, StoreError>;

    /// The newest finished `undone` entry that no finished entry reverted, if it is newer
    /// than every `applied` entry: what `staged redo` reverts (an undo of an undo is a redo).
    /// As in an editor, a new apply after an undo ends what redo walks forward through.
    fn newest_undo(&self) -> Result<Option<u64>, StoreError>;

    /// The undo that reverts `seq`, finished or still being committed.
    fn reverted_by(&self, seq: u64) -> Result<Option<Reversal>, StoreError>;

    /// Waits for, then holds, the workspace's undo lock: one undo at a time, across processes.
    fn lock_undo(&self) -> Result<UndoLock, StoreError>;

    /// How many finished entries the log keeps.
    fn keep(&self) -> Result<usize, StoreError>;

    /// Keeps at most `keep` finished entries from now on (older ones are deleted now).
    fn set_keep(&self, keep: usize) -> Result<(), StoreError>;
}

/// How a source tool reverts what one of its entries wrote.
///
/// `undo` writes only if every file is still byte-identical to what the entry wrote;
/// otherwise it writes nothing and returns an error result naming the files that changed. A
/// handler that writes through a journal calls [`Retirement::prepare`] once its journal
/// exists and [`Retirement::retire`] at its commit point, so that the undo's record is final
/// exactly when its files are; one that does not is recorded once it returned.
#[async_trait::async_trait]
pub trait UndoHandler: Send + Sync {
    /// Whether this handler can revert `entry`: asked of the handlers registered with
    /// [`Session::register_undo_fallback`](crate::Session::register_undo_fallback), for
    /// entries whose source tool has no handler of its own.
    fn accepts(&self, entry: &LogEntry) -> bool {
        let _ = entry;
        true
    }

    /// Reverts `entry`.
    async fn undo(
        &self,
        entry: &LogEntry,
        retirement: &Retirement,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError>;
}
