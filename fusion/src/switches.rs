//! Environment switches that turn an optimisation off, to measure what it buys, and the
//! check of every `CARTFUSE_*` variable the runtime reads.
//!
//! Each switch is read when an executor is built: `on`, `1` or `true` keep it, `off`, `0` or
//! `false` turn it off, anything else is ignored with a warning; unset means on. The CLI and
//! the Python package call [`crate::device::check_environment`] first, so a value outside the
//! accepted ones (`CARTFUSE_CPU_SIMD=avx9000`) is an error naming them instead of being
//! ignored. This module names no runtime: every layer may read its switches.
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
pub const SWITCH_VALUES: &str = "on, off, 1, 0, true or false";

/// A switch's value: `Some(on)` for an accepted one, `None` for anything else.
pub fn parse(value: &str) -> Option<bool> {
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

/// The switch for lazy selects on the CPU.
pub const CPU_LAZY_SELECTS: &str = "CARTFUSE_CPU_LAZY_SELECTS";

/// The switch for carried state updated in place.
pub const IN_PLACE: &str = "CARTFUSE_IN_PLACE";

/// The switch for four lanes per device thread.
pub const VECTORIZE: &str = "CARTFUSE_VECTORIZE";
