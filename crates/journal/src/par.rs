//! Running a commit's independent file operations on several threads at once.
//!
//! A commit of thousands of files spends most of its time waiting for the disk: each temp
//! file's `fsync` waits for the filesystem's journal to reach the device. Issued one after the
//! other, those waits add up (2 to 10 ms each); issued from several threads at once, the
//! filesystem writes them in one journal commit (ext4 and XFS batch concurrent fsyncs), so the
//! wait is paid a few times instead of once per file. The protocol's order is kept: every
//! operation of a phase has finished (and failed or succeeded) before the caller goes on to the
//! next phase.

use std::{
    io,
    sync::atomic::{AtomicBool, AtomicUsize, Ordering},
};

/// Threads for operations that wait on the disk (fsync). Concurrent syncs share the
/// filesystem's journal commits, so more threads than cores pay off.
pub(crate) const IO_THREADS: usize = 16;

/// Below this many operations, one thread does them: starting threads costs more.
const SERIAL_BELOW: usize = 4;

/// Threads for work bound by the CPU (reading and hashing files in the page cache).
pub(crate) fn cpu_threads() -> usize {
    // Asked once: the standard library reads the process's cgroup files each time.
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Runs `work(i)` for every `i` in `0..n` on up to `threads` threads and returns the results
/// in index order. After a failure no new operation starts (those running finish), and the
/// error returned is that of the lowest failed index; [`Failed::done`] then says which
/// operations succeeded, so that the caller can take them back.
pub(crate) fn try_map<T, F>(n: usize, threads: usize, work: F) -> Result<Vec<T>, Failed<T>>
where
    T: Send,
    F: Fn(usize) -> io::Result<T> + Sync,
{
    let threads = threads.clamp(1, n.max(1));
    if n < SERIAL_BELOW || threads == 1 {
        let mut done = Vec::with_capacity(n);
        for i in 0..n {
            match work(i) {
                Ok(value) => done.push(Some(value)),
                Err(error) => {
                    done.resize_with(n, || None);
                    return Err(Failed { index: i, error, done });
                }
            }
        }
        return Ok(done.into_iter().flatten().collect());
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let run = || {
        let mut mine = Vec::new();
        while !failed.load(Ordering::Acquire) {
            let i = next.fetch_add(1, Ordering::AcqRel);
            if i >= n {
                break;
            }
            let res = work(i);
            if res.is_err() {
                failed.store(true, Ordering::Release);
            }
            mine.push((i, res));
        }
        mine
    };
    let (mut results, helpers) = on_threads(threads, &run);
    let mut panicked = false;
    for helper in helpers {
        match helper {
            Ok(theirs) => results.extend(theirs),
            // Its results went with it: its operations count as not done, so the caller does
            // not rely on them (and recovery cleans whatever they left).
            Err(_) => panicked = true,
        }
    }
    let mut done: Vec<Option<T>> = (0..n).map(|_| None).collect();
    let mut first_error: Option<(usize, io::Error)> = None;
    for (i, res) in results {
        match res {
            Ok(value) => done[i] = Some(value),
            Err(error) => {
                if first_error.as_ref().is_none_or(|(j, _)| i < *j) {
                    first_error = Some((i, error));
                }
            }
        }
    }
    if let Some((index, error)) = first_error {
        return Err(Failed { index, error, done });
    }
    if panicked || done.iter().any(Option::is_none) {
        let index = done.iter().position(Option::is_none).unwrap_or(0);
        return Err(Failed { index, error: io::Error::other("a worker thread panicked"), done });
    }
    Ok(done.into_iter().flatten().collect())
}

/// The pool of staged's own work bound by the CPU (a commit's checks and temps, a session's
/// files read and drawn), as many threads as cores, started once, on first use, and kept: a
/// thread started and ended for each call cost more than the work (its stack mapped and
/// released, and the allocator's arena of a thread that ends purged, the other cores' page
/// tables flushed each time). It is not rayon's global pool, which a search of a big
/// repository (a warm index) keeps busy for seconds: work queued there would wait for it.
/// `None` when its threads cannot be started (a process limit): the work is then done on the
/// caller's thread alone.
pub(crate) fn cpu_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(cpu_threads())
            .thread_name(|i| format!("staged-cpu-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// `run()` on this thread and on `threads - 1` helpers at once: this thread's result, and each
/// helper's (`Err` if it panicked). Work bound by the CPU (`threads` no more than the cores)
/// gets its helpers from [`cpu_pool`] (none without it: this thread does it all); work that
/// waits on the disk gets threads of its own, as many as asked, so that each waits alone.
pub(crate) fn on_threads<R: Send>(
    threads: usize,
    run: &(impl Fn() -> R + Sync),
) -> (R, Vec<std::thread::Result<R>>) {
    if threads <= cpu_threads() {
        let Some(pool) = cpu_pool() else { return (run(), Vec::new()) };
        let helpers = std::sync::Mutex::new(Vec::with_capacity(threads.saturating_sub(1)));
        let mine = pool.in_place_scope(|scope| {
            for _ in 1..threads {
                scope.spawn(|_| {
                    let theirs = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
                    helpers.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(theirs);
                });
            }
            run()
        });
        return (mine, helpers.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner));
    }
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(run)).collect();
        let mine = run();
        (mine, helpers.into_iter().map(std::thread::ScopedJoinHandle::join).collect())
    })
}

/// `a()` and `b()` at once on the pool of staged's work bound by the CPU, whose threads are
/// started once (see `cpu_pool`), or one after the other on this thread when it has fewer
/// than two (one core, or a process limit that let none start). A panic of either goes on
/// unwinding here, once both are done.
pub fn on_two<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    match cpu_pool().filter(|pool| pool.current_num_threads() >= 2) {
        Some(pool) => pool.join(a, b),
        None => (a(), b()),
    }
}

/// `helper()` on [`cpu_pool`] while this thread does `here()` (both before either result is
/// returned); without the pool, one after the other. The helper's `Err` is its panic.
pub(crate) fn beside<A: Send, B>(
    helper: impl FnOnce() -> A + Send,
    here: impl FnOnce() -> B,
) -> (std::thread::Result<A>, B) {
    let caught = |helper: Box<dyn FnOnce() -> A + Send + '_>| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(helper))
    };
    let Some(pool) = cpu_pool() else {
        let helped = caught(Box::new(helper));
        return (helped, here());
    };
    let mut helped = None;
    let mine = pool.in_place_scope(|scope| {
        let slot = &mut helped;
        scope.spawn(move |_| *slot = Some(caught(Box::new(helper))));
        here()
    });
    (helped.unwrap_or_else(|| Err(Box::new("the helper never ran"))), mine)
}

/// Why [`try_map`] stopped.
#[derive(Debug)]
pub(crate) struct Failed<T> {
    /// The lowest index that failed.
    pub(crate) index: usize,
    /// Its error.
    pub(crate) error: io::Error,
    /// Each operation's result, `None` for those that failed or never ran.
    pub(crate) done: Vec<Option<T>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order() {
        // On the pool's threads (as many as cores) and on threads of their own (more).
        for threads in [cpu_threads(), 2, 8] {
            for n in [0, 1, 3, 4, 100] {
                let res = try_map(n, threads, |i| Ok(i * 2)).map_err(|f| f.error.to_string());
                assert_eq!(res, Ok((0..n).map(|i| i * 2).collect::<Vec<_>>()));
            }
        }
    }

    #[test]
    fn staged_work_never_waits_for_rayons_global_pool() {
        // Every thread of the global pool held (as a search of a big repository holds them)
        // until the work below is done: work queued there would never run.
        let threads = rayon::current_num_threads();
        let started = std::sync::Arc::new(std::sync::Barrier::new(threads + 1));
        let (release, held) = std::sync::mpsc::channel::<()>();
        let held = std::sync::Arc::new(std::sync::Mutex::new(held));
        for _ in 0..threads {
            let (started, held) = (started.clone(), held.clone());
            rayon::spawn(move || {
                started.wait();
                let _ = held.lock().unwrap().recv();
            });
        }
        started.wait();
        for threads in [cpu_threads(), 2] {
            let res = try_map(100, threads, |i| Ok(i + 1)).map_err(|f| f.error.to_string());
            assert_eq!(res, Ok((1..=100).collect::<Vec<_>>()));
        }
        assert_eq!(on_two(|| 1, || 2), (1, 2));
        let (helped, here) = beside(|| "helper", || "here");
        assert_eq!((helped.ok(), here), (Some("helper"), "here"));
        drop(release);
    }

    #[test]
    fn an_operation_that_panics_is_never_reported_done() {
        for threads in [cpu_threads(), 2, 8] {
            let res = std::panic::catch_unwind(|| {
                try_map(200, threads, |i| {
                    assert!(i != 5, "operation 5 panics");
                    Ok(i)
                })
            });
            // On a helper, the panic is an error that leaves operation 5 undone; on this
            // thread, it goes on unwinding, as any panic of the caller's own.
            if let Ok(res) = res {
                let Err(failed) = res else { panic!("operation 5 panicked, yet all were done") };
                assert_eq!(failed.error.to_string(), "a worker thread panicked");
                assert!(failed.done[5].is_none());
            }
        }
    }

    #[test]
    fn a_failure_names_the_lowest_failed_index_and_what_succeeded() {
        for threads in [1, 8] {
            let Err(failed) = try_map(50, threads, |i| {
                if i == 7 || i == 30 { Err(io::Error::other(format!("no {i}"))) } else { Ok(i) }
            }) else {
                panic!("two operations fail");
            };
            assert_eq!(failed.index, 7);
            assert_eq!(failed.error.to_string(), "no 7");
            assert!(failed.done[7].is_none());
            assert_eq!(failed.done[6], Some(6));
            for (i, done) in failed.done.iter().enumerate() {
                assert!(done.is_none() || *done == Some(i));
            }
        }
    }
}
