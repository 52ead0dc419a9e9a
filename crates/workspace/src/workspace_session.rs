//! [`WorkspaceSession`]: one workspace's opened session, its stack and its tools.

use std::{path::Path, sync::Arc};

use staged_ast_edit::{AstEditTool, AstGrepTool, WarmIndex};
use staged_core::{PendingActionStore, ResolveTool, Session, Tool};
use staged_edit::{ApplyPatchTool, EditTool, WriteTool};
use staged_journal::{ConfinedRoot, RecoveryReport};
use staged_session::Review;
use staged_store::SqliteStore;

use crate::{LoadError, OpenError, WorkspaceSessionBuilder};

/// One workspace's staged session: its root, durable stack, session and tools.
#[derive(Clone)]
pub struct WorkspaceSession {
    pub(crate) workspace: ConfinedRoot,
    pub(crate) durable: bool,
    pub(crate) store: Arc<dyn PendingActionStore>,
    pub(crate) session: Arc<Session>,
    pub(crate) recovery: RecoveryReport,
    pub(crate) custom: Arc<Vec<Arc<dyn Tool>>>,
    /// Where each of `custom` comes from, in the same order.
    pub(crate) origins: Arc<Vec<String>>,
    pub(crate) load_errors: Arc<Vec<LoadError>>,
    /// The warm index `ast_grep` and `ast_edit` list files from, once started.
    pub(crate) index: Option<WarmIndex>,
    /// The durable store, when the workspace has one open: its sessions and kept texts.
    pub(crate) sqlite: Option<Arc<SqliteStore>>,
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
    /// Opens the session of a command that may stage, without creating anything yet: when the
    /// workspace has no state folder, the stack reads as empty (or as the one on disk, once
    /// another process created it) and the folder is created by the first push. A command
    /// that fails before staging leaves the workspace as it was. With a state folder, this is
    /// [`WorkspaceSession::open`].
    pub fn open_deferred(root: &Path) -> Result<Self, OpenError> {
        Self::builder().open_deferred(root)
    }

    /// Opens the session of the workspace rooted at `root`.
    ///
    /// The state folder is opened without following a symlink (a `.staged` that is a
    /// symlink or not a directory is refused), the durable stack is opened, and then every
    /// interrupted apply is finished or rolled back. A finished apply's preview is retired
    /// before its journal is deleted, so the stack always agrees with the files.
    pub fn open(root: &Path) -> Result<Self, OpenError> {
        Self::builder().open(root)
    }

    /// Opens the session of the workspace rooted at `root` without creating anything: when
    /// the workspace has no `.staged` folder yet, nothing was ever staged there, and the stack
    /// is empty and kept in memory. Read-only commands start here, so looking never leaves a
    /// state folder behind.
    pub fn open_existing(root: &Path) -> Result<Self, OpenError> {
        Self::builder().open_existing(root)
    }

    /// A builder that registers custom tools (each with its rehydrator) before opening.
    pub fn builder() -> WorkspaceSessionBuilder {
        WorkspaceSessionBuilder::default()
    }

    /// The custom tools that loaded, in registration order.
    pub fn custom_tools(&self) -> &[Arc<dyn Tool>] {
        &self.custom
    }

    /// Where the custom tool `name` comes from, as its load errors name it (`plugin "refactor"`);
    /// `None` for a built-in tool.
    pub fn tool_origin(&self, name: &str) -> Option<&str> {
        self.custom
            .iter()
            .position(|t| t.name() == name)
            .and_then(|i| self.origins.get(i))
            .map(String::as_str)
    }

    /// What could not be loaded (name conflicts, plugins that did not start, invalid
    /// definitions), for the front end to show.
    pub fn load_errors(&self) -> &[LoadError] {
        &self.load_errors
    }

    /// The workspace (root and confinement rules).
    pub fn workspace(&self) -> &ConfinedRoot {
        &self.workspace
    }

    /// The pending stack.
    pub fn store(&self) -> &Arc<dyn PendingActionStore> {
        &self.store
    }

    /// The durable store's sessions, kept texts and review states, when the workspace has a
    /// durable store open (not before the first preview of a deferred open).
    pub fn sqlite(&self) -> Option<&Arc<SqliteStore>> {
        self.sqlite.as_ref()
    }

    /// The review of this workspace's sessions, when it has a durable store.
    pub fn review(&self) -> Option<Review<'_>> {
        self.sqlite.as_deref().map(|store| Review::new(store, &self.workspace))
    }

    /// The session `resolve` dispatches through.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// What start-up recovery did.
    pub fn recovery(&self) -> &RecoveryReport {
        &self.recovery
    }

    /// Starts a warm index of the workspace (see [`WarmIndex`]), which the `ast_grep` and
    /// `ast_edit` tools made from now on list files from. For a front end that answers many
    /// queries over one tree (a server, an agent): it builds in the background, watches the
    /// tree's folders, and answers nothing differently. A one-shot command should not start
    /// one. When it cannot start, the tools walk the tree as before, and the reason is
    /// returned.
    ///
    /// # Errors
    /// When the index cannot start (its private cookie folder cannot be made).
    pub fn start_warm_index(&mut self) -> std::io::Result<()> {
        if self.index.is_none() {
            self.index = Some(WarmIndex::start(self.workspace.clone())?);
        }
        Ok(())
    }

    /// The warm index, if one was started.
    pub fn warm_index(&self) -> Option<&WarmIndex> {
        self.index.as_ref()
    }

    /// The `ast_edit` tool.
    pub fn ast_edit_tool(&self) -> AstEditTool {
        let tool = AstEditTool::new(self.session.clone(), self.workspace.clone());
        match &self.index {
            Some(index) => tool.with_index(index.clone()),
            None => tool,
        }
    }

    /// The `ast_grep` tool.
    pub fn ast_grep_tool(&self) -> AstGrepTool {
        let tool = AstGrepTool::new(self.session.clone(), self.workspace.clone());
        match &self.index {
            Some(index) => tool.with_index(index.clone()),
            None => tool,
        }
    }

    /// The `edit` tool.
    pub fn edit_tool(&self) -> EditTool {
        EditTool::new(self.session.clone(), self.workspace.clone())
    }

    /// The `write` tool.
    pub fn write_tool(&self) -> WriteTool {
        WriteTool::new(self.session.clone(), self.workspace.clone())
    }

    /// The `apply_patch` tool.
    pub fn apply_patch_tool(&self) -> ApplyPatchTool {
        ApplyPatchTool::new(self.session.clone(), self.workspace.clone())
    }

    /// The hidden `resolve` tool.
    pub fn resolve_tool(&self) -> ResolveTool {
        ResolveTool::new(self.session.clone())
    }

    /// Every tool: the built-in ones, then the custom ones, `resolve` last.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let mut available: Vec<Arc<dyn Tool>> = vec![
            Arc::new(self.ast_grep_tool()),
            Arc::new(self.ast_edit_tool()),
            Arc::new(self.edit_tool()),
            Arc::new(self.write_tool()),
            Arc::new(self.apply_patch_tool()),
        ];
        available.extend(self.custom.iter().cloned());
        staged_core::assemble_tools(&available, None, Arc::new(self.resolve_tool()))
    }
}
