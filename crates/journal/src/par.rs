//! Running a commit's independent file operations on several threads at once.
//!
//! A commit of thousands of files spends most of its time waiting for the disk: each temp
//! file's `fsync` waits for the filesystem's journal to reach the device. Issued one after the
//! other, those waits add up (2 to 10 ms each); issued from several threads at once, the
//! filesystem writes them in one journal commit (ext4 and XFS batch concurrent fsyncs), so the
//! wait is paid a few times instead of once per file. Work bound by the CPU (files read and
//! hashed, temps written before one batch sync, a session's files) runs instead on a pool of
//! staged's own, as many threads as cores ([`Work`]). The protocol's order is kept: every
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

/// What a [`try_map`]'s operations wait on, which decides their threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Work {
    /// The CPU (reading and hashing files in the page cache, writing temps the batch syncs
    /// later): as many threads as cores, on [`cpu_pool`].
    Cpu,
    /// The disk (an `fsync` each): [`IO_THREADS`] threads of their own, each waiting alone.
    Disk,
}

/// Runs `work(i)` for every `i` in `0..n` on the threads `kind` gives (one, below
/// [`SERIAL_BELOW`] operations) and returns the results in index order. After a failure no new
/// operation starts (those running finish), and the error returned is that of the lowest
/// failed index; [`Failed::done`] then says which operations succeeded, so that the caller can
/// take them back.
pub(crate) fn try_map<T, F>(n: usize, kind: Work, work: F) -> Result<Vec<T>, Failed<T>>
where
    T: Send,
    F: Fn(usize) -> io::Result<T> + Sync,
{
    let threads = match kind {
        Work::Cpu => cpu_threads(),
        Work::Disk => IO_THREADS,
    };
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
    let (mut results, helpers) = on_threads(kind, threads, &run);
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

/// Whether this process may keep threads for its work (see [`no_lasting_threads`]).
static LASTING_THREADS: AtomicBool = AtomicBool::new(true);

/// Makes this process keep no thread once its work is done: the work bound by the CPU runs on
/// threads started for it and ended with it, as the disk's does, never on the pool of staged's
/// work. For a process that forks a child after its commits (`staged shell-run`'s clean-up,
/// which forks only while the process has one thread).
pub fn no_lasting_threads() {
    LASTING_THREADS.store(false, Ordering::Relaxed);
}

/// The pool of staged's own work bound by the CPU (a commit's checks and temps, a session's
/// files read and drawn), as many threads as cores, started once, on first use, and kept: a
/// thread started and ended for each call cost more than the work (its stack mapped and
/// released, and the allocator's arena of a thread that ends purged, the other cores' page
/// tables flushed each time). It is not rayon's global pool, which a search of a big
/// repository (a warm index) keeps busy for seconds: work queued there would wait for it.
///
/// `None` (the work then starts threads of its own, as the disk's does) in a process that
/// keeps no threads ([`no_lasting_threads`]), when its threads cannot be started (a process
/// limit: tried again at the next call), and on a thread of another rayon pool, which would
/// run its own pool's jobs (a search's, for seconds) while it waits for this one's.
pub(crate) fn cpu_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    if !LASTING_THREADS.load(Ordering::Relaxed) {
        return None;
    }
    let pool = match POOL.get() {
        Some(pool) => pool,
        None => {
            let built = rayon::ThreadPoolBuilder::new()
                .num_threads(cpu_threads())
                .thread_name(|i| format!("staged-cpu-{i}"))
                .build()
                .ok()?;
            POOL.get_or_init(|| built)
        }
    };
    let foreign = rayon::current_thread_index().is_some() && pool.current_thread_index().is_none();
    (!foreign).then_some(pool)
}

/// `run()` on this thread and on `threads - 1` helpers at once: this thread's result, and each
/// helper's (`Err` if it panicked). Work bound by the CPU gets its helpers from [`cpu_pool`];
/// the disk's (or the CPU's without the pool) threads of its own, as many as asked and as can
/// be started (this thread's `run` does what no helper takes).
pub(crate) fn on_threads<R: Send>(
    kind: Work,
    threads: usize,
    run: &(impl Fn() -> R + Sync),
) -> (R, Vec<std::thread::Result<R>>) {
    if let (Work::Cpu, Some(pool)) = (kind, cpu_pool()) {
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
        let helpers: Vec<_> = (1..threads)
            .map_while(|_| std::thread::Builder::new().spawn_scoped(scope, run).ok())
            .collect();
        let mine = run();
        (mine, helpers.into_iter().map(std::thread::ScopedJoinHandle::join).collect())
    })
}

/// `a()` and `b()` at once: `a` on this thread, `b` on the pool of staged's work bound by the
/// CPU, whose threads are started once (or a thread of its own without it; after `a`, on this
/// thread, when none can be started). A panic of either goes on unwinding here, once both are
/// done.
pub fn on_two<A, B: Send>(a: impl FnOnce() -> A, b: impl FnOnce() -> B + Send) -> (A, B) {
    let (b, a) = beside(Work::Cpu, SERIAL_BELOW, b, a);
    match b {
        Ok(b) => (a, b),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// `helper()`, work of `kind` (`ops` operations), on [`cpu_pool`] (or a thread of its own, for
/// the disk or without the pool; after `here()`, on this thread, when none can be started, or
/// for work of the CPU of fewer than [`SERIAL_BELOW`] operations, which a thread would only
/// slow) while this thread does `here()`; both are done before either result is returned.
/// The helper's `Err` is its panic.
pub(crate) fn beside<A: Send, B>(
    kind: Work,
    ops: usize,
    helper: impl FnOnce() -> A + Send,
    here: impl FnOnce() -> B,
) -> (std::thread::Result<A>, B) {
    let caught = |helper: Box<dyn FnOnce() -> A + Send + '_>| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(helper))
    };
    if kind == Work::Cpu && ops < SERIAL_BELOW {
        let mine = here();
        return (caught(Box::new(helper)), mine);
    }
    let Some(pool) = cpu_pool().filter(|_| kind == Work::Cpu) else {
        let helper = std::sync::Mutex::new(Some(helper));
        let take = || {
            let helper = helper.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
            helper.map(|helper| caught(Box::new(helper)))
        };
        return std::thread::scope(|scope| {
            let spawned = std::thread::Builder::new().spawn_scoped(scope, take);
            let mine = here();
            let helped = match spawned {
                Ok(thread) => thread.join().ok().flatten(),
                Err(_) => take(),
            };
            (helped.unwrap_or_else(|| Err(Box::new("the helper never ran"))), mine)
        });
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
        for kind in [Work::Cpu, Work::Disk] {
            for n in [0, 1, 3, 4, 100] {
                let res = try_map(n, kind, |i| Ok(i * 2)).map_err(|f| f.error.to_string());
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
        for kind in [Work::Cpu, Work::Disk] {
            let res = try_map(100, kind, |i| Ok(i + 1)).map_err(|f| f.error.to_string());
            assert_eq!(res, Ok((1..=100).collect::<Vec<_>>()));
        }
        assert_eq!(on_two(|| 1, || 2), (1, 2));
        let (helped, here) = beside(Work::Cpu, SERIAL_BELOW, || "helper", || "here");
        assert_eq!((helped.ok(), here), (Some("helper"), "here"));
        drop(release);
    }

    #[test]
    fn a_helper_that_panics_is_an_error_and_leaves_its_operations_undone() {
        // Helpers panic, this thread does not: each helper's result is its panic.
        let caller = std::thread::current().id();
        let run = || {
            assert_eq!(std::thread::current().id(), caller, "a helper panics");
            7
        };
        for kind in [Work::Cpu, Work::Disk] {
            let (mine, helpers) = on_threads(kind, 3, &run);
            assert_eq!(mine, 7);
            assert!(!helpers.is_empty(), "{kind:?}: helpers ran");
            assert!(helpers.iter().all(Result::is_err), "{kind:?}");
            let (helped, here) = beside(kind, SERIAL_BELOW, run, || "here");
            assert!(helped.is_err(), "{kind:?}");
            assert_eq!(here, "here");
        }
        // Through try_map: an operation taken by a helper that panics is never reported done.
        let res = std::panic::catch_unwind(|| {
            try_map(200, Work::Disk, |i| {
                assert!(i != 5 || std::thread::current().id() == caller, "operation 5 panics");
                Ok(i)
            })
        });
        // Operation 5 went to a helper (on this thread it would not panic), or was done here.
        match res {
            Ok(Err(failed)) => {
                assert_eq!(failed.error.to_string(), "a worker thread panicked");
                assert!(failed.done[5].is_none());
            }
            Ok(Ok(done)) => assert_eq!(done, (0..200).collect::<Vec<_>>()),
            Err(_) => panic!("a helper's panic reached the caller"),
        }
    }

    #[test]
    fn a_process_that_keeps_no_threads_does_its_work_without_the_pool() {
        assert!(cpu_pool().is_some() || cpu_threads() == 1);
        no_lasting_threads();
        assert!(cpu_pool().is_none());
        let res = try_map(100, Work::Cpu, |i| Ok(i * 3)).map_err(|f| f.error.to_string());
        assert_eq!(res, Ok((0..100).map(|i| i * 3).collect::<Vec<_>>()));
        assert_eq!(on_two(|| 1, || 2), (1, 2));
    }

    #[test]
    fn on_a_thread_of_another_rayon_pool_the_work_takes_threads_of_its_own() {
        let (inside_global, inside_own) = rayon::join(
            || cpu_pool().is_none(),
            || cpu_pool().map(|pool| pool.install(|| cpu_pool().is_some())),
        );
        assert!(inside_global);
        assert_ne!(inside_own, Some(false));
        let res = rayon::join(|| try_map(50, Work::Cpu, Ok).map_err(drop), || ());
        assert_eq!(res.0, Ok((0..50).collect::<Vec<_>>()));
    }

    #[test]
    fn a_failure_names_the_lowest_failed_index_and_what_succeeded() {
        for kind in [Work::Cpu, Work::Disk] {
            let Err(failed) = try_map(50, kind, |i| {
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
