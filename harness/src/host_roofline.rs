//! The host roofline, measured natively: copy bandwidth and peak `f32` FLOP/s, all cores.
//!
//! - Copy bandwidth: each thread copies its part of a buffer far larger than the caches
//!   (`copy_from_slice`, i.e. the platform `memcpy`); bytes moved = read + write.
//! - Peak FLOP/s: each thread runs 16 independent `acc = acc * a + b` chains (a multiply
//!   and an add, not fused: the runtime's kernels never use FMA, so this is their ceiling;
//!   hardware FMA peak is twice it) at the detected SIMD level.
//!
//! Both take the best of a few repeats, after a warm-up pass.

use std::time::Instant;

use rayon::prelude::*;

use cartfuse_fusion::cpu::interp::simd::{Simd, SimdLevel, WithSimd};

/// Measured host ceilings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostRoofline {
    /// Threads used.
    pub threads: usize,
    /// Copy bandwidth, bytes read plus written per second.
    pub copy_bytes_per_s: f64,
    /// Peak `f32` multiply+add throughput, FLOP per second (2 per multiply-add).
    pub flops_per_s: f64,
    /// The SIMD level of the FLOP measurement.
    pub simd: SimdLevel,
}

/// Measures the roofline on `threads` threads of rayon's pool (0: all), copying
/// `copy_bytes` bytes per pass (use at least 8x the last-level cache, e.g. 256 MiB).
pub fn measure_roofline(threads: usize, copy_bytes: usize) -> HostRoofline {
    let threads = match threads {
        0 => rayon::current_num_threads(),
        t => t,
    }
    .max(1);
    let simd = SimdLevel::detect();
    HostRoofline {
        threads,
        copy_bytes_per_s: copy_bandwidth(threads, copy_bytes),
        flops_per_s: peak_flops(threads, simd),
        simd,
    }
}

fn copy_bandwidth(threads: usize, bytes: usize) -> f64 {
    let words = (bytes / 4).max(threads * 1024);
    let src = vec![1u32; words];
    let mut dst = vec![0u32; words];
    let part = words.div_ceil(threads);
    // Touch every page of the destination first: `vec![0; _]` maps zero pages lazily, and
    // on a VM whose memory the host backs on first touch, the first passes over fresh
    // pages ran at half the steady rate or less (numpy's copy on the 2-core VM: 9.5, 11.2,
    // then 19 GB/s). The repeats after the warm-up pass give the best.
    dst.par_chunks_mut(part).for_each(|d| d.fill(2));
    let mut best = f64::INFINITY;
    for _ in 0..8 {
        let start = Instant::now();
        dst.par_chunks_mut(part)
            .zip(src.par_chunks(part))
            .for_each(|(d, s)| d.copy_from_slice(s));
        best = best.min(start.elapsed().as_secs_f64());
    }
    std::hint::black_box(&dst);
    (2 * words * 4) as f64 / best
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
