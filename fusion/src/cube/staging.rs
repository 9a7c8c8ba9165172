//! The host memory that writes into device buffers go out from, allocated once and reused.
//!
//! A host step writes the actions into a device buffer that already exists. The runtime
//! takes the write's bytes as [`Bytes`] and keeps them until the device has read them: wgpu
//! copies them into its own staging at once, CUDA copies straight from them with an
//! asynchronous DMA and holds them in its pending-drop queue for up to two flush cycles (64
//! writes or 64 MiB each, cubecl 0.10's default). Before, every write went out from a new
//! `Vec`: an allocation a step, and on CUDA a copy from pageable memory, which the driver
//! stages through its own page-locked buffer first.
//!
//! [`UploadStaging`] hands out slots instead: each a host allocation made once by the runtime
//! (CUDA's comes from cubecl's pinned pool, page-locked; wgpu, which has no staging of its
//! own, gets ordinary memory). A write copies its values into a free slot and goes out as
//! [`Bytes`] that borrow it; when the runtime drops those bytes, the slot is free again. So
//! a slot is never written while a transfer may still read it, whatever thread the
//! runtime's server runs on, and the number of slots settles at what the runtime holds at
//! once (one on wgpu; on CUDA the pending-drop queue's depth, about 130 small writes). Past
//! [`MAX_SLOTS`] slots or [`MAX_STAGED_BYTES`] bytes a write goes out from a new `Vec`, as
//! before, and is counted ([`StagingStats::writes_past_limits`]).

use std::mem::MaybeUninit;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use cubecl::bytes::{AllocationController, AllocationProperty, Bytes};

use crate::exec::StagingStats;

/// The most slots one staging keeps.
pub const MAX_SLOTS: usize = 256;

/// The most bytes one staging's slots hold together.
pub const MAX_STAGED_BYTES: usize = 256 << 20;

/// Reusable host memory for writes into device buffers; clones of a backend share one.
#[derive(Debug, Default)]
pub struct UploadStaging {
    slots: Mutex<Vec<Arc<Slot>>>,
    writes_past_limits: AtomicU64,
}

/// One host allocation of the runtime's, lent to one write at a time.
struct Slot {
    /// Keeps the memory alive for the slot's lifetime; never touched through it again.
    _memory: Bytes,
    /// The start of that memory and its length.
    start: NonNull<u8>,
    capacity: usize,
    align: usize,
    property: AllocationProperty,
    /// Whether a write's [`Bytes`] borrow the slot.
    lent: AtomicBool,
}

// SAFETY: `start` points into `_memory`, which the slot owns and never moves or frees while
// it lives. The memory is written only by the one holder of `lent` (set under the staging's
// lock when it was clear, cleared when its `Lease` drops), so no two threads touch it at once.
unsafe impl Send for Slot {}
// SAFETY: as for `Send`: shared access goes through the atomic `lent` flag alone.
unsafe impl Sync for Slot {}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Slot({} bytes, {:?})", self.capacity, self.property)
    }
}

/// A slot lent to one write: what its [`Bytes`] read; dropping it frees the slot.
struct Lease(Arc<Slot>);

impl Drop for Lease {
    fn drop(&mut self) {
        self.0.lent.store(false, Ordering::Release);
    }
}

impl AllocationController for Lease {
    fn alloc_align(&self) -> usize {
        self.0.align
    }

    fn property(&self) -> AllocationProperty {
        self.0.property
    }

    unsafe fn memory_mut(&mut self) -> &mut [MaybeUninit<u8>] {
        // SAFETY: the lease holds the slot (`lent`), so this is the memory's only user.
        unsafe { std::slice::from_raw_parts_mut(self.0.start.as_ptr().cast(), self.0.capacity) }
    }

    fn memory(&self) -> &[MaybeUninit<u8>] {
        // SAFETY: as above; `capacity` bytes from `start` belong to the slot's memory.
        unsafe { std::slice::from_raw_parts(self.0.start.as_ptr().cast(), self.0.capacity) }
    }
}

impl UploadStaging {
    /// `data` in [`Bytes`] for a write: copied into a free slot that holds it, else into a
    /// new slot from `allocate(capacity)` (the runtime's staging memory of at least that many
    /// bytes), else, past the limits, into a new `Vec`.
    pub fn stage(&self, data: &[u8], allocate: impl FnOnce(usize) -> Bytes) -> Bytes {
        if data.is_empty() {
            return Bytes::from_bytes_vec(Vec::new());
        }
        let Some(slot) = self.lend(data.len(), allocate) else {
            self.writes_past_limits.fetch_add(1, Ordering::Relaxed);
            return Bytes::from_bytes_vec(data.to_vec());
        };
        // SAFETY: `lend` set the slot's `lent` flag for this write alone, and the slot holds
        // at least `data.len()` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), slot.start.as_ptr(), data.len());
            // SAFETY: the lease's memory starts with `data.len()` initialised bytes.
            Bytes::from_controller(Box::new(Lease(slot)), data.len())
        }
    }

    /// The smallest free slot of at least `len` bytes, lent; else a new one, if the limits
    /// allow and `allocate` gives enough memory.
    fn lend(&self, len: usize, allocate: impl FnOnce(usize) -> Bytes) -> Option<Arc<Slot>> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        // Only a lease's drop clears `lent`, and only under this lock is it set: a slot seen
        // free here stays free until taken.
        let free = (slots.iter())
            .filter(|slot| slot.capacity >= len && !slot.lent.load(Ordering::Acquire))
            .min_by_key(|slot| slot.capacity);
        if let Some(slot) = free {
            slot.lent.store(true, Ordering::Relaxed);
            return Some(slot.clone());
        }
        let held: usize = slots.iter().map(|slot| slot.capacity).sum();
        let capacity = len.next_multiple_of(64);
        if slots.len() >= MAX_SLOTS || held + capacity > MAX_STAGED_BYTES {
            return None;
        }
        let mut memory = allocate(capacity);
        if memory.len() < len {
            return None;
        }
        let slot = Arc::new(Slot {
            start: NonNull::new(memory.as_mut_ptr())?,
            capacity: memory.len(),
            align: memory.align(),
            property: memory.property(),
            lent: AtomicBool::new(true),
            _memory: memory,
        });
        slots.push(slot.clone());
        Some(slot)
    }

    /// What this staging holds and how many writes went around it.
    pub fn stats(&self) -> StagingStats {
        let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        StagingStats {
            slots: slots.len() as u64,
            bytes: slots.iter().map(|slot| slot.capacity as u64).sum(),
            pinned: (slots.iter()).all(|slot| slot.property == AllocationProperty::Pinned)
                && !slots.is_empty(),
            writes_past_limits: self.writes_past_limits.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ordinary(capacity: usize) -> Bytes {
        Bytes::from_bytes_vec(vec![0; capacity])
    }

    #[test]
    fn a_slot_is_reused_once_the_runtime_drops_the_write() {
        let staging = UploadStaging::default();
        let first = staging.stage(&[1, 2, 3, 4], ordinary);
        assert_eq!(&first[..], &[1, 2, 3, 4]);
        drop(first);
        let second = staging.stage(&[5, 6, 7, 8], |_| panic!("the free slot is reused"));
        assert_eq!(&second[..], &[5, 6, 7, 8]);
        let stats = staging.stats();
        assert_eq!(
            (stats.slots, stats.bytes, stats.writes_past_limits),
            (1, 64, 0)
        );
        assert!(!stats.pinned, "a Vec's memory is not page-locked");
    }

    #[test]
    fn a_slot_the_runtime_still_holds_is_never_written() {
        let staging = UploadStaging::default();
        let held = staging.stage(&[9; 100], ordinary);
        let next = staging.stage(&[7; 100], ordinary);
        assert!(
            held.iter().all(|&b| b == 9),
            "the held write kept its bytes"
        );
        assert!(next.iter().all(|&b| b == 7));
        assert_eq!(staging.stats().slots, 2);
        drop(held);
        let third = staging.stage(&[3; 10], |_| panic!("the freed slot fits"));
        assert_eq!(&third[..], &[3; 10]);
    }

    #[test]
    fn the_smallest_free_slot_that_fits_is_lent() {
        let staging = UploadStaging::default();
        let (big, small) = (
            staging.stage(&[0; 1000], ordinary),
            staging.stage(&[0; 8], ordinary),
        );
        drop((big, small));
        let write = staging.stage(&[1; 8], |_| panic!("a slot fits"));
        assert_eq!(write.len(), 8);
        // The 1,000-byte slot is still free for a write that needs it.
        let large = staging.stage(&[2; 1000], |_| panic!("the large slot is free"));
        assert_eq!(large.len(), 1000);
    }

    #[test]
    fn past_the_limits_writes_go_out_from_a_vec_and_are_counted() {
        let staging = UploadStaging::default();
        let held: Vec<Bytes> = (0..MAX_SLOTS)
            .map(|_| staging.stage(&[1], ordinary))
            .collect();
        let over = staging.stage(&[2, 3], |_| panic!("no slot past the limit"));
        assert_eq!(&over[..], &[2, 3]);
        let huge = vec![4u8; MAX_STAGED_BYTES];
        drop(held);
        let unstaged = staging.stage(&huge, |_| panic!("no slot past the byte limit"));
        assert_eq!(unstaged.len(), MAX_STAGED_BYTES);
        let stats = staging.stats();
        assert_eq!(
            (stats.slots, stats.writes_past_limits),
            (MAX_SLOTS as u64, 2)
        );
    }

    #[test]
    fn an_empty_write_takes_no_slot() {
        let staging = UploadStaging::default();
        assert!(
            staging
                .stage(&[], |_| panic!("nothing to stage"))
                .is_empty()
        );
        assert_eq!(staging.stats(), StagingStats::default());
    }
}
