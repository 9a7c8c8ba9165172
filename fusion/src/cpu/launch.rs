//! One launch of a chunk program: its chunks spread over threads, each run at the chosen
//! SIMD level.

use super::interp::kernel::{Frame, run_chunk};
use super::interp::ops::ChunkProgram;
use super::interp::simd::{Simd, WithSimd};
use super::native::KernelFn;
use super::threads::{CpuOptions, split};

/// Per-thread chunk memory: pinned slots, temp slots and the location table.
pub(super) struct Scratch {
    pub words: Vec<u32>,
    pub ptrs: Vec<*mut u32>,
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
    chunk: usize,
    first: usize,
    last: usize,
}

impl WithSimd for Chunks<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<V: Simd>(self, s: V) {
        for c in self.first..self.last {
            let start = c * self.chunk;
            let len = self.chunk.min(self.frame.n - start);
            // SAFETY: buffers and scratch were sized for this program in `new`.
            unsafe { run_chunk(s, self.program, &self.frame, self.ptrs, start, len) };
        }
    }
}

/// Lanes per chunk, chunks, and the threads a launch over `n` lanes uses: one below
/// [`CpuOptions::parallel_min_lanes`], else up to `threads`.
fn shares(
    options: &CpuOptions,
    rows_of: Option<u32>,
    threads: usize,
    n: usize,
) -> (usize, usize, usize) {
    let chunk = options.chunk_lanes(rows_of).min(n);
    let chunks = n.div_ceil(chunk);
    let workers = if n < options.parallel_min_lanes {
        1
    } else {
        threads.min(chunks)
    };
    (chunk, chunks, workers)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn run_program(
    program: &ChunkProgram,
    options: &CpuOptions,
    threads: usize,
    scratch: &mut [Scratch],
    bases: Bases<'_>,
    n: usize,
    stride: usize,
    pin_values: &[u32],
) {
    let (chunk, chunks, workers) = shares(options, program.rows_of, threads, n);
    let work = |t: usize, scratch: &mut Scratch| {
        let (first, last) = split(chunks, workers, t);
        let body = Chunks {
            program,
            frame: Frame {
                buffers: bases.get(),
                n,
                scratch: scratch.words.as_mut_ptr(),
                stride,
                pinned: pin_values.len(),
                pin_values: pin_values.as_ptr(),
            },
            ptrs: &mut scratch.ptrs,
            chunk,
            first,
            last,
        };
        options.simd.dispatch(body).expect("level checked in new");
    };
    if workers <= 1 {
        work(0, &mut scratch[0]);
    } else {
        super::spin_pool::on_threads(&mut scratch[..workers], work);
    }
}

/// One launch of a compiled kernel: the lanes cut into the interpreter's chunks and spread
/// over the same threads, each thread calling the kernel once on its contiguous range.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_native(
    kernel: KernelFn,
    options: &CpuOptions,
    threads: usize,
    scratch: &mut [Scratch],
    bases: Bases<'_>,
    n: usize,
    pin_values: &[u32],
) {
    let (chunk, chunks, workers) = shares(options, None, threads, n);
    let work = |t: usize, _: &mut Scratch| {
        let (first, last) = split(chunks, workers, t);
        let (begin, end) = (first * chunk, (last * chunk).min(n));
        if begin < end {
            // SAFETY: the kernel reads and writes lanes `begin..end` (and, for packed and
            // per-step buffers, the rows and steps of those lanes) of buffers sized for
            // this plan in `Executor::new`; threads get disjoint ranges.
            unsafe {
                kernel(
                    bases.get().as_ptr().cast(),
                    pin_values.as_ptr(),
                    n as i64,
                    begin as i64,
                    end as i64,
                )
            };
        }
    };
    if workers <= 1 {
        work(0, &mut scratch[0]);
    } else {
        super::spin_pool::on_threads(&mut scratch[..workers], work);
    }
}
