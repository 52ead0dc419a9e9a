//! Processing candidate files in parallel while folding their results in path order.
//!
//! Workers on the rayon pool take files from one shared queue: there is no barrier between
//! batches, so one slow file does not leave the other workers idle. Big files
//! ([`Candidate::is_big`]) are started first, biggest first, so that the slowest parse starts at
//! once instead of when the path order reaches it; but only one at a time, so that two big
//! syntax trees are never alive together (the peak memory is that of the biggest tree, not of
//! the two biggest). Medium files ([`Candidate::is_medium`]; the [`MEDIUM_FIRST`] biggest)
//! start next, biggest first, on any worker, so that none is reached last, when the other
//! workers have nothing left to do (unless one could not run beside a huge file, below: it
//! would wait for it). A huge file ([`Candidate::is_huge`]: a tree of a hundred megabytes or
//! more) runs only beside files at most an eighth of its size: it waits for bigger ones running
//! to end, and none starts until it is done, so the peak is that tree and little else (a
//! worker's trees of files of up to a megabyte, and the allocator's pages freed but not yet
//! given back, cost tens of megabytes more). Each result is folded as soon as every file before
//! it (in path order) has been folded; when the fold says stop (a cap reached, an error), no new
//! file is started. A worker runs at most [`LOOKAHEAD`] files ahead of the fold (big files and
//! the [`MEDIUM_FIRST`] medium ones aside), which bounds both the results held for it and the
//! work wasted when it stops.

use std::{
    collections::BTreeMap,
    ops::ControlFlow,
    sync::{
        Condvar, Mutex, PoisonError,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
};

use rayon::prelude::*;

use crate::scope::Candidate;

/// How many files past the next one to fold a worker may start (big and medium files aside).
const LOOKAHEAD: usize = 256;

/// How many medium files, the biggest, start before the small ones.
const MEDIUM_FIRST: usize = 16;

/// A unit of work: a candidate file, alone or with what goes with it.
pub(crate) trait FileWork: Sync {
    /// The file.
    fn candidate(&self) -> &Candidate;
}

impl FileWork for Candidate {
    fn candidate(&self) -> &Candidate {
        self
    }
}

impl<T: Sync> FileWork for (Candidate, T) {
    fn candidate(&self) -> &Candidate {
        &self.0
    }
}

/// Runs `work` on every item, in parallel, and feeds each result to `fold` in item order.
/// Returns the value `fold` stopped with, if it stopped; items not started by then never are.
pub(crate) fn par_fold_in_order<I, T, B, W, F>(items: &[I], work: W, fold: F) -> Option<B>
where
    I: FileWork,
    T: Send,
    B: Send,
    W: Fn(&I) -> T + Sync,
    F: FnMut(T) -> ControlFlow<B> + Send,
{
    let queue = Queue::new(items);
    let stop = AtomicBool::new(false);
    let state = Mutex::new(FoldState { next: 0, ready: BTreeMap::new(), fold, stopped: None });
    let folded = Condvar::new();
    let alone = Alone::default();
    let lock = || state.lock().unwrap_or_else(PoisonError::into_inner);
    let workers = rayon::current_num_threads().clamp(1, items.len().max(1));
    (0..workers).into_par_iter().for_each(|_| {
        while !stop.load(Ordering::Relaxed) {
            let Some(taken) = queue.take() else { break };
            let index = match taken {
                Taken::Big(index) | Taken::Medium(index) => index,
                Taken::Small(index) => {
                    // Every file before this one was taken earlier and is running or done (or
                    // is a big file, which the worker running big files starts next), so the
                    // fold keeps moving while this worker waits.
                    let mut guard = lock();
                    while guard.stopped.is_none() && index >= guard.next + LOOKAHEAD {
                        guard = folded.wait(guard).unwrap_or_else(PoisonError::into_inner);
                    }
                    if guard.stopped.is_some() {
                        break;
                    }
                    index
                }
            };
            let result = alone.run(items[index].candidate(), || work(&items[index]));
            if matches!(taken, Taken::Big(_)) {
                queue.big_done();
            }
            let mut guard = lock();
            if guard.stopped.is_some() {
                break;
            }
            guard.ready.insert(index, result);
            let flow = guard.drain();
            drop(guard);
            if flow.is_break() {
                stop.store(true, Ordering::Relaxed);
            }
            folded.notify_all();
        }
    });
    state.into_inner().unwrap_or_else(PoisonError::into_inner).stopped
}

/// The files to start: big ones (biggest first, one at a time), medium ones (biggest first),
/// and the rest in path order, so the fold rarely waits and a cap reached early leaves most
/// files unstarted.
struct Queue {
    big: Vec<usize>,
    medium: Vec<usize>,
    small: Vec<usize>,
    next_big: AtomicUsize,
    next_medium: AtomicUsize,
    next_small: AtomicUsize,
    /// Whether a worker is running a big file.
    big_running: AtomicBool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Taken {
    Big(usize),
    Medium(usize),
    Small(usize),
}

impl Queue {
    fn new(items: &[impl FileWork]) -> Queue {
        let (mut big, rest): (Vec<usize>, Vec<usize>) =
            (0..items.len()).partition(|&i| items[i].candidate().is_big());
        // A medium file that could not run beside a huge one would wait for it, idling its
        // worker: such files keep their place in path order.
        let smallest_huge =
            items.iter().map(FileWork::candidate).filter(|c| c.is_huge()).map(|c| c.size).min();
        let early = |c: &Candidate| {
            c.is_medium() && smallest_huge.is_none_or(|huge| fits_beside(c.size, huge))
        };
        let (mut medium, mut small): (Vec<usize>, Vec<usize>) =
            rest.into_iter().partition(|&i| early(items[i].candidate()));
        let biggest_first = |i: &usize| std::cmp::Reverse(items[*i].candidate().size);
        big.sort_by_key(biggest_first);
        medium.sort_by_key(biggest_first);
        // Only the biggest few: the others keep their place, so that a cap reached early
        // leaves them unstarted.
        if medium.len() > MEDIUM_FIRST {
            small.extend(medium.split_off(MEDIUM_FIRST));
            small.sort_unstable();
        }
        Queue {
            big,
            medium,
            small,
            next_big: AtomicUsize::new(0),
            next_medium: AtomicUsize::new(0),
            next_small: AtomicUsize::new(0),
            big_running: AtomicBool::new(false),
        }
    }

    /// The next file to start: a big one if no big one is running, else a medium one, else a
    /// small one (so every medium file has been taken before any small one waits for the fold).
    /// `None` when only big files are left and one is running: the worker running it starts
    /// the rest (it calls [`Queue::big_done`] and then this, and nobody else can hold the slot
    /// then without running a big file).
    fn take(&self) -> Option<Taken> {
        if self.next_big.load(Ordering::Acquire) < self.big.len()
            && self
                .big_running
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            if let Some(&index) = self.big.get(self.next_big.fetch_add(1, Ordering::AcqRel)) {
                return Some(Taken::Big(index));
            }
            self.big_running.store(false, Ordering::Release);
        }
        if self.next_medium.load(Ordering::Acquire) < self.medium.len()
            && let Some(&index) = self.medium.get(self.next_medium.fetch_add(1, Ordering::AcqRel))
        {
            return Some(Taken::Medium(index));
        }
        self.small.get(self.next_small.fetch_add(1, Ordering::AcqRel)).map(|&i| Taken::Small(i))
    }

    /// A big file is done: another may start.
    fn big_done(&self) {
        self.big_running.store(false, Ordering::Release);
    }
}

/// Runs a huge file's work with only much smaller files beside it.
#[derive(Default)]
struct Alone {
    state: Mutex<AloneState>,
    changed: Condvar,
}

#[derive(Default)]
struct AloneState {
    /// The sizes of the files running, a huge one aside.
    running: Vec<u64>,
    /// The size of the huge file running or waiting to, if any.
    huge: Option<u64>,
}

/// A file runs beside a huge one only if it is at most this fraction of its size.
const BESIDE_HUGE: u64 = 8;

/// Whether a file of `size` bytes may run beside a huge file of `huge` bytes.
fn fits_beside(size: u64, huge: u64) -> bool {
    size.saturating_mul(BESIDE_HUGE) <= huge
}

impl Alone {
    fn lock(&self) -> std::sync::MutexGuard<'_, AloneState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait_while(
        &self,
        blocked: impl Fn(&AloneState) -> bool,
    ) -> std::sync::MutexGuard<'_, AloneState> {
        self.changed
            .wait_while(self.lock(), |state| blocked(state))
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `work` on `candidate`: a huge file once the files running beside it are all
    /// [`BESIDE_HUGE`] times smaller, and any other file once it is (or no huge one runs).
    fn run<T>(&self, candidate: &Candidate, work: impl FnOnce() -> T) -> T {
        let (size, huge) = (candidate.size, candidate.is_huge());
        let small_beside =
            |huge: Option<u64>, size: u64| huge.is_none_or(|huge| fits_beside(size, huge));
        if huge {
            self.wait_while(|state| state.huge.is_some()).huge = Some(size);
            drop(self.wait_while(|state| {
                !state.running.iter().all(|&other| small_beside(Some(size), other))
            }));
        } else {
            self.wait_while(|state| !small_beside(state.huge, size)).running.push(size);
        }
        // Whatever `work` does, the file is done with when it returns or unwinds.
        let _done = Done { alone: self, size, huge };
        work()
    }
}

/// Takes a running file out of [`Alone`] when dropped.
struct Done<'a> {
    alone: &'a Alone,
    size: u64,
    huge: bool,
}

impl Drop for Done<'_> {
    fn drop(&mut self) {
        let mut state = self.alone.lock();
        if self.huge {
            state.huge = None;
        } else if let Some(at) = state.running.iter().position(|&s| s == self.size) {
            state.running.swap_remove(at);
        }
        drop(state);
        self.alone.changed.notify_all();
    }
}

struct FoldState<T, B, F> {
    /// The index of the next item to fold.
    next: usize,
    /// Results computed ahead of the fold.
    ready: BTreeMap<usize, T>,
    fold: F,
    stopped: Option<B>,
}

impl<T, B, F: FnMut(T) -> ControlFlow<B>> FoldState<T, B, F> {
    /// Folds every result that is next in order.
    fn drain(&mut self) -> ControlFlow<()> {
        while let Some(result) = self.ready.remove(&self.next) {
            self.next += 1;
            if let ControlFlow::Break(value) = (self.fold)(result) {
                self.stopped = Some(value);
                self.ready.clear();
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn candidates(sizes: &[u64]) -> Vec<Candidate> {
        let root = staged_fs::Root::open(&std::env::temp_dir()).unwrap();
        sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| Candidate {
                root: root.clone(),
                rel: staged_fs::RelPath::new(format!("f{i}")).unwrap(),
                display: format!("f{i}"),
                explicit: false,
                size,
                identity: None,
                grams: None,
                inferred: None,
            })
            .collect()
    }

    #[test]
    fn big_files_start_first_one_at_a_time_and_the_rest_in_path_order() {
        let items = candidates(&[10, 2 << 20, 30, 5 << 20, 50]);
        let queue = Queue::new(&items);
        assert_eq!(queue.take(), Some(Taken::Big(3)));
        // Another worker gets small files while the big one runs.
        assert_eq!(queue.take(), Some(Taken::Small(0)));
        assert_eq!(queue.take(), Some(Taken::Small(2)));
        queue.big_done();
        assert_eq!(queue.take(), Some(Taken::Big(1)));
        assert_eq!(queue.take(), Some(Taken::Small(4)));
        assert_eq!(queue.take(), None);
        queue.big_done();
        assert_eq!(queue.take(), None);
    }

    #[test]
    fn medium_files_start_after_big_ones_and_before_small_ones_biggest_first() {
        let items = candidates(&[10, 200 << 10, 1536 << 10, 600 << 10, 50]);
        let queue = Queue::new(&items);
        assert_eq!(queue.take(), Some(Taken::Big(2)));
        assert_eq!(queue.take(), Some(Taken::Medium(3)));
        assert_eq!(queue.take(), Some(Taken::Medium(1)));
        assert_eq!(queue.take(), Some(Taken::Small(0)));
        assert_eq!(queue.take(), Some(Taken::Small(4)));
        assert_eq!(queue.take(), None);
    }

    #[test]
    fn only_the_biggest_medium_files_start_early() {
        let mut sizes = vec![128 << 10; MEDIUM_FIRST + 2];
        sizes[3] = 1000 << 10;
        let items = candidates(&sizes);
        let queue = Queue::new(&items);
        assert_eq!(queue.take(), Some(Taken::Medium(3)));
        let early = (1..MEDIUM_FIRST).map(|_| queue.take()).collect::<Vec<_>>();
        assert!(early.iter().all(|t| matches!(t, Some(Taken::Medium(_)))), "{early:?}");
        let late = [queue.take(), queue.take(), queue.take()];
        assert!(matches!(late, [Some(Taken::Small(_)), Some(Taken::Small(_)), None]), "{late:?}");
    }

    #[test]
    fn a_medium_file_too_big_to_run_beside_a_huge_one_keeps_its_place() {
        // Beside 4 MiB, files of up to 512 KiB run.
        let items = candidates(&[10, 600 << 10, 4 << 20, 500 << 10, 50]);
        let queue = Queue::new(&items);
        assert_eq!(queue.take(), Some(Taken::Big(2)));
        assert_eq!(queue.take(), Some(Taken::Medium(3)));
        assert_eq!(queue.take(), Some(Taken::Small(0)));
        assert_eq!(queue.take(), Some(Taken::Small(1)));
        assert_eq!(queue.take(), Some(Taken::Small(4)));
    }

    #[test]
    fn the_worker_running_a_big_file_starts_the_big_files_left() {
        let items = candidates(&[2 << 20, 3 << 20, 1]);
        let queue = Queue::new(&items);
        assert_eq!(queue.take(), Some(Taken::Big(1)));
        assert_eq!(queue.take(), Some(Taken::Small(2)));
        // Only a big file is left, and one is running: this worker is done.
        assert_eq!(queue.take(), None);
        queue.big_done();
        assert_eq!(queue.take(), Some(Taken::Big(0)));
    }

    #[test]
    fn a_huge_file_runs_only_beside_much_smaller_ones() {
        // 16 MiB runs beside files of up to 2 MiB, 4 MiB beside files of up to 512 KiB.
        let sizes = [1, 600 << 10, 16 << 20, 2 << 20, 4 << 20, 1, 3 << 20, 500 << 10, 1, 1, 1, 1];
        let items = candidates(&sizes);
        let running = Mutex::new(Vec::<u64>::new());
        let seen_beside = Mutex::new(Vec::<(u64, u64)>::new());
        let stopped: Option<()> = par_fold_in_order(
            &items,
            |c| {
                running.lock().unwrap().push(c.size);
                // Long enough for the other workers to start something beside it.
                std::thread::sleep(std::time::Duration::from_millis(20));
                let now = running.lock().unwrap().clone();
                for &huge in now.iter().filter(|&&s| s >= 2 << 20) {
                    for &other in now.iter().filter(|&&s| s != huge) {
                        seen_beside.lock().unwrap().push((huge, other));
                    }
                }
                let mut now = running.lock().unwrap();
                let at = now.iter().position(|&s| s == c.size).unwrap();
                now.swap_remove(at);
            },
            |()| ControlFlow::Continue(()),
        );
        assert_eq!(stopped, None);
        let seen = seen_beside.into_inner().unwrap();
        let too_big: Vec<_> = seen.iter().filter(|(huge, other)| other * 8 > *huge).collect();
        assert!(too_big.is_empty(), "beside a huge file: {too_big:?}");
    }

    #[test]
    fn results_are_folded_in_item_order() {
        let items = candidates(&[1, 3 << 20, 2, 2 << 20, 4, 5, 6, 7]);
        let mut seen = Vec::new();
        let stopped: Option<()> = par_fold_in_order(
            &items,
            |c| c.display.clone(),
            |name| {
                seen.push(name);
                ControlFlow::Continue(())
            },
        );
        assert_eq!(stopped, None);
        let expected: Vec<String> = (0..items.len()).map(|i| format!("f{i}")).collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn a_stop_ends_the_fold_and_starts_no_new_work() {
        let items = candidates(&vec![1; 5000]);
        let started = AtomicUsize::new(0);
        let mut folded = 0;
        let stopped = par_fold_in_order(
            &items,
            |_| started.fetch_add(1, Ordering::Relaxed),
            |_| {
                folded += 1;
                if folded == 3 { ControlFlow::Break("capped") } else { ControlFlow::Continue(()) }
            },
        );
        assert_eq!(stopped, Some("capped"));
        assert_eq!(folded, 3);
        // Nothing starts more than LOOKAHEAD files past the fold.
        assert!(started.load(Ordering::Relaxed) <= 3 + LOOKAHEAD + rayon::current_num_threads());
    }

    #[test]
    fn no_items_fold_nothing() {
        let none: &[Candidate] = &[];
        let stopped: Option<()> =
            par_fold_in_order(none, |_| (), |()| unreachable!("nothing to fold"));
        assert_eq!(stopped, None);
    }
}
