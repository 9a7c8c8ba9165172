//! Which device a command runs on: the one definition of the choice the CLI, the Python
//! package and the harness offer (`auto`, `cpu`, `wgpu`, `cuda`) and what `auto` picks.
//! Opening CubeCL devices lives in `cube::device` (GPU features only); the
//! [`dispatch_runtime!`](crate::dispatch_runtime) and
//! [`dispatch_backend!`](crate::dispatch_backend) macros keep the `cfg` blocks that pick a
//! runtime in one place.

pub use crate::exec::DeviceError;

/// A compute runtime cartfuse can run on, named (`Display`) as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::Display, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum RuntimeKind {
    /// wgpu: Vulkan, Metal or WebGPU (Mesa lavapipe on machines without a GPU).
    Wgpu,
    /// NVIDIA CUDA, behind the `cuda` feature.
    Cuda,
}

impl RuntimeKind {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        self.into()
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

impl Device {
    /// Every name [`Device::choose`] accepts, with what it picks: the one list the CLI's
    /// `--device` and the Python package's `device=` offer.
    pub const CHOICES: [(&'static str, &'static str); 4] = [
        (
            "auto",
            "a real GPU (CUDA with the feature, or wgpu) when one is found, else the native CPU",
        ),
        ("cpu", "the native CPU runtime (SIMD, every core)"),
        (
            "wgpu",
            "wgpu: Vulkan / Metal (Mesa lavapipe on machines without a GPU)",
        ),
        (
            "cuda",
            "CUDA (needs the `cuda` feature and an NVIDIA driver)",
        ),
    ];

    /// The device `name` chooses (`auto`: the one [`auto_device`] finds, with why).
    pub fn choose(name: &str) -> Result<(Device, Option<String>), DeviceError> {
        match name.trim().to_ascii_lowercase().as_str() {
            "auto" => {
                let (device, why) = auto_device();
                Ok((device, Some(why)))
            }
            "cpu" => Ok((Device::Cpu, None)),
            "wgpu" => Ok((Device::Cube(RuntimeKind::Wgpu), None)),
            "cuda" => Ok((Device::Cube(RuntimeKind::Cuda), None)),
            _ => Err(DeviceError::UnknownName(name.to_owned())),
        }
    }

    /// The name used on the command line, in Python and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Cube(kind) => kind.name(),
        }
    }

    /// The devices this build can open (the CPU always; CubeCL runtimes with their feature).
    pub fn compiled() -> Vec<Device> {
        let mut devices = vec![Device::Cpu];
        if cfg!(feature = "cuda") {
            devices.push(Device::Cube(RuntimeKind::Cuda));
        }
        if cfg!(feature = "wgpu") {
            devices.push(Device::Cube(RuntimeKind::Wgpu));
        }
        devices
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
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

/// Runs `$body` with `$runtime` bound to the cubecl runtime of `$kind` and `$opened` to its
/// `OpenedDevice` (of `cube::device`), or evaluates to `Err(DeviceError)` (converted with `From`) when the
/// runtime is not compiled in or has no device. The only place that `cfg`s on runtimes.
///
/// The `cfg(feature = ...)` checks expand in the calling crate, which must therefore have
/// `wgpu` and `cuda` features forwarding to this crate's (as every cartfuse crate does).
#[macro_export]
macro_rules! dispatch_runtime {
    // One runtime: `$open` (of `cube::device`) where `$feature` is compiled in.
    (@open $feature:literal, $rt:ident::$Rt:ident, $open:ident, $opened:ident, $runtime:ident, $body:expr) => {{
        #[cfg(feature = $feature)]
        {
            #[allow(unused)]
            type $runtime = $crate::cubecl::$rt::$Rt;
            match $crate::cube::device::$open() {
                Ok($opened) => $body,
                Err(error) => Err(error.into()),
            }
        }
        #[cfg(not(feature = $feature))]
        {
            Err($crate::exec::DeviceError::RuntimeNotCompiled { feature: $feature }.into())
        }
    }};
    ($kind:expr, |$opened:ident : $runtime:ident| $body:expr) => {{
        match $kind {
            $crate::device::RuntimeKind::Wgpu => $crate::dispatch_runtime!(
                @open "wgpu", wgpu::WgpuRuntime, wgpu_client, $opened, $runtime, $body
            ),
            $crate::device::RuntimeKind::Cuda => $crate::dispatch_runtime!(
                @open "cuda", cuda::CudaRuntime, cuda_client, $opened, $runtime, $body
            ),
        }
    }};
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
