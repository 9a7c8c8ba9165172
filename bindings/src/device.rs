//! The Python package's view of [`cartfuse_fusion::device::Device`] (the one definition of
//! the device choice): parsing `device=` into a `ValueError`-ready error, the automatic
//! choice probed once per process, and the error of a device that cannot be opened.

use std::fmt;

use cartfuse_fusion::device::{Device, FoundDevice, find_device};

use crate::error::BackendError;

/// The device `name` picks for `num_envs` envs (`None` or `"auto"`: [`automatic`]), and
/// why when it was chosen automatically.
pub fn parse(
    name: Option<&str>,
    num_envs: usize,
) -> Result<(Device, Option<String>), BackendError> {
    let automatic = || {
        let (device, why) = automatic().for_envs(Some(num_envs));
        Ok((device, Some(why)))
    };
    let Some(name) = name else {
        return automatic();
    };
    if name.trim().eq_ignore_ascii_case("auto") {
        return automatic();
    }
    match Device::choose(name, Some(num_envs)) {
        Ok((device, _)) => Ok((device, None)),
        Err(_) => {
            let names: Vec<String> = Device::CHOICES
                .iter()
                .map(|(n, _)| format!("{n:?}"))
                .collect();
            Err(BackendError::invalid(
                "device",
                format!(
                    "unknown device {name:?}: expected one of {} or None (automatic)",
                    names.join(", ")
                ),
            ))
        }
    }
}

/// What `None` finds: a real GPU when CUDA or wgpu finds one, the native CPU otherwise (a
/// CPU-emulated Vulkan device such as lavapipe is not picked); each env then takes the GPU
/// only from its crossover on ([`FoundDevice::for_envs`]). Probed once per process (a
/// probe opens every adapter: 15-55 ms).
pub fn automatic() -> &'static FoundDevice {
    static FOUND: std::sync::OnceLock<FoundDevice> = std::sync::OnceLock::new();
    FOUND.get_or_init(find_device)
}

/// The error of a device that cannot be opened.
pub fn unavailable(device: Device, why: impl fmt::Display) -> BackendError {
    BackendError::invalid(
        "device",
        format!("device {:?} is not available: {why}", device.name()),
    )
}
