//! [`ExecError`]: why a plan cannot run on a runtime (shared by the device and CPU
//! executors; a backend's own errors sit behind [`ExecError::Backend`]).

use crate::graph::BindError;

/// Why a plan cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// Inputs or params do not fit the graph.
    #[error(transparent)]
    Bind(#[from] BindError),
    /// A name that is not an input, param or output of the graph.
    #[error("the graph has no {kind} called `{name}`")]
    UnknownName {
        /// Input, param or output.
        kind: &'static str,
        /// The name.
        name: String,
    },
    /// A buffer would exceed the device's largest storage binding.
    #[error(
        "a buffer of {bytes} bytes exceeds the device's largest storage buffer ({max} bytes); use fewer lanes"
    )]
    TooLarge {
        /// Requested bytes.
        bytes: u64,
        /// Device limit.
        max: u64,
    },
    /// A device read failed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A plan and graph combination the runtime cannot run.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A kernel would run more loop iterations than the device executes correctly
    /// (lavapipe ends every loop of a shader after 65,535 iterations in all).
    #[error(
        "kernel `{kernel}` would run {iterations} loop iterations a thread, over this device's \
         limit of {limit} (lavapipe: Mesa's LP_MAX_TGSI_LOOP_ITERATIONS; past it every loop \
         exits early and the results are silently wrong){}",
        most_steps.map_or(String::new(), |k| format!("; use fused-x{k} or fewer steps per launch"))
    )]
    TooManyLoopIterations {
        /// Ledger name of the kernel.
        kernel: String,
        /// Its loop iterations per thread (an upper bound).
        iterations: u64,
        /// The device's limit.
        limit: u64,
        /// The most steps per launch that fit, for a multi-step kernel.
        most_steps: Option<u32>,
    },
    /// A launch would bind more storage buffers than the device allows (a plan built with
    /// options other than [`PlanOptions::for_device`](crate::plan::PlanOptions::for_device)).
    #[error(
        "launch `{launch}` binds {bindings} storage buffers, over this device's limit of \
         {limit}; build the plan with PlanOptions::for_device"
    )]
    TooManyBindings {
        /// Ledger name of the launch.
        launch: String,
        /// Buffers it binds, params included.
        bindings: usize,
        /// The device's limit (cubecl's, less its own metadata buffer).
        limit: usize,
    },
    /// What one backend could not do, in its own words (the native CPU: a SIMD level the
    /// CPU lacks, a compiled launch that did not build): the executor names no backend's
    /// types, each backend converts its own errors into this one variant.
    #[error(transparent)]
    Backend(Box<dyn std::error::Error + Send + Sync>),
}

impl ExecError {
    /// `error`, a backend's own, as an [`ExecError::Backend`].
    pub fn backend(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Backend(Box::new(error))
    }
}

/// A device read failed.
#[derive(Debug, thiserror::Error)]
#[error("reading a device buffer failed: {0}")]
pub struct ReadError(pub String);

/// Why no device could be opened.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// A device name that is not one of [`Device::CHOICES`](crate::device::Device::CHOICES).
    #[error("unknown device {0:?}: expected one of \"auto\", \"cpu\", \"wgpu\" or \"cuda\"")]
    UnknownName(String),
    /// wgpu found no adapter for its native graphics API.
    #[error(
        "no {api} adapter found. On a machine without a GPU install Mesa's software Vulkan \
         driver (Debian/Ubuntu: `sudo apt-get install mesa-vulkan-drivers libvulkan1`, then \
         check with `vulkaninfo --summary`), or choose another device with `--device`"
    )]
    NoVulkanAdapter {
        /// The graphics API that was searched (Vulkan, Metal).
        api: &'static str,
    },
    /// The binary was built without the runtime's feature.
    #[error(
        "cartfuse was built without the `{feature}` feature; rebuild with `--features {feature}`"
    )]
    RuntimeNotCompiled {
        /// The cargo feature that enables the runtime.
        feature: &'static str,
    },
    /// CUDA cannot run here: no NVIDIA driver, no device, or no runtime compiler.
    #[error("CUDA is not available on this machine: {reason}")]
    NoCuda {
        /// What is missing, and what to install.
        reason: String,
    },
    /// `CARTFUSE_CUDA_SOURCES` is set but its sources cannot be written
    /// (`crate::cube::cuda_sources`).
    #[error("{variable}={}: {reason}", directory.display())]
    CudaSources {
        /// The environment variable.
        variable: &'static str,
        /// The directory the variable names.
        directory: std::path::PathBuf,
        /// Why nothing can be written there.
        reason: String,
    },
    /// The runtime failed while opening its device.
    #[error("could not open a {runtime} device: {reason}")]
    OpenFailed {
        /// Runtime name.
        runtime: &'static str,
        /// What the runtime said.
        reason: String,
    },
}
