//! The CubeCL backend (wgpu and CUDA, behind the `wgpu` and `cuda` features): kernel
//! emission from the lowered IR, device opening, buffers and launches.
//!
//! - [`kernel`]: the one generated kernel, an interpreter of a comptime launch program.
//! - [`instr`]: one instruction of it in CubeCL; [`ops`]: its math, whose float functions
//!   are [`math`]'s, the CPU runtime's algorithms.
//! - [`rng`]: the `#[cube]` twin of the host Threefry.
//! - [`CubeLaunches`]: a plan's launches prepared for a device, and one run of them.
//! - [`backend`]: [`Cube`], the [`Backend`](crate::exec::Backend) of every CubeCL runtime.
//! - [`device`]: opening a wgpu or CUDA device with a clear error when there is none.
//! - [`cuda_sources`]: the CUDA C++ of every kernel compiled on wgpu, for checking without
//!   a CUDA device (`CARTFUSE_CUDA_SOURCES`).
//! - [`driver_copy`]: the driver's own device-to-device copy, timed (the roofline's reference).
//! - [`buffers`]: typed host <-> device copies; [`staging`]: the host memory writes go out
//!   from, allocated once.
//! - [`runtime_dir`]: a valid `XDG_RUNTIME_DIR` before any Vulkan call.

pub mod backend;
pub mod buffers;
pub mod cuda_sources;
pub mod device;
pub mod driver_copy;
pub mod instr;
pub mod kernel;
mod launches;
pub mod math;
pub mod ops;
pub mod rng;
pub mod runtime_dir;
pub mod staging;

pub use backend::{Cube, is_cpu_emulated};
pub use launches::{CubeLaunches, RowReduction};
