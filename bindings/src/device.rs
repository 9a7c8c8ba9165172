//! Which runtime the envs run on, by the names the Python API uses.

use std::fmt;

use cartfuse_fusion::device::{self as devices, RuntimeKind};

use crate::error::BackendError;

/// Which device the envs run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    /// cartfuse's native CPU runtime (SIMD on every core).
    Cpu,
    /// wgpu: Vulkan, Metal (Mesa lavapipe without a GPU).
    Wgpu,
    /// NVIDIA CUDA (built with the `cuda` feature).
    Cuda,
}

impl Device {
    /// Every device name the constructor accepts.
    pub const NAMES: [&'static str; 3] = ["cpu", "wgpu", "cuda"];

    /// Parses a device name.
    pub fn parse(name: &str) -> Result<Self, BackendError> {
        match name {
            "cpu" => Ok(Device::Cpu),
            "wgpu" => Ok(Device::Wgpu),
            "cuda" => Ok(Device::Cuda),
            other => Err(BackendError::invalid(
                "device",
                format!(
                    "unknown device {other:?}: expected one of \"cpu\", \"wgpu\", \"cuda\" or None (automatic)"
                ),
            )),
        }
    }

    /// The devices compiled into this build (the CPU always is).
    pub fn compiled() -> Vec<Device> {
        let mut devices = vec![Device::Cpu];
        if cfg!(feature = "cuda") {
            devices.push(Device::Cuda);
        }
        if cfg!(feature = "wgpu") {
            devices.push(Device::Wgpu);
        }
        devices
    }

    /// The device `None` picks: a real GPU when CUDA or wgpu finds one, the native CPU
    /// otherwise (a CPU-emulated Vulkan device such as lavapipe is not picked).
    /// Probed once per process (a probe opens every adapter: 15-55 ms).
    pub fn automatic() -> Device {
        static CHOICE: std::sync::OnceLock<Device> = std::sync::OnceLock::new();
        *CHOICE.get_or_init(|| match devices::auto_device().0 {
            devices::Device::Cpu => Device::Cpu,
            devices::Device::Cube(RuntimeKind::Wgpu) => Device::Wgpu,
            devices::Device::Cube(RuntimeKind::Cuda) => Device::Cuda,
        })
    }

    /// The name used by the Python API.
    pub fn name(self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Wgpu => "wgpu",
            Device::Cuda => "cuda",
        }
    }

    /// The error of a device that cannot be opened.
    pub fn unavailable(self, why: impl fmt::Display) -> BackendError {
        BackendError::invalid(
            "device",
            format!("device {:?} is not available: {why}", self.name()),
        )
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
