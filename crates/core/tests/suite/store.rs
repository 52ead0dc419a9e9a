//! The in-memory `PendingActionStore`: LIFO, ids, listing, events, claims.

use std::sync::{Arc, Mutex};

use staged_core::{InMemoryStore, PendingActionStore, StoreError, StoreEvent};

use super::harness::counting_action;

#[test]
fn is_lifo_with_unique_ids_and_lists_newest_first() {
    let store = InMemoryStore::new();
    assert!(store.peek().unwrap().is_none());
    assert!(store.pop().unwrap().is_none());
    let a = store.push(counting_action("A", "ast_edit", Default::default())).unwrap();
    let b = store.push(counting_action("B", "custom_tool", Default::default())).unwrap();
    let c = store.push(counting_action("C", "ast_edit", Default::default())).unwrap();
    assert_eq!(a.as_str(), "pending-action:ast_edit:0");
    assert_eq!(b.as_str(), "pending-action:custom_tool:1");
    assert_eq!(c.as_str(), "pending-action:ast_edit:2");
    assert_eq!(store.len().unwrap(), 3);
    let labels: Vec<_> = store.list().unwrap().iter().map(|e| e.label().to_owned()).collect();
    assert_eq!(labels, ["C", "B", "A"]);
    assert_eq!(store.peek().unwrap().unwrap().id, c);
    assert_eq!(store.pop().unwrap().unwrap().id, c);
    assert_eq!(store.pop().unwrap().unwrap().id, b);
    assert!(!store.is_empty().unwrap());
    assert_eq!(store.pop().unwrap().unwrap().id, a);
    assert!(store.is_empty().unwrap());
    // Ids are never reused.
    let d = store.push(counting_action("D", "ast_edit", Default::default())).unwrap();
    assert_eq!(d.as_str(), "pending-action:ast_edit:3");
}

#[test]
fn subscribers_hear_every_change_until_they_unsubscribe() {
    let store = Arc::new(InMemoryStore::new());
    let events = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&events);
    let reader = Arc::clone(&store);
    let sub = store.subscribe(Arc::new(move |event: &StoreEvent| {
        // Listeners run outside the store's lock, so they may read it.
        let len = reader.len().unwrap();
        log.lock().unwrap().push((event.clone(), len));
    }));
    let id = store.push(counting_action("A", "t", Default::default())).unwrap();
    let claim = store.claim_head().unwrap().unwrap();
    store.release(claim, None).unwrap();
    store.pop().unwrap();
    drop(sub);
    store.push(counting_action("B", "t", Default::default())).unwrap();
    assert_eq!(
        *events.lock().unwrap(),
        [
            (StoreEvent::Pushed { id: id.clone(), label: "A".into(), len: 1 }, 1),
            (StoreEvent::Requeued { id: id.clone(), len: 1 }, 1),
            (StoreEvent::Removed { id, len: 0 }, 0),
        ]
    );
}

#[test]
fn a_claimed_head_is_busy_until_released_and_release_moves_it_to_the_top() {
    let store = InMemoryStore::new();
    let a = store.push(counting_action("A", "t", Default::default())).unwrap();
    let claim = store.claim_head().unwrap().unwrap();
    assert_eq!(claim.entry().id, a);
    assert!(matches!(store.claim_head(), Err(StoreError::Busy { .. })));
    assert!(matches!(store.pop(), Err(StoreError::Busy { .. })));
    // Something new is staged while A is being resolved.
    let b = store.push(counting_action("B", "t", Default::default())).unwrap();
    store.release(claim, None).unwrap();
    let ids: Vec<_> = store.list().unwrap().into_iter().map(|e| e.id).collect();
    assert_eq!(ids, [a, b]);
}

#[test]
fn a_dropped_claim_releases_itself_and_complete_removes_exactly_once() {
    let store = InMemoryStore::new();
    store.push(counting_action("A", "t", Default::default())).unwrap();
    drop(store.claim_head().unwrap().unwrap());
    assert_eq!(store.clear_stale().unwrap(), 1);
    let claim = store.claim_head().unwrap().unwrap();
    store.complete(claim, None).unwrap();
    assert_eq!(store.len().unwrap(), 0);
    assert!(store.claim_head().unwrap().is_none());
}

#[test]
fn a_claim_from_another_store_is_refused() {
    let one = InMemoryStore::new();
    let two = InMemoryStore::new();
    one.push(counting_action("A", "t", Default::default())).unwrap();
    two.push(counting_action("A", "t", Default::default())).unwrap();
    let claim = one.claim_head().unwrap().unwrap();
    assert!(matches!(two.complete(claim, None), Err(StoreError::UnknownClaim { .. })));
    assert_eq!(two.len().unwrap(), 1);
}
