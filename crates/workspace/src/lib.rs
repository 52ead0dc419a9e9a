//! Opens a workspace's durable staged session.
//!
//! Every front end (the `staged` CLI, the MCP server) starts here, so they all see the same
//! pending stack and follow the same start-up order: find the root, finish or roll back any
//! apply a crash interrupted, open the SQLite stack with each built-in tool's rehydrator, and
//! build the tools.
//!
//! Custom tools join through [`WorkspaceSession::builder`]: each is registered with the
//! rehydrator for its source tool name, so a preview it staged survives a restart and can be
//! resolved from another process, like an `ast_edit` preview. The name is given once, at
//! registration: the tool's [`ToolContext::api`] stages its actions under it.
//!
//! # A custom tool in Rust
//! A tool registered with [`WorkspaceSessionBuilder::durable_tool`] stages the action of a
//! typed payload; the same function makes it again from the payload after a restart.
//! ```
//! use std::sync::Arc;
//! use serde::{Deserialize, Serialize};
//! use staged_workspace::core::{
//!     CancelToken, FnPendingAction, ResolveOptions, ResolveParams, Tool, ToolError, ToolResult,
//! };
//! use staged_workspace::{ConfinedRoot, Stager, WorkspaceSession};
//!
//! /// The payload: what the preview will do.
//! #[derive(Serialize, Deserialize)]
//! struct Greeting {
//!     name: String,
//! }
//!
//! /// The action of a payload, in the process that staged it or any other.
//! fn greeting(_: &ConfinedRoot, greeting: Greeting) -> FnPendingAction {
//!     let text = format!("Hello, {}!", greeting.name);
//!     FnPendingAction::new(format!("Greet {}", greeting.name), move |_| {
//!         let text = text.clone();
//!         async move { Ok(ToolResult::text(text)) }
//!     })
//! }
//!
//! /// Stages a greeting; applying it returns the greeting.
//! struct Greet(Stager<Greeting>);
//!
//! #[staged_workspace::async_trait]
//! impl Tool for Greet {
//!     fn name(&self) -> &str { self.0.tool_name() }
//!     fn label(&self) -> &str { "Greet" }
//!     fn description(&self) -> &str { "Stages a greeting." }
//!     fn parameters(&self) -> serde_json::Value {
//!         serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}})
//!     }
//!     async fn execute(&self, args: serde_json::Value, _: &CancelToken) -> Result<ToolResult, ToolError> {
//!         let name = args["name"].as_str().unwrap_or("world").to_owned();
//!         let id = self.0.stage(Greeting { name })?;
//!         Ok(ToolResult::text(format!("Staged {id}. Call resolve to apply or discard.")))
//!     }
//! }
//!
//! fn open(root: &std::path::Path) -> WorkspaceSession {
//!     WorkspaceSession::builder()
//!         .durable_tool("greet", greeting, |stager, _| Arc::new(Greet(stager)) as Arc<dyn Tool>)
//!         .open(root)
//!         .unwrap()
//! }
//!
//! # futures::executor::block_on(async {
//! let dir = tempfile::tempdir().unwrap();
//! let first = open(dir.path());
//! let greet = first.custom_tools()[0].clone();
//! let staged = greet.execute(serde_json::json!({"name": "Ada"}), &CancelToken::new()).await.unwrap();
//! assert!(staged.text_content().starts_with("Staged pending-action:greet:0."));
//! drop((greet, first));
//!
//! // Another process, or this one after a restart: the same `greeting` rebuilds the action.
//! let second = open(dir.path());
//! let (params, options) = (ResolveParams::apply("say it"), ResolveOptions::default());
//! let res = second.session().resolve(params, options, &CancelToken::new()).await.unwrap();
//! assert_eq!(res.text_content(), "Hello, Ada!");
//! # });
//! ```
//!
//! [`WorkspaceSessionBuilder::tool`] registers a tool with a rehydrator of its own (reading a
//! [`StoredAction`]'s payload as JSON), for a tool whose actions are not made from one type.

#![deny(missing_docs)]

mod changes;
mod deferred;
mod durable;
pub mod sessions;

/// The Rust blocks of the README and of `docs/`, compiled and run as this crate's doctests
/// (`tests/docs_compiled.rs` checks that every Markdown file with a Rust block is here).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
#[doc = include_str!("../../../docs/contract/plugins.md")]
#[doc = include_str!("../../../docs/guide/library.md")]
pub struct DocsCompiled;

/// `staged-core`, the runtime every custom tool is written against.
pub use staged_core as core;

/// The attribute a [`staged_core::Tool`] implementation needs:
/// `#[staged_workspace::async_trait]`.
pub use async_trait::async_trait;

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use staged_ast_edit::{AST_EDIT_TOOL_NAME, AstEditAction, AstEditTool, AstGrepTool, WarmIndex};
use staged_core::{
    CustomToolApi, ErrorCause, InMemoryStore, PendingAction, PendingActionStore, Progress,
    ResolveTool, Session, Tool, UndoHandler, stamp_source_tool_name,
};
use staged_edit::{ApplyPatchTool, EditTool, TEXT_TOOL_NAMES, WriteTool};
use staged_journal::{
    ChangeAction, ChangeUndo, JournalError, RecoverOptions, RecoveryHooks, recover,
};
use staged_session::{REVERT_SOURCE, Review, SessionUndo};
use staged_shell::SHELL_SOURCE;
use staged_store::{Rehydrators, SqliteStore};

use crate::deferred::DeferredStore;

pub use staged_ast_edit::{
    ArgNames, AstEditParams, AstGrepParams, DEFAULT_MAX_FILES, DetailsError, LangRequiredDetails,
    Op, PreviewDetails, StaleDetails, Strictness, compile_glob,
};
pub use staged_journal::{
    ChangeDetails, ConfinedRoot, ModelAccess, RecoveryReport, STATE_DIR_NAME,
    quote as quote_diff_path,
};
pub use staged_store::{FallbackRehydrator, Rehydrator, StoredAction};

pub use staged_edit::{ApplyPatchParams, EditItem, EditParams, FileChanges, WriteParams};

pub use crate::{changes::ChangeStager, durable::Stager};

/// The origin of a tool registered in Rust ([`WorkspaceSessionBuilder::tool`]), as its load
/// errors name it.
const CUSTOM_ORIGIN: &str = "custom tool";

/// The tool names staged's front ends use themselves (`ast_grep`, `ast_edit`, `edit`, `write`,
/// `apply_patch` and `resolve` here; `pending` in `staged mcp`; `read` and `find` in `staged
/// agent`): a custom tool may take none of them, nor a name equal to one once case, `-` and
/// `_` are ignored ([`fold_tool_name`]). This list is the one place the check looks.
pub const BUILTIN_TOOL_NAMES: &[&str] =
    &["ast_grep", "ast_edit", "edit", "write", "apply_patch", "resolve", "pending", "read", "find"];

/// A tool name as compared with the others: lowercase, without `-` and `_`. `Resolve`,
/// `AST_EDIT` and `ast-edit` fold to a built-in's name, and are refused.
pub fn fold_tool_name(name: &str) -> String {
    name.chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase).collect()
}

/// A custom tool that could not be loaded. Load errors are collected and shown, never fatal:
/// the session opens with the tools that did load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {message}")]
pub struct LoadError {
    /// Where the tool came from, e.g. `custom tool` or `plugin "rename"`.
    pub origin: String,
    /// What went wrong, e.g. `Tool name "ast_edit" conflicts with existing tool`.
    pub message: String,
}

impl LoadError {
    /// A load error from `origin`.
    pub fn new(origin: impl Into<String>, message: impl Into<String>) -> Self {
        Self { origin: origin.into(), message: message.into() }
    }

    /// `Tool name "<name>" conflicts with existing tool`.
    pub fn conflict(origin: impl Into<String>, name: &str) -> Self {
        Self::new(origin, format!("Tool name \"{name}\" conflicts with existing tool"))
    }

    /// `Tool name "<name>" conflicts with existing tool "<other>" (...)`, for a name that is
    /// another's once case, `-` and `_` are ignored.
    pub fn look_alike(origin: impl Into<String>, name: &str, other: &str) -> Self {
        Self::new(
            origin,
            format!(
                "Tool name \"{name}\" conflicts with existing tool \"{other}\" (tool names are compared ignoring case, \"-\" and \"_\", so that a model cannot mistake one for the other)"
            ),
        )
    }

    /// `Failed to load tool: <message>`.
    pub fn failed(origin: impl Into<String>, message: impl std::fmt::Display) -> Self {
        Self::new(origin, format!("Failed to load tool: {message}"))
    }
}

/// What a custom tool's factory receives once the session exists.
#[derive(Debug)]
pub struct ToolContext<'a> {
    api: CustomToolApi,
    workspace: &'a ConfinedRoot,
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

    /// Stages the tool's journaled file changes ([`FileChanges`]) under its name.
    pub fn changes(&self) -> ChangeStager {
        ChangeStager { api: self.api(), workspace: self.workspace.clone() }
    }
}

/// Builds a custom tool once the session exists.
pub type ToolFactory = Box<dyn FnOnce(&ToolContext<'_>) -> Arc<dyn Tool> + Send>;

/// A custom tool's rehydrator, given the workspace it rebuilds actions in.
type RehydratorIn = Arc<dyn Fn(&ConfinedRoot) -> Rehydrator + Send + Sync>;

/// Registers custom tools (each with the rehydrator for its source tool name) before a
/// [`WorkspaceSession`] opens; see [`WorkspaceSession::builder`].
#[derive(Default)]
pub struct WorkspaceSessionBuilder {
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

impl WorkspaceSessionBuilder {
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
    fn tool_in(
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
    /// [`Session::register_undo_fallback`]).
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
        let mut res = builtin_rehydrators(workspace);
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

/// Every error a host meets through this crate's common path, so that one `?` carries them:
/// opening the workspace, a tool call or `resolve`, the stack and the log, and the host's own
/// file reads. Each keeps the error underneath, and says what it says.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The workspace session could not be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// A tool call, `resolve` or an undo failed; the message is what a model would see.
    #[error(transparent)]
    Tool(#[from] staged_core::ToolError),
    /// The pending stack or the log could not be read or written.
    #[error(transparent)]
    Store(#[from] staged_core::StoreError),
    /// A file the host read or wrote itself.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a workspace session could not be opened. Each keeps the error underneath as its
/// source.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The root is not a usable directory.
    #[error("{message}")]
    ConfinedRoot {
        /// What the user sees.
        message: String,
        /// Why the root was refused.
        #[source]
        source: JournalError,
    },
    /// Recovering an interrupted apply failed; nothing else was touched.
    #[error("recovering an interrupted apply failed: {message}")]
    Recovery {
        /// What the user sees after the prefix.
        message: String,
        /// Why recovery failed.
        #[source]
        source: JournalError,
    },
    /// The pending stack could not be opened.
    #[error("{message}")]
    Store {
        /// What the user sees.
        message: String,
        /// The error underneath, when there is one.
        #[source]
        source: Option<ErrorCause>,
    },
}

impl OpenError {
    fn workspace(source: JournalError) -> Self {
        OpenError::ConfinedRoot { message: source.to_string(), source }
    }

    fn recovery(source: JournalError) -> Self {
        OpenError::Recovery { message: source.to_string(), source }
    }

    fn store(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        OpenError::Store { message: source.to_string(), source: Some(ErrorCause::new(source)) }
    }
}

/// One workspace's staged session: its root, durable stack, session and tools.
#[derive(Clone)]
pub struct WorkspaceSession {
    workspace: ConfinedRoot,
    durable: bool,
    store: Arc<dyn PendingActionStore>,
    session: Arc<Session>,
    recovery: RecoveryReport,
    custom: Arc<Vec<Arc<dyn Tool>>>,
    /// Where each of `custom` comes from, in the same order.
    origins: Arc<Vec<String>>,
    load_errors: Arc<Vec<LoadError>>,
    /// The warm index `ast_grep` and `ast_edit` list files from, once started.
    index: Option<WarmIndex>,
    /// The durable store, when the workspace has one open: its sessions and kept texts.
    sqlite: Option<Arc<SqliteStore>>,
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

/// Opens the workspace's SQLite stack (creating the state folder with `create`) and recovers
/// interrupted applies; `Ok(None)` when there is no state folder and `create` is not set.
fn open_sqlite(
    workspace: &ConfinedRoot,
    rehydrators: Rehydrators,
    create: bool,
) -> Result<Option<(Arc<SqliteStore>, RecoveryReport)>, OpenError> {
    let Some(state) = workspace.state(create).map_err(OpenError::store)? else {
        return Ok(None);
    };
    let sqlite = Arc::new(
        SqliteStore::open_in(&workspace.state_dir(), state, rehydrators)
            .map_err(OpenError::store)?,
    );
    // An apply (or undo) that a crash interrupted after its commit point is finished here: its
    // files are written, so its preview must leave the stack and its log record become final
    // (unless a live resolve holds the preview, which then decides; the journal stays until
    // then). One rolled back before it has its record forgotten.
    let recovery = recover(workspace, RecoverOptions { hooks: Some(&mut StoreRecovery(&sqlite)) })
        .map_err(OpenError::recovery)?;
    Ok(Some((sqlite, recovery)))
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
fn new_session(workspace: &ConfinedRoot, store: Arc<dyn PendingActionStore>) -> Arc<Session> {
    let session = Arc::new(Session::new(store));
    let undo = Arc::new(ChangeUndo::new(workspace.clone()));
    session.register_undo(AST_EDIT_TOOL_NAME, undo.clone());
    for name in TEXT_TOOL_NAMES.into_iter().chain([SHELL_SOURCE]) {
        session.register_undo(name, undo.clone());
    }
    session
}

/// The rehydrators of every built-in tool that stages previews.
fn builtin_rehydrators(workspace: &ConfinedRoot) -> Rehydrators {
    let mut res = Rehydrators::new();
    let ast = workspace.clone();
    res.register(
        AST_EDIT_TOOL_NAME,
        Arc::new(move |stored: &StoredAction| {
            // The rest of a preview applied hunk by hunk is a preview of fixed replacements.
            if stored.payload.get("ops").is_some() {
                return ChangeAction::from_payload(
                    ast.clone(),
                    AST_EDIT_TOOL_NAME,
                    &stored.payload,
                )
                .map(|action| Arc::new(action) as Arc<dyn PendingAction>)
                .map_err(|err| err.to_string());
            }
            AstEditAction::from_payload(ast.clone(), &stored.payload)
                .map(|action| Arc::new(action) as Arc<dyn PendingAction>)
                .map_err(|err| err.to_string())
        }),
    );
    for name in TEXT_TOOL_NAMES.into_iter().chain([REVERT_SOURCE, SHELL_SOURCE]) {
        let workspace = workspace.clone();
        res.register(
            name,
            Arc::new(move |stored: &StoredAction| {
                staged_edit::rehydrate(&workspace, &stored.source_tool_name, &stored.payload)
            }),
        );
    }
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
