//! `Session`: one agent session's resolve state — its pending store and the loop's routes (hard
//! directive invoker, standing handler) — and the dispatch order of `resolve`.

use std::{
    collections::HashMap,
    fmt,
    sync::{Arc, Mutex, MutexGuard},
};

use staged_protocol::{ResolveAction, ResolveDetails, ResolveParams, ToolResult};

use crate::{
    ActionError, CancelToken, Claim, FrontEnd, LogAction, LogEntry, LogOutcome, LogRecord,
    PendingAction, PendingActionStore, PendingEntry, PendingId, ResolveRoutes, Retirement,
    StoreError, ToolError, UndoHandler,
    resolve::{
        NO_PENDING_APPLY_TEXT, NOTHING_TO_DISCARD_TEXT, details_json, reason_too_long,
        run_claimed_invocation,
    },
    retire::Settled,
};

/// The optional inputs of [`Session::resolve`]; the default resolves the head as the
/// session's front end.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResolveOptions<'a> {
    /// The front end recorded in the log; [`Session::front_end`] when `None`.
    pub front_end: Option<&'a FrontEnd>,
    /// Resolve the head only if it is still this preview, so a person who reviewed one preview
    /// never applies another that was staged meanwhile. Hard directives and the standing
    /// handler are then not consulted: this is a decision about one known preview.
    pub expected: Option<&'a PendingId>,
    /// A person decided this resolve (the MCP server asked them and they approved), so a
    /// preview that only a person may apply ([`PendingAction::needs_person`]) applies. The
    /// CLI, `staged review` and `staged ui` ([`FrontEnd::Cli`], [`FrontEnd::Review`],
    /// [`FrontEnd::Ui`]) are a person's already.
    pub by_person: bool,
}

/// The optional inputs of [`Session::undo`]; the default reverts the newest entry that can be
/// reverted, as the session's front end.
#[derive(Debug, Clone, Copy, Default)]
pub struct UndoOptions<'a> {
    /// The log entry to revert. By default the newest `applied` or `redone` entry not reverted
    /// yet, passing over the newer ones whose tool declares no undo (they stay in the log; a
    /// bare undo is never stuck on them).
    pub target: Option<u64>,
    /// The front end recorded in the log; [`Session::front_end`] when `None`.
    pub front_end: Option<&'a FrontEnd>,
}

/// The resolve state of one agent session.
///
/// `resolve` dispatches, in order, to (1) the in-flight hard directive's invoker, (2) the head
/// pending action, (3) the standing handler (`docs/contract/resolve.md#dispatch-order`). (1)
/// and (3) belong to the agent loop, which attaches them as [`ResolveRoutes`].
pub struct Session {
    store: Arc<dyn PendingActionStore>,
    routes: Mutex<Option<Arc<dyn ResolveRoutes>>>,
    front_end: Mutex<FrontEnd>,
    needs_person: Mutex<Option<String>>,
    undo_handlers: Mutex<HashMap<String, Arc<dyn UndoHandler>>>,
    undo_fallbacks: Mutex<Vec<Arc<dyn UndoHandler>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("pending", &self.store.len().ok())
            .field("has_routes", &lock(&self.routes).is_some())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A session over `store`, with no loop routes attached, resolving as [`FrontEnd::Cli`]
    /// until told otherwise.
    pub fn new(store: Arc<dyn PendingActionStore>) -> Self {
        Self {
            store,
            routes: Mutex::new(None),
            front_end: Mutex::new(FrontEnd::Cli),
            needs_person: Mutex::new(None),
            undo_handlers: Mutex::new(HashMap::new()),
            undo_fallbacks: Mutex::new(Vec::new()),
        }
    }

    /// Sets the front end that [`Session::resolve`] records in the log unless
    /// [`ResolveOptions::front_end`] names another.
    pub fn set_front_end(&self, front_end: FrontEnd) {
        *lock(&self.front_end) = front_end;
    }

    /// The front end resolves are recorded under by default.
    pub fn front_end(&self) -> FrontEnd {
        lock(&self.front_end).clone()
    }

    /// Marks what this session stages from now on as a preview only a person may apply, and
    /// why (`Some("Claude Code is in its default permission mode, in which it asks the person
    /// before an edit")`): a client's hook sets it when the client would have asked the
    /// person. The producers that honour it record it in their preview
    /// ([`PendingAction::needs_person`]).
    pub fn set_needs_person(&self, why: Option<String>) {
        *lock(&self.needs_person) = why;
    }

    /// Why what this session stages may be applied only by a person, if it may.
    pub fn needs_person(&self) -> Option<String> {
        lock(&self.needs_person).clone()
    }

    /// Registers how entries of `source_tool_name` are undone, replacing any earlier handler.
    pub fn register_undo(
        &self,
        source_tool_name: impl Into<String>,
        handler: Arc<dyn UndoHandler>,
    ) {
        lock(&self.undo_handlers).insert(source_tool_name.into(), handler);
    }

    /// Registers a handler asked about the entries no source tool name claims: it undoes
    /// those it [accepts](UndoHandler::accepts) (a plugin host recognises its entries by their
    /// undo data).
    pub fn register_undo_fallback(&self, handler: Arc<dyn UndoHandler>) {
        lock(&self.undo_fallbacks).push(handler);
    }

    /// The entry a bare undo reverts: `newest` (the newest applied or redone entry not
    /// reverted yet) when its tool can undo it, else the newest older such entry one can;
    /// `newest` when none can (its undo then says why not).
    fn newest_undoable(&self, log: &dyn crate::ResolveLog, newest: u64) -> Result<u64, ToolError> {
        let undoable = |entry: &LogEntry| self.undo_handler(entry).is_some();
        if log.entry(newest).map_err(store_error)?.is_none_or(|entry| undoable(&entry)) {
            return Ok(newest);
        }
        let keep = log.keep().map_err(store_error)?;
        let older = log.entries(keep, false).map_err(store_error)?.into_iter().find(|entry| {
            entry.seq < newest
                && matches!(entry.record.outcome, LogOutcome::Applied | LogOutcome::Redone)
                && entry.reverted_by.is_none()
                && undoable(entry)
        });
        Ok(older.map_or(newest, |entry| entry.seq))
    }

    fn undo_handler(&self, entry: &LogEntry) -> Option<Arc<dyn UndoHandler>> {
        if let Some(handler) = lock(&self.undo_handlers).get(&entry.record.source_tool_name) {
            return Some(Arc::clone(handler));
        }
        lock(&self.undo_fallbacks).iter().find(|handler| handler.accepts(entry)).cloned()
    }

    /// The pending-action store.
    pub fn store(&self) -> &Arc<dyn PendingActionStore> {
        &self.store
    }

    /// Stages an action on top of the stack.
    pub fn push_pending_action(
        &self,
        action: Arc<dyn PendingAction>,
    ) -> Result<PendingId, StoreError> {
        self.store.push(action)
    }

    /// Stages `action` unless a pending preview already writes one of its files
    /// ([`PendingAction::files`]): then nothing is staged, and the error names that preview
    /// and says to resolve it first. The check and the push are one step of the store, so
    /// two producers racing for one file never both stage it. A preview is always computed
    /// against the files on disk, so one pending preview per file keeps the stack honest.
    ///
    /// # Errors
    /// [`StoreError::Refused`] with that message, or the store's own error.
    pub fn push_exclusive(&self, action: Arc<dyn PendingAction>) -> Result<PendingId, StoreError> {
        let ours: Vec<String> = action
            .files()
            .iter()
            .flat_map(|f| f.paths().map(str::to_owned).collect::<Vec<_>>())
            .collect();
        let refuse = |entry: &PendingEntry| {
            let theirs = entry.action.files();
            let clash = ours
                .iter()
                .find(|path| theirs.iter().any(|file| file.paths().any(|p| p == path.as_str())))?;
            Some(already_pending_text(clash, &entry.id, entry.label()))
        };
        self.store.push_unless(action, &refuse)
    }

    /// The refusal of reverting `entry` while a pending preview writes one of its files: that
    /// preview promises the bytes on disk now (the rest of a partial apply promises exactly
    /// what the apply wrote), so reverting under it would make it stale in silence.
    fn pending_over(&self, entry: &LogEntry) -> Result<Option<String>, ToolError> {
        let ours: std::collections::HashSet<&str> =
            entry.record.files.iter().map(|f| f.path.as_str()).collect();
        if ours.is_empty() {
            return Ok(None);
        }
        for pending in self.store.list().map_err(store_error)? {
            let files = pending.action.files();
            let clash = files.iter().flat_map(|f| f.paths()).find(|p| ours.contains(p));
            if let Some(path) = clash {
                return Ok(Some(undo_under_pending_text(
                    entry.seq,
                    &entry.record.label,
                    path,
                    &pending.id,
                    pending.label(),
                )));
            }
        }
        Ok(None)
    }

    /// Attaches (or, with `None`, detaches) the loop's routes: the in-flight hard directive's
    /// invoker and the standing handler.
    pub fn set_resolve_routes(&self, routes: Option<Arc<dyn ResolveRoutes>>) {
        *lock(&self.routes) = routes;
    }

    fn routes(&self) -> Option<Arc<dyn ResolveRoutes>> {
        lock(&self.routes).clone()
    }

    /// Runs one `resolve` call.
    ///
    /// The head is claimed before its callback runs, so concurrent calls never run the same
    /// action twice: the loser gets an error naming the busy action. On success the action is
    /// removed exactly once; on failure it stays pending, on top, under the same id.
    ///
    /// With [`ResolveOptions::expected`], the head is resolved only if it is still that
    /// preview; with [`ResolveOptions::front_end`], that front end is recorded in the log
    /// instead of the session's.
    pub async fn resolve(
        &self,
        params: ResolveParams,
        options: ResolveOptions<'_>,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError::aborted(cancel.reason()));
        }
        if let Some(err) = reason_too_long(&params.reason) {
            return Err(err);
        }
        let own;
        let front_end = match options.front_end {
            Some(front_end) => front_end,
            None => {
                own = self.front_end();
                &own
            }
        };
        let by_person = options.by_person
            || matches!(front_end, FrontEnd::Cli | FrontEnd::Review | FrontEnd::Ui);
        match options.expected {
            Some(expected) => {
                self.resolve_expected(params, expected, front_end, by_person, cancel).await
            }
            None => self.resolve_head(params, front_end, by_person, cancel).await,
        }
    }

    /// The dispatch of a `resolve` call that names no preview.
    async fn resolve_head(
        &self,
        params: ResolveParams,
        front_end: &FrontEnd,
        by_person: bool,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        let in_flight = self.routes().and_then(|routes| routes.in_flight_invoker());
        if let Some(invoker) = in_flight {
            return invoker.invoke(&params, cancel).await;
        }
        match self.store.claim_head() {
            Ok(Some(claim)) => self.run_claimed(&params, claim, front_end, by_person, cancel).await,
            Ok(None) => {
                let standing = self.routes().and_then(|routes| routes.standing_handler());
                if let Some(handler) = standing {
                    return handler.invoke(&params, cancel).await;
                }
                self.store.clear_stale().map_err(store_error)?;
                let details = details_json(ResolveDetails {
                    action: params.action,
                    reason: params.reason,
                    extra: params.extra,
                    source_tool_name: None,
                    label: None,
                    source_result_details: None,
                });
                match params.action {
                    ResolveAction::Apply => {
                        Err(ToolError::new(NO_PENDING_APPLY_TEXT).with_details(details))
                    }
                    ResolveAction::Discard => {
                        Ok(ToolResult::text(NOTHING_TO_DISCARD_TEXT).with_details(details))
                    }
                }
            }
            Err(err) => Err(store_error(err)),
        }
    }
}

impl Session {
    /// Resolves the head only if it is still `expected`, so a person who reviewed one preview
    /// never applies another that was staged meanwhile. Hard directives and the standing
    /// handler are not consulted: this is a decision about one known preview.
    async fn resolve_expected(
        &self,
        params: ResolveParams,
        expected: &PendingId,
        front_end: &FrontEnd,
        by_person: bool,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        let claim = match self.store.claim_head() {
            Ok(Some(claim)) => claim,
            Ok(None) => {
                return Err(ToolError::new(format!(
                    "{expected} is no longer pending; nothing was applied or discarded."
                )));
            }
            Err(err) => return Err(store_error(err)),
        };
        if &claim.entry().id != expected {
            let head = format!("`{}` ({})", claim.entry().label(), claim.entry().id);
            // Dropping the claim leaves the head exactly where it was.
            drop(claim);
            return Err(ToolError::new(format!(
                "The newest pending preview is now {head}, not {expected}; review it first. Nothing was applied or discarded."
            )));
        }
        self.run_claimed(&params, claim, front_end, by_person, cancel).await
    }

    /// Runs the claimed entry's callback, then removes the entry (unless the apply retired it
    /// itself) or, when the callback failed, keeps it pending on top; either way the outcome
    /// is recorded in the log in the same transaction.
    async fn run_claimed(
        &self,
        params: &ResolveParams,
        claim: Claim,
        front_end: &FrontEnd,
        by_person: bool,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        let action = claim.entry().action.clone();
        let label = claim.entry().label().to_owned();
        if params.action == ResolveAction::Apply
            && !by_person
            && let Some(why) = action.needs_person()
        {
            let text = needs_person_text(claim.entry().id.as_str(), &label, why);
            // Dropping the claim leaves the preview pending, on top.
            drop(claim);
            return Err(ToolError::new(text));
        }
        // A client's model resolving over MCP what that client's hook held back: the log says
        // the hook, which is how the edit came in.
        let staged_by = action.staged_by();
        let front_end = match (front_end, &staged_by) {
            (FrontEnd::Mcp(_), Some(hook @ FrontEnd::Hook(_))) => hook,
            _ => front_end,
        };
        let (log_action, outcome) = match params.action {
            ResolveAction::Apply => (LogAction::Apply, LogOutcome::Applied),
            ResolveAction::Discard => (LogAction::Discard, LogOutcome::Discarded),
        };
        let mut base = LogRecord::new(
            claim.entry().id.clone(),
            label.clone(),
            action.source_tool_name(),
            outcome,
            log_action,
            front_end,
        );
        base.reason.clone_from(&params.reason);
        base.extra.clone_from(&params.extra);
        let retirement = Retirement::claimed_logged(self.store.clone(), claim, base.clone());
        let res = run_claimed_invocation(params, action.as_ref(), cancel, &retirement).await;
        let not_removed = |text: &str, err: StoreError| {
            ToolError::new(format!(
                "{text} (but `{label}` could not be removed from the pending stack: {err})"
            ))
        };
        match res {
            Ok(result) => match retirement.settle() {
                Ok(Settled::NotRetired(claim)) => {
                    let mut record = base;
                    record.result = result.text_content();
                    if params.action == ResolveAction::Apply {
                        if result.is_error {
                            // A normal return with an error result (a stale preview): it
                            // wrote nothing and leaves the stack.
                            record.outcome = LogOutcome::Stale;
                        } else if let Some(change) = action.applied_change(&result) {
                            record.diff = change.diff;
                            record.files = change.files;
                            record.undo = change.undo;
                            record.texts = change.texts;
                        } else {
                            record.diff = action
                                .details()
                                .and_then(staged_protocol::preview_diff)
                                .map(str::to_owned);
                        }
                    }
                    let done = match claim {
                        Some(claim) => self.store.complete(claim, Some(record)),
                        None => Ok(()),
                    };
                    match done {
                        Ok(()) => Ok(result),
                        Err(err) => Err(not_removed(&result.text_content(), err)),
                    }
                }
                Ok(Settled::Retired) => Ok(result),
                Err(err) => Err(not_removed(&result.text_content(), err)),
            },
            Err(err) => {
                // A failed release leaves the entry claimed until the claim is dropped or
                // cleared as stale; the callback's error is what the model needs.
                if let Ok(Settled::NotRetired(Some(claim))) = retirement.settle() {
                    let record = LogRecord {
                        outcome: LogOutcome::Failed,
                        result: err.message().to_owned(),
                        ..base
                    };
                    let _ = self.store.release(claim, Some(record));
                }
                Err(err)
            }
        }
    }
}

/// The error of a model's `apply` of a preview only a person may apply
/// (`docs/contract/resolve.md#a-preview-only-a-person-may-apply`).
pub fn needs_person_text(id: &str, label: &str, why: &str) -> String {
    format!(
        "Only a person may apply {id} ({label}): it was staged while {why}. Nothing was applied, and it is still pending. Tell the person it waits for them: they apply it with `staged review`, or `staged resolve apply --id {id} --reason \"...\"`, in the workspace. To drop it instead, call resolve with action \"discard\"."
    )
}

/// Texts of `staged undo` that the session itself produces (the handler writes the rest).
pub(crate) const NO_LOG_TEXT: &str =
    "This workspace keeps no resolve log, so there is nothing to undo.";

/// The error of an undo with no applied entry left to revert.
pub const NOTHING_TO_UNDO_TEXT: &str =
    "Nothing to undo: the log has no applied entry that is not reverted already.";

/// The error of a redo with no undo left to redo.
pub const NOTHING_TO_REDO_TEXT: &str = "Nothing to redo: no undo since the last apply is left to redo. (`staged undo ENTRY` reverts any entry of `staged log`, an undo included.)";

impl Session {
    /// Redoes the newest undo that is not redone yet ([`crate::ResolveLog::newest_undo`]): an undo of
    /// that undo, under [`Session::undo`]'s rules. Run again, it walks forward through the
    /// undos made since the last apply.
    pub async fn redo(
        &self,
        reason: &str,
        front_end: &FrontEnd,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError::aborted(cancel.reason()));
        }
        let Some(log) = self.store.log() else { return Err(ToolError::new(NO_LOG_TEXT)) };
        match log.newest_undo().map_err(store_error)? {
            Some(seq) => {
                let options = UndoOptions { target: Some(seq), front_end: Some(front_end) };
                self.undo(reason, options, cancel).await
            }
            None => Err(ToolError::new(NOTHING_TO_REDO_TEXT)),
        }
    }

    /// Reverts the log entry `target` (by default the newest `applied` or `redone` one that
    /// is not reverted yet, so that undo run again walks back one apply at a time), recording
    /// the undo as an entry of its own; undoing an undo is a redo.
    ///
    /// Undos run one at a time across processes (the store's undo lock), and an entry is
    /// reverted at most once: a second undo of the same entry, concurrent or later, is
    /// refused and writes nothing. The entry's source tool must have registered an
    /// [`UndoHandler`]; the handler writes only if every file is byte-identical to what the
    /// entry wrote.
    pub async fn undo(
        &self,
        reason: &str,
        options: UndoOptions<'_>,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError::aborted(cancel.reason()));
        }
        let own;
        let front_end = match options.front_end {
            Some(front_end) => front_end,
            None => {
                own = self.front_end();
                &own
            }
        };
        let Some(log) = self.store.log() else { return Err(ToolError::new(NO_LOG_TEXT)) };
        // The target is chosen before waiting for the lock: two undos started together mean
        // the same entry, and only one of them reverts it.
        let seq = match options.target {
            Some(seq) => seq,
            None => match log.newest_applied().map_err(store_error)? {
                Some(seq) => self.newest_undoable(log, seq)?,
                None => return Err(ToolError::new(NOTHING_TO_UNDO_TEXT)),
            },
        };
        let _lock = log.lock_undo().map_err(store_error)?;
        let Some(entry) = log.entry(seq).map_err(store_error)? else {
            return Err(ToolError::new(format!("There is no log entry {seq}; see `staged log`.")));
        };
        let record = &entry.record;
        if !record.outcome.is_undoable() {
            let what = match record.outcome {
                LogOutcome::Failed => "failed",
                LogOutcome::Stale => "was stale",
                _ => "was discarded",
            };
            return Err(ToolError::new(format!(
                "Log entry {seq} ({}) {what}: it wrote nothing, so there is nothing to undo.",
                record.label
            )));
        }
        match log.reverted_by(seq).map_err(store_error)? {
            Some(reversal) if reversal.done => {
                return Err(ToolError::new(format!(
                    "Log entry {seq} ({}) was already reverted by entry {}; nothing was written. `staged undo {}` reverts that one.",
                    record.label, reversal.seq, reversal.seq
                )));
            }
            Some(_) => {
                return Err(ToolError::new(format!(
                    "An undo of log entry {seq} was interrupted; the next staged command finishes or rolls it back. Nothing was written."
                )));
            }
            None => {}
        }
        let Some(handler) = self.undo_handler(&entry) else {
            return Err(ToolError::new(format!(
                "Undo is not available for `{}` entries: that tool declares no undo. Nothing was written.",
                record.source_tool_name
            )));
        };
        if let Some(text) = self.pending_over(&entry)? {
            return Err(ToolError::new(text));
        }
        let outcome = match record.outcome {
            LogOutcome::Undone => LogOutcome::Redone,
            _ => LogOutcome::Undone,
        };
        let mut base = LogRecord::new(
            record.id.clone(),
            record.label.clone(),
            record.source_tool_name.clone(),
            outcome,
            LogAction::Undo,
            front_end,
        );
        base.reason = reason.to_owned();
        base.reverts = Some(seq);
        let retirement = Retirement::for_undo(self.store.clone(), base.clone());
        let res = handler.undo(&entry, &retirement, cancel).await;
        let result = match res {
            Ok(result) => result,
            Err(ActionError::Tool(err)) => return Err(err),
            Err(ActionError::Cancelled) => return Err(ToolError::aborted(cancel.reason())),
            Err(ActionError::Other(message)) => {
                return Err(ToolError::new(format!("Undo failed: {message}")));
            }
        };
        if result.is_error {
            return Ok(result);
        }
        match retirement.settle() {
            // A handler that wrote without a journal: its undo is recorded now. It keeps the
            // reverted entry's undo data, so undoing it (a redo) hands the handler the same
            // data back, with the outcome `undone` saying which way to go.
            Ok(Settled::NotRetired(_)) => {
                let undo = base.undo.clone().or_else(|| record.undo.clone());
                let record = LogRecord { result: result.text_content(), undo, ..base };
                self.store.log_record(record).map_err(|err| {
                    ToolError::new(format!(
                        "{} (but the undo could not be recorded in the log: {err})",
                        result.text_content()
                    ))
                })?;
                Ok(result)
            }
            Ok(Settled::Retired) => Ok(result),
            Err(err) => Err(ToolError::new(format!(
                "{} (but the undo could not be recorded in the log: {err})",
                result.text_content()
            ))),
        }
    }
}

fn store_error(err: StoreError) -> ToolError {
    match err {
        StoreError::Busy { .. } => ToolError::new(format!("Cannot resolve now: {err}.")),
        StoreError::UnknownClaim { .. } | StoreError::Backend { .. } | StoreError::Refused(_) => {
            ToolError::new(err.to_string())
        }
    }
}

/// Why log entry `seq` (`label`) is not reverted while a pending preview writes `path`.
pub(crate) fn undo_under_pending_text(
    seq: u64,
    label: &str,
    path: &str,
    id: &PendingId,
    pending: &str,
) -> String {
    format!(
        "Log entry {seq} ({label}) was not reverted: {path} has a pending preview, {id} ({pending}), made against the file as it is now, which reverting would change (the rest of a partial apply is such a preview). Resolve it first (apply or discard it), then revert again. Nothing was written."
    )
}

/// Why a file cannot be staged again while a pending preview writes it.
pub(crate) fn already_pending_text(path: &str, id: &PendingId, label: &str) -> String {
    format!(
        "{path} already has a pending preview: {id} ({label}). Resolve it first (call `resolve` with action \"apply\" or \"discard\"), then make this change again: a new change is always computed against the file on disk."
    )
}
