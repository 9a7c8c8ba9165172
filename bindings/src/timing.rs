//! [`RustStepTimer`]: the Rust step of a plan, timed from Python, so `python/bench.py` sets
//! Python's step beside the Rust step it wraps in one process.

use std::sync::Mutex;

use pyo3::prelude::*;

use crate::backend::{Backend, Options, Seeds};
use crate::error::{BackendError, to_py};
use cartfuse_env::AutoresetMode;

/// `num_envs` envs of `env_id` built as a Rust program builds them (the CPU runtime's
/// default options), reset with seed 0, timed through the Rust API alone.
#[pyclass(module = "cartfuse._native")]
pub struct RustStepTimer {
    backend: Mutex<Backend>,
}

#[pymethods]
impl RustStepTimer {
    /// Builds the envs (`plan=None`: the plan a Python env of the same arguments runs).
    #[new]
    #[pyo3(signature = (env_id, num_envs, device=None, plan=None))]
    fn new(
        py: Python<'_>,
        env_id: &str,
        num_envs: usize,
        device: Option<&str>,
        plan: Option<String>,
    ) -> PyResult<Self> {
        let device = Some(crate::device::parse(device, num_envs).map_err(to_py)?.0);
        let options = Options {
            env_id: env_id.to_string(),
            num_envs,
            device,
            plan,
            autoreset: AutoresetMode::NextStep,
            max_episode_steps: None,
            parallel_min_lanes: cartfuse_fusion::cpu::DEFAULT_PARALLEL_MIN_LANES,
            threads: 0,
            kwargs: Vec::new(),
        };
        let backend = py
            .detach(|| {
                let mut backend = Backend::new(options)?;
                backend.reset(Seeds::PerEnv(vec![Some(0); num_envs]), None, None)?;
                Ok::<_, BackendError>(backend)
            })
            .map_err(to_py)?;
        Ok(Self {
            backend: Mutex::new(backend),
        })
    }

    /// Seconds taken by `calls` steps of the Rust API, GIL released: `VecEnv::step_device`
    /// (actions uploaded once, outputs left in the runtime's buffers), or with `host=True`
    /// `VecEnv::step_into` (actions from the host, outputs into host memory: one round trip
    /// a step on a device).
    #[pyo3(signature = (calls, host=false))]
    fn time(&self, py: Python<'_>, calls: u64, host: bool) -> PyResult<f64> {
        py.detach(|| {
            let mut backend = self
                .backend
                .lock()
                .map_err(|_| BackendError::Runtime("poisoned by an earlier panic".into()))?;
            match host {
                true => backend.time_host_steps(calls),
                false => backend.time_device_steps(calls),
            }
        })
        .map(|elapsed| elapsed.as_secs_f64())
        .map_err(to_py)
    }

    /// The plan the envs run.
    #[getter]
    fn plan(&self) -> PyResult<String> {
        let backend = (self.backend.lock())
            .map_err(|_| to_py(BackendError::Runtime("poisoned by an earlier panic".into())))?;
        Ok(backend.plan())
    }
}
