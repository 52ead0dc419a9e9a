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
    let (results, panicked) = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(run)).collect();
        let mut all = run();
        let mut panicked = false;
        for helper in helpers {
            match helper.join() {
                Ok(theirs) => all.extend(theirs),
                // Its results went with it: its operations count as not done, so the caller
                // does not rely on them (and recovery cleans whatever they left).
                Err(_) => panicked = true,
            }
        }
        (all, panicked)
    });
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
        for n in [0, 1, 3, 4, 100] {
            let res = try_map(n, 8, |i| Ok(i * 2)).map_err(|f| f.error.to_string());
            assert_eq!(res, Ok((0..n).map(|i| i * 2).collect::<Vec<_>>()));
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
