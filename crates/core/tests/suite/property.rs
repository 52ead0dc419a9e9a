//! Property test: random sequences of push, apply, discard and failing apply, checked against
//! a plain `Vec` model of the LIFO stack.

use std::sync::{
    Arc,
    atomic::{AtomicU32, Ordering},
};

use proptest::prelude::*;
use staged_core::{ActionError, CancelToken, FnPendingAction, ResolveParams, ToolResult};

use super::harness::{block_on, session};

#[derive(Debug, Clone)]
enum Op {
    /// Push an action whose first `fail_times` applies fail.
    Push {
        fail_times: u32,
    },
    Apply,
    Discard,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u32..3).prop_map(|fail_times| Op::Push { fail_times }),
        2 => Just(Op::Apply),
        1 => Just(Op::Discard),
    ]
}

#[derive(Debug)]
struct ModelEntry {
    id: String,
    label: String,
    failures_left: u32,
}

proptest! {
    #[test]
    fn store_and_resolve_match_a_vec_model(ops in proptest::collection::vec(op(), 1..60)) {
        let session = session();
        let applied: Arc<std::sync::Mutex<Vec<String>>> = Default::default();
        let mut model: Vec<ModelEntry> = Vec::new();
        let cancel = CancelToken::new();
        for (step, op) in ops.into_iter().enumerate() {
            match op {
                Op::Push { fail_times } => {
                    let label = format!("action {step}");
                    let attempts = Arc::new(AtomicU32::new(0));
                    let applied = Arc::clone(&applied);
                    let apply_label = label.clone();
                    let id = session.push_pending_action(Arc::new(FnPendingAction::new(label.clone(), move |_| {
                        let n = attempts.fetch_add(1, Ordering::SeqCst);
                        let applied = Arc::clone(&applied);
                        let label = apply_label.clone();
                        async move {
                            if n < fail_times {
                                return Err(ActionError::other("transient"));
                            }
                            applied.lock().unwrap().push(label.clone());
                            Ok(ToolResult::text(format!("applied {label}")))
                        }
                    }))).unwrap();
                    model.push(ModelEntry { id: id.to_string(), label, failures_left: fail_times });
                }
                Op::Apply => {
                    let res = block_on(session.resolve(ResolveParams::apply("r"), &cancel));
                    match model.last_mut() {
                        None => prop_assert_eq!(res.unwrap_err().message().to_owned(), "No pending action to resolve. Nothing to apply or discard."),
                        Some(top) if top.failures_left > 0 => {
                            top.failures_left -= 1;
                            prop_assert_eq!(res.unwrap_err().message().to_owned(), "Apply failed: transient");
                        }
                        Some(_) => {
                            let top = model.pop().unwrap();
                            prop_assert_eq!(res.unwrap().text_content(), format!("applied {}", top.label));
                        }
                    }
                }
                Op::Discard => {
                    let res = block_on(session.resolve(ResolveParams::discard("d"), &cancel)).unwrap();
                    match model.pop() {
                        None => prop_assert_eq!(res.text_content(), "Nothing to discard; no pending action remains."),
                        Some(top) => prop_assert_eq!(res.text_content(), format!("Discarded: {}. Reason: d", top.label)),
                    }
                }
            }
            let ids: Vec<String> = session.store().list().unwrap().into_iter().map(|e| e.id.to_string()).collect();
            let expected: Vec<String> = model.iter().rev().map(|e| e.id.clone()).collect();
            prop_assert_eq!(ids, expected);
            prop_assert_eq!(session.store().len().unwrap(), model.len());
        }
        // Every label was applied at most once.
        let applied = applied.lock().unwrap();
        let mut unique = applied.clone();
        unique.sort();
        unique.dedup();
        prop_assert_eq!(unique.len(), applied.len());
    }
}
