//! Brief overview: the native part of the Python package `cartfuse`, the module
//! `cartfuse._native`. The principal type is [`NativeVecEnv`], a thin layer that converts
//! numpy arrays to and from [`backend::Backend`], the only code that calls cartfuse's Rust
//! API. The gymnasium `VectorEnv` itself is written in Python (`python/cartfuse/vector.py`).
//!
//! Every input is validated before anything runs on the device, every error becomes a
//! Python exception naming the argument, and outputs are handed to numpy without copying
//! (`PyArray::from_vec` / `IntoPyArray` take ownership of the Rust allocation).

pub mod backend;

use std::sync::Mutex;

use numpy::ndarray::Array2;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

use backend::{Autoreset, Backend, BackendError, Device, Options, Seeds};

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

/// A batch of CartPole-v1 envs on a cartfuse device (wrapped by
/// `cartfuse.vector.CartPoleVectorEnv`).
#[pyclass(module = "cartfuse._native")]
pub struct NativeVecEnv {
    // The Mutex makes the class `Sync` for Python threads; the GIL is released while the
    // device works, so another thread that reaches the same env waits here.
    backend: Mutex<Backend>,
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
    /// Opens `device` (`None`: automatic) and builds `num_envs` envs.
    #[new]
    #[pyo3(signature = (num_envs, device=None, plan=None, autoreset="next_step", max_episode_steps=500))]
    fn new(
        py: Python<'_>,
        num_envs: usize,
        device: Option<&str>,
        plan: Option<String>,
        autoreset: &str,
        max_episode_steps: u32,
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
            num_envs,
            device,
            plan,
            autoreset,
            max_episode_steps,
        };
        let backend = py.detach(|| Backend::new(options)).map_err(to_py)?;
        Ok(Self {
            backend: Mutex::new(backend),
            num_envs,
        })
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

    /// Resets all envs (or those in `mask`) and returns the `(n, 4)` float32 observations.
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
            Some(seed) => parse_seeds(seed, n)?,
        };
        let mask = mask.map(|mask| parse_mask(mask, n)).transpose()?;
        let obs = self.run(py, |b| b.reset(seeds, mask.as_deref()))?;
        rows(py, obs, n)
    }

    /// Steps every env with `actions` (integer array of shape `(n,)`, values 0 or 1).
    fn step<'py>(&self, py: Python<'py>, actions: &Bound<'py, PyAny>) -> PyResult<StepArrays<'py>> {
        let n = self.num_envs;
        let actions = parse_actions(actions, n)?;
        let step = self.run(py, move |b| b.step(&actions))?;
        let final_obs = step.final_obs.map(|f| rows(py, f, n)).transpose()?;
        Ok((
            rows(py, step.obs, n)?,
            PyArray1::from_vec(py, step.reward),
            PyArray1::from_vec(py, step.terminated),
            PyArray1::from_vec(py, step.truncated),
            final_obs,
        ))
    }

    /// Overwrites every env's state: float64 `(n, 4)` `[x, x_dot, theta, theta_dot]`.
    fn set_state(&self, py: Python<'_>, states: &Bound<'_, PyAny>) -> PyResult<()> {
        let n = self.num_envs;
        let array = states.cast::<PyArray2<f64>>().map_err(|_| {
            PyTypeError::new_err(format!(
                "states: expected a float64 numpy array of shape ({n}, 4)"
            ))
        })?;
        let view = array.readonly();
        let view = view.as_array();
        if view.shape() != [n, 4] {
            return Err(PyValueError::new_err(format!(
                "states: expected shape ({n}, 4), got {:?}",
                view.shape()
            )));
        }
        let rows: Vec<[f64; 4]> = view
            .rows()
            .into_iter()
            .map(|r| [r[0], r[1], r[2], r[3]])
            .collect();
        self.run(py, move |b| b.set_state(&rows))
    }

    /// Every env's state: float64 `(n, 4)`.
    fn get_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let n = self.num_envs;
        let flat = self.run(py, |b| b.state())?;
        let array = Array2::from_shape_vec((n, 4), flat)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(array.into_pyarray(py))
    }
}

/// Hands `[n * 4]` floats to numpy as `(n, 4)` without copying.
fn rows(py: Python<'_>, flat: Vec<f32>, n: usize) -> PyResult<Bound<'_, PyArray2<f32>>> {
    let array =
        Array2::from_shape_vec((n, 4), flat).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(array.into_pyarray(py))
}

fn parse_seeds(seed: &Bound<'_, PyAny>, n: usize) -> PyResult<Seeds> {
    let one = |value: &Bound<'_, PyAny>, what: &str| -> PyResult<u64> {
        if value.is_instance_of::<pyo3::types::PyBool>() {
            return Err(PyTypeError::new_err(format!(
                "seed: {what} must be an int, got a bool"
            )));
        }
        value.extract::<u64>().map_err(|_| {
            PyValueError::new_err(format!(
                "seed: {what} must be an int in [0, 2**64), got {}",
                value.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })
    };
    if seed.is_instance_of::<pyo3::types::PyList>() || seed.is_instance_of::<pyo3::types::PyTuple>()
    {
        let list: Vec<Bound<'_, PyAny>> = seed.extract()?;
        if list.len() != n {
            return Err(PyValueError::new_err(format!(
                "seed: a seed list must hold num_envs={n} entries, got {}",
                list.len()
            )));
        }
        let seeds = list
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if s.is_none() {
                    Ok(None)
                } else {
                    one(s, &format!("seed[{i}]")).map(Some)
                }
            })
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Seeds::PerEnv(seeds));
    }
    if seed.extract::<u64>().is_err()
        && seed.extract::<i64>().is_err()
        && !seed.hasattr("__index__")?
    {
        return Err(PyTypeError::new_err(format!(
            "seed: expected None, an int or a list of {n} ints, got {}",
            seed.get_type().name()?
        )));
    }
    let base = one(seed, "an int seed")?;
    Ok(Seeds::PerEnv(
        (0..n as u64).map(|i| Some(base.wrapping_add(i))).collect(),
    ))
}

fn parse_mask(mask: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<bool>> {
    let name = "options[\"reset_mask\"]";
    let array = mask.cast::<PyUntypedArray>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{name}: expected a numpy bool array of shape ({n},)"
        ))
    })?;
    if array.shape() != [n] {
        return Err(PyValueError::new_err(format!(
            "{name}: expected shape ({n},), got {:?}",
            array.shape()
        )));
    }
    let typed = mask.cast::<PyArray1<bool>>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{name}: expected dtype bool, got {}",
            array
                .dtype()
                .str()
                .map(|s| s.to_string())
                .unwrap_or_default()
        ))
    })?;
    Ok(typed.readonly().as_array().to_vec())
}

/// Converts an integer (or bool) numpy array of shape `(n,)` to `u32` actions, rejecting
/// other dtypes, shapes and values outside {0, 1} before anything is stepped.
fn parse_actions(actions: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<u32>> {
    let array = actions.cast::<PyUntypedArray>().map_err(|_| {
        PyTypeError::new_err(format!(
            "actions: expected a numpy integer array of shape ({n},), got {}",
            actions
                .get_type()
                .name()
                .map(|s| s.to_string())
                .unwrap_or_default()
        ))
    })?;
    if array.shape() != [n] {
        return Err(PyValueError::new_err(format!(
            "actions: expected shape ({n},), got {:?}",
            array.shape()
        )));
    }
    macro_rules! convert {
        ($($t:ty),*) => {$(
            if let Ok(typed) = actions.cast::<PyArray1<$t>>() {
                let view = typed.readonly();
                let mut out = Vec::with_capacity(n);
                for (env, &value) in view.as_array().iter().enumerate() {
                    #[allow(clippy::unnecessary_cast, unused_comparisons)]
                    if value < 0 as $t || value > 1 as $t {
                        return Err(PyValueError::new_err(format!(
                            "actions: actions[{env}] = {value} is not in {{0, 1}}"
                        )));
                    }
                    out.push(value as u32);
                }
                return Ok(out);
            }
        )*};
    }
    convert!(i64, i32, u8, i8, i16, u16, u32, u64);
    if let Ok(typed) = actions.cast::<PyArray1<bool>>() {
        return Ok(typed
            .readonly()
            .as_array()
            .iter()
            .map(|&b| u32::from(b))
            .collect());
    }
    Err(PyTypeError::new_err(format!(
        "actions: expected an integer dtype (values 0 or 1), got {}",
        array
            .dtype()
            .str()
            .map(|s| s.to_string())
            .unwrap_or_default()
    )))
}

/// The module `cartfuse._native`.
#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<NativeVecEnv>()?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
