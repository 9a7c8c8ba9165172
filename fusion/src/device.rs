//! Which device a command runs on: the one definition of the choice the CLI, the Python
//! package and the harness offer (`auto`, `cpu`, `wgpu`, `cuda`), what `auto` picks, and why
//! a device could not be opened. Opening CubeCL devices lives in `cube::device` (GPU
//! features only).

/// A compute runtime cartfuse can run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuntimeKind {
    /// wgpu: Vulkan, Metal or WebGPU (Mesa lavapipe on machines without a GPU).
    Wgpu,
    /// NVIDIA CUDA, behind the `cuda` feature.
    Cuda,
}

impl RuntimeKind {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            RuntimeKind::Wgpu => "wgpu",
            RuntimeKind::Cuda => "cuda",
        }
    }
}

impl std::fmt::Display for RuntimeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a command runs: the native CPU runtime or a CubeCL runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Device {
    /// The native CPU runtime ([`crate::cpu::Cpu`]).
    Cpu,
    /// A CubeCL runtime ([`crate::cube::Cube`]).
    Cube(RuntimeKind),
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cube(kind) => kind.fmt(f),
        }
    }
}

/// The device a user gets when they name none, and why: a real GPU when CUDA (with the
/// feature) or wgpu finds one, the native CPU runtime otherwise. A wgpu adapter that is a
/// CPU emulation (Mesa's lavapipe) is not picked: the native runtime runs the same plans
/// without a Vulkan driver in between. It stays available as `--device wgpu`.
pub fn auto_device() -> (Device, String) {
    #[cfg(feature = "cuda")]
    if let Ok(opened) = crate::cube::device::cuda_client() {
        return (
            Device::Cube(RuntimeKind::Cuda),
            format!("{} found", opened.description),
        );
    }
    #[cfg(feature = "wgpu")]
    {
        let adapters = crate::cube::device::wgpu_adapters();
        if let Some(gpu) = adapters.iter().find(|(_, is_gpu)| *is_gpu) {
            return (
                Device::Cube(RuntimeKind::Wgpu),
                format!("wgpu adapter {} is a GPU", gpu.0),
            );
        }
        if !adapters.is_empty() {
            let names: Vec<&str> = adapters.iter().map(|(name, _)| name.as_str()).collect();
            return (
                Device::Cpu,
                format!(
                    "no GPU: wgpu's only adapters ({}) emulate one on the CPU; \
                     `--device wgpu` uses them anyway",
                    names.join(", ")
                ),
            );
        }
    }
    (Device::Cpu, "no GPU adapter found".into())
}

/// Why no device could be opened.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
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
    /// The runtime failed while opening its device.
    #[error("could not open a {runtime} device: {reason}")]
    OpenFailed {
        /// Runtime name.
        runtime: &'static str,
        /// What the runtime said.
        reason: String,
    },
}

/// Runs `$body` with `$backend` bound to the [`Backend`](crate::exec::Backend) of
/// [`Device`] `$device` (of type `$B`): [`Cpu`](crate::cpu::Cpu) with the default
/// options, or a [`Cube`](crate::cube::Cube) over the runtime [`dispatch_runtime!`]
/// opens. Errors (no device, runtime not compiled) convert with `From`.
#[macro_export]
macro_rules! dispatch_backend {
    ($device:expr, |$backend:ident : $B:ident| $body:expr) => {{
        match $device {
            $crate::device::Device::Cpu => {
                #[allow(unused)]
                type $B = $crate::cpu::Cpu;
                match $crate::cpu::Cpu::new($crate::cpu::CpuOptions::default()) {
                    Ok($backend) => $body,
                    Err(error) => Err(error.into()),
                }
            }
            $crate::device::Device::Cube(kind) => {
                $crate::dispatch_runtime!(kind, |opened: R| {
                    #[allow(unused)]
                    type $B = $crate::cube::Cube<R>;
                    let $backend = $crate::cube::Cube::new(opened.client, opened.description);
                    $body
                })
            }
        }
    }};
}
