//! Opening a CubeCL device with a clear error when there is none.
//!
//! cubecl panics deep inside wgpu when no adapter exists; [`wgpu_client`] looks for one
//! first and turns its absence into [`DeviceError::NoVulkanAdapter`], whose message says how
//! to install Mesa's lavapipe.

use cubecl::prelude::*;

use crate::exec::DeviceError;

/// The native API's adapters: name, and whether it is a real (discrete, integrated or
/// virtual) GPU rather than a CPU emulation.
#[cfg(feature = "wgpu")]
pub fn wgpu_adapters() -> Vec<(String, bool)> {
    native_adapters()
        .0
        .iter()
        .map(|adapter| {
            let info = adapter.get_info();
            let gpu = matches!(
                info.device_type,
                wgpu::DeviceType::DiscreteGpu
                    | wgpu::DeviceType::IntegratedGpu
                    | wgpu::DeviceType::VirtualGpu
            );
            (info.name, gpu)
        })
        .collect()
}

/// A device opened for a runtime, with the adapter's description.
pub struct OpenedDevice<R: Runtime> {
    /// The compute client every launch goes to.
    pub client: ComputeClient<R>,
    /// The device the client runs on.
    pub device: R::Device,
    /// Human-readable adapter description (name, driver, type).
    pub description: String,
}

impl<R: Runtime> Clone for OpenedDevice<R> {
    fn clone(&self) -> Self {
        Self {
            client: self.client.clone(),
            device: self.device.clone(),
            description: self.description.clone(),
        }
    }
}

/// Opens the default wgpu device, failing cleanly when the machine has no adapter.
#[cfg(feature = "wgpu")]
pub fn wgpu_client() -> Result<OpenedDevice<cubecl::wgpu::WgpuRuntime>, DeviceError> {
    let info = default_adapter()?.get_info();
    let description = format!(
        "{} ({:?}, {} {})",
        info.name, info.device_type, info.driver, info.driver_info
    );
    super::cuda_sources::write_from_environment()?;
    let device = cubecl::wgpu::WgpuDevice::DefaultDevice;
    let client = open_catching_panics("wgpu", || {
        <cubecl::wgpu::WgpuRuntime as Runtime>::client(&device)
    })?;
    Ok(OpenedDevice {
        client,
        device,
        description,
    })
}

/// The adapter cubecl-wgpu opens for its default device, as its `request_adapter` chooses
/// it: the one `CUBECL_WGPU_DEFAULT_DEVICE` names, else wgpu's first choice for high
/// performance (discrete GPUs first, CPU emulations such as Mesa's lavapipe last). The
/// device's description, its CPU-emulation checks and the driver's copy are then about the
/// device the kernels run on, also where lavapipe is listed before an NVIDIA GPU.
#[cfg(feature = "wgpu")]
pub(crate) fn default_adapter() -> Result<wgpu::Adapter, DeviceError> {
    let (instance, backend, api) = native_instance();
    let adapters = cubecl::future::block_on(instance.enumerate_adapters(backend.into()));
    let types: Vec<_> = adapters
        .iter()
        .map(|adapter| adapter.get_info().device_type)
        .collect();
    let named = std::env::var("CUBECL_WGPU_DEFAULT_DEVICE")
        .ok()
        .and_then(|name| overridden_adapter(&name, &types));
    if let Some(index) = named {
        return Ok(adapters[index].clone());
    }
    let preferred =
        cubecl::future::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: None,
        }));
    preferred
        .ok()
        .or_else(|| adapters.into_iter().next())
        .ok_or(DeviceError::NoVulkanAdapter { api })
}

/// The index in `types` (the adapters' types in enumeration order) of the adapter that
/// `CUBECL_WGPU_DEFAULT_DEVICE=name` makes cubecl-wgpu open, by its rules
/// (`select_from_adapter_list`): `DiscreteGpu(N)`, `IntegratedGpu(N)`, `VirtualGpu(N)` or
/// `Cpu` is the N-th (0-th) adapter of that type, or else the N-th of type `Other`; `None`
/// where the name is not one of those (cubecl then opens its default) or nothing matches
/// (cubecl then fails to open the device).
#[cfg(feature = "wgpu")]
fn overridden_adapter(name: &str, types: &[wgpu::DeviceType]) -> Option<usize> {
    use wgpu::DeviceType;
    let numbered = |prefix: &str| {
        name.strip_prefix(prefix)?
            .strip_prefix('(')?
            .strip_suffix(')')?
            .parse::<usize>()
            .ok()
    };
    let (wanted, nth) = [
        ("DiscreteGpu", DeviceType::DiscreteGpu),
        ("IntegratedGpu", DeviceType::IntegratedGpu),
        ("VirtualGpu", DeviceType::VirtualGpu),
    ]
    .into_iter()
    .find_map(|(prefix, kind)| numbered(prefix).map(|nth| (kind, nth)))
    .or((name == "Cpu").then_some((DeviceType::Cpu, 0)))?;
    let nth_of = |kind: DeviceType| {
        (0..types.len())
            .filter(|&index| types[index] == kind)
            .nth(nth)
    };
    nth_of(wanted).or_else(|| nth_of(DeviceType::Other))
}

/// The adapters of the native graphics API (Vulkan; Metal on macOS), and its name.
#[cfg(feature = "wgpu")]
pub(crate) fn native_adapters() -> (Vec<wgpu::Adapter>, &'static str) {
    let (instance, backend, api) = native_instance();
    let adapters = cubecl::future::block_on(instance.enumerate_adapters(backend.into()));
    (adapters, api)
}

/// An instance of the native graphics API alone (as cubecl-wgpu opens one), the API and its
/// name.
#[cfg(feature = "wgpu")]
fn native_instance() -> (wgpu::Instance, wgpu::Backend, &'static str) {
    let (backend, api) = if cfg!(target_os = "macos") {
        (wgpu::Backend::Metal, "Metal")
    } else {
        (wgpu::Backend::Vulkan, "Vulkan")
    };
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: backend.into(),
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    (instance, backend, api)
}

/// Opens CUDA device 0, failing cleanly when there is no driver or GPU.
///
/// The driver is loaded at run time (one build serves machines with and without NVIDIA, and
/// CUDA 12 drivers as well as 13), so what CUDA needs is checked first, without touching
/// anything that panics when it is missing: the driver library, a device, NVRTC (cubecl
/// compiles its kernels with it) and the CUDA headers NVRTC includes.
#[cfg(feature = "cuda")]
pub fn cuda_client() -> Result<OpenedDevice<cubecl::cuda::CudaRuntime>, DeviceError> {
    cuda_available()?;
    let device = cubecl::cuda::CudaDevice::new(0);
    let client = open_catching_panics("cuda", || {
        <cubecl::cuda::CudaRuntime as Runtime>::client(&device)
    })?;
    Ok(OpenedDevice {
        client,
        description: format!("CUDA device {}", device.index),
        device,
    })
}

/// Whether CUDA can run here, or what is missing ([`DeviceError::NoCuda`]).
#[cfg(feature = "cuda")]
pub fn cuda_available() -> Result<(), DeviceError> {
    let missing = |reason: &str| DeviceError::NoCuda {
        reason: reason.into(),
    };
    // SAFETY: only tries to load the library (dlopen of each candidate name).
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(missing(
            "no NVIDIA driver (libcuda.so could not be loaded); install NVIDIA's driver, or \
             choose device=\"cpu\" or \"wgpu\"",
        ));
    }
    cudarc::driver::result::init().map_err(|error| DeviceError::NoCuda {
        reason: format!("the NVIDIA driver did not initialise ({error}): is a GPU present?"),
    })?;
    let count =
        cudarc::driver::result::device::get_count().map_err(|error| DeviceError::NoCuda {
            reason: format!("the driver could not count devices ({error})"),
        })?;
    if count < 1 {
        return Err(missing("the NVIDIA driver sees no CUDA device"));
    }
    // SAFETY: as above, for NVRTC.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        // cudarc opens it by name: libnvrtc.so, or libnvrtc.so.MAJOR of the bindings' CUDA.
        return Err(missing(
            "NVRTC, CUDA's runtime compiler, could not be loaded as libnvrtc.so (or \
             libnvrtc.so.12 with CUDA 12 bindings, the wheel's): install the CUDA toolkit (12 \
             or 13) and put its lib64 folder on LD_LIBRARY_PATH",
        ));
    }
    if cubecl::cuda::install::cuda_path().is_none() {
        return Err(missing(
            "the CUDA headers were not found (looked in $CUDA_PATH, /usr/local/cuda, /opt/cuda); \
             install the CUDA toolkit or set CUDA_PATH",
        ));
    }
    Ok(())
}

/// Runs a runtime's client constructor, turning its panics (cubecl's way of failing there)
/// into [`DeviceError::OpenFailed`].
fn open_catching_panics<T>(
    runtime: &'static str,
    open: impl FnOnce() -> T,
) -> Result<T, DeviceError> {
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    // The closure only builds a client; nothing it touches is observed after a panic.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(open));
    std::panic::set_hook(previous_hook);
    result.map_err(|payload| DeviceError::OpenFailed {
        runtime,
        reason: payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into()),
    })
}

/// Opens a client for any runtime, turning the runtime's panic on a missing device into an
/// error ([`DeviceError::NoVulkanAdapter`] when wgpu found no adapter).
pub fn open_client<R: Runtime>(device: &R::Device) -> Result<ComputeClient<R>, DeviceError> {
    let device = device.clone();
    open_catching_panics("cubecl", move || R::client(&device)).map_err(|error| match error {
        DeviceError::OpenFailed { reason, .. } if reason.contains("No possible adapter") => {
            DeviceError::NoVulkanAdapter { api: "Vulkan" }
        }
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use cubecl::device_handle::thread_choice::parse;

    /// What `CARTFUSE_DEVICE_THREAD` forces in this process, if anything.
    #[cfg(any(feature = "wgpu", feature = "cuda"))]
    fn forced() -> Option<bool> {
        use cubecl::device_handle::thread_choice::VARIABLE;
        std::env::var(VARIABLE).ok().as_deref().and_then(parse)
    }

    #[test]
    fn the_device_thread_variable_names_caller_and_server() {
        assert_eq!(parse(" Caller "), Some(true));
        assert_eq!(parse("server"), Some(false));
        assert_eq!(parse("main"), None);
        assert_eq!(parse(""), None);
    }

    /// Unless told otherwise, wgpu's server runs on the calling thread (measured faster on
    /// lavapipe) and CUDA's on its own device thread (upstream's, until measured).
    #[cfg(any(feature = "wgpu", feature = "cuda"))]
    #[test]
    fn wgpu_runs_on_the_calling_thread_and_cuda_on_its_own_unless_told_otherwise() {
        use cubecl::device_handle::thread_choice::on_calling_thread;
        #[cfg(feature = "wgpu")]
        assert_eq!(
            on_calling_thread::<<cubecl::wgpu::WgpuRuntime as cubecl::Runtime>::Server>(),
            forced().unwrap_or(true)
        );
        #[cfg(feature = "cuda")]
        assert_eq!(
            on_calling_thread::<<cubecl::cuda::CudaRuntime as cubecl::Runtime>::Server>(),
            forced().unwrap_or(false)
        );
    }

    #[cfg(feature = "wgpu")]
    #[test]
    fn cubecl_wgpu_default_device_names_the_nth_adapter_of_its_type() {
        use super::overridden_adapter;
        use wgpu::DeviceType::{Cpu, DiscreteGpu, IntegratedGpu, Other};
        let types = [Cpu, DiscreteGpu, Other, DiscreteGpu, IntegratedGpu];
        assert_eq!(overridden_adapter("DiscreteGpu(0)", &types), Some(1));
        assert_eq!(overridden_adapter("DiscreteGpu(1)", &types), Some(3));
        assert_eq!(overridden_adapter("IntegratedGpu(0)", &types), Some(4));
        assert_eq!(overridden_adapter("Cpu", &types), Some(0));
        // No third discrete GPU: cubecl falls back to the adapters of type `Other`.
        assert_eq!(overridden_adapter("DiscreteGpu(2)", &types), None);
        assert_eq!(overridden_adapter("DiscreteGpu(0)", &[Other, Cpu]), Some(0));
        assert_eq!(overridden_adapter("VirtualGpu(0)", &types), Some(2));
    }

    #[cfg(feature = "wgpu")]
    #[test]
    fn a_name_cubecl_does_not_parse_leaves_its_default() {
        use super::overridden_adapter;
        use wgpu::DeviceType::{Cpu, DiscreteGpu};
        let types = [Cpu, DiscreteGpu];
        for name in [
            "",
            "DiscreteGpu",
            "DiscreteGpu(x)",
            "discretegpu(0)",
            "Cpu(0)",
            "BestAvailable",
        ] {
            assert_eq!(overridden_adapter(name, &types), None, "{name:?}");
        }
    }
}
