//! Where a chunk runs: the [`Frame`] of buffer and scratch pointers a thread hands every
//! chunk, and the [`Ctx`] each op reads its locations from.

use super::ops::{L, Loc};

/// Pointers a chunk runs against.
pub(crate) struct Frame<'a> {
    /// Base pointer of every executor buffer (read and written at disjoint lanes).
    pub buffers: &'a [*mut u32],
    /// Lanes of the launch.
    pub n: usize,
    /// This thread's scratch: pinned slots, then temps, `stride` words each.
    pub scratch: *mut u32,
    /// Words per slot.
    pub stride: usize,
    /// Pinned slots before the temps.
    pub pinned: usize,
    /// Each pinned value once, the chunk's bank's (affine weights read them as scalars).
    pub pin_values: *const u32,
    /// The first lane of the chunk's bank: lane indices count from it.
    pub lane0: usize,
}

/// Where a chunk's values are: the pointer and kind of every location, and the frame.
pub(super) struct Ctx<'a> {
    /// Each location's pointer for this chunk.
    pub ptrs: &'a [*mut u32],
    /// Each location's kind.
    pub locs: &'a [Loc],
    /// The chunk's frame.
    pub frame: &'a Frame<'a>,
    /// The chunk's first lane.
    pub start: usize,
    /// Lanes in the chunk.
    pub len: usize,
}

impl Ctx<'_> {
    /// The pointer of location `l`.
    #[inline(always)]
    pub fn p(&self, l: L) -> *mut u32 {
        self.ptrs[l as usize]
    }
}
