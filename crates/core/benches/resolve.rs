//! Benchmarks of the runtime's hot paths: a push followed by a resolve (apply of a no-op
//! action), and `list` on deep stacks (1k, 10k, 100k) to show it is linear in depth.
//!
//! The named peer is a bare `Mutex<Vec<Arc<dyn PendingAction>>>` push and pop: the floor
//! for any thread-safe stack. Our cycle adds claiming, the callback, and detail merging.
//!
//! Run with `cargo bench -p staged-core --bench resolve`.

use std::{hint::black_box, sync::Arc};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use staged_core::{
    CancelToken, FnPendingAction, InMemoryStore, PendingAction, PendingActionStore, ResolveOptions,
    Session,
};
use staged_protocol::{ResolveParams, ToolResult};

fn noop_action() -> Arc<dyn PendingAction> {
    Arc::new(FnPendingAction::new("noop", |_| async { Ok(ToolResult::text("ok")) }))
}

fn push_resolve(c: &mut Criterion) {
    let session = Session::new(Arc::new(InMemoryStore::new()));
    let cancel = CancelToken::new();
    let action = noop_action();
    c.bench_function("push_then_resolve_apply_noop", |b| {
        b.iter(|| {
            session.push_pending_action(Arc::clone(&action)).unwrap_or_else(|e| panic!("{e}"));
            let res = futures::executor::block_on(session.resolve(
                ResolveParams::apply("bench"),
                ResolveOptions::default(),
                &cancel,
            ));
            black_box(res).unwrap_or_else(|e| panic!("{e}"));
        });
    });
}

fn peer_mutex_vec(c: &mut Criterion) {
    let stack: std::sync::Mutex<Vec<Arc<dyn PendingAction>>> = std::sync::Mutex::new(Vec::new());
    let action = noop_action();
    c.bench_function("peer_mutex_vec_push_then_pop", |b| {
        b.iter(|| {
            let mut guard = stack.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            guard.push(Arc::clone(&action));
            black_box(guard.pop());
        });
    });
}

fn list_deep(c: &mut Criterion) {
    let mut group = c.benchmark_group("list");
    for depth in [1_000usize, 10_000, 100_000] {
        let store = InMemoryStore::new();
        let action = noop_action();
        for _ in 0..depth {
            store.push(Arc::clone(&action)).unwrap_or_else(|e| panic!("{e}"));
        }
        group.throughput(Throughput::Elements(depth as u64));
        group.bench_with_input(BenchmarkId::from_parameter(depth), &store, |b, store| {
            b.iter(|| black_box(store.list().unwrap_or_else(|e| panic!("{e}"))));
        });
    }
    group.finish();
}

criterion_group!(benches, push_resolve, peer_mutex_vec, list_deep);
criterion_main!(benches);
