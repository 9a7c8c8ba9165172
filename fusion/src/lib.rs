//! cartfuse-fusion: elementwise op graphs, the plans that fuse them, and the runtimes that
//! run those plans, with every launch counted. Nothing in this crate knows an environment.
//!
//! The layers, each importing only the ones above it:
//!
//! - [`graph`]: the IR, a validated graph of typed elementwise ops over `n` lanes, and the
//!   host values bound to it.
//! - [`plan`]: fusion strategies (eager, vertical, horizontal, fused, `fused-xK`) and XLA's
//!   GPU fusion pipeline, partitioning a graph into launches.
//! - [`lir`]: the lowered launch IR and every backend-neutral decision on it.
//! - [`exec`]: the [`Backend`](exec::Backend) trait, the launch ledger, errors.
//! - `cube` (features `wgpu`, `cuda`): the CubeCL backend.
//! - [`cpu`]: the native CPU backend, interpreted ([`cpu::interp`]) or compiled to C
//!   ([`cpu::native`]).
//! - [`interpret`]: the independent `f32`/`f64` oracle every backend is tested against.
//!
//! Beside them: [`rng`] (the counter-based Threefry generator, bit-identical on host and
//! kernels), [`device`] (the device choice) and
//! [`switches`] (environment switches that turn an optimisation off, to measure it).

pub mod cpu;
#[cfg(feature = "cube")]
pub mod cube;
pub mod device;
pub mod exec;
pub mod graph;
pub mod interpret;
pub mod lir;
pub mod plan;
pub mod rng;
pub mod switches;

#[cfg(feature = "cube")]
pub use cubecl;
