//! One launch of a chunk program: its chunks spread over threads, each run at the chosen
//! SIMD level. Chunks never straddle two banks of lanes ([`crate::exec::BoundPlan`]): each
//! runs with its bank's pinned values and lane indices counted from the bank's first lane.

use super::buffer::PAD;
use super::interp::frame::Frame;
use super::interp::kernel::run_chunk;
use super::interp::ops::ChunkProgram;
use super::interp::simd::{Simd, WithSimd};
use super::native::KernelFn;
use super::threads::{CpuOptions, split};

/// Per-thread chunk memory: pinned slots, temp slots (`stride` words each) and the location
/// table.
pub(super) struct Scratch {
    pub words: Vec<u32>,
    pub stride: usize,
    pub ptrs: Vec<*mut u32>,
    /// The bank whose values the broadcast pinned slots hold (`None`: stale).
    pub bank: Option<usize>,
}

/// The pinned values (constants and params) of every bank, and which of them the
/// interpreter reads as vectors (broadcast into each thread's scratch).
#[derive(Clone, Copy)]
pub(super) struct Pins<'a> {
    /// Each bank's values, bank-major.
    pub bits: &'a [u32],
    /// Values per bank.
    pub count: usize,
    /// Whether pin `p` is broadcast into scratch.
    pub broadcast: &'a [bool],
}

impl<'a> Pins<'a> {
    /// Bank `bank`'s values.
    fn of(self, bank: usize) -> &'a [u32] {
        &self.bits[bank * self.count..(bank + 1) * self.count]
    }
}

/// How a launch over `n` lanes in `banks` banks is cut into chunks: each bank into chunks
/// of `chunk` lanes (its last one shorter).
#[derive(Clone, Copy)]
struct Grid {
    chunk: usize,
    bank_lanes: usize,
    chunks_per_bank: usize,
}

impl Grid {
    fn new(chunk: usize, n: usize, banks: usize) -> Self {
        let bank_lanes = n / banks;
        let chunk = chunk.min(bank_lanes);
        Self {
            chunk,
            bank_lanes,
            chunks_per_bank: bank_lanes.div_ceil(chunk),
        }
    }

    /// Chunk `c`'s bank, first lane and length.
    fn chunk(self, c: usize) -> (usize, usize, usize) {
        let bank = c / self.chunks_per_bank;
        let start = bank * self.bank_lanes + (c % self.chunks_per_bank) * self.chunk;
        let end = (bank + 1) * self.bank_lanes;
        (bank, start, self.chunk.min(end - start))
    }
}

// SAFETY: the pointers are rewritten from this thread's own buffers before each chunk.
unsafe impl Send for Scratch {}

/// Base pointers of the buffers, shared by the threads of one launch.
#[derive(Clone, Copy)]
pub(super) struct Bases<'a>(pub &'a [*mut u32]);
// SAFETY: threads write disjoint lane ranges of the buffers and only read the rest.
unsafe impl Send for Bases<'_> {}
unsafe impl Sync for Bases<'_> {}

impl<'a> Bases<'a> {
    /// The pointers (a method, so closures capture the `Sync` wrapper, not the slice).
    fn get(self) -> &'a [*mut u32] {
        self.0
    }
}

/// One thread's share of a launch: chunks `first..last`.
struct Chunks<'a> {
    program: &'a ChunkProgram,
    frame: Frame<'a>,
    ptrs: &'a mut [*mut u32],
    /// The bank the scratch's broadcast pins hold.
    bank: &'a mut Option<usize>,
    pins: Pins<'a>,
    grid: Grid,
    first: usize,
    last: usize,
}

impl Chunks<'_> {
    /// Points the frame at bank `bank`'s pinned values, broadcasting those read as vectors
    /// into the scratch when it held another bank's.
    fn enter_bank(&mut self, bank: usize) {
        let values = self.pins.of(bank);
        self.frame.pin_values = values.as_ptr();
        self.frame.lane0 = bank * self.grid.bank_lanes;
        if *self.bank == Some(bank) {
            return;
        }
        let stride = self.frame.stride;
        // The lanes a chunk reads: its length rounded up to the widest vector.
        let used = self.grid.chunk.next_multiple_of(PAD).min(stride);
        for (p, bits) in values.iter().enumerate() {
            if self.pins.broadcast[p] {
                // SAFETY: the scratch holds `stride` words for every pin.
                unsafe { std::slice::from_raw_parts_mut(self.frame.scratch.add(p * stride), used) }
                    .fill(*bits);
            }
        }
        *self.bank = Some(bank);
    }
}

impl WithSimd for Chunks<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<V: Simd>(mut self, s: V) {
        for c in self.first..self.last {
            let (bank, start, len) = self.grid.chunk(c);
            self.enter_bank(bank);
            // SAFETY: buffers and scratch were sized for this program in `new`.
            unsafe { run_chunk(s, self.program, &self.frame, self.ptrs, start, len) };
        }
    }
}

/// Ops of the fused CartPole step's chunk program, the launch
/// [`CpuOptions::parallel_min_lanes`] was measured on.
const REFERENCE_OPS: usize = 77;

/// What a launch runs: a compiled kernel, or a chunk program.
pub(super) enum Body {
    Native(KernelFn),
    Program(ChunkProgram),
}

/// Runs `body` over `n` lanes in `banks` banks. The lanes are cut into chunks; the chunks run
/// on one thread below [`CpuOptions::parallel_min_lanes`] lanes, else on up to `threads`. A
/// longer program splits over fewer lanes, in proportion (a population's policy step:
/// thousands of ops over a few hundred lanes). A compiled kernel is called once on each
/// bank's part of a thread's contiguous range of chunks.
pub(super) fn run(
    body: &Body,
    options: &CpuOptions,
    threads: usize,
    scratch: &mut [Scratch],
    bases: Bases<'_>,
    (n, banks): (usize, usize),
    pins: Pins<'_>,
) {
    let (rows_of, ops) = match body {
        Body::Native(_) => (None, REFERENCE_OPS),
        Body::Program(program) => (program.rows_of, program.ops.len()),
    };
    let grid = Grid::new(options.chunk_lanes(rows_of), n, banks);
    let chunks = banks * grid.chunks_per_bank;
    let workers =
        if n.saturating_mul(ops.max(REFERENCE_OPS)) < options.parallel_min_lanes * REFERENCE_OPS {
            1
        } else {
            threads.min(chunks)
        };
    let work = |t: usize, scratch: &mut Scratch| {
        let (first, last) = split(chunks, workers, t);
        match body {
            Body::Program(program) => {
                let chunks = Chunks {
                    program,
                    frame: Frame {
                        buffers: bases.get(),
                        n,
                        scratch: scratch.words.as_mut_ptr(),
                        stride: scratch.stride,
                        pinned: pins.count,
                        pin_values: pins.of(0).as_ptr(),
                        lane0: 0,
                    },
                    ptrs: &mut scratch.ptrs,
                    bank: &mut scratch.bank,
                    pins,
                    grid,
                    first,
                    last,
                };
                options.simd.dispatch(chunks).expect("level checked in new");
            }
            &Body::Native(kernel) => {
                let mut c = first;
                while c < last {
                    // The thread's chunks of this bank, as one range.
                    let (bank, begin, _) = grid.chunk(c);
                    let bank_last = ((bank + 1) * grid.chunks_per_bank).min(last);
                    let (_, from, len) = grid.chunk(bank_last - 1);
                    let end = from + len;
                    let lane0 = bank * grid.bank_lanes;
                    // SAFETY: the kernel reads and writes lanes `begin..end` (and, for packed
                    // and per-step buffers, the rows and steps of those lanes) of buffers
                    // sized for this plan in `Executor::new`; threads get disjoint ranges.
                    unsafe {
                        kernel(
                            bases.get().as_ptr().cast(),
                            pins.of(bank).as_ptr(),
                            n as i64,
                            begin as i64,
                            end as i64,
                            lane0 as i64,
                        )
                    };
                    c = bank_last;
                }
            }
        }
    };
    if workers <= 1 {
        work(0, &mut scratch[0]);
    } else {
        super::spin_pool::on_threads(&mut scratch[..workers], work);
    }
}
