//! [`Stepper`]: the thread a step posted by `step_async` runs on while Python goes on, and
//! the [`Ticket`] `step_wait` waits on.
//!
//! One thread per env, started by the first post and kept (a thread start costs tens of
//! microseconds; a parked thread's wake-up a few). The step itself still spreads over the
//! CPU runtime's workers from that thread. A panic in the posted work is caught and handed
//! to the waiter as an error; the thread goes on serving posts. A child of `fork` has no
//! such thread: its first post starts one of its own (and the parent's is never joined
//! there).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce() + Send>;

/// A background thread that runs posted work one post at a time.
#[derive(Default)]
pub struct Stepper {
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    /// The process the thread was started in.
    pid: u32,
}

impl Stepper {
    /// Runs `work` on the stepper's thread (started now if it is not yet) and returns the
    /// ticket its result arrives on; an error when no thread could be started.
    pub fn post<T: Send + 'static>(
        &mut self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<Ticket<T>, String> {
        let slot = Arc::new(Slot {
            value: Mutex::new(None),
            ready: Condvar::new(),
        });
        let filled = slot.clone();
        let job: Job = Box::new(move || {
            let value = catch_unwind(AssertUnwindSafe(work)).map_err(|panic| {
                let message = (panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".into());
                format!("the background step panicked: {message}")
            });
            *filled.value.lock().unwrap_or_else(PoisonError::into_inner) = Some(value);
            filled.ready.notify_all();
        });
        self.forget_after_fork();
        let jobs = match &self.jobs {
            Some(jobs) => jobs,
            None => self.start()?,
        };
        jobs.send(job)
            .map_err(|_| "the background step thread has stopped".to_string())?;
        Ok(Ticket { slot })
    }

    fn start(&mut self) -> Result<&Sender<Job>, String> {
        let (jobs, posted) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("cartfuse-step".into())
            .spawn(move || {
                for job in posted {
                    job();
                }
            })
            .map_err(|e| format!("could not start the background step thread: {e}"))?;
        self.thread = Some(thread);
        self.pid = std::process::id();
        Ok(self.jobs.insert(jobs))
    }

    /// In a child of `fork`, forgets the parent's thread (it does not exist here; joining
    /// it would wait forever).
    fn forget_after_fork(&mut self) {
        if self.thread.is_some() && self.pid != std::process::id() {
            std::mem::forget(self.thread.take());
            std::mem::forget(self.jobs.take());
        }
    }
}

impl Drop for Stepper {
    /// Lets the thread finish what was posted, then joins it.
    fn drop(&mut self) {
        self.forget_after_fork();
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Where a posted work's result arrives.
struct Slot<T> {
    value: Mutex<Option<Result<T, String>>>,
    ready: Condvar,
}

/// The claim on one posted work's result.
pub struct Ticket<T> {
    slot: Arc<Slot<T>>,
}

impl<T> Ticket<T> {
    /// Whether the work has finished (its result is waiting).
    pub fn is_ready(&self) -> bool {
        (self.slot.value.lock())
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Blocks until the work has finished and returns its result, or the message of the
    /// panic that ended it.
    pub fn wait(self) -> Result<T, String> {
        let mut value = self
            .slot
            .value
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(result) = value.take() {
                return result;
            }
            value = (self.slot.ready.wait(value)).unwrap_or_else(PoisonError::into_inner);
        }
    }
}
