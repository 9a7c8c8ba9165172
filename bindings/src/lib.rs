//! Brief overview: the native part of the Python package `cartfuse`, the module
//! `cartfuse._native`. The principal type is [`NativeVecEnv`], a thin layer that converts
//! numpy arrays to and from [`backend::Backend`], a gymnasium-shaped vector env of any
//! environment registered in `cartfuse_env::registry`. [`env_ids`] and [`env_info`] describe
//! every environment from its Rust definition, so the Python package builds its spaces and
//! registrations from them. The gymnasium `VectorEnv` itself is written in Python
//! (`python/cartfuse/vector.py`).
//!
//! - [`vec_env`]: [`NativeVecEnv`], synchronous and `step_async` steps.
//! - [`backend`]: seeds, masked resets and truncation as gymnasium defines them.
//! - [`envs`]: every environment on every runtime behind one object-safe trait.
//! - [`arrays`]: the numpy arrays a step writes its outputs into.
//! - [`stepper`]: the background thread of `step_async`.
//! - [`dlpack`], [`resident`]: `copy=False` on CUDA, outputs as DLPack views of device
//!   memory and CUDA tensors of actions taken in place.
//! - [`convert`]: numpy arrays and Python values in and out, validated.
//! - [`timing`]: [`RustStepTimer`], the Rust step timed from Python (for `python/bench.py`).
//! - [`device`], [`error`]: device names and errors as Python sees them.
//!
//! Every input is validated before anything runs on the device, every error becomes a
//! Python exception naming the argument, and the step's worker threads write the outputs
//! straight into numpy arrays (nothing is copied on the calling thread).

pub mod arrays;
pub mod backend;
pub mod convert;
pub mod device;
pub mod dlpack;
pub mod envs;
pub mod error;
pub mod resident;
pub mod stepper;
pub mod timing;
pub mod vec_env;

use cartfuse_env::spaces::ActionSpace;
use pyo3::prelude::*;

use envs::EnvInfo;
use error::to_py;
use timing::RustStepTimer;
use vec_env::{NativeVecEnv, NoPendingStepError, PendingStepError};

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
    /// gymnasium's `metadata["render_fps"]`.
    render_fps: u32,
    /// gymnasium's constructor arguments: `(name, kind, default)`, kind `"bool"` or
    /// `"float"`.
    kwargs: Vec<(&'static str, &'static str, f64)>,
    /// The options `reset(options=...)` reads: `["low", "high"]` (bounds of every drawn
    /// component), or one symmetric bound per drawn component (Pendulum: `x_init`, `y_init`).
    reset_option_names: Vec<&'static str>,
    /// The default `(low, high)` of each drawn component of a reset.
    reset_bounds: Vec<(f64, f64)>,
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
            render_fps: info.render_fps,
            kwargs: (info.kwargs.iter())
                .map(|k| (k.name, k.kind.into(), k.default))
                .collect(),
            reset_option_names: info.reset_options.names(),
            reset_bounds: info.reset_bounds,
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

/// A copy of `values` (a 1-d float32 array) as a CPU [`dlpack::DeviceArray`]: the export
/// the device views use, for tests on machines without a GPU.
#[pyfunction]
fn host_array(values: numpy::PyReadonlyArray1<'_, f32>) -> PyResult<dlpack::DeviceArray> {
    let values = values.as_slice().map_err(|_| {
        pyo3::exceptions::PyValueError::new_err("values: expected a contiguous float32 array")
    })?;
    Ok(dlpack::host_array(values.to_vec()))
}

/// `actions` (a DLPack producer on the CPU) imported as a CUDA step imports its actions,
/// for `num_envs` envs of `env_id`: `(address, bytes)`. The checks of the device views' action
/// import, for tests on machines without a GPU.
#[pyfunction]
fn import_host_actions(
    actions: &Bound<'_, PyAny>,
    env_id: &str,
    num_envs: usize,
) -> PyResult<(u64, usize)> {
    let info = envs::describe(env_id).map_err(to_py)?;
    let imported = dlpack::import_actions(actions, &info, num_envs, dlpark::ffi::DLDevice::CPU)?;
    Ok((imported.address, imported.bytes))
}

/// The module `cartfuse._native`.
#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    // Before any Vulkan probe: without it Mesa's loader prints an XDG_RUNTIME_DIR error on
    // every device probe in root shells, CI and Ray workers.
    #[cfg(feature = "wgpu")]
    cartfuse_fusion::cube::runtime_dir::ensure();
    module.add_class::<NativeVecEnv>()?;
    module.add_class::<RustStepTimer>()?;
    module.add_class::<PyEnvInfo>()?;
    module.add_class::<dlpack::DeviceArray>()?;
    module.add_function(wrap_pyfunction!(host_array, module)?)?;
    module.add_function(wrap_pyfunction!(import_host_actions, module)?)?;
    let py = module.py();
    module.add("PendingStepError", py.get_type::<PendingStepError>())?;
    module.add("NoPendingStepError", py.get_type::<NoPendingStepError>())?;
    module.add_function(wrap_pyfunction!(env_ids, module)?)?;
    module.add_function(wrap_pyfunction!(env_info, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
