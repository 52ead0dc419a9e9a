//! Opens a workspace's durable staged session.
//!
//! Every front end (the `staged` CLI, the MCP server) starts here, so they all see the same
//! pending stack and follow the same start-up order: find the root, finish or roll back any
//! apply a crash interrupted, open the SQLite stack with each built-in tool's rehydrator, and
//! build the tools.

#![deny(missing_docs)]

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use staged_ast_edit::{
    AST_EDIT_TOOL_NAME, AstEditAction, AstEditTool, AstEditUndo, AstGrepTool, RecoveryHooks,
    Workspace, recover_hooked,
};
use staged_core::{InMemoryStore, PendingAction, PendingActionStore, ResolveTool, Session, Tool};
use staged_store::{Rehydrators, SqliteStore, StoredAction};

pub use staged_ast_edit::{RecoveryReport, STATE_DIR_NAME};

/// Why a workspace session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The root is not a usable directory.
    #[error("{0}")]
    Workspace(String),
    /// Recovering an interrupted apply failed; nothing else was touched.
    #[error("recovering an interrupted apply failed: {0}")]
    Recovery(String),
    /// The pending stack could not be opened.
    #[error("{0}")]
    Store(String),
}

/// One workspace's staged session: its root, durable stack, session and tools.
#[derive(Clone)]
pub struct WorkspaceSession {
    workspace: Workspace,
    durable: bool,
    store: Arc<dyn PendingActionStore>,
    session: Arc<Session>,
    recovery: RecoveryReport,
}

impl std::fmt::Debug for WorkspaceSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceSession")
            .field("root", &self.workspace.root())
            .field("durable", &self.durable)
            .field("recovery", &self.recovery)
            .finish_non_exhaustive()
    }
}

impl WorkspaceSession {
    /// Opens the session of the workspace rooted at `root`.
    ///
    /// The state folder is opened without following a symlink (a `.staged` that is a
    /// symlink or not a directory is refused), the durable stack is opened, and then every
    /// interrupted apply is finished or rolled back. A finished apply's preview is retired
    /// before its journal is deleted, so the stack always agrees with the files.
    pub fn open(root: &Path) -> Result<Self, OpenError> {
        let workspace =
            Workspace::new(root).map_err(|err| OpenError::Workspace(err.to_string()))?;
        let state =
            workspace.state(true).map_err(|err| OpenError::Store(err.to_string()))?.ok_or_else(
                || OpenError::Store(format!("cannot create {}", workspace.state_dir().display())),
            )?;
        let sqlite = Arc::new(
            SqliteStore::open_in(&workspace.state_dir(), state, rehydrators(&workspace))
                .map_err(|err| OpenError::Store(err.to_string()))?,
        );
        // An apply (or undo) that a crash interrupted after its commit point is finished
        // here: its files are written, so its preview must leave the stack and its log record
        // become final (unless a live resolve holds the preview, which then decides; the
        // journal stays until then). One rolled back before it has its record forgotten.
        let recovery = recover_hooked(&workspace, &mut StoreRecovery(&sqlite))
            .map_err(|err| OpenError::Recovery(err.to_string()))?;
        let store: Arc<dyn PendingActionStore> = sqlite;
        let session = new_session(&workspace, store.clone());
        Ok(Self { workspace, durable: true, store, session, recovery })
    }

    /// Opens the session of the workspace rooted at `root` without creating anything: when
    /// the workspace has no `.staged` folder yet, nothing was ever staged there, and the stack
    /// is empty and kept in memory. Read-only commands start here, so looking never leaves a
    /// state folder behind.
    pub fn open_existing(root: &Path) -> Result<Self, OpenError> {
        let workspace =
            Workspace::new(root).map_err(|err| OpenError::Workspace(err.to_string()))?;
        match workspace.state(false).map_err(|err| OpenError::Store(err.to_string()))? {
            Some(_) => Self::open(root),
            None => {
                let store: Arc<dyn PendingActionStore> = Arc::new(InMemoryStore::new());
                let session = new_session(&workspace, store.clone());
                let recovery = RecoveryReport::default();
                Ok(Self { workspace, durable: false, store, session, recovery })
            }
        }
    }

    /// Whether the stack lives in the workspace's `.staged` folder (it is in memory when a
    /// read-only open found none).
    pub fn is_durable(&self) -> bool {
        self.durable
    }

    /// The workspace (root and confinement rules).
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The pending stack.
    pub fn store(&self) -> &Arc<dyn PendingActionStore> {
        &self.store
    }

    /// The session `resolve` dispatches through.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// What start-up recovery did.
    pub fn recovery(&self) -> &RecoveryReport {
        &self.recovery
    }

    /// The `ast_edit` tool.
    pub fn ast_edit_tool(&self) -> AstEditTool {
        AstEditTool::new(self.session.clone(), self.workspace.clone())
    }

    /// The `ast_grep` tool.
    pub fn ast_grep_tool(&self) -> AstGrepTool {
        AstGrepTool::new(self.session.clone(), self.workspace.clone())
    }

    /// The hidden `resolve` tool.
    pub fn resolve_tool(&self) -> ResolveTool {
        ResolveTool::new(self.session.clone())
    }

    /// Every tool, `resolve` last.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let available: Vec<Arc<dyn Tool>> =
            vec![Arc::new(self.ast_grep_tool()), Arc::new(self.ast_edit_tool())];
        staged_core::assemble_tools(&available, None, Arc::new(self.resolve_tool()))
    }
}

/// What start-up recovery tells the SQLite store: finish a rolled-forward commit's preview and
/// record by the journal's id, forget a rolled-back one's.
struct StoreRecovery<'a>(&'a SqliteStore);

impl RecoveryHooks for StoreRecovery<'_> {
    fn finished(&mut self, journal: &str, origin: Option<&str>) -> bool {
        self.0.finish_recovered(journal, origin).unwrap_or(false)
    }

    fn rolled_back(&mut self, journal: &str, _origin: Option<&str>) -> bool {
        self.0.abandon_prepared(journal).is_ok()
    }
}

/// A session over `store` that knows how to undo each built-in tool's entries.
fn new_session(workspace: &Workspace, store: Arc<dyn PendingActionStore>) -> Arc<Session> {
    let session = Arc::new(Session::new(store));
    session.register_undo(AST_EDIT_TOOL_NAME, Arc::new(AstEditUndo::new(workspace.clone())));
    session
}

/// The rehydrators of every built-in tool that stages previews.
fn rehydrators(workspace: &Workspace) -> Rehydrators {
    let mut res = Rehydrators::new();
    let workspace = workspace.clone();
    res.register(
        AST_EDIT_TOOL_NAME,
        Arc::new(move |stored: &StoredAction| {
            AstEditAction::from_payload(workspace.clone(), &stored.payload)
                .map(|action| Arc::new(action) as Arc<dyn PendingAction>)
                .map_err(|err| err.to_string())
        }),
    );
    res
}

/// The workspace root for a command run in `start`: the nearest ancestor holding `.staged` or
/// `.git`, else `start` itself.
pub fn find_root(start: &Path) -> PathBuf {
    locate_root(start).0
}

/// [`find_root`], and whether a marker (`.staged` or `.git`) was found; when not, the root is
/// `start` itself, and a front end should say so.
pub fn locate_root(start: &Path) -> (PathBuf, bool) {
    match start
        .ancestors()
        .find(|dir| dir.join(STATE_DIR_NAME).is_dir() || dir.join(".git").exists())
    {
        Some(dir) => (dir.to_path_buf(), true),
        None => (start.to_path_buf(), false),
    }
}
