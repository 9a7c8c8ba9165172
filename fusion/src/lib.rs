//! Brief overview: cartfuse-fusion is the CubeCL layer of cartfuse. The principal type is
//! [`LaunchLedger`](launch::LaunchLedger), the single point every kernel launch goes through,
//! which counts launches, elements and bytes moved.
//!
//! - [`launch`]: launch accounting and elementwise launch shapes (spread over the
//!   65535-cube limit of a dispatch dimension).
//! - [`rng`]: the counter-based Threefry-2x32 generator, bit-identical on host and device.
//! - [`device`]: opening a wgpu or CUDA device with a clear error when there is none.
//! - [`buffers`]: typed host <-> device copies.
//! - [`backend`]: the [`Backend`](backend::Backend) trait every runtime implements, so envs
//!   and tests are written once.
//! - [`runtime_dir`]: a valid `XDG_RUNTIME_DIR` before any Vulkan call (CLI and bindings).
//! - [`switches`]: environment switches that turn an optimisation off, to measure it.
//! - [`cpu`]: the native CPU runtime ([`CpuExecutor`](cpu::CpuExecutor)), SIMD at run time.
//!
//! Nothing in this crate knows about CartPole.

pub mod backend;
pub mod buffers;
pub mod codegen;
pub mod cpu;
pub mod device;
pub mod exec;
pub mod graph;
pub mod interpret;
pub mod launch;
pub mod nn;
pub mod plan;
pub mod rng;
pub mod runtime_dir;
pub mod switches;

pub use cubecl;
