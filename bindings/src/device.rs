//! The Python package's view of [`cartfuse_fusion::device::Device`] (the one definition of
//! the device choice): parsing `device=` into a `ValueError`-ready error, the automatic
//! choice probed once per process, and the error of a device that cannot be opened.

use std::fmt;

use cartfuse_fusion::device::{Device, auto_device};

use crate::error::BackendError;

/// The device `name` picks (`None` or `"auto"`: [`automatic`]).
pub fn parse(name: Option<&str>) -> Result<Device, BackendError> {
    let Some(name) = name else {
        return Ok(automatic());
    };
    match Device::choose(name) {
        Ok((_, Some(_))) => Ok(automatic()),
        Ok((device, None)) => Ok(device),
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

/// The device `None` picks: a real GPU when CUDA or wgpu finds one, the native CPU
/// otherwise (a CPU-emulated Vulkan device such as lavapipe is not picked). Probed once per
/// process (a probe opens every adapter: 15-55 ms).
pub fn automatic() -> Device {
    static CHOICE: std::sync::OnceLock<Device> = std::sync::OnceLock::new();
    *CHOICE.get_or_init(|| auto_device().0)
}

/// The error of a device that cannot be opened.
pub fn unavailable(device: Device, why: impl fmt::Display) -> BackendError {
    BackendError::invalid(
        "device",
        format!("device {:?} is not available: {why}", device.name()),
    )
}
