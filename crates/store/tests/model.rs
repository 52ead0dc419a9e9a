//! Model-based property tests of the pending stack, with one test body run against every
//! store: `InMemoryStore`, one `SqliteStore` (reopened at random, as a restarted process would),
//! and two `SqliteStore` handles on the same folder (as two processes would hold them).
//!
//! - `resolve_matches_a_vec_model_*`: random pushes, applies (some failing a few times),
//!   discards and expected-id applies through `Session`, checked after every step against a
//!   plain `Vec` model, from every handle.
//! - `claims_match_a_model_*`: random pushes, pops, claims, completes, releases and abandoned
//!   claims by two callers, straight on the store, checked the same way.
//! - `concurrent_resolves_on_two_handles_keep_every_entry_exactly_once`: two threads, each
//!   with its own handle and session, race random operations; nothing is applied twice,
//!   nothing is lost, and every error is one a caller is told to expect.
//!
//! `InMemoryStore` lives in `staged-core`, which cannot depend on this crate; this crate sees
//! both stores, so it holds the shared bodies. Case counts are modest for CI (each `SqliteStore` write is a
//! synced transaction); set `PROPTEST_CASES` for a longer run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
};

use futures::executor::block_on;
use proptest::{prelude::*, test_runner::TestCaseError};
use staged_core::{
    ActionError, CancelToken, Claim, InMemoryStore, PendingAction, PendingActionStore, PendingId,
    ResolveOptions, Session, StoreError, pending_id,
};
use staged_protocol::{JsonObject, ResolveParams, ToolResult};
use staged_store::{Rehydrators, SqliteStore, StoredAction};

const TOOL: &str = "scripted";

/// The case count: `PROPTEST_CASES` when set, else `ci`.
fn cases(ci: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(ci);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

/// What the actions did, shared by every live and rehydrated copy of them.
#[derive(Default)]
struct Ledger {
    /// Apply attempts so far, by label.
    attempts: Mutex<HashMap<String, u32>>,
    /// Labels applied successfully, in order.
    applied: Mutex<Vec<String>>,
}

/// A replayable action whose first `fail_times` applies fail.
struct Scripted {
    label: String,
    fail_times: u32,
    ledger: Arc<Ledger>,
}

#[async_trait::async_trait]
impl PendingAction for Scripted {
    fn label(&self) -> &str {
        &self.label
    }
    fn source_tool_name(&self) -> &str {
        TOOL
    }
    fn payload(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({"label": self.label, "failTimes": self.fail_times}))
    }
    async fn apply(
        &self,
        _: &str,
        _: Option<&JsonObject>,
        _: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        let attempt = {
            let mut attempts = self.ledger.attempts.lock().unwrap();
            let n = attempts.entry(self.label.clone()).or_default();
            *n += 1;
            *n
        };
        if attempt <= self.fail_times {
            return Err(ActionError::other("transient"));
        }
        self.ledger.applied.lock().unwrap().push(self.label.clone());
        Ok(ToolResult::text(format!("applied {}", self.label)))
    }
}

fn rehydrators(ledger: &Arc<Ledger>) -> Rehydrators {
    let ledger = Arc::clone(ledger);
    let mut res = Rehydrators::new();
    res.register(
        TOOL,
        Arc::new(move |stored: &StoredAction| {
            let label = stored.payload["label"].as_str().ok_or("no label")?.to_owned();
            let fail_times = stored.payload["failTimes"].as_u64().ok_or("no failTimes")?;
            let fail_times = u32::try_from(fail_times).map_err(|err| err.to_string())?;
            Ok(Arc::new(Scripted { label, fail_times, ledger: Arc::clone(&ledger) })
                as Arc<dyn PendingAction>)
        }),
    );
    res
}

/// Which store a test body runs against.
#[derive(Debug, Clone, Copy)]
enum Backend {
    Memory,
    /// `n` `SqliteStore` handles on one temporary folder.
    Sqlite(usize),
}

/// The store handles of one test case, each with its own session, like separate processes.
struct Stores {
    backend: Backend,
    dir: Option<tempfile::TempDir>,
    ledger: Arc<Ledger>,
    sessions: Vec<Arc<Session>>,
}

impl Stores {
    fn new(backend: Backend) -> Stores {
        let ledger = Arc::new(Ledger::default());
        let mut stores = Stores { backend, dir: None, ledger, sessions: Vec::new() };
        match backend {
            Backend::Memory => {
                stores.sessions.push(Arc::new(Session::new(Arc::new(InMemoryStore::new()))));
            }
            Backend::Sqlite(n) => {
                stores.dir = Some(tempfile::tempdir().unwrap());
                for _ in 0..n {
                    let session = stores.open_sqlite();
                    stores.sessions.push(session);
                }
            }
        }
        stores
    }

    fn open_sqlite(&self) -> Arc<Session> {
        let dir = self.dir.as_ref().unwrap().path().join(".staged");
        let store = SqliteStore::open(&dir, rehydrators(&self.ledger)).unwrap();
        Arc::new(Session::new(Arc::new(store)))
    }

    /// The session of caller `via` (callers share handles when there are fewer handles).
    fn session(&self, via: usize) -> &Arc<Session> {
        &self.sessions[via % self.sessions.len()]
    }

    fn store(&self, via: usize) -> &Arc<dyn PendingActionStore> {
        self.session(via).store()
    }

    /// Closes caller `via`'s handle and opens a new one on the same folder, as a restarted
    /// process would. The in-memory store has nothing to reopen: it keeps its one handle.
    fn reopen(&mut self, via: usize) {
        if let Backend::Sqlite(_) = self.backend {
            let idx = via % self.sessions.len();
            let session = self.open_sqlite();
            self.sessions[idx] = session;
        }
    }

    fn action(&self, label: String, fail_times: u32) -> Arc<dyn PendingAction> {
        Arc::new(Scripted { label, fail_times, ledger: Arc::clone(&self.ledger) })
    }

    /// Every handle lists exactly the model's stack (newest first), with its labels.
    fn check_stack(&self, expected: &[(String, String)]) -> Result<(), TestCaseError> {
        for session in &self.sessions {
            let store = session.store();
            let listed: Vec<(String, String)> = store
                .list()
                .unwrap()
                .iter()
                .map(|e| (e.id.to_string(), e.label().to_owned()))
                .collect();
            prop_assert_eq!(&listed, expected);
            prop_assert_eq!(store.len().unwrap(), expected.len());
            let head = store.peek().unwrap().map(|e| e.id.to_string());
            prop_assert_eq!(head.as_ref(), expected.first().map(|(id, _)| id));
        }
        Ok(())
    }
}

fn id_of(n_pushed: u64) -> String {
    pending_id(TOOL, n_pushed).to_string()
}

// ---------------------------------------------------------------------------------------------
// Resolve through `Session`, against a `Vec` model.

#[derive(Debug, Clone)]
enum ResolveOp {
    /// Push an action whose first `fail_times` applies fail.
    Push {
        fail_times: u32,
        via: usize,
    },
    Apply {
        via: usize,
    },
    Discard {
        via: usize,
    },
    /// Apply, naming the head (`below == 0`) or an entry under it, as `staged review` does.
    ApplyExpected {
        below: usize,
        via: usize,
    },
    /// Close the handle and open it again.
    Reopen {
        via: usize,
    },
}

fn resolve_op() -> impl Strategy<Value = ResolveOp> {
    let via = 0usize..2;
    prop_oneof![
        6 => ((0u32..3), via.clone()).prop_map(|(fail_times, via)| ResolveOp::Push { fail_times, via }),
        4 => via.clone().prop_map(|via| ResolveOp::Apply { via }),
        2 => via.clone().prop_map(|via| ResolveOp::Discard { via }),
        2 => ((0usize..2), via.clone()).prop_map(|(below, via)| ResolveOp::ApplyExpected { below, via }),
        1 => via.prop_map(|via| ResolveOp::Reopen { via }),
    ]
}

#[derive(Debug)]
struct ModelEntry {
    id: String,
    label: String,
    failures_left: u32,
}

/// An apply of the head: checks `res` against the model and updates it.
fn expect_head_apply(
    model: &mut Vec<ModelEntry>,
    res: Result<ToolResult, staged_core::ToolError>,
) -> Result<(), TestCaseError> {
    match model.last_mut() {
        None => prop_assert_eq!(
            res.unwrap_err().message().to_owned(),
            "No pending action to resolve. Nothing to apply or discard."
        ),
        Some(top) if top.failures_left > 0 => {
            top.failures_left -= 1;
            prop_assert_eq!(res.unwrap_err().message().to_owned(), "Apply failed: transient");
        }
        Some(_) => {
            let top = model.pop().unwrap();
            prop_assert_eq!(res.unwrap().text_content(), format!("applied {}", top.label));
        }
    }
    Ok(())
}

/// The shared body: runs `ops` on `backend` and checks every step against the model.
fn check_resolve_model(backend: Backend, ops: Vec<ResolveOp>) -> Result<(), TestCaseError> {
    let mut stores = Stores::new(backend);
    // Bottom first, like the stack's storage.
    let mut model: Vec<ModelEntry> = Vec::new();
    let mut n_pushed = 0u64;
    let cancel = CancelToken::new();
    for (step, op) in ops.into_iter().enumerate() {
        match op {
            ResolveOp::Push { fail_times, via } => {
                let label = format!("action {step}");
                let action = stores.action(label.clone(), fail_times);
                let id = stores.session(via).push_pending_action(action).unwrap();
                prop_assert_eq!(id.to_string(), id_of(n_pushed));
                n_pushed += 1;
                model.push(ModelEntry { id: id.to_string(), label, failures_left: fail_times });
            }
            ResolveOp::Apply { via } => {
                let res = block_on(stores.session(via).resolve(
                    ResolveParams::apply("r"),
                    ResolveOptions::default(),
                    &cancel,
                ));
                expect_head_apply(&mut model, res)?;
            }
            ResolveOp::ApplyExpected { below, via } => {
                let Some(expected) = model.iter().rev().nth(below).map(|e| e.id.clone()) else {
                    continue;
                };
                let expected = PendingId::from_string(expected);
                let res = block_on(stores.session(via).resolve(
                    ResolveParams::apply("r"),
                    ResolveOptions { expected: Some(&expected), ..Default::default() },
                    &cancel,
                ));
                if below == 0 {
                    expect_head_apply(&mut model, res)?;
                } else {
                    let top = model.last().unwrap();
                    prop_assert_eq!(
                        res.unwrap_err().message().to_owned(),
                        format!(
                            "The newest pending preview is now `{}` ({}), not {expected}; review it first. Nothing was applied or discarded.",
                            top.label, top.id
                        )
                    );
                }
            }
            ResolveOp::Discard { via } => {
                let res = block_on(stores.session(via).resolve(
                    ResolveParams::discard("d"),
                    ResolveOptions::default(),
                    &cancel,
                ))
                .unwrap();
                match model.pop() {
                    None => prop_assert_eq!(
                        res.text_content(),
                        "Nothing to discard; no pending action remains."
                    ),
                    Some(top) => prop_assert_eq!(
                        res.text_content(),
                        format!("Discarded: {}. Reason: d", top.label)
                    ),
                }
            }
            ResolveOp::Reopen { via } => stores.reopen(via),
        }
        let expected: Vec<(String, String)> =
            model.iter().rev().map(|e| (e.id.clone(), e.label.clone())).collect();
        stores.check_stack(&expected)?;
    }
    // Every label was applied at most once.
    let applied = stores.ledger.applied.lock().unwrap();
    let unique: HashSet<&String> = applied.iter().collect();
    prop_assert_eq!(unique.len(), applied.len());
    Ok(())
}

proptest! {
    #![proptest_config(cases(256))]
    #[test]
    fn resolve_matches_a_vec_model_in_memory(ops in proptest::collection::vec(resolve_op(), 1..60)) {
        check_resolve_model(Backend::Memory, ops)?;
    }
}

proptest! {
    #![proptest_config(cases(32))]
    #[test]
    fn resolve_matches_a_vec_model_in_sqlite(ops in proptest::collection::vec(resolve_op(), 1..40)) {
        check_resolve_model(Backend::Sqlite(1), ops)?;
    }

    #[test]
    fn resolve_matches_a_vec_model_across_two_sqlite_handles(ops in proptest::collection::vec(resolve_op(), 1..40)) {
        check_resolve_model(Backend::Sqlite(2), ops)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Claims straight on the store, by two callers, against a model.

#[derive(Debug, Clone)]
enum ClaimOp {
    Push {
        via: usize,
    },
    Pop {
        via: usize,
    },
    Claim {
        via: usize,
    },
    /// Complete the caller's claim number `pick` (modulo how many it holds).
    Complete {
        via: usize,
        pick: usize,
    },
    Release {
        via: usize,
        pick: usize,
    },
    /// Drop a claim without handing it back, as a resolve that was cancelled mid-flight.
    Abandon {
        via: usize,
        pick: usize,
    },
    /// The caller's process restarts: its claims die and its handle is reopened.
    Restart {
        via: usize,
    },
}

fn claim_op() -> impl Strategy<Value = ClaimOp> {
    let via = 0usize..2;
    prop_oneof![
        5 => via.clone().prop_map(|via| ClaimOp::Push { via }),
        2 => via.clone().prop_map(|via| ClaimOp::Pop { via }),
        4 => via.clone().prop_map(|via| ClaimOp::Claim { via }),
        2 => (via.clone(), 0usize..3).prop_map(|(via, pick)| ClaimOp::Complete { via, pick }),
        2 => (via.clone(), 0usize..3).prop_map(|(via, pick)| ClaimOp::Release { via, pick }),
        1 => (via.clone(), 0usize..3).prop_map(|(via, pick)| ClaimOp::Abandon { via, pick }),
        1 => via.prop_map(|via| ClaimOp::Restart { via }),
    ]
}

#[derive(Debug)]
struct ClaimModelEntry {
    id: String,
    label: String,
    claimed_by: Option<usize>,
}

/// The id in a `Busy` error, or a failure naming what came instead.
fn busy_id<T: std::fmt::Debug>(res: Result<T, StoreError>) -> Result<String, TestCaseError> {
    match res {
        Err(StoreError::Busy { id, .. }) => Ok(id.to_string()),
        other => Err(TestCaseError::fail(format!("expected Busy, got {other:?}"))),
    }
}

/// Takes the caller's claim number `pick` and the model index of its entry.
fn take_claim(
    held: &mut [Vec<Claim>; 2],
    model: &[ClaimModelEntry],
    via: usize,
    pick: usize,
) -> Option<(Claim, usize)> {
    if held[via].is_empty() {
        return None;
    }
    let claim = held[via].remove(pick % held[via].len());
    let idx = model.iter().position(|e| e.id == claim.entry().id.as_str()).unwrap();
    Some((claim, idx))
}

/// The shared body of the claim model.
fn check_claim_model(backend: Backend, ops: Vec<ClaimOp>) -> Result<(), TestCaseError> {
    let mut stores = Stores::new(backend);
    let mut model: Vec<ClaimModelEntry> = Vec::new();
    let mut held: [Vec<Claim>; 2] = [Vec::new(), Vec::new()];
    let mut n_pushed = 0u64;
    for (step, op) in ops.into_iter().enumerate() {
        match op {
            ClaimOp::Push { via } => {
                let label = format!("entry {step}");
                let id = stores.store(via).push(stores.action(label.clone(), 0)).unwrap();
                prop_assert_eq!(id.to_string(), id_of(n_pushed));
                n_pushed += 1;
                model.push(ClaimModelEntry { id: id.to_string(), label, claimed_by: None });
            }
            ClaimOp::Pop { via } => {
                let res = stores.store(via).pop();
                match model.last() {
                    None => prop_assert!(res.unwrap().is_none()),
                    Some(top) if top.claimed_by.is_some() => {
                        prop_assert_eq!(busy_id(res)?, top.id.clone());
                    }
                    Some(_) => {
                        let top = model.pop().unwrap();
                        let popped = res.unwrap().unwrap();
                        prop_assert_eq!(popped.id.to_string(), top.id);
                        prop_assert_eq!(popped.label(), top.label);
                    }
                }
            }
            ClaimOp::Claim { via } => {
                let res = stores.store(via).claim_head();
                match model.last_mut() {
                    None => prop_assert!(res.unwrap().is_none()),
                    Some(top) if top.claimed_by.is_some() => {
                        prop_assert_eq!(busy_id(res)?, top.id.clone());
                    }
                    Some(top) => {
                        let claim = res.unwrap().unwrap();
                        prop_assert_eq!(claim.entry().id.as_str(), top.id.as_str());
                        top.claimed_by = Some(via);
                        held[via].push(claim);
                    }
                }
            }
            ClaimOp::Complete { via, pick } => {
                let Some((claim, idx)) = take_claim(&mut held, &model, via, pick) else {
                    continue;
                };
                stores.store(via).complete(claim, None).unwrap();
                model.remove(idx);
            }
            ClaimOp::Release { via, pick } => {
                let Some((claim, idx)) = take_claim(&mut held, &model, via, pick) else {
                    continue;
                };
                stores.store(via).release(claim, None).unwrap();
                let mut entry = model.remove(idx);
                entry.claimed_by = None;
                model.push(entry);
            }
            ClaimOp::Abandon { via, pick } => {
                let Some((claim, idx)) = take_claim(&mut held, &model, via, pick) else {
                    continue;
                };
                drop(claim);
                model[idx].claimed_by = None;
            }
            ClaimOp::Restart { via } => {
                held[via].clear();
                for entry in &mut model {
                    if entry.claimed_by == Some(via) {
                        entry.claimed_by = None;
                    }
                }
                stores.reopen(via);
            }
        }
        let expected: Vec<(String, String)> =
            model.iter().rev().map(|e| (e.id.clone(), e.label.clone())).collect();
        stores.check_stack(&expected)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(256))]
    #[test]
    fn claims_match_a_model_in_memory(ops in proptest::collection::vec(claim_op(), 1..60)) {
        check_claim_model(Backend::Memory, ops)?;
    }
}

proptest! {
    #![proptest_config(cases(32))]
    #[test]
    fn claims_match_a_model_across_two_sqlite_handles(ops in proptest::collection::vec(claim_op(), 1..40)) {
        check_claim_model(Backend::Sqlite(2), ops)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Two handles racing.

#[derive(Debug, Clone)]
enum RaceOp {
    Push { fail_times: u32 },
    Apply,
    Discard,
}

fn race_op() -> impl Strategy<Value = RaceOp> {
    prop_oneof![
        3 => (0u32..2).prop_map(|fail_times| RaceOp::Push { fail_times }),
        2 => Just(RaceOp::Apply),
        1 => Just(RaceOp::Discard),
    ]
}

/// What one racing caller saw.
#[derive(Debug, Default)]
struct Seen {
    pushed: Vec<(String, String)>,
    applied: Vec<String>,
    discarded: Vec<String>,
}

fn race(
    session: &Session,
    ledger: &Arc<Ledger>,
    caller: usize,
    ops: &[RaceOp],
) -> Result<Seen, String> {
    let cancel = CancelToken::new();
    let mut seen = Seen::default();
    for (step, op) in ops.iter().enumerate() {
        match op {
            RaceOp::Push { fail_times } => {
                let label = format!("caller {caller} step {step}");
                let action: Arc<dyn PendingAction> = Arc::new(Scripted {
                    label: label.clone(),
                    fail_times: *fail_times,
                    ledger: Arc::clone(ledger),
                });
                let id = session.push_pending_action(action).map_err(|err| err.to_string())?;
                seen.pushed.push((id.to_string(), label));
            }
            RaceOp::Apply | RaceOp::Discard => {
                let params = match op {
                    RaceOp::Apply => ResolveParams::apply("r"),
                    _ => ResolveParams::discard("d"),
                };
                match block_on(session.resolve(params, ResolveOptions::default(), &cancel)) {
                    Ok(res) => {
                        let text = res.text_content();
                        if let Some(label) = text.strip_prefix("applied ") {
                            seen.applied.push(label.to_owned());
                        } else if let Some(rest) = text.strip_prefix("Discarded: ") {
                            let label = rest.strip_suffix(". Reason: d").ok_or(text.clone())?;
                            seen.discarded.push(label.to_owned());
                        } else if text != "Nothing to discard; no pending action remains." {
                            return Err(format!("unexpected result: {text}"));
                        }
                    }
                    Err(err) => {
                        let msg = err.message();
                        let expected = msg == "Apply failed: transient"
                            || msg == "No pending action to resolve. Nothing to apply or discard."
                            || msg.starts_with("Cannot resolve now: ");
                        if !expected {
                            return Err(format!("unexpected error: {msg}"));
                        }
                    }
                }
            }
        }
    }
    Ok(seen)
}

proptest! {
    #![proptest_config(cases(16))]
    #[test]
    fn concurrent_resolves_on_two_handles_keep_every_entry_exactly_once(
        ops in proptest::array::uniform2(proptest::collection::vec(race_op(), 1..30)),
    ) {
        let stores = Stores::new(Backend::Sqlite(2));
        let [ops_a, ops_b] = ops;
        let (a, b) = (Arc::clone(stores.session(0)), Arc::clone(stores.session(1)));
        let ledger = Arc::clone(&stores.ledger);
        let thread_a = std::thread::spawn(move || race(&a, &ledger, 0, &ops_a));
        let seen_b = race(&b, &stores.ledger, 1, &ops_b);
        let seen_a = thread_a.join().unwrap();
        let (seen_a, seen_b) = (seen_a.map_err(TestCaseError::fail)?, seen_b.map_err(TestCaseError::fail)?);

        let pushed: HashMap<String, String> =
            seen_a.pushed.iter().chain(&seen_b.pushed).cloned().collect();
        prop_assert_eq!(pushed.len(), seen_a.pushed.len() + seen_b.pushed.len(), "an id was reused");
        let mut resolved: Vec<&String> = seen_a.applied.iter()
            .chain(&seen_a.discarded)
            .chain(&seen_b.applied)
            .chain(&seen_b.discarded)
            .collect();
        resolved.sort();
        let n_resolved = resolved.len();
        resolved.dedup();
        prop_assert_eq!(resolved.len(), n_resolved, "an entry was resolved twice");
        let left: HashSet<String> = stores.store(0).list().unwrap().iter().map(|e| e.label().to_owned()).collect();
        let expected: HashSet<String> = pushed
            .values()
            .filter(|label| !resolved.contains(label))
            .cloned()
            .collect();
        prop_assert_eq!(&left, &expected);
        let left_b: HashSet<String> = stores.store(1).list().unwrap().iter().map(|e| e.label().to_owned()).collect();
        prop_assert_eq!(&left_b, &expected);
        // What the callers were told was applied is what ran, once each.
        let mut ran = stores.ledger.applied.lock().unwrap().clone();
        ran.sort();
        let mut told: Vec<String> = seen_a.applied.iter().chain(&seen_b.applied).cloned().collect();
        told.sort();
        prop_assert_eq!(ran, told);
    }
}
