//! The host roofline, measured natively: copy bandwidth and peak `f32` FLOP/s, all cores,
//! the ceilings the CPU runtime's kernels are read against (the report's CPU roofline).
//!
//! - Copy bandwidth, two ways over buffers far larger than the caches (each buffer at least
//!   4x the last-level cache), each thread copying its part; bytes moved = read + write:
//!   the platform `memcpy` (`copy_from_slice`), and a STREAM-style copy with non-temporal
//!   stores (x86-64: `movntdq`), which writes memory without first reading each line into
//!   the cache (a plain store's read-for-ownership moves a third more bytes than it counts).
//!   The roof is the faster of the two.
//! - Peak FLOP/s: each thread runs 16 independent `acc = acc * a + b` chains (a multiply
//!   and an add, not fused: the runtime's kernels never use FMA, so this is their ceiling;
//!   hardware FMA peak is twice it) at the detected SIMD level.
//!
//! Each takes the best of a few repeats, after a warm-up pass. The loops live here, in the
//! runtime's crate, because they must be optimised and inlined as its kernels are: the
//! harness that reports them builds at a lower opt-level in the tests' profile.

use std::time::Instant;

use rayon::prelude::*;

use crate::cpu::cache::last_level_cache_bytes;
use crate::cpu::interp::simd::{Simd, SimdLevel, WithSimd};

/// Measured host ceilings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostRoofline {
    /// Threads used.
    pub threads: usize,
    /// Copy bandwidth, bytes read plus written per second: the faster of the two copies.
    pub copy_bytes_per_s: f64,
    /// The platform `memcpy`'s bandwidth.
    pub memcpy_bytes_per_s: f64,
    /// The non-temporal (streaming-store) copy's bandwidth (`memcpy`'s where the target
    /// has no such stores).
    pub streaming_bytes_per_s: f64,
    /// Bytes read plus written by one copy pass.
    pub copy_bytes: usize,
    /// The last-level cache, where the system reports it.
    pub cache_bytes: Option<u64>,
    /// Peak `f32` multiply+add throughput, FLOP per second (2 per multiply-add).
    pub flops_per_s: f64,
    /// The SIMD level of the FLOP measurement.
    pub simd: SimdLevel,
}

/// Largest buffer of the copy (each of the two), whatever the cache.
const MAX_BUFFER_BYTES: usize = 4 << 30;

/// Measures the roofline on `threads` threads of rayon's pool (0: all), copying at least
/// `copy_bytes` bytes per pass (read plus write; raised to 8x the last-level cache).
pub fn measure_roofline(threads: usize, copy_bytes: usize) -> HostRoofline {
    let threads = match threads {
        0 => rayon::current_num_threads(),
        t => t,
    }
    .max(1);
    let simd = SimdLevel::detect();
    let cache_bytes = last_level_cache_bytes();
    let buffer = (copy_bytes / 2)
        .max(4 * cache_bytes.unwrap_or(0) as usize)
        .min(MAX_BUFFER_BYTES);
    let blocks = (buffer / std::mem::size_of::<Block>()).max(threads * 16);
    let (memcpy, streaming) = copy_bandwidths(threads, blocks);
    HostRoofline {
        threads,
        copy_bytes_per_s: memcpy.max(streaming),
        memcpy_bytes_per_s: memcpy,
        streaming_bytes_per_s: streaming,
        copy_bytes: 2 * blocks * std::mem::size_of::<Block>(),
        cache_bytes,
        flops_per_s: peak_flops(threads, simd),
        simd,
    }
}

/// One cache line of words, aligned as the streaming stores need.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Block([u32; 16]);

/// Copies `src` into `dst` with non-temporal stores, then fences them.
#[cfg(target_arch = "x86_64")]
fn stream_copy(dst: &mut [Block], src: &[Block]) {
    use std::arch::x86_64::{__m128i, _mm_load_si128, _mm_sfence, _mm_stream_si128};
    for (d, s) in dst.iter_mut().zip(src) {
        let (d, s) = (
            d.0.as_mut_ptr().cast::<__m128i>(),
            s.0.as_ptr().cast::<__m128i>(),
        );
        for quarter in 0..4 {
            // SAFETY: a `Block` is 64 bytes aligned to 64, so each of its four 16-byte
            // quarters is in bounds and 16-byte aligned; SSE2 is part of x86-64.
            unsafe { _mm_stream_si128(d.add(quarter), _mm_load_si128(s.add(quarter))) };
        }
    }
    // SAFETY: SSE2 is part of x86-64.
    unsafe { _mm_sfence() };
}

/// Without streaming stores, the plain copy.
#[cfg(not(target_arch = "x86_64"))]
fn stream_copy(dst: &mut [Block], src: &[Block]) {
    dst.copy_from_slice(src);
}

/// `(memcpy, streaming)` bandwidths, bytes read plus written per second, over two buffers of
/// `blocks` blocks, the methods alternating pass by pass (best of 6 each).
fn copy_bandwidths(threads: usize, blocks: usize) -> (f64, f64) {
    let src = vec![Block([1; 16]); blocks];
    let mut dst = vec![Block([0; 16]); blocks];
    let part = blocks.div_ceil(threads);
    // Touch every page of the destination first: `vec![0; _]` maps zero pages lazily, and
    // on a VM whose memory the host backs on first touch, the first passes over fresh
    // pages ran at half the steady rate or less (numpy's copy on the 2-core VM: 9.5, 11.2,
    // then 19 GB/s). The repeats after the warm-up pass give the best.
    dst.par_chunks_mut(part)
        .for_each(|d| d.fill(Block([2; 16])));
    let mut pass = |copy: fn(&mut [Block], &[Block])| {
        let start = Instant::now();
        dst.par_chunks_mut(part)
            .zip(src.par_chunks(part))
            .for_each(|(d, s)| copy(d, s));
        start.elapsed().as_secs_f64()
    };
    let memcpy: fn(&mut [Block], &[Block]) = |d, s| d.copy_from_slice(s);
    let (mut best_memcpy, mut best_streaming) = (f64::INFINITY, f64::INFINITY);
    pass(stream_copy);
    for _ in 0..6 {
        best_memcpy = best_memcpy.min(pass(memcpy));
        best_streaming = best_streaming.min(pass(stream_copy));
    }
    std::hint::black_box(&dst);
    let moved = (2 * blocks * std::mem::size_of::<Block>()) as f64;
    (moved / best_memcpy, moved / best_streaming)
}

const CHAINS: usize = 16;

struct Chains {
    iterations: usize,
}

impl WithSimd for Chains {
    type Output = f32;

    #[inline(always)]
    fn with_simd<V: Simd>(self, s: V) -> f32 {
        let a = s.splat(std::hint::black_box(0.999_999));
        let b = s.splat(std::hint::black_box(1e-7));
        let mut acc = [s.splat(1.0); CHAINS];
        for _ in 0..self.iterations {
            for x in &mut acc {
                *x = s.add(s.mul(*x, a), b);
            }
        }
        let mut out = vec![0f32; V::LANES];
        let mut total = 0.0;
        for x in acc {
            // SAFETY: `out` holds `LANES` floats.
            unsafe { s.store(out.as_mut_ptr(), x) };
            total += out.iter().sum::<f32>();
        }
        total
    }
}

fn peak_flops(threads: usize, simd: SimdLevel) -> f64 {
    let iterations = 4_000_000 / simd.lanes().max(1) * 4;
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let start = Instant::now();
        let sum: f32 = (0..threads)
            .into_par_iter()
            .map(|_| simd.dispatch(Chains { iterations }).unwrap_or(0.0))
            .sum();
        std::hint::black_box(sum);
        best = best.min(start.elapsed().as_secs_f64());
    }
    (threads * iterations * CHAINS * simd.lanes() * 2) as f64 / best
}

#[cfg(test)]
mod tests {
    use super::{Block, copy_bandwidths, stream_copy};

    #[test]
    fn the_streaming_copy_copies_every_word() {
        let src: Vec<Block> = (0..33u32)
            .map(|i| Block(std::array::from_fn(|j| i * 16 + j as u32)))
            .collect();
        let mut dst = vec![Block([0; 16]); src.len()];
        stream_copy(&mut dst, &src);
        assert!(dst.iter().zip(&src).all(|(d, s)| d.0 == s.0));
    }

    #[test]
    fn both_copies_measure_a_bandwidth() {
        let (memcpy, streaming) = copy_bandwidths(2, 4096);
        assert!(memcpy.is_finite() && memcpy > 0.0, "{memcpy}");
        assert!(streaming.is_finite() && streaming > 0.0, "{streaming}");
    }
}
