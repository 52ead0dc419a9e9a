//! The start-up steps every front end shares: find the root, open the SQLite stack with every
//! built-in tool's rehydrator, finish or roll back the applies a crash interrupted, and a
//! session that undoes each built-in tool's entries.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use staged_ast_edit::{AST_EDIT_TOOL_NAME, AstEditAction, ListedAstEdit};
use staged_core::{PendingAction, PendingActionStore, Session};
use staged_edit::TEXT_TOOL_NAMES;
use staged_journal::{
    ChangeAction, ChangeUndo, ConfinedRoot, RecoverOptions, RecoveryHooks, RecoveryReport,
    STATE_DIR_NAME, recover,
};
use staged_protocol::lenient::Header;
use staged_session::REVERT_SOURCE;
use staged_shell::SHELL_SOURCE;
use staged_store::{Rehydrators, SqliteStore, StoredAction};

use crate::OpenError;

/// Opens the workspace's SQLite stack (creating the state folder with `create`) and recovers
/// interrupted applies; `Ok(None)` when there is no state folder and `create` is not set.
pub(crate) fn open_sqlite(
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
pub(crate) fn new_session(
    workspace: &ConfinedRoot,
    store: Arc<dyn PendingActionStore>,
) -> Arc<Session> {
    let session = Arc::new(Session::new(store));
    let undo = Arc::new(ChangeUndo::new(workspace.clone()));
    session.register_undo(AST_EDIT_TOOL_NAME, undo.clone());
    for name in TEXT_TOOL_NAMES.into_iter().chain([SHELL_SOURCE]) {
        session.register_undo(name, undo.clone());
    }
    session
}

/// How a process rebuilds a stored `ast_edit` preview that is not yet split by hunk: one of
/// [`replay_ast_edit`] and [`list_ast_edit`], chosen where the builder is made, so that a
/// binary whose builders are all [`WorkspaceSessionBuilder::lean`](crate::WorkspaceSessionBuilder::lean)
/// never references the ast engine and links none of its grammars.
pub(crate) type AstRehydrator =
    fn(ConfinedRoot, &serde_json::Value) -> Result<Arc<dyn PendingAction>, String>;

/// The full `ast_edit` action: it lists, and applies by running the rewrite again.
pub(crate) fn replay_ast_edit(
    workspace: ConfinedRoot,
    payload: &serde_json::Value,
) -> Result<Arc<dyn PendingAction>, String> {
    AstEditAction::from_payload(workspace, payload)
        .map(|action| Arc::new(action) as Arc<dyn PendingAction>)
        .map_err(|err| err.to_string())
}

/// The `ast_edit` preview as its payload lists it, without the engine: listed, discarded and
/// refusing new previews over its files as the full action does; its apply writes nothing.
pub(crate) fn list_ast_edit(
    workspace: ConfinedRoot,
    payload: &serde_json::Value,
) -> Result<Arc<dyn PendingAction>, String> {
    ListedAstEdit::from_payload(&workspace, payload)
        .map(|action| Arc::new(action) as Arc<dyn PendingAction>)
        .map_err(|err| err.to_string())
}

/// The rehydrators of every built-in tool that stages previews, `ast_edit`'s by `ast`.
pub(crate) fn builtin_rehydrators(workspace: &ConfinedRoot, ast: AstRehydrator) -> Rehydrators {
    let mut res = Rehydrators::new();
    let at = workspace.clone();
    res.register(
        AST_EDIT_TOOL_NAME,
        Arc::new(move |stored: &StoredAction| {
            // The rest of a preview applied hunk by hunk is a preview of fixed replacements.
            if Header::of(&stored.payload).ops.0 {
                return ChangeAction::from_payload(at.clone(), AST_EDIT_TOOL_NAME, &stored.payload)
                    .map(|action| Arc::new(action) as Arc<dyn PendingAction>)
                    .map_err(|err| err.to_string());
            }
            ast(at.clone(), &stored.payload)
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
