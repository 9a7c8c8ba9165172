//! What can go wrong, split by the Python exception it becomes.

use std::sync::{Mutex, MutexGuard};

use cartfuse_env::EnvError;
use pyo3::PyErr;
use pyo3::exceptions::{PyRuntimeError, PyValueError};

/// An error of the bindings: a bad argument (`ValueError`) or a runtime failure
/// (`RuntimeError`).
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// An argument was wrong (Python `ValueError`).
    #[error("{argument}: {message}")]
    InvalidArgument {
        /// The argument's Python name.
        argument: &'static str,
        /// What was expected and what was found.
        message: String,
    },
    /// The runtime failed (Python `RuntimeError`).
    #[error("{0}")]
    Runtime(String),
}

/// The Python exception of `error`: `ValueError` for a bad argument, else `RuntimeError`.
pub fn to_py(error: BackendError) -> PyErr {
    match error {
        BackendError::InvalidArgument { .. } => PyValueError::new_err(error.to_string()),
        BackendError::Runtime(message) => PyRuntimeError::new_err(message),
    }
}

impl BackendError {
    /// An [`BackendError::InvalidArgument`].
    pub fn invalid(argument: &'static str, message: impl Into<String>) -> Self {
        BackendError::InvalidArgument {
            argument,
            message: message.into(),
        }
    }
}

impl From<EnvError> for BackendError {
    /// Errors of the Rust env API, attributed to the Python argument that caused them.
    fn from(error: EnvError) -> Self {
        match error {
            EnvError::InvalidAction { env, value, space } => BackendError::invalid(
                "actions",
                format!("actions[{env}] = {value} is not in {space}"),
            ),
            EnvError::BadState { .. } => BackendError::invalid("states", error.to_string()),
            EnvError::TooManyEnvs { .. } | EnvError::ZeroEnvs | EnvError::OutOfMemory { .. } => {
                BackendError::invalid("num_envs", error.to_string())
            }
            EnvError::InvalidMaxEpisodeSteps => {
                BackendError::invalid("max_episode_steps", error.to_string())
            }
            EnvError::PlanUnavailable { .. } => BackendError::invalid("plan", error.to_string()),
            EnvError::InvalidDeviceAction => BackendError::invalid("actions", error.to_string()),
            other => BackendError::Runtime(other.to_string()),
        }
    }
}

/// The discrete actions `{0, ..., n - 1}` as the error messages write them: `{0, 1}`,
/// `{0, 1, 2}`, or `{0, ..., 17}` for many.
pub fn choices(n: u32) -> String {
    match n {
        0 => "{}".into(),
        1..=8 => {
            let all: Vec<String> = (0..n).map(|a| a.to_string()).collect();
            format!("{{{}}}", all.join(", "))
        }
        _ => format!("{{0, ..., {}}}", n - 1),
    }
}

/// A non-finite value as Python writes it: `nan`, `inf` or `-inf`.
pub fn non_finite(value: f64) -> &'static str {
    if value.is_nan() {
        "nan"
    } else if value > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

/// `mutex` locked, or the error of an env an earlier panic left poisoned.
pub fn lock<T>(mutex: &Mutex<T>) -> Result<MutexGuard<'_, T>, BackendError> {
    mutex
        .lock()
        .map_err(|_| BackendError::Runtime("the env was poisoned by an earlier panic".into()))
}
