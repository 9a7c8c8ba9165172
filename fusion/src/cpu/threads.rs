//! Options of the CPU runtime, and how a launch's chunks are spread over threads.
//!
//! Threads come from [`spin_pool`](super::spin_pool): the caller and one persistent
//! worker per other core, which spin briefly between calls instead of sleeping. A launch
//! over fewer than [`CpuOptions::parallel_min_lanes`] lanes runs on the calling thread
//! (threshold measured, see [`DEFAULT_PARALLEL_MIN_LANES`]; an interpreted program longer
//! than the fused CartPole step's splits at proportionally fewer lanes). Each lane's result
//! depends only on its own chunk, and chunks are row-aligned for row reductions and cut at
//! the banks of a population, so any thread count gives the same bits.

use super::interp::simd::SimdLevel;
use super::native::CpuEngine;

/// Lanes per chunk: 1024 lanes are 4 KiB per slot, so the live slots of a fused CartPole
/// step stay in L2 while the per-op dispatch is amortised over 64 AVX-512 vectors.
/// Measured (fused CartPole, n = 262144, one thread, AVX-512, on a loaded 2-core EPYC):
/// 256 lanes 8.7e6 env-steps/s, 512: 13.3e6, 1024: 12.2e6, 2048: 12.7e6, 4096: 13.2e6, so
/// 512-4096 are equal within the noise and 256 pays for dispatch.
pub const DEFAULT_CHUNK: usize = 1024;

/// Below this many lanes a launch runs on one thread: a launch of one chunk has nothing to
/// split. Measured with the spinning pool on the 2-core Xeon VM (`cartfuse --device cpu
/// bench`), 2 threads against 1: `fused` 137 vs 320 us at n = 4096 and 2.9 vs 6.1 ms at
/// 65536; `eager` 344 vs 414 us at 4096. Splitting costs about 1.4 us a launch.
pub const DEFAULT_PARALLEL_MIN_LANES: usize = 2 * DEFAULT_CHUNK;

/// How the CPU runtime runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuOptions {
    /// Instruction-set level (all levels give identical results).
    pub simd: SimdLevel,
    /// Compiled kernels or the interpreter (both give identical results).
    pub engine: CpuEngine,
    /// Worker threads; 0 means the caller and every worker of the pool (one per core). More
    /// than the pool has means the whole pool (a call wider than the pool would run on the
    /// calling thread alone).
    pub threads: usize,
    /// Lanes per chunk of a planned kernel.
    pub chunk: usize,
    /// Launches over fewer lanes run on one thread (for the fused CartPole step's length of
    /// program; longer interpreted programs scale it down).
    pub parallel_min_lanes: usize,
    /// Evaluate exclusive select branches only where taken: the interpreter skips them
    /// per select, compiled kernels run guard blocks that draw random numbers over the
    /// lanes that take them (see `native::emit`'s `split`). Off, both evaluate every lane
    /// (the compiled kernel blends the block under a mask). Default: on, unless
    /// `CARTFUSE_CPU_LAZY_SELECTS=off` (to measure what laziness buys).
    pub lazy_selects: bool,
    /// The largest buffer the runtime reports, standing in for a device's binding limit
    /// ([`Backend::with_max_buffer_bytes`]); `None`: the address space.
    ///
    /// [`Backend::with_max_buffer_bytes`]: crate::exec::Backend::with_max_buffer_bytes
    pub max_buffer_bytes: Option<u64>,
}

impl Default for CpuOptions {
    fn default() -> Self {
        Self {
            simd: SimdLevel::detect(),
            engine: CpuEngine::detect(),
            threads: 0,
            chunk: DEFAULT_CHUNK,
            parallel_min_lanes: DEFAULT_PARALLEL_MIN_LANES,
            lazy_selects: crate::switches::enabled(crate::switches::CPU_LAZY_SELECTS),
            max_buffer_bytes: None,
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

    /// The thread count, with 0 (and anything over the pool size) resolved to the pool size.
    /// One thread is the caller's alone: no pool is built for it.
    pub fn resolved_threads(&self) -> usize {
        match self.threads {
            0 => super::spin_pool::threads(),
            1 => 1,
            t => t.min(super::spin_pool::threads()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_threads_than_the_pool_resolve_to_the_pool() {
        let pool = super::super::spin_pool::threads();
        let with = |threads| {
            CpuOptions {
                threads,
                ..CpuOptions::default()
            }
            .resolved_threads()
        };
        assert_eq!(with(0), pool);
        assert_eq!(with(1), 1);
        assert_eq!(with(pool), pool);
        assert_eq!(with(pool + 1), pool);
        assert_eq!(with(usize::MAX), pool);
    }
}
