//! [`WorkspaceSessionBuilder`]: the custom tools registered (each with the rehydrator of its
//! source tool name) before a workspace session opens, and the opening itself in the
//! start-up order every front end shares.

use std::{path::Path, sync::Arc};

use staged_ast_edit::AST_EDIT_TOOL_NAME;
use staged_core::{
    CustomToolApi, InMemoryStore, PendingActionStore, Progress, Tool, UndoHandler,
    stamp_source_tool_name,
};
use staged_edit::TEXT_TOOL_NAMES;
use staged_journal::{ChangeUndo, ConfinedRoot, RecoveryReport};
use staged_session::{REVERT_SOURCE, SessionUndo};
use staged_shell::SHELL_SOURCE;
use staged_store::{FallbackRehydrator, Rehydrator, Rehydrators, StoredAction};

use crate::{
    BUILTIN_TOOL_NAMES, ChangeStager, LoadError, OpenError, WorkspaceSession, changes,
    deferred::DeferredStore,
    fold_tool_name,
    open::{
        AstRehydrator, builtin_rehydrators, list_ast_edit, new_session, open_sqlite,
        replay_ast_edit,
    },
};

/// The origin of a tool registered in Rust ([`WorkspaceSessionBuilder::tool`]), as its load
/// errors name it.
pub(crate) const CUSTOM_ORIGIN: &str = "custom tool";

/// What a custom tool's factory receives once the session exists.
#[derive(Debug)]
pub struct ToolContext<'a> {
    pub(crate) api: CustomToolApi,
    pub(crate) workspace: &'a ConfinedRoot,
}

impl ToolContext<'_> {
    /// The custom-tool API bound to the session: `push_pending_action` stages on its stack,
    /// as the tool's own (an action that names no source tool gets the registered name, so
    /// its rehydrator finds it after a restart).
    pub fn api(&self) -> CustomToolApi {
        self.api.clone()
    }

    /// The workspace (its root, and handles confined to it).
    pub fn workspace(&self) -> &ConfinedRoot {
        self.workspace
    }

    /// Stages the tool's journaled file changes ([`FileChanges`](crate::FileChanges)) under its name.
    pub fn changes(&self) -> ChangeStager {
        ChangeStager { api: self.api(), workspace: self.workspace.clone() }
    }
}

/// Builds a custom tool once the session exists.
pub(crate) type ToolFactory = Box<dyn FnOnce(&ToolContext<'_>) -> Arc<dyn Tool> + Send>;

/// A custom tool's rehydrator, given the workspace it rebuilds actions in.
pub(crate) type RehydratorIn = Arc<dyn Fn(&ConfinedRoot) -> Rehydrator + Send + Sync>;

/// Registers custom tools (each with the rehydrator for its source tool name) before a
/// [`WorkspaceSession`] opens; see [`WorkspaceSession::builder`].
pub struct WorkspaceSessionBuilder {
    /// How a stored `ast_edit` preview is rebuilt: replayable, or only listed
    /// ([`WorkspaceSessionBuilder::lean`]).
    ast: AstRehydrator,
    tools: Vec<(String, String, ToolFactory)>,
    rehydrators: Vec<(String, RehydratorIn)>,
    fallbacks: Vec<FallbackRehydrator>,
    undo_fallbacks: Vec<Arc<dyn UndoHandler>>,
    errors: Vec<LoadError>,
    progress: Option<Arc<Progress>>,
}

impl std::fmt::Debug for WorkspaceSessionBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.tools.iter().map(|(name, _, _)| name.as_str()).collect();
        f.debug_struct("WorkspaceSessionBuilder")
            .field("tools", &names)
            .field("errors", &self.errors)
            .finish_non_exhaustive()
    }
}

impl Default for WorkspaceSessionBuilder {
    fn default() -> Self {
        Self::with_ast(replay_ast_edit)
    }
}

impl WorkspaceSessionBuilder {
    /// A builder whose session rebuilds a stored `ast_edit` preview without the ast engine:
    /// the preview is listed (its label, details and files, as the full session lists them),
    /// discarded, and refuses a new preview over one of its files, but its apply writes
    /// nothing and names `staged resolve` and the MCP server, where it runs. For a process
    /// that stages text edits and never applies an `ast_edit` preview (a client's hook): a
    /// binary that opens sessions only through this one links none of the grammars, and
    /// starts faster (bench/RESULTS.md, issue 36).
    pub fn lean() -> Self {
        Self::with_ast(list_ast_edit)
    }

    fn with_ast(ast: AstRehydrator) -> Self {
        WorkspaceSessionBuilder {
            ast,
            tools: Vec::new(),
            rehydrators: Vec::new(),
            fallbacks: Vec::new(),
            undo_fallbacks: Vec::new(),
            errors: Vec::new(),
            progress: None,
        }
    }

    /// Counts the progress of the searches and writes done through the session (its tools'
    /// and the actions it rehydrates) on `progress`, for a front end that shows it.
    #[must_use]
    pub fn progress(mut self, progress: Arc<Progress>) -> Self {
        self.progress = Some(progress);
        self
    }

    fn workspace(&self, root: &Path) -> Result<ConfinedRoot, OpenError> {
        let workspace = ConfinedRoot::new(root).map_err(OpenError::workspace)?;
        Ok(match &self.progress {
            Some(progress) => workspace.with_progress(Arc::clone(progress)),
            None => workspace,
        })
    }

    /// Registers the custom tool `name`, built by `factory` once the session exists, and the
    /// rehydrator that rebuilds the actions it stages (their source tool name is `name`).
    /// Without a rehydrator its previews are staged without a payload: after a restart they
    /// can only be discarded.
    ///
    /// A name taken by a built-in tool or an earlier custom tool is not registered: it becomes
    /// the load error `Tool name "<name>" conflicts with existing tool`.
    #[must_use]
    pub fn tool(
        self,
        name: &str,
        factory: impl FnOnce(&ToolContext<'_>) -> Arc<dyn Tool> + Send + 'static,
        rehydrator: Option<Rehydrator>,
    ) -> Self {
        self.tool_from(CUSTOM_ORIGIN, name, Box::new(factory), rehydrator)
    }

    /// [`WorkspaceSessionBuilder::tool`], with the origin its load errors name (e.g.
    /// `plugin "rename"`).
    #[must_use]
    pub fn tool_from(
        self,
        origin: &str,
        name: &str,
        factory: ToolFactory,
        rehydrator: Option<Rehydrator>,
    ) -> Self {
        let rehydrator = rehydrator.map(|rehydrator| {
            Arc::new(move |_: &ConfinedRoot| Arc::clone(&rehydrator)) as RehydratorIn
        });
        self.tool_in(origin, name, factory, rehydrator)
    }

    /// [`WorkspaceSessionBuilder::tool_from`] with a rehydrator made for the workspace.
    pub(crate) fn tool_in(
        mut self,
        origin: &str,
        name: &str,
        factory: ToolFactory,
        rehydrator: Option<RehydratorIn>,
    ) -> Self {
        let taken = BUILTIN_TOOL_NAMES.contains(&name)
            || self.tools.iter().any(|(other, _, _)| other == name);
        if taken {
            self.errors.push(LoadError::conflict(origin, name));
            return self;
        }
        let folded = fold_tool_name(name);
        let look_alike = BUILTIN_TOOL_NAMES
            .iter()
            .copied()
            .chain(self.tools.iter().map(|(other, _, _)| other.as_str()))
            .find(|other| fold_tool_name(other) == folded);
        if let Some(other) = look_alike {
            self.errors.push(LoadError::look_alike(origin, name, other));
            return self;
        }
        self.tools.push((name.to_owned(), origin.to_owned(), factory));
        if let Some(rehydrator) = rehydrator {
            self.rehydrators.push((name.to_owned(), rehydrator));
        }
        self
    }

    /// Registers a rehydrator asked about the stored actions no tool name claims (see
    /// [`FallbackRehydrator`]).
    #[must_use]
    pub fn fallback_rehydrator(mut self, rehydrator: FallbackRehydrator) -> Self {
        self.fallbacks.push(rehydrator);
        self
    }

    /// Registers an undo handler asked about the log entries no tool name claims (see
    /// [`Session::register_undo_fallback`](staged_core::Session::register_undo_fallback)).
    #[must_use]
    pub fn undo_fallback(mut self, handler: Arc<dyn UndoHandler>) -> Self {
        self.undo_fallbacks.push(handler);
        self
    }

    /// Records a load error found before the session opens (a plugin that did not start).
    #[must_use]
    pub fn load_error(mut self, error: LoadError) -> Self {
        self.errors.push(error);
        self
    }

    /// [`WorkspaceSession::open`] with the registered tools.
    pub fn open(self, root: &Path) -> Result<WorkspaceSession, OpenError> {
        let workspace = self.workspace(root)?;
        let rehydrators = self.all_rehydrators(&workspace);
        let (sqlite, recovery) = open_sqlite(&workspace, rehydrators, true)?.ok_or_else(|| {
            let message = format!("cannot create {}", workspace.state_dir().display());
            OpenError::Store { message, source: None }
        })?;
        let mut opened = self.finish(workspace, true, sqlite.clone(), recovery);
        // Undo reverts an entry out of order when later changes left its own lines intact;
        // it reads the log's history for that.
        let undo = Arc::new(SessionUndo::new(opened.workspace.clone(), sqlite.clone()));
        opened.session.register_undo(AST_EDIT_TOOL_NAME, undo.clone());
        for name in TEXT_TOOL_NAMES.into_iter().chain([REVERT_SOURCE, SHELL_SOURCE]) {
            opened.session.register_undo(name, undo.clone());
        }
        opened.sqlite = Some(sqlite);
        Ok(opened)
    }

    /// [`WorkspaceSession::open_deferred`] with the registered tools.
    pub fn open_deferred(self, root: &Path) -> Result<WorkspaceSession, OpenError> {
        let workspace = self.workspace(root)?;
        if workspace.state(false).map_err(OpenError::store)?.is_some() {
            return self.open(root);
        }
        let rehydrators = self.all_rehydrators(&workspace);
        let at = workspace.clone();
        let store = DeferredStore::new(Box::new(move |create| {
            // Opened later, its recovery (of a stack another process created meanwhile) has
            // nobody to report to; it runs all the same, before any read.
            open_sqlite(&at, rehydrators.clone(), create)
                .map(|opened| opened.map(|(sqlite, _)| sqlite))
        }));
        Ok(self.finish(workspace, true, Arc::new(store), RecoveryReport::default()))
    }

    /// [`WorkspaceSession::open_existing`] with the registered tools.
    pub fn open_existing(self, root: &Path) -> Result<WorkspaceSession, OpenError> {
        let workspace = self.workspace(root)?;
        match workspace.state(false).map_err(OpenError::store)? {
            Some(_) => self.open(root),
            None => {
                let store = Arc::new(InMemoryStore::new());
                Ok(self.finish(workspace, false, store, RecoveryReport::default()))
            }
        }
    }

    fn all_rehydrators(&self, workspace: &ConfinedRoot) -> Rehydrators {
        let mut res = builtin_rehydrators(workspace, self.ast);
        for (name, origin, _) in &self.tools {
            let own = self
                .rehydrators
                .iter()
                .find(|(owner, _)| owner == name)
                .map(|(_, rehydrator)| rehydrator(workspace));
            // A Rust tool's journaled changes rebuild as the built-in tools' previews do.
            let rehydrator = match own {
                own if origin == CUSTOM_ORIGIN => changes::custom_rehydrator(workspace, name, own),
                Some(own) => own,
                None => continue,
            };
            // What it rebuilds is the tool's, as what the tool staged was, whether or not the
            // action names its source tool itself.
            let owner = name.clone();
            res.register(
                name.clone(),
                Arc::new(move |stored: &StoredAction| {
                    rehydrator(stored).map(|action| stamp_source_tool_name(action, &owner))
                }),
            );
        }
        for fallback in &self.fallbacks {
            res.register_fallback(Arc::clone(fallback));
        }
        res
    }

    fn finish(
        self,
        workspace: ConfinedRoot,
        durable: bool,
        store: Arc<dyn PendingActionStore>,
        recovery: RecoveryReport,
    ) -> WorkspaceSession {
        let session = new_session(&workspace, store.clone());
        for handler in self.undo_fallbacks {
            session.register_undo_fallback(handler);
        }
        let names = self
            .tools
            .iter()
            .filter(|(_, origin, _)| origin == CUSTOM_ORIGIN)
            .map(|(name, _, _)| name.clone())
            .collect();
        let undo = ChangeUndo::new(workspace.clone());
        session.register_undo_fallback(Arc::new(changes::CustomChangeUndo { names, undo }));
        let mut errors = self.errors;
        let mut custom: Vec<Arc<dyn Tool>> = Vec::new();
        let mut origins: Vec<String> = Vec::new();
        for (name, origin, factory) in self.tools {
            let api = CustomToolApi::new(Some(session.clone())).with_source_tool_name(&name);
            let tool = factory(&ToolContext { api, workspace: &workspace });
            if tool.name() != name {
                errors.push(LoadError::failed(
                    origin,
                    format!("the tool registered as \"{name}\" is named \"{}\"", tool.name()),
                ));
                continue;
            }
            custom.push(tool);
            origins.push(origin);
        }
        WorkspaceSession {
            workspace,
            durable,
            store,
            session,
            recovery,
            custom: Arc::new(custom),
            origins: Arc::new(origins),
            load_errors: Arc::new(errors),
            index: None,
            sqlite: None,
        }
    }
}
