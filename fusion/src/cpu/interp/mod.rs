//! The interpreted engine: a lowered launch compiled into a list of SIMD loops over chunks
//! of lanes, one loop per op, intermediates in L1/L2-resident scratch slots.
//!
//! - [`ops`]: the chunk program's ops over value locations, [`ops::ChunkProgram`].
//! - [`program`]: a lowered launch translated into a chunk program.
//! - `alloc`: scratch slots by liveness.
//! - `frame`: the pointers a chunk runs against.
//! - `kernel`: running a chunk program over one chunk at one SIMD level, an op per loop.
//! - `affine`: one output of a dense layer over a chunk, the running sum in registers.
//! - [`simd`]: the vector trait, its levels (scalar, AVX2, AVX-512) and run-time dispatch.
//! - [`math`]: the one definition of sin, cos, exp, log, tanh, erf, pow on that trait.
//! - [`threefry`]: Threefry-2x32-20 on vector lanes, bit-identical to [`crate::rng`].

mod affine;
mod alloc;
pub(super) mod frame;
pub(super) mod kernel;
pub mod math;
pub mod ops;
pub mod program;
pub mod simd;
pub mod threefry;
