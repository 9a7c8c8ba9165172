//! [`on_threads`]: the CPU runtime's fork-join, with workers that spin between calls.
//!
//! A step of a few thousand envs takes tens of microseconds, about what an OS wake-up of a
//! sleeping thread costs on a VM (the vCPU halts, and the wake is an inter-processor
//! interrupt through the hypervisor). Rayon's workers go to sleep within microseconds of
//! running dry, so a call from outside its pool paid two wake-ups: measured on the 2-core
//! Xeon VM, splitting a 64-env step in two took 12-34 us against 1.1 us on one thread, and
//! 8192 envs on two threads 46 us against 58 us on one.
//!
//! Here the caller runs item 0 itself, and one persistent worker per other core runs the
//! others. A worker that finishes spins (`spin_loop`) for [`DEFAULT_SPIN`] (or as long as
//! `CARTFUSE_CPU_SPIN_US` says) before it parks, so a stepping loop finds it awake and
//! hands it work through an atomic store. A parked worker is woken by `unpark`. The pool
//! serves one call at a time: a call that finds it busy (two threads stepping at once, or a
//! nested call) runs all its items on the calling thread, which gives the same results,
//! since every item's work is independent of the thread that runs it.
//!
//! This is written here rather than taken from a crate: rayon, the pool already in the
//! tree, has no spin knob and blocks a caller from outside its pool until the job ends.
//!
//! The pool is sized once per process: `CARTFUSE_CPU_THREADS` threads in all (the caller
//! and its workers), else one per core the process may use. `CARTFUSE_CPU_SPIN_US` sets
//! how long an idle worker spins before it parks ([`DEFAULT_SPIN`]; 0 parks at once, for a
//! process whose other libraries need the cores between steps). A child of `fork` has none
//! of its parent's threads: its first call builds a pool of its own.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, TryLockError};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

/// How long an idle worker spins before it parks, by default: longer than the gap between
/// two steps of a stepping loop (a Python `step` call costs about 10 us outside the
/// kernel), short enough that a policy computed between steps gets the cores back soon.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(100);

/// The variable that sets the pool's threads (the caller's included).
pub const THREADS_VARIABLE: &str = "CARTFUSE_CPU_THREADS";
/// The variable that sets the workers' spin, in microseconds.
pub const SPIN_VARIABLE: &str = "CARTFUSE_CPU_SPIN_US";

/// Runs `work(t, &mut items[t])` for every item and returns when all are done: item 0 on
/// the calling thread, the others on the pool's workers (or on the calling thread too when
/// the pool is busy or has too few workers).
pub fn on_threads<T: Send>(items: &mut [T], work: impl Fn(usize, &mut T) + Sync) {
    let Some((first, rest)) = items.split_first_mut() else {
        return;
    };
    let pool = pool();
    let guard = match pool.busy.try_lock() {
        Ok(guard) => Some(guard),
        // A panic while the pool ran a call leaves nothing half-done in it.
        Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    };
    let Some(guard) = guard.filter(|_| !rest.is_empty() && rest.len() <= pool.workers.len()) else {
        work(0, first);
        for (t, item) in rest.iter_mut().enumerate() {
            work(t + 1, item);
        }
        return;
    };
    let base = SharedPtr(rest.as_mut_ptr());
    let task = |t: usize| {
        // SAFETY: worker `t - 1` alone runs index `t`, and `rest` outlives the call
        // (`Join` waits for every worker before `on_threads` returns, even on a panic).
        let item = unsafe { &mut *base.get().add(t - 1) };
        work(t, item);
    };
    let join = Join {
        workers: &pool.workers[..rest.len()],
    };
    for (t, worker) in join.workers.iter().enumerate() {
        worker.post(&task, t + 1);
    }
    work(0, first);
    let panicked = join.wait();
    drop(join);
    drop(guard);
    if panicked {
        panic!("a CPU worker panicked while running its share of a launch");
    }
}

/// A pointer to the items that workers index disjointly.
struct SharedPtr<T>(*mut T);

impl<T> SharedPtr<T> {
    fn get(&self) -> *mut T {
        self.0
    }
}

// SAFETY: each worker dereferences a distinct element (see `on_threads`), and `T: Send`
// lets that element move to the worker's thread.
unsafe impl<T: Send> Sync for SharedPtr<T> {}

/// The number of threads a call can use: the caller and the pool's workers.
pub fn threads() -> usize {
    pool().workers.len() + 1
}

/// The process-wide pool: one worker per thread beyond the caller's, built at the first
/// call in this process (a child of `fork` builds its own: its parent's workers are not
/// there).
fn pool() -> &'static Pool {
    static POOL: AtomicPtr<Pool> = AtomicPtr::new(std::ptr::null_mut());
    let pid = std::process::id();
    let current = POOL.load(Ordering::Acquire);
    // SAFETY: a non-null pointer is a leaked `Box<Pool>`, never freed.
    if let Some(pool) = unsafe { current.as_ref() }
        && pool.pid == pid
    {
        return pool;
    }
    let fresh = Box::into_raw(Box::new(Pool::spawn(pid)));
    match POOL.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire) {
        // SAFETY: just leaked, never freed (a parent's pool stays leaked in a child too).
        Ok(_) => unsafe { &*fresh },
        Err(won) => {
            // Another thread built this process's pool first: use it, drop ours.
            // SAFETY: `fresh` was never shared; `won` is a leaked pool.
            drop(unsafe { Box::from_raw(fresh) });
            unsafe { &*won }
        }
    }
}

/// Worker threads, and the lock that gives them to one call at a time.
struct Pool {
    /// The process the workers run in.
    pid: u32,
    busy: Mutex<()>,
    workers: Vec<Worker>,
}

impl Pool {
    /// [`THREADS_VARIABLE`] threads (else one per core the process may use), less the
    /// caller's, each spinning [`SPIN_VARIABLE`] microseconds when idle.
    fn spawn(pid: u32) -> Self {
        let threads = configured(THREADS_VARIABLE)
            .unwrap_or_else(|| thread::available_parallelism().map_or(1, |c| c.get()));
        let spin =
            configured(SPIN_VARIABLE).map_or(DEFAULT_SPIN, |us| Duration::from_micros(us as u64));
        let workers = (1..threads.max(1))
            .filter_map(|index| Worker::spawn(index, spin).ok())
            .collect();
        Pool {
            pid,
            busy: Mutex::new(()),
            workers,
        }
    }
}

/// A count read from `variable` (`None` when unset or not a count: the CLI and the Python
/// package refuse such values before any pool exists, see `crate::switches`).
fn configured(variable: &str) -> Option<usize> {
    std::env::var(variable).ok()?.trim().parse().ok()
}

/// The caller's side of one worker.
struct Worker {
    slot: Arc<Slot>,
    thread: Thread,
}

/// A type-erased `&dyn Fn(usize)` that lives on the caller's stack.
type TaskRef = *const (dyn Fn(usize) + Sync);

/// What a caller and one worker share.
#[derive(Default)]
struct Slot {
    /// Number of tasks posted; the worker runs one when it differs from `done`.
    posted: AtomicU64,
    /// Number of tasks finished.
    done: AtomicU64,
    /// The posted task and its item index, written before `posted` is raised.
    task: UnsafeCell<(Option<TaskRef>, usize)>,
    /// The worker is parked (or about to park) and needs an `unpark`.
    parked: AtomicBool,
    /// A task panicked.
    panicked: AtomicBool,
}

// SAFETY: `task` is written by the caller only while the worker is idle (posted == done)
// and read by the worker only between `posted` rising and `done` catching up; the
// `Release`/`Acquire` pairs on those counters order the accesses.
unsafe impl Sync for Slot {}
// SAFETY: as above; the raw task pointer is only dereferenced while its caller waits.
unsafe impl Send for Slot {}

impl Worker {
    fn spawn(index: usize, spin: Duration) -> std::io::Result<Self> {
        let slot = Arc::new(Slot::default());
        let shared = Arc::clone(&slot);
        let handle = thread::Builder::new()
            .name(format!("cartfuse-cpu-{index}"))
            .spawn(move || shared.serve(spin))?;
        Ok(Self {
            slot,
            thread: handle.thread().clone(),
        })
    }

    /// Hands `task` (item `index`) to the worker.
    fn post(&self, task: &(dyn Fn(usize) + Sync), index: usize) {
        // SAFETY: the worker is idle (the previous call waited for it), so it does not
        // read `task` now. The lifetime is erased; `Join::wait` ends the borrow.
        unsafe {
            let erased: TaskRef = std::mem::transmute::<&(dyn Fn(usize) + Sync), TaskRef>(task);
            *self.slot.task.get() = (Some(erased), index);
        }
        self.slot.posted.fetch_add(1, Ordering::SeqCst);
        if self.slot.parked.load(Ordering::SeqCst) {
            self.thread.unpark();
        }
    }
}

impl Slot {
    /// The worker's loop: run posted tasks, spin for `spin` when idle, then park.
    fn serve(&self, spin: Duration) {
        let mut seen = 0u64;
        loop {
            let since = Instant::now();
            let mut spins = 0u32;
            while self.posted.load(Ordering::Acquire) == seen {
                std::hint::spin_loop();
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(256) && since.elapsed() > spin {
                    self.parked.store(true, Ordering::SeqCst);
                    // Re-check after announcing: a post between the load and the store
                    // saw `parked` false and did not unpark.
                    if self.posted.load(Ordering::SeqCst) == seen {
                        thread::park();
                    }
                    self.parked.store(false, Ordering::SeqCst);
                }
            }
            seen = self.posted.load(Ordering::Acquire);
            // SAFETY: the caller wrote the task before raising `posted` and keeps it
            // alive until `done` reaches `seen`.
            let (task, index) = unsafe { *self.task.get() };
            if let Some(task) = task {
                let run = std::panic::AssertUnwindSafe(|| unsafe { (*task)(index) });
                if std::panic::catch_unwind(run).is_err() {
                    self.panicked.store(true, Ordering::Relaxed);
                }
            }
            self.done.store(seen, Ordering::Release);
        }
    }
}

/// Waits for the posted workers; also on drop, so a panic in the caller's own share
/// cannot end the borrow the workers still use.
struct Join<'a> {
    workers: &'a [Worker],
}

impl Join<'_> {
    /// Waits for every worker; whether one of their tasks panicked.
    fn wait(&self) -> bool {
        let mut panicked = false;
        for worker in self.workers {
            let slot = &worker.slot;
            let target = slot.posted.load(Ordering::Relaxed);
            let mut spins = 0u32;
            while slot.done.load(Ordering::Acquire) != target {
                spins = spins.wrapping_add(1);
                if spins < 1 << 16 {
                    std::hint::spin_loop();
                } else {
                    thread::yield_now();
                }
            }
            panicked |= slot.panicked.swap(false, Ordering::Relaxed);
        }
        panicked
    }
}

impl Drop for Join<'_> {
    fn drop(&mut self) {
        self.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_runs_once_with_its_index() {
        for len in [0, 1, 2, 3, 8] {
            let mut items = vec![usize::MAX; len];
            on_threads(&mut items, |t, item| *item = t * 10);
            assert_eq!(items, (0..len).map(|t| t * 10).collect::<Vec<_>>());
        }
    }

    #[test]
    fn many_calls_in_a_row_and_from_two_threads() {
        let run = || {
            for round in 0..2000usize {
                let mut items = vec![0usize; 2];
                on_threads(&mut items, |t, item| *item = round + t);
                assert_eq!(items, vec![round, round + 1]);
            }
        };
        thread::scope(|s| {
            s.spawn(run);
            s.spawn(run);
        });
    }

    #[test]
    fn a_worker_panic_reaches_the_caller() {
        let mut items = vec![0u8; 2];
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            on_threads(&mut items, |t, _| assert!(t == 0, "worker share fails"));
        }));
        // On a one-core machine the caller runs both items and the assert fails there.
        assert!(result.is_err());
        // The pool still works afterwards.
        on_threads(&mut items, |t, item| *item = t as u8 + 1);
        assert_eq!(items, vec![1, 2]);
    }
}
