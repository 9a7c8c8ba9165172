//! The native CPU runtime: any [`Plan`](crate::plan::Plan) of any graph, run on the host.
//!
//! Brief overview: the principal type is [`CpuExecutor`], which mirrors
//! [`PlanExecutor`](crate::exec::PlanExecutor) (same buffers, launches, ledger records) and
//! adds zero-copy [`input_mut`](CpuExecutor::input_mut)/[`output`](CpuExecutor::output).
//!
//! - How plans run: every planned launch is one pass over the lanes, so `eager` is one
//!   full-array pass per op with every intermediate in memory (numpy's way), and per-kernel
//!   plans one pass per kernel. Within a launch, lanes are cut into chunks
//!   ([`DEFAULT_CHUNK`] lanes) whose intermediates live in per-thread scratch slots that stay
//!   in L1/L2 (numexpr's and XLA:CPU's way): each kernel input is read once, each output
//!   written once. The chunk's ops are a list compiled once ([`program`]): buffer slots
//!   (liveness-based reuse), op dispatch, `fused-xK` unrolling and select guards ([`lazy`])
//!   are decided at build time; each op is one SIMD loop over the chunk.
//! - [`native`]: the compiled engine: each launch written as C, built by the system C
//!   compiler and called over the same lane ranges (the default where a compiler exists);
//!   [`CpuEngine`] picks it or the op-by-op interpreter, which give the same bits.
//! - [`simd`]: the vector trait, levels (scalar, AVX2, AVX-512) and run-time dispatch.
//! - [`math`]: the one definition of sin, cos, exp, log, tanh, erf, pow on that trait.
//! - [`threefry`]: Threefry-2x32-20 on vector lanes, bit-identical to [`crate::rng`].
//! - [`threads`]: options and the thread split.
//! - [`spin_pool`]: the fork-join over the caller and one spinning worker per other core.
//! - [`roofline`]: the host's copy bandwidth and peak f32 FLOP/s, measured natively.
//!
//! All levels and thread counts give bit-identical results; results match the interpreter
//! ([`crate::interpret`]) exactly for integer, boolean and arithmetic ops and within the
//! documented error of [`math`] for transcendental ones.

mod affine;
mod alloc;
mod buffer;
pub mod cache;
mod executor;
mod holders;
mod kernel;
mod launch;
pub mod lazy;
pub mod math;
pub mod native;
pub mod program;
pub mod roofline;
pub mod simd;
pub mod spin_pool;
pub mod threads;
pub mod threefry;

pub use buffer::CpuBuffer;
pub use executor::CpuExecutor;
pub use native::CpuEngine;
#[cfg(target_arch = "x86_64")]
pub use simd::{Avx2, Avx512};
pub use simd::{Scalar, Simd, SimdLevel, WithSimd};
pub use threads::{CpuOptions, DEFAULT_CHUNK, DEFAULT_PARALLEL_MIN_LANES};

#[cfg(test)]
mod tests;
