//! The one place every kernel launch goes through.
//!
//! [`LaunchLedger::launch`] runs the closure that enqueues a kernel and records what the
//! launch binds: the kernel's name, the elements it covers and the compulsory bytes it
//! reads and writes (every bound input read once, every output written once). Counting at
//! the point of launch, rather than guessing from the plan, is what lets the harness assert
//! exact launch and byte counts and cross-check them against the runtime.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::graph::{Graph, NodeId};
use crate::plan::Plan;

/// What one launch binds, declared by the code that launches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelLaunch<'a> {
    /// Kernel name, stable across launches of the same kernel.
    pub kernel: &'a str,
    /// Elements (lanes) the launch covers.
    pub elements: u64,
    /// Bytes of the bound buffers the kernel reads.
    pub bytes_read: u64,
    /// Bytes of the bound buffers the kernel writes.
    pub bytes_written: u64,
}

/// Launch, element and byte totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LaunchTotals {
    /// Number of kernel launches.
    pub launches: u64,
    /// Sum of the elements of every launch.
    pub elements: u64,
    /// Sum of the bytes read by every launch.
    pub bytes_read: u64,
    /// Sum of the bytes written by every launch.
    pub bytes_written: u64,
}

impl LaunchTotals {
    /// Bytes read plus bytes written.
    pub fn bytes_moved(&self) -> u64 {
        self.bytes_read + self.bytes_written
    }

    fn add(&mut self, launch: &KernelLaunch<'_>) {
        self.launches += 1;
        self.elements += launch.elements;
        self.bytes_read += launch.bytes_read;
        self.bytes_written += launch.bytes_written;
    }

    /// The totals accumulated since `earlier` was taken from the same ledger.
    pub fn since(&self, earlier: &LaunchTotals) -> LaunchTotals {
        LaunchTotals {
            launches: self.launches - earlier.launches,
            elements: self.elements - earlier.elements,
            bytes_read: self.bytes_read - earlier.bytes_read,
            bytes_written: self.bytes_written - earlier.bytes_written,
        }
    }
}

#[derive(Debug, Default)]
struct Ledger {
    totals: LaunchTotals,
    per_kernel: BTreeMap<String, LaunchTotals>,
}

/// Records every launch made through it. Cheap to share behind an `Arc`.
#[derive(Debug, Default)]
pub struct LaunchLedger {
    ledger: Mutex<Ledger>,
}

impl LaunchLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `launch`, then runs `enqueue`, which must enqueue exactly that one kernel.
    pub fn launch<T>(&self, launch: KernelLaunch<'_>, enqueue: impl FnOnce() -> T) -> T {
        {
            let mut ledger = self.lock();
            ledger.totals.add(&launch);
            // Look up before inserting: a repeated launch allocates nothing.
            match ledger.per_kernel.get_mut(launch.kernel) {
                Some(totals) => totals.add(&launch),
                None => {
                    let mut totals = LaunchTotals::default();
                    totals.add(&launch);
                    ledger.per_kernel.insert(launch.kernel.to_owned(), totals);
                }
            }
        }
        tracing::trace!(
            kernel = launch.kernel,
            elements = launch.elements,
            bytes_read = launch.bytes_read,
            bytes_written = launch.bytes_written,
            "launch"
        );
        enqueue()
    }

    /// Totals over every launch recorded so far.
    pub fn totals(&self) -> LaunchTotals {
        self.lock().totals
    }

    /// Totals per kernel name, sorted by name.
    pub fn per_kernel(&self) -> Vec<(String, LaunchTotals)> {
        self.lock()
            .per_kernel
            .iter()
            .map(|(name, totals)| (name.clone(), *totals))
            .collect()
    }

    /// Forgets every recorded launch.
    pub fn clear(&self) {
        *self.lock() = Ledger::default();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Ledger> {
        // A panic while holding the lock cannot leave the counters half-updated in a way
        // that matters more than losing them, so a poisoned lock is simply taken over.
        self.ledger
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The record of one launch of `kernels` (plan kernel indices issued together) of `plan`
/// over `n` lanes: every bound buffer read or written once per lane (per-step buffers once
/// per step). Every runtime records its launches through this function, so launch and byte
/// counts of the same plan agree across runtimes.
pub fn kernels_record<'a>(
    graph: &Graph,
    plan: &Plan,
    kernels: &[usize],
    name: &'a str,
    n: usize,
) -> KernelLaunch<'a> {
    let steps = plan.steps_per_launch;
    let (read, written) = kernels
        .iter()
        .map(|k| plan.kernels[*k].bytes_per_lane(graph, steps))
        .fold((0, 0), |(r, w), (kr, kw)| (r + kr, w + kw));
    KernelLaunch {
        kernel: name,
        elements: (n as u64) * u64::from(steps),
        bytes_read: read * n as u64,
        bytes_written: written * n as u64,
    }
}

/// The record of one copy of carried `input`'s next value into its own buffer over `n`
/// lanes (the `xla-default` loop-carried state copy).
pub fn copy_state_record(graph: &Graph, input: NodeId, n: usize) -> KernelLaunch<'static> {
    let node = graph.node(input);
    let bytes = (n * node.shape.width()) as u64 * node.dtype.size_bytes();
    copy_record("copy_state", n, bytes)
}

/// Kernel name of [`copy_range_record`]'s launch in the ledger.
pub const COPY_RANGE_KERNEL: &str = "copy_range";

/// The record of copying `len` 32-bit words from one buffer into another (a page of a
/// `fused-xK` call's actions, when its steps are paged over several launches).
pub fn copy_range_record(len: usize) -> KernelLaunch<'static> {
    copy_record(COPY_RANGE_KERNEL, len, 4 * len as u64)
}

/// A copy's record: `elements` lanes, `bytes` read and as many written.
fn copy_record(kernel: &'static str, elements: usize, bytes: u64) -> KernelLaunch<'static> {
    KernelLaunch {
        kernel,
        elements: elements as u64,
        bytes_read: bytes,
        bytes_written: bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(kernel: &str, elements: u64) -> KernelLaunch<'_> {
        KernelLaunch {
            kernel,
            elements,
            bytes_read: elements * 8,
            bytes_written: elements * 4,
        }
    }

    #[test]
    fn ledger_counts_every_launch_and_runs_the_closure() {
        let ledger = LaunchLedger::new();
        let answer = ledger.launch(launch("a", 10), || 42);
        ledger.launch(launch("b", 5), || ());
        ledger.launch(launch("a", 10), || ());
        assert_eq!(answer, 42);
        let totals = ledger.totals();
        assert_eq!(totals.launches, 3);
        assert_eq!(totals.elements, 25);
        assert_eq!(totals.bytes_read, 200);
        assert_eq!(totals.bytes_written, 100);
        assert_eq!(totals.bytes_moved(), 300);
        let per_kernel = ledger.per_kernel();
        assert_eq!(per_kernel.len(), 2);
        assert_eq!(per_kernel[0].0, "a");
        assert_eq!(per_kernel[0].1.launches, 2);
        assert_eq!(per_kernel[1].1.elements, 5);
    }

    #[test]
    fn totals_since_subtracts_an_earlier_snapshot() {
        let ledger = LaunchLedger::new();
        ledger.launch(launch("a", 1), || ());
        let before = ledger.totals();
        ledger.launch(launch("a", 2), || ());
        let delta = ledger.totals().since(&before);
        assert_eq!(delta.launches, 1);
        assert_eq!(delta.elements, 2);
        ledger.clear();
        assert_eq!(ledger.totals(), LaunchTotals::default());
    }
}
