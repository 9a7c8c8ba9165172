//! Options of the CPU runtime, and how a launch's chunks are spread over threads.
//!
//! Threads come from rayon's global pool: persistent workers (no spawn per call), already
//! in the dependency tree through burn, and `par_iter_mut` over the per-thread scratch
//! buffers splits by `join`, which allocates nothing. A launch over fewer than
//! [`CpuOptions::parallel_min_lanes`] lanes runs on the calling thread: waking the pool costs
//! a few microseconds, which a small launch does not repay (threshold measured, see
//! [`DEFAULT_PARALLEL_MIN_LANES`]). Each lane's result depends only on its own chunk, and
//! chunks are row-aligned for row reductions, so any thread count gives the same bits.

use super::simd::SimdLevel;

/// Lanes per chunk: 1024 lanes are 4 KiB per slot, so the live slots of a fused CartPole
/// step stay in L2 while the per-op dispatch is amortised over 64 AVX-512 vectors.
/// Measured (fused CartPole, n = 262144, one thread, AVX-512, on a loaded 2-core EPYC):
/// 256 lanes 8.7e6 env-steps/s, 512: 13.3e6, 1024: 12.2e6, 2048: 12.7e6, 4096: 13.2e6, so
/// 512-4096 are equal within the noise and 256 pays for dispatch.
pub const DEFAULT_CHUNK: usize = 1024;

/// Below this many lanes a launch runs on one thread. Measured on the 2-core EPYC dev box
/// (while other builds loaded it, so provisional): 2 threads gave no gain for 4 K-32 K
/// lanes of the fused CartPole step (1.5e7 env-steps/s either way); 16 K keeps small calls
/// off the pool. Re-measure with `cpu::tests::speed` on an idle many-core machine.
pub const DEFAULT_PARALLEL_MIN_LANES: usize = 16_384;

/// How the CPU runtime runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuOptions {
    /// Instruction-set level (all levels give identical results).
    pub simd: SimdLevel,
    /// Worker threads; 0 means every thread of rayon's global pool.
    pub threads: usize,
    /// Lanes per chunk of a planned kernel.
    pub chunk: usize,
    /// Launches over fewer lanes run on one thread.
    pub parallel_min_lanes: usize,
    /// Evaluate exclusive select branches only where taken.
    pub lazy_selects: bool,
}

impl Default for CpuOptions {
    fn default() -> Self {
        Self {
            simd: SimdLevel::detect(),
            threads: 0,
            chunk: DEFAULT_CHUNK,
            parallel_min_lanes: DEFAULT_PARALLEL_MIN_LANES,
            lazy_selects: true,
        }
    }
}

impl CpuOptions {
    /// One thread at `simd`.
    pub fn single(simd: SimdLevel) -> Self {
        Self {
            simd,
            threads: 1,
            ..Self::default()
        }
    }

    /// The thread count, with 0 resolved to the pool size.
    pub fn resolved_threads(&self) -> usize {
        match self.threads {
            0 => rayon::current_num_threads().max(1),
            t => t,
        }
    }

    /// Lanes per chunk for a kernel over rows of `rows_of` lanes (whole rows per chunk).
    pub fn chunk_lanes(&self, rows_of: Option<u32>) -> usize {
        let chunk = self.chunk.max(1);
        match rows_of {
            Some(cols) => (chunk / cols as usize).max(1) * cols as usize,
            None => chunk,
        }
    }
}

/// Chunks `first..last` of `chunks` for worker `t` of `workers` (contiguous, balanced).
pub fn split(chunks: usize, workers: usize, t: usize) -> (usize, usize) {
    (chunks * t / workers, chunks * (t + 1) / workers)
}
