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
    let module = std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|text| Some(format!(", NVIDIA driver {}", module_version(&text)?)))
        .unwrap_or_default();
    format!("{name} (DiscreteGpu, {api}{module})")
}

/// The kernel module's version from `/proc/driver/nvidia/version`, whose first line reads
/// `NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  ...` or, for the open
/// module, `NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  ...`.
fn module_version(text: &str) -> Option<&str> {
    let line = text.lines().next()?;
    let after = line.split("Kernel Module").nth(1)?;
    after
        .split_whitespace()
        .find(|word| word.starts_with(|c: char| c.is_ascii_digit()))
}

/// CUDA device 0's L2 cache in bytes, from the driver (`None` without one).
pub fn l2_cache_bytes() -> Option<u64> {
    use cudarc::driver::{result, sys::CUdevice_attribute};
    // SAFETY: only tries to load the driver library; `init` panics without it.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return None;
    }
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_module_version_is_read_from_both_module_lines() {
        let proprietary =
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  Release Build";
        let open =
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build";
        assert_eq!(super::module_version(proprietary), Some("570.124.06"));
        assert_eq!(super::module_version(open), Some("580.159.04"));
        assert_eq!(super::module_version("no such line"), None);
    }
}
