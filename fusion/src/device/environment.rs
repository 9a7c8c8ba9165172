//! [`check_environment`]: every `CARTFUSE_*` variable the runtime reads whose values are a
//! fixed set, checked before anything runs (the CLI and the Python package call it first),
//! so a value outside the accepted ones is an error naming them instead of being ignored.
//! It sits with the device choice, above every runtime whose variables it knows.

use crate::switches::{CPU_LAZY_SELECTS, IN_PLACE, SWITCH_VALUES, VECTORIZE, parse};

/// A `CARTFUSE_*` variable set to a value the runtime does not accept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name}={value:?} is not a value cartfuse accepts: expected {accepted} (or unset it)")]
pub struct EnvironmentError {
    /// The variable.
    pub name: &'static str,
    /// Its value.
    pub value: String,
    /// The values it accepts.
    pub accepted: &'static str,
}

/// Checks every `CARTFUSE_*` variable the runtime reads whose values are a fixed set
/// (`CARTFUSE_CPU_SIMD`, `CARTFUSE_CPU_ENGINE`, the switches, the numbers
/// `CARTFUSE_AUTO_MIN_ENVS`, `CARTFUSE_CPU_THREADS` and `CARTFUSE_CPU_SPIN_US`, and with a
/// device runtime `CARTFUSE_DEVICE_THREAD`, read by the patched cubecl-common in `vendor/`):
/// the first one set to anything else is an error naming the values it accepts.
/// `CARTFUSE_CC` (a command) and `CARTFUSE_KERNEL_CACHE` (a directory) take any value;
/// `CARTFUSE_CUDA_SOURCES` any directory, in a build with the `cuda` and `wgpu` features
/// (a build without a device runtime compiles no kernel and does not read it).
pub fn check_environment() -> Result<(), EnvironmentError> {
    type Accepts = fn(&str) -> bool;
    #[cfg_attr(not(feature = "cube"), allow(unused_mut))]
    let mut variables: Vec<(&'static str, &'static str, Accepts)> = vec![
        ("CARTFUSE_CPU_SIMD", "scalar, avx2 or avx512", |v| {
            v.parse::<crate::cpu::SimdLevel>().is_ok()
        }),
        ("CARTFUSE_CPU_ENGINE", "compiled or interpreted", |v| {
            v.parse::<crate::cpu::CpuEngine>().is_ok()
        }),
        (CPU_LAZY_SELECTS, SWITCH_VALUES, |v| parse(v).is_some()),
        (IN_PLACE, SWITCH_VALUES, |v| parse(v).is_some()),
        (VECTORIZE, SWITCH_VALUES, |v| parse(v).is_some()),
        (super::AUTO_MIN_ENVS, "a number of envs", |v| {
            v.trim().parse::<usize>().is_ok()
        }),
        (
            crate::cpu::spin_pool::THREADS_VARIABLE,
            "a number of threads, at least 1",
            |v| v.trim().parse::<usize>().is_ok_and(|t| t >= 1),
        ),
        (
            crate::cpu::spin_pool::SPIN_VARIABLE,
            "microseconds (0: park at once)",
            |v| v.trim().parse::<usize>().is_ok(),
        ),
    ];
    #[cfg(feature = "cube")]
    {
        use crate::cube::cuda_sources;
        // Any directory, but only where the sources can be written.
        variables.push((cuda_sources::VARIABLE, cuda_sources::NEEDS, |_| {
            cfg!(all(feature = "wgpu", feature = "cuda"))
        }));
        use cubecl::device_handle::thread_choice;
        variables.push((thread_choice::VARIABLE, "caller or server", |v| {
            thread_choice::parse(v).is_some()
        }));
    }
    for (name, accepted, accepts) in variables {
        if let Ok(value) = std::env::var(name)
            && !accepts(&value)
        {
            return Err(EnvironmentError {
                name,
                value,
                accepted,
            });
        }
    }
    Ok(())
}
