//! What the driver says about CUDA device 0, for the report's device sections: its name,
//! the driver's API version and the kernel module's version, and its L2 size (cubecl
//! names the device only by index). Built with the `cuda` feature.

/// `"NAME (DiscreteGpu, CUDA driver API 12.8, NVIDIA driver 570.124.06)"`: the format of the
/// wgpu descriptions, from the driver (cubecl names only the index). Call after the runtime
/// has initialised the driver.
pub fn description(index: usize) -> String {
    use cudarc::driver::result;
    let name = result::device::get(index as i32)
        .and_then(result::device::get_name)
        .unwrap_or_else(|_| format!("CUDA device {index}"));
    let mut version = 0;
    // SAFETY: writes one int; the driver was initialised when the client opened.
    let api = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) }
        .result()
        .map_or("CUDA driver API unknown".into(), |()| {
            format!("CUDA driver API {}.{}", version / 1000, version % 1000 / 10)
        });
    // The kernel module's version line: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  ...".
    let module = std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|text| {
            let line = text.lines().next()?.to_string();
            let after = line
                .split("Kernel Module")
                .nth(1)?
                .split_whitespace()
                .next()?;
            Some(format!(", NVIDIA driver {after}"))
        })
        .unwrap_or_default();
    format!("{name} (DiscreteGpu, {api}{module})")
}

/// CUDA device 0's L2 cache in bytes, from the driver (`None` without one).
pub fn l2_cache_bytes() -> Option<u64> {
    use cudarc::driver::{result, sys::CUdevice_attribute};
    result::init().ok()?;
    let device = result::device::get(0).ok()?;
    // SAFETY: `device` came from `result::device::get`.
    let bytes = unsafe {
        result::device::get_attribute(
            device,
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
        )
    }
    .ok()?;
    u64::try_from(bytes).ok()
}
