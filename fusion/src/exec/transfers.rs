//! What crosses between host and device: buffers laid out to come back in one transfer
//! ([`Arena`]), and every transfer a backend makes, counted ([`TransferCounts`]).
//!
//! A host step on a device should cost one round trip: the actions written into a buffer
//! that already exists, the launches, and every output read back in one copy. Outputs read
//! together are therefore allocated as the parts of one [`Arena`]: on a CubeCL device one
//! allocation whose parts are bound as separate buffers and read back whole
//! ([`Backend::read_arena`](super::Backend::read_arena)). Backends count what they do in a
//! [`TransferCounter`], so tests can assert "one read and one write a step, nothing
//! allocated" as exactly as the ledger asserts launches.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Buffers allocated together so that the host reads them back in one transfer.
#[derive(Debug, Clone)]
pub struct Arena<Buf> {
    /// Each part as a buffer of its own (what launches bind).
    pub parts: Vec<Buf>,
    /// The whole allocation and where each part starts in it, in 32-bit words; `None` where
    /// the backend keeps the parts apart (the CPU: a read there is a memory copy anyway).
    pub whole: Option<(Buf, Vec<usize>)>,
}

/// Transfers between host and device, counted by a backend since it was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransferCounts {
    /// New buffers (allocated, or uploaded into new memory).
    pub created: u64,
    /// Host values written into buffers that already existed.
    pub writes: u64,
    /// Reads back to the host; each waits for the device once.
    pub reads: u64,
    /// Copies those reads made (one per contiguous range).
    pub copies: u64,
    /// Waits for the device other than reads.
    pub syncs: u64,
}

impl TransferCounts {
    /// The counts accumulated since `earlier` was taken from the same counter.
    pub fn since(&self, earlier: &TransferCounts) -> TransferCounts {
        TransferCounts {
            created: self.created - earlier.created,
            writes: self.writes - earlier.writes,
            reads: self.reads - earlier.reads,
            copies: self.copies - earlier.copies,
            syncs: self.syncs - earlier.syncs,
        }
    }
}

/// The host memory a backend's writes into device buffers go out from (see
/// `cube::staging`; all zero on a backend whose buffers are host memory).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StagingStats {
    /// Slots of host memory allocated, each once, and reused by later writes.
    pub slots: u64,
    /// Their bytes together.
    pub bytes: u64,
    /// Whether every slot is page-locked (CUDA's pinned memory), so the device copies from it
    /// without the driver staging it first.
    pub pinned: bool,
    /// Writes that went out from a new allocation because every slot was busy and the
    /// limits allowed no more.
    pub writes_past_limits: u64,
}

/// The shared counter behind [`TransferCounts`]: clones of a backend count into one.
#[derive(Debug, Clone, Default)]
pub struct TransferCounter(Arc<[AtomicU64; 5]>);

/// One kind of transfer.
#[derive(Debug, Clone, Copy)]
pub enum Transfer {
    /// A new buffer.
    Created,
    /// Host values into an existing buffer.
    Write,
    /// A read of `copies` ranges in one wait.
    Read {
        /// Contiguous ranges copied.
        copies: u64,
    },
    /// A wait for the device.
    Sync,
}

impl TransferCounter {
    /// Counts one transfer.
    pub fn count(&self, transfer: Transfer) {
        let add = |i: usize, by: u64| self.0[i].fetch_add(by, Ordering::Relaxed);
        match transfer {
            Transfer::Created => add(0, 1),
            Transfer::Write => add(1, 1),
            Transfer::Read { copies } => {
                add(2, 1);
                add(3, copies)
            }
            Transfer::Sync => add(4, 1),
        };
    }

    /// The counts so far.
    pub fn totals(&self) -> TransferCounts {
        let get = |i: usize| self.0[i].load(Ordering::Relaxed);
        TransferCounts {
            created: get(0),
            writes: get(1),
            reads: get(2),
            copies: get(3),
            syncs: get(4),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_count_into_one_total() {
        let counter = TransferCounter::default();
        let clone = counter.clone();
        counter.count(Transfer::Created);
        clone.count(Transfer::Write);
        clone.count(Transfer::Read { copies: 3 });
        counter.count(Transfer::Sync);
        let before = counter.totals();
        assert_eq!(
            before,
            TransferCounts {
                created: 1,
                writes: 1,
                reads: 1,
                copies: 3,
                syncs: 1
            }
        );
        counter.count(Transfer::Read { copies: 1 });
        let step = counter.totals().since(&before);
        assert_eq!((step.reads, step.copies, step.writes), (1, 1, 0));
    }
}
