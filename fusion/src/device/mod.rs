//! Which device a command runs on: the one definition of the choice the CLI, the Python
//! package and the harness offer (`auto`, `cpu`, `wgpu`, `cuda`) and what `auto` picks: a
//! GPU when one is found and the batch is large enough for it to win, the native CPU
//! otherwise ([`FoundDevice::for_envs`], with the crossovers kept in [`crossovers`]).
//! Opening CubeCL devices lives in `cube::device` (GPU features only); the
//! [`dispatch_runtime!`](crate::dispatch_runtime) and
//! [`dispatch_backend!`](crate::dispatch_backend) macros keep the `cfg` blocks that pick a
//! runtime in one place.

pub mod crossovers;
mod environment;

pub use environment::{EnvironmentError, check_environment};

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
            "a real GPU (CUDA with the feature, or wgpu) when one is found and the batch is as \
             large as its measured crossover, else the native CPU",
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

    /// The device `name` chooses for `num_envs` envs (`auto`: the one [`auto_device`]
    /// finds for them, with why; `None`: any batch).
    pub fn choose(
        name: &str,
        num_envs: Option<usize>,
    ) -> Result<(Device, Option<String>), DeviceError> {
        match name.trim().to_ascii_lowercase().as_str() {
            "auto" => {
                let (device, why) = auto_device(num_envs);
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

/// The batch from which `auto` gives a found GPU the work when no crossover was measured on
/// this machine: 16,384 envs, from where the device-resident `fused` step of the first GPU
/// runs (an H100 and an H200, each against its own 16 CPU cores, 2026-11-27) beat the CPU.
/// A stand-in, not a measurement of this machine: `cartfuse crossover` measures it.
pub const UNMEASURED_MIN_ENVS: usize = 16_384;

/// The variable that sets the batch from which `auto` picks a found GPU (any `usize`).
pub const AUTO_MIN_ENVS: &str = "CARTFUSE_AUTO_MIN_ENVS";

/// What `auto` found before it looks at the batch: a GPU (and why), or the CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundDevice {
    /// The device found.
    pub device: Device,
    /// Why, as a sentence.
    pub why: String,
    /// The found GPU's adapter name (its [`crossovers::key`]).
    adapter: String,
}

impl FoundDevice {
    /// The device for a batch of `num_envs` envs (any batch when `None`): a found GPU only
    /// from the batch where it beats the CPU (the crossover measured on this machine,
    /// [`AUTO_MIN_ENVS`], or [`UNMEASURED_MIN_ENVS`]), with a sentence saying why.
    pub fn for_envs(&self, num_envs: Option<usize>) -> (Device, String) {
        let (Device::Cube(kind), Some(n)) = (self.device, num_envs) else {
            return (self.device, self.why.clone());
        };
        self.weighed(n, min_envs(kind, &self.adapter))
    }

    /// The found GPU for `n` envs when it beats the CPU from `min` envs on (`source`: where
    /// that number comes from), else the CPU.
    fn weighed(&self, n: usize, (min, source): (usize, String)) -> (Device, String) {
        if n < min {
            let why = format!(
                "{}, but {n} envs are fewer than the {min} from which it beats the CPU \
                 ({source}): the native CPU steps them faster",
                self.why
            );
            return (Device::Cpu, why);
        }
        let why = format!(
            "{}; {n} envs reach the {min} from which it beats the CPU ({source})",
            self.why
        );
        (self.device, why)
    }
}

/// The batch from which a `kind` device with adapter `adapter` beats the CPU, and where
/// that number comes from.
fn min_envs(kind: RuntimeKind, adapter: &str) -> (usize, String) {
    if let Some(min) = (std::env::var(AUTO_MIN_ENVS).ok()).and_then(|v| v.trim().parse().ok()) {
        return (min, format!("set by {AUTO_MIN_ENVS}"));
    }
    match crossovers::kept(&crossovers::key(kind, adapter)) {
        Some(kept) => (
            kept.min_envs(),
            format!(
                "its host step against the CPU's under {}, measured by `cartfuse crossover` \
                 on this machine",
                kept.plan
            ),
        ),
        None => (
            UNMEASURED_MIN_ENVS,
            format!(
                "the first GPU runs' crossover: none was measured on this machine; \
                 `cartfuse --device {kind} crossover` measures it"
            ),
        ),
    }
}

/// Looks for a GPU: CUDA (with the feature) or a wgpu adapter that is a real GPU; else the
/// native CPU. A wgpu adapter that is a CPU emulation (Mesa's lavapipe) is not picked: the
/// native runtime runs the same plans without a Vulkan driver in between. It stays
/// available as `--device wgpu`.
pub fn find_device() -> FoundDevice {
    let found = |device, why: String, adapter: &str| FoundDevice {
        device,
        why,
        adapter: adapter.to_owned(),
    };
    #[cfg(feature = "cuda")]
    if let Ok(opened) = crate::cube::device::cuda_client() {
        let why = format!("{} found", opened.description);
        return found(Device::Cube(RuntimeKind::Cuda), why, &opened.description);
    }
    #[cfg(feature = "wgpu")]
    {
        let adapters = crate::cube::device::wgpu_adapters();
        if let Some(gpu) = adapters.iter().find(|(_, is_gpu)| *is_gpu) {
            let why = format!("wgpu adapter {} is a GPU", gpu.0);
            return found(Device::Cube(RuntimeKind::Wgpu), why, &gpu.0);
        }
        if !adapters.is_empty() {
            let names: Vec<&str> = adapters.iter().map(|(name, _)| name.as_str()).collect();
            let why = format!(
                "no GPU: wgpu's only adapters ({}) emulate one on the CPU; \
                 `--device wgpu` uses them anyway",
                names.join(", ")
            );
            return found(Device::Cpu, why, "");
        }
    }
    found(Device::Cpu, "no GPU adapter found".into(), "")
}

/// The device a user gets for `num_envs` envs when they name none, and why
/// ([`find_device`], then [`FoundDevice::for_envs`]).
pub fn auto_device(num_envs: Option<usize>) -> (Device, String) {
    find_device().for_envs(num_envs)
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
                    let $backend = $crate::cube::Cube::new(&opened);
                    $body
                })
            }
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_gives_a_found_gpu_only_the_batches_it_wins() {
        let gpu = FoundDevice {
            device: Device::Cube(RuntimeKind::Cuda),
            why: "CUDA device 0 found".into(),
            adapter: "CUDA device 0".into(),
        };
        let (device, why) = gpu.weighed(4096, (16_384, "measured".into()));
        assert_eq!(device, Device::Cpu);
        assert_eq!(
            why,
            "CUDA device 0 found, but 4096 envs are fewer than the 16384 from which it beats \
             the CPU (measured): the native CPU steps them faster"
        );
        let (device, why) = gpu.weighed(16_384, (16_384, "measured".into()));
        assert_eq!(device, Device::Cube(RuntimeKind::Cuda));
        assert!(why.ends_with("16384 envs reach the 16384 from which it beats the CPU (measured)"));
        // Without a batch (a whole report), the found GPU; without a GPU, the CPU always.
        assert_eq!(gpu.for_envs(None).0, gpu.device);
        let cpu = FoundDevice {
            device: Device::Cpu,
            why: "no GPU adapter found".into(),
            adapter: String::new(),
        };
        assert_eq!(cpu.for_envs(Some(1 << 20)), (Device::Cpu, cpu.why.clone()));
    }
}
