//! Environment switches that turn an optimisation off, to measure what it buys, and the
//! check of every `CARTFUSE_*` variable the runtime reads.
//!
//! Each switch is read when an executor is built: `on`, `1` or `true` keep it, `off`, `0` or
//! `false` turn it off, anything else is ignored with a warning; unset means on. The CLI and
//! the Python package call [`check_environment`] first, so a value outside the accepted
//! ones (`CARTFUSE_CPU_SIMD=avx9000`) is an error naming them instead of being ignored.
//!
//! - `CARTFUSE_CPU_LAZY_SELECTS`: reset branches run only in lanes that take them (CPU).
//! - `CARTFUSE_IN_PLACE`: carried state updated in place where a launch allows it (CPU's
//!   compiled engine and devices; see [`crate::lir::in_place`]).
//! - `CARTFUSE_VECTORIZE`: device kernels that allow it handle four lanes per thread
//!   (see [`crate::lir::vector`]).

/// Whether the switch `name` is on (see the [module docs](self)).
pub fn enabled(name: &str) -> bool {
    match std::env::var(name) {
        Ok(v) => parse(&v).unwrap_or_else(|| {
            tracing::warn!("ignoring {name}={v} (expected {SWITCH_VALUES})");
            true
        }),
        Err(_) => true,
    }
}

/// The values a switch accepts, as errors name them.
const SWITCH_VALUES: &str = "on, off, 1, 0, true or false";

fn parse(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "off" | "0" | "false" => Some(false),
        "on" | "1" | "true" => Some(true),
        _ => None,
    }
}

/// One of `E`'s names (its `Display`, any case), or an error naming them all:
/// "unknown {what} `{value}` (expected `a`, `b` or `c`)".
pub fn parse_choice<E: strum::IntoEnumIterator + std::fmt::Display>(
    value: &str,
    what: &str,
) -> Result<E, String> {
    let value = value.trim().to_ascii_lowercase();
    E::iter().find(|e| e.to_string() == value).ok_or_else(|| {
        let names: Vec<String> = E::iter().map(|e| format!("`{e}`")).collect();
        let (last, rest) = names.split_last().expect("an enum with variants");
        format!(
            "unknown {what} `{value}` (expected {} or {last})",
            rest.join(", ")
        )
    })
}

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
/// (`CARTFUSE_CPU_SIMD`, `CARTFUSE_CPU_ENGINE`, the switches, and the numbers
/// `CARTFUSE_AUTO_MIN_ENVS`, `CARTFUSE_CPU_THREADS` and `CARTFUSE_CPU_SPIN_US`): the first
/// one set to
/// anything else is an error naming the values it accepts. `CARTFUSE_CC` (a command) and
/// `CARTFUSE_KERNEL_CACHE` (a directory) take any value.
pub fn check_environment() -> Result<(), EnvironmentError> {
    type Accepts = fn(&str) -> bool;
    let variables: [(&'static str, &'static str, Accepts); 8] = [
        ("CARTFUSE_CPU_SIMD", "scalar, avx2 or avx512", |v| {
            v.parse::<crate::cpu::SimdLevel>().is_ok()
        }),
        ("CARTFUSE_CPU_ENGINE", "compiled or interpreted", |v| {
            v.parse::<crate::cpu::CpuEngine>().is_ok()
        }),
        (CPU_LAZY_SELECTS, SWITCH_VALUES, |v| parse(v).is_some()),
        (IN_PLACE, SWITCH_VALUES, |v| parse(v).is_some()),
        (VECTORIZE, SWITCH_VALUES, |v| parse(v).is_some()),
        (crate::device::AUTO_MIN_ENVS, "a number of envs", |v| {
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

/// The switch for lazy selects on the CPU.
pub const CPU_LAZY_SELECTS: &str = "CARTFUSE_CPU_LAZY_SELECTS";

/// The switch for carried state updated in place.
pub const IN_PLACE: &str = "CARTFUSE_IN_PLACE";

/// The switch for four lanes per device thread.
pub const VECTORIZE: &str = "CARTFUSE_VECTORIZE";
