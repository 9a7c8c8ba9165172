//! Environment switches that turn an optimisation off, to measure what it buys.
//!
//! Each is read when an executor is built: `on`, `1` or `true` keep it, `off`, `0` or
//! `false` turn it off, anything else is ignored with a warning; unset means on.
//!
//! - `CARTFUSE_CPU_LAZY_SELECTS`: reset branches run only in lanes that take them (CPU).
//! - `CARTFUSE_IN_PLACE`: carried state updated in place where a launch allows it (CPU's
//!   compiled engine and devices; see [`crate::lir::in_place`]).
//! - `CARTFUSE_VECTORIZE`: device kernels that allow it handle four lanes per thread
//!   (see [`crate::lir::vector`]).

/// Whether the switch `name` is on (see the [module docs](self)).
pub fn enabled(name: &str) -> bool {
    match std::env::var(name) {
        Ok(v) => match v.trim().to_ascii_lowercase().as_str() {
            "off" | "0" | "false" => false,
            "on" | "1" | "true" => true,
            other => {
                tracing::warn!("ignoring {name}={other} (expected on or off)");
                true
            }
        },
        Err(_) => true,
    }
}

/// The switch for lazy selects on the CPU.
pub const CPU_LAZY_SELECTS: &str = "CARTFUSE_CPU_LAZY_SELECTS";

/// The switch for carried state updated in place.
pub const IN_PLACE: &str = "CARTFUSE_IN_PLACE";

/// The switch for four lanes per device thread.
pub const VECTORIZE: &str = "CARTFUSE_VECTORIZE";
