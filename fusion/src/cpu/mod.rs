//! The native CPU runtime: any [`Plan`](crate::plan::Plan) of any graph, run on the host.
//!
//! The principal type is [`Cpu`], a [`Backend`](crate::exec::Backend): plans run through
//! the one [`Executor`](crate::exec::Executor), with buffers in host memory ([`CpuBuffer`])
//! and launches prepared as [`CpuLaunches`].
//!
//! - How plans run: every planned launch is one pass over the lanes, so `eager` is one
//!   full-array pass per op with every intermediate in memory (numpy's way), and per-kernel
//!   plans one pass per kernel. Within a launch, lanes are cut into chunks
//!   ([`DEFAULT_CHUNK`] lanes) whose intermediates live in per-thread scratch slots that stay
//!   in L1/L2 (numexpr's and XLA:CPU's way): each kernel input is read once, each output
//!   written once. The chunk's ops are a list compiled once ([`interp::program`]): buffer slots
//!   (liveness-based reuse), op dispatch, `fused-xK` unrolling and select guards ([`crate::lir::guards`])
//!   are decided at build time; each op is one SIMD loop over the chunk.
//! - [`native`]: the compiled engine: each launch written as C, built by the system C
//!   compiler and called over the same lane ranges (the default where a compiler exists);
//!   [`CpuEngine`] picks it or the op-by-op interpreter, which give the same bits.
//! - [`interp`]: the interpreted engine, its SIMD levels and math.
//! - [`threads`]: options and the thread split.
//! - [`spin_pool`]: the fork-join over the caller and one spinning worker per other core.
//! - [`roofline`]: the host's ceilings (copy bandwidth, peak FLOP/s), measured natively.
//!
//! All levels and thread counts give bit-identical results; results match the interpreter
//! ([`crate::interpret`]) exactly for integer, boolean and arithmetic ops and within the
//! documented error of [`interp::math`] for transcendental ones.

mod backend;
pub mod binder;
mod buffer;
pub mod cache;
pub mod interp;
mod launch;
mod launches;
pub mod native;
pub mod roofline;
pub mod spin_pool;
pub mod threads;

pub use backend::{Cpu, SimdUnsupported};
pub use buffer::CpuBuffer;
#[cfg(target_arch = "x86_64")]
pub use interp::simd::{Avx2, Avx512};
pub use interp::simd::{Scalar, Simd, SimdLevel, WithSimd};
pub use launches::CpuLaunches;
pub use native::CpuEngine;
pub use threads::{CpuOptions, DEFAULT_CHUNK, DEFAULT_PARALLEL_MIN_LANES};

#[cfg(test)]
mod tests;
