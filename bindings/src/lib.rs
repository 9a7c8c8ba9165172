//! Brief overview: the native part of the Python package `cartfuse`, the module
//! `cartfuse._native`. The principal type is [`NativeVecEnv`], a thin layer that converts
//! numpy arrays to and from [`backend::Backend`], a gymnasium-shaped vector env of any
//! environment registered in `cartfuse_env::registry`. [`env_ids`] and [`env_info`] describe
//! every environment from its Rust definition, so the Python package builds its spaces and
//! registrations from them. The gymnasium `VectorEnv` itself is written in Python
//! (`python/cartfuse/vector.py`).
//!
//! - [`backend`]: seeds, masked resets and truncation as gymnasium defines them.
//! - [`envs`]: every environment on every runtime behind one object-safe trait.
//! - [`convert`]: numpy arrays and Python values in and out, validated.
//! - [`device`], [`error`]: device names and errors as Python sees them.
//!
//! Every input is validated before anything runs on the device, every error becomes a
//! Python exception naming the argument, and outputs are handed to numpy without copying
//! (`IntoPyArray` takes ownership of the Rust allocation).

pub mod backend;
pub mod convert;
pub mod device;
pub mod envs;
pub mod error;

use std::sync::Mutex;

use cartfuse_env::spaces::ActionSpace;
use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use backend::{Autoreset, Backend, Options, Seeds};
use device::Device;
use envs::EnvInfo;
use error::BackendError;

fn to_py(error: BackendError) -> PyErr {
    match error {
        BackendError::InvalidArgument { .. } => PyValueError::new_err(error.to_string()),
        BackendError::Runtime(message) => PyRuntimeError::new_err(message),
    }
}

/// Observations, rewards, terminated, truncated and (`SameStep`) final observations.
type StepArrays<'py> = (
    Bound<'py, PyArray2<f32>>,
    Bound<'py, PyArray1<f32>>,
    Bound<'py, PyArray1<bool>>,
    Bound<'py, PyArray1<bool>>,
    Option<Bound<'py, PyArray2<f32>>>,
);

/// A batch of envs of one registered environment on a cartfuse device (wrapped by
/// `cartfuse.vector.CartfuseVectorEnv`).
#[pyclass(module = "cartfuse._native")]
pub struct NativeVecEnv {
    // The Mutex makes the class `Sync` for Python threads; the GIL is released while the
    // device works, so another thread that reaches the same env waits here.
    backend: Mutex<Backend>,
    info: EnvInfo,
    num_envs: usize,
}

impl NativeVecEnv {
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        work: impl FnOnce(&mut Backend) -> Result<T, BackendError> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let mut backend = self.backend.lock().map_err(|_| {
                BackendError::Runtime("the env was poisoned by an earlier panic".into())
            })?;
            work(&mut backend)
        })
        .map_err(to_py)
    }
}

#[pymethods]
impl NativeVecEnv {
    /// Opens `device` (`None`: automatic) and builds `num_envs` envs of `env_id`.
    #[new]
    #[pyo3(signature = (env_id, num_envs, device=None, plan=None, autoreset="next_step", max_episode_steps=None))]
    fn new(
        py: Python<'_>,
        env_id: &str,
        num_envs: usize,
        device: Option<&str>,
        plan: Option<String>,
        autoreset: &str,
        max_episode_steps: Option<u32>,
    ) -> PyResult<Self> {
        let device = device.map(Device::parse).transpose().map_err(to_py)?;
        let autoreset = match autoreset {
            "next_step" => Autoreset::NextStep,
            "same_step" => Autoreset::SameStep,
            "disabled" => Autoreset::Disabled,
            other => {
                return Err(PyValueError::new_err(format!(
                    "autoreset: expected \"next_step\", \"same_step\" or \"disabled\", got {other:?}"
                )));
            }
        };
        let options = Options {
            env_id: env_id.to_string(),
            num_envs,
            device,
            plan,
            autoreset,
            max_episode_steps,
        };
        let backend = py.detach(|| Backend::new(options)).map_err(to_py)?;
        Ok(Self {
            info: backend.info().clone(),
            backend: Mutex::new(backend),
            num_envs,
        })
    }

    /// The environment's gymnasium id.
    #[getter]
    fn env_id(&self) -> &'static str {
        self.info.id
    }

    /// Number of envs.
    #[getter]
    fn num_envs(&self) -> usize {
        self.num_envs
    }

    /// The device the envs run on.
    #[getter]
    fn device(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.run(py, |b| Ok(b.device().name()))
    }

    /// The step plan's name.
    #[getter]
    fn plan(&self, py: Python<'_>) -> PyResult<String> {
        self.run(py, |b| Ok(b.plan()))
    }

    /// Devices compiled into this build.
    #[staticmethod]
    fn compiled_devices() -> Vec<&'static str> {
        Device::compiled().into_iter().map(Device::name).collect()
    }

    /// Plan names the constructor accepts.
    #[staticmethod]
    fn plans() -> Vec<&'static str> {
        Backend::PLANS.to_vec()
    }

    /// Resets all envs (or those in `mask`) and returns the `(n, obs_dim)` float32
    /// observations.
    ///
    /// `seed`: `None` continues the random streams, an int gives env `i` the seed
    /// `seed + i`, a list gives each env its own (`None` entries: from the OS).
    #[pyo3(signature = (seed=None, mask=None))]
    fn reset<'py>(
        &self,
        py: Python<'py>,
        seed: Option<&Bound<'py, PyAny>>,
        mask: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let n = self.num_envs;
        let seeds = match seed {
            None => Seeds::Continue,
            Some(seed) => convert::seeds(seed, n)?,
        };
        let mask = mask.map(|mask| convert::mask(mask, n)).transpose()?;
        let obs = self.run(py, |b| b.reset(seeds, mask.as_deref()))?;
        convert::rows(py, obs, n, self.info.obs_dim)
    }

    /// Steps every env with `actions`: discrete environments take an integer array of
    /// shape `(n,)`, continuous ones a float array of shape `(n, k)` (`(n,)` when `k` is 1).
    fn step<'py>(&self, py: Python<'py>, actions: &Bound<'py, PyAny>) -> PyResult<StepArrays<'py>> {
        let (n, dim) = (self.num_envs, self.info.obs_dim);
        let actions = convert::actions(actions, n, &self.info)?;
        let step = self.run(py, move |b| b.step(actions))?;
        let final_obs = step
            .final_obs
            .map(|f| convert::rows(py, f, n, dim))
            .transpose()?;
        Ok((
            convert::rows(py, step.obs, n, dim)?,
            PyArray1::from_vec(py, step.reward),
            PyArray1::from_vec(py, step.terminated),
            PyArray1::from_vec(py, step.truncated),
            final_obs,
        ))
    }

    /// Overwrites every env's state: float64 `(n, state_dim)` in gymnasium's
    /// `env.unwrapped.state` order.
    fn set_state(&self, py: Python<'_>, states: &Bound<'_, PyAny>) -> PyResult<()> {
        let rows = convert::states(states, self.num_envs, self.info.state_names.len())?;
        self.run(py, move |b| b.set_state(&rows))
    }

    /// Every env's state: float64 `(n, state_dim)`.
    fn get_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let flat = self.run(py, |b| b.state())?;
        convert::rows(py, flat, self.num_envs, self.info.state_names.len())
    }
}

/// One environment as its Rust definition declares it (`cartfuse._native.env_info`).
#[pyclass(module = "cartfuse._native", name = "EnvInfo", frozen, get_all)]
pub struct PyEnvInfo {
    /// gymnasium's id.
    id: &'static str,
    /// Length of one observation row.
    obs_dim: usize,
    /// State components, in the order of gymnasium's `env.unwrapped.state`.
    state_names: Vec<&'static str>,
    /// gymnasium's registered `max_episode_steps`.
    max_episode_steps: u32,
    /// Shape of one observation.
    observation_shape: Vec<usize>,
    /// Lower bounds of one observation (float32 values).
    observation_low: Vec<f32>,
    /// Upper bounds of one observation (float32 values).
    observation_high: Vec<f32>,
    /// `"discrete"` or `"box"`.
    action_kind: &'static str,
    /// Discrete only: the number of actions.
    action_n: Option<u32>,
    /// Shape of one action (`[]` for a discrete one).
    action_shape: Vec<usize>,
    /// Box only: lower bounds of one action.
    action_low: Option<Vec<f32>>,
    /// Box only: upper bounds of one action.
    action_high: Option<Vec<f32>>,
}

impl From<EnvInfo> for PyEnvInfo {
    fn from(info: EnvInfo) -> Self {
        let (action_kind, action_n, action_shape, action_low, action_high) = match info.action {
            ActionSpace::Discrete(space) => ("discrete", Some(space.n), space.shape, None, None),
            ActionSpace::Box(space) => {
                ("box", None, space.shape, Some(space.low), Some(space.high))
            }
        };
        Self {
            id: info.id,
            obs_dim: info.obs_dim,
            state_names: info.state_names.to_vec(),
            max_episode_steps: info.max_episode_steps,
            observation_shape: info.observation.shape,
            observation_low: info.observation.low,
            observation_high: info.observation.high,
            action_kind,
            action_n,
            action_shape,
            action_low,
            action_high,
        }
    }
}

#[pymethods]
impl PyEnvInfo {
    fn __repr__(&self) -> String {
        format!(
            "EnvInfo(id={:?}, obs_dim={}, action_kind={:?})",
            self.id, self.obs_dim, self.action_kind
        )
    }
}

/// The gymnasium ids of every environment this build has.
#[pyfunction]
fn env_ids() -> Vec<&'static str> {
    envs::ids().to_vec()
}

/// The environment `env_id` names, as its Rust definition declares it.
#[pyfunction]
fn env_info(env_id: &str) -> PyResult<PyEnvInfo> {
    envs::describe(env_id).map(PyEnvInfo::from).map_err(to_py)
}

/// The module `cartfuse._native`.
#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    // Before any Vulkan probe: without it Mesa's loader prints an XDG_RUNTIME_DIR error on
    // every device probe in root shells, CI and Ray workers.
    #[cfg(feature = "wgpu")]
    cartfuse_fusion::cube::runtime_dir::ensure();
    module.add_class::<NativeVecEnv>()?;
    module.add_class::<PyEnvInfo>()?;
    module.add_function(wrap_pyfunction!(env_ids, module)?)?;
    module.add_function(wrap_pyfunction!(env_info, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
