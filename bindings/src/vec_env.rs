//! [`NativeVecEnv`]: the batch of envs `cartfuse.vector.CartfuseVectorEnv` wraps.
//!
//! A step converts and validates the actions on the calling thread, then steps with the
//! outputs written straight into numpy arrays by the CPU runtime's worker threads
//! ([`arrays`](crate::arrays)): fresh arrays per step with `copy=True`, the env's own arrays
//! with `copy=False`. `step_async` runs the same step on the env's [`Stepper`] thread with
//! the GIL released and returns at once; `step_wait` waits for it. While a step is in
//! flight every other call that touches the envs raises [`PendingStepError`].

use std::sync::{Arc, Mutex};

use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::arrays::{Outputs, StepArrays, StepTuple};
use crate::backend::{Backend, Options, PARALLEL_MIN_LANES, Seeds};
use crate::convert;
use crate::dlpack::{self, DeviceArray, Element};
use crate::envs::{EnvInfo, ResidentActions};
use crate::error::{BackendError, lock, to_py};
use crate::stepper::{Stepper, Ticket};
use cartfuse_env::AutoresetMode;
use cartfuse_fusion::device::Device;

pyo3::create_exception!(
    _native,
    PendingStepError,
    PyRuntimeError,
    "A call that needs the envs was made while a `step_async` step is in flight."
);
pyo3::create_exception!(
    _native,
    NoPendingStepError,
    PyRuntimeError,
    "`step_wait` was called with no `step_async` step in flight."
);

/// From this many envs a synchronous step releases the GIL. Below, a step lasts about a
/// microsecond or less, the order of releasing and re-taking the GIL (a choice, not a
/// measured threshold).
const DETACH_MIN_ENVS: usize = 64;

/// A `step_async` step in flight: the arrays it writes and the ticket of its result.
struct InFlight {
    arrays: StepArrays,
    ticket: Ticket<Result<(), BackendError>>,
}

/// A batch of envs of one registered environment on a cartfuse device (wrapped by
/// `cartfuse.vector.CartfuseVectorEnv`).
#[pyclass(module = "cartfuse._native")]
pub struct NativeVecEnv {
    // Shared with the stepper thread while a `step_async` step runs; the GIL is released
    // while the envs work, so another thread that reaches the same env waits here.
    backend: Arc<Mutex<Backend>>,
    info: EnvInfo,
    num_envs: usize,
    same_step: bool,
    /// Where each step's output arrays come from.
    outputs: Outputs,
    in_flight: Mutex<Option<InFlight>>,
    stepper: Mutex<Stepper>,
    /// Why the device was chosen, when it was chosen automatically.
    device_reason: Option<String>,
    /// The DLPack id of the device, where its buffers can be viewed (CUDA).
    dlpack_device: Option<i32>,
    /// The device's name.
    device_name: &'static str,
}

impl NativeVecEnv {
    /// Runs `work` on the envs with the GIL released, after checking no step is in flight.
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        what: &str,
        work: impl FnOnce(&mut Backend) -> Result<T, BackendError> + Send,
    ) -> PyResult<T> {
        self.idle(what)?;
        py.detach(|| work(&mut *lock(&self.backend)?))
            .map_err(to_py)
    }

    /// An error when a `step_async` step is in flight.
    fn idle(&self, what: &str) -> PyResult<()> {
        match lock(&self.in_flight).map_err(to_py)?.is_some() {
            true => Err(PendingStepError::new_err(format!(
                "{what}: a step_async() step is in flight: call step_wait() first"
            ))),
            false => Ok(()),
        }
    }

    /// The DLPack id of the device, or the error of a runtime without device views.
    fn views_device(&self) -> PyResult<i32> {
        (self.dlpack_device).ok_or_else(|| to_py(crate::resident::no_views(self.device_name)))
    }

    /// `reset`'s arguments, converted and checked.
    #[allow(clippy::type_complexity)]
    fn reset_args(
        &self,
        seed: Option<&Bound<'_, PyAny>>,
        mask: Option<&Bound<'_, PyAny>>,
        bounds: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(Seeds, Option<Vec<bool>>, Option<Vec<(f64, f64)>>)> {
        let n = self.num_envs;
        let seeds = match seed {
            None => Seeds::Continue,
            Some(seed) => convert::seeds(seed, n)?,
        };
        let mask = mask.map(|mask| convert::mask(mask, n)).transpose()?;
        let bounds = bounds.map(convert::bounds).transpose()?;
        Ok((seeds, mask, bounds))
    }
}

#[pymethods]
impl NativeVecEnv {
    /// Opens `device` (`None`: automatic) and builds `num_envs` envs of `env_id`.
    #[new]
    #[pyo3(signature = (
        env_id, num_envs, device=None, plan=None, autoreset="next_step",
        max_episode_steps=None, copy=true, parallel_min_lanes=None, params=None,
        num_threads=None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        env_id: &str,
        num_envs: usize,
        device: Option<&str>,
        plan: Option<String>,
        autoreset: &str,
        max_episode_steps: Option<u32>,
        copy: bool,
        parallel_min_lanes: Option<usize>,
        params: Option<&Bound<'_, PyAny>>,
        num_threads: Option<usize>,
    ) -> PyResult<Self> {
        cartfuse_fusion::device::check_environment()
            .map_err(|error| PyValueError::new_err(error.to_string()))?;
        let (device, device_reason) = crate::device::parse(device, num_envs).map_err(to_py)?;
        let device = Some(device);
        let autoreset: AutoresetMode = (autoreset.parse())
            .map_err(|why: String| to_py(BackendError::invalid("autoreset", why)))?;
        let options = Options {
            env_id: env_id.to_string(),
            num_envs,
            device,
            plan,
            autoreset,
            max_episode_steps,
            parallel_min_lanes: parallel_min_lanes.unwrap_or(PARALLEL_MIN_LANES),
            threads: match num_threads {
                Some(0) => {
                    return Err(to_py(BackendError::invalid(
                        "num_threads",
                        "expected at least 1 thread (or None: every thread)",
                    )));
                }
                threads => threads.unwrap_or(0),
            },
            kwargs: params.map(convert::params).transpose()?.unwrap_or_default(),
        };
        let backend = py.detach(|| Backend::new(options)).map_err(to_py)?;
        let info = backend.info().clone();
        let dlpack_device = backend.dlpack_device_id();
        let device_name = backend.device().name();
        let same_step = autoreset == AutoresetMode::SameStep;
        Ok(Self {
            outputs: Outputs::new(
                py,
                copy,
                dlpack_device.is_some(),
                num_envs,
                info.obs_dim,
                same_step,
            )?,
            info,
            backend: Arc::new(Mutex::new(backend)),
            num_envs,
            same_step,
            in_flight: Mutex::new(None),
            stepper: Mutex::new(Stepper::default()),
            device_reason,
            dlpack_device,
            device_name,
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

    /// Whether each step returns arrays of its own (`True`) or the env's own (`False`).
    #[getter]
    fn copy(&self) -> bool {
        self.outputs.copies()
    }

    /// The device the envs run on.
    #[getter]
    fn device(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.run(py, "device", |b| Ok(b.device().name()))
    }

    /// Why `device=None` (or `"auto"`) chose the device; `None` when it was named.
    #[getter]
    fn device_reason(&self) -> Option<String> {
        self.device_reason.clone()
    }

    /// The step plan's name.
    #[getter]
    fn plan(&self, py: Python<'_>) -> PyResult<String> {
        self.run(py, "plan", |b| Ok(b.plan()))
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
    /// observations: a fresh array, or with `copy=False` the env's own observation array
    /// (the one every step writes).
    ///
    /// `seed`: `None` continues the random streams, an int gives env `i` the seed
    /// `seed + i`, a list gives each env its own (`None` entries: from the OS).
    ///
    /// `mask`: only these envs reset (any autoreset mode); `bounds`: one `(low, high)` per
    /// drawn state component for this reset (`None`: the environment's defaults). Each
    /// env's episodes depend on its own seed and actions only, whatever the batch.
    #[pyo3(signature = (seed=None, mask=None, bounds=None))]
    fn reset<'py>(
        &self,
        py: Python<'py>,
        seed: Option<&Bound<'py, PyAny>>,
        mask: Option<&Bound<'py, PyAny>>,
        bounds: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let (seeds, mask, bounds) = self.reset_args(seed, mask, bounds)?;
        let obs = self.run(py, "reset", |b| {
            b.reset(seeds, mask.as_deref(), bounds.as_deref())
        })?;
        self.outputs.reset_obs(py, obs)
    }

    /// `reset` for device views (`copy=False` on CUDA): the observations as a
    /// [`DeviceArray`] on the device, written there before this returns.
    #[pyo3(signature = (seed=None, mask=None, bounds=None))]
    fn reset_views<'py>(
        &self,
        py: Python<'py>,
        seed: Option<&Bound<'py, PyAny>>,
        mask: Option<&Bound<'py, PyAny>>,
        bounds: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<DeviceArray> {
        self.views_device()?;
        let (seeds, mask, bounds) = self.reset_args(seed, mask, bounds)?;
        let memory = self.run(py, "reset", |b| {
            let obs = b.reset(seeds, mask.as_deref(), bounds.as_deref())?;
            b.upload_obs(&obs)
        })?;
        let shape = [self.num_envs, self.info.obs_dim];
        Ok(DeviceArray::new(Arc::new(memory), &shape, Element::F32))
    }

    /// `step` for device views (`copy=False` on CUDA): `actions` is a CUDA tensor (through
    /// DLPack, taken in place: int32 for a discrete space, float32 for a Box, ready on
    /// CUDA's legacy default stream) or anything `step` takes; returns `(obs, reward,
    /// terminated, truncated)` as [`DeviceArray`]s (flags int32, 0 or 1), finished on the
    /// device and valid until the next step or reset.
    fn step_views(
        &self,
        py: Python<'_>,
        actions: &Bound<'_, PyAny>,
    ) -> PyResult<(DeviceArray, DeviceArray, DeviceArray, DeviceArray)> {
        self.idle("step")?;
        let device_id = self.views_device()?;
        let n = self.num_envs;
        let step = match dlpack::is_cuda(actions) {
            true => {
                let device = dlpark::ffi::DLDevice::cuda(device_id);
                let imported = dlpack::import_actions(actions, &self.info, n, device)?;
                let (address, bytes) = (imported.address, imported.bytes);
                let step = self.run(py, "step", |b| {
                    b.step_resident(ResidentActions::Cuda { address, bytes })
                });
                drop(imported);
                step?
            }
            false => {
                let actions = convert::actions(actions, n, &self.info)?;
                self.run(py, "step", |b| {
                    b.step_resident(ResidentActions::Host(&actions))
                })?
            }
        };
        let view =
            |memory, shape: &[usize], element| DeviceArray::new(Arc::new(memory), shape, element);
        Ok((
            view(step.obs, &[n, self.info.obs_dim], Element::F32),
            view(step.reward, &[n], Element::F32),
            view(step.terminated, &[n], Element::I32),
            view(step.truncated, &[n], Element::I32),
        ))
    }

    /// Steps every env with `actions`: discrete environments take an integer array of
    /// shape `(n,)`, continuous ones a float array of shape `(n, k)` (`(n,)` when `k` is 1).
    /// Returns the outputs, written in place by the step: fresh arrays, or with `copy=False`
    /// the env's own (overwritten by the next step).
    fn step<'py>(&self, py: Python<'py>, actions: &Bound<'py, PyAny>) -> PyResult<StepTuple<'py>> {
        self.idle("step")?;
        let actions = convert::actions(actions, self.num_envs, &self.info)?;
        let arrays = self.outputs.next(py)?;
        let target = arrays.target(py);
        let backend = &self.backend;
        let work = move || {
            // SAFETY: `arrays` outlives the step, and nothing reads or writes them before it
            // returns (fresh arrays are unshared; the env's own are documented as overwritten).
            let mut out = unsafe { target.outputs() };
            lock(backend)?.step(&actions, &mut out)
        };
        match self.num_envs >= DETACH_MIN_ENVS {
            true => py.detach(work),
            false => work(),
        }
        .map_err(to_py)?;
        Ok(arrays.into_tuple(py))
    }

    /// Starts a step with `actions` (checked now: a bad call raises here and starts nothing)
    /// on the env's background thread, with the GIL released, and returns at once.
    fn step_async(&self, py: Python<'_>, actions: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut in_flight = lock(&self.in_flight).map_err(to_py)?;
        if in_flight.is_some() {
            return Err(PendingStepError::new_err(
                "step_async: a step_async() step is already in flight: call step_wait() first",
            ));
        }
        let actions = convert::actions(actions, self.num_envs, &self.info)?;
        let arrays = self.outputs.next(py)?;
        let target = arrays.target(py);
        let backend = self.backend.clone();
        let work = move || {
            // SAFETY: the env keeps `arrays` in `in_flight` until this work has finished
            // (`step_wait`, `close` and drop wait for it), and no call touches them meanwhile.
            let mut out = unsafe { target.outputs() };
            lock(&backend)?.step(&actions, &mut out)
        };
        let ticket = lock(&self.stepper)
            .map_err(to_py)?
            .post(work)
            .map_err(PyRuntimeError::new_err)?;
        *in_flight = Some(InFlight { arrays, ticket });
        Ok(())
    }

    /// Waits (GIL released) for the step `step_async` started and returns its outputs, as
    /// `step` does.
    fn step_wait<'py>(&self, py: Python<'py>) -> PyResult<StepTuple<'py>> {
        let pending = lock(&self.in_flight).map_err(to_py)?.take();
        let Some(InFlight { arrays, ticket }) = pending else {
            return Err(NoPendingStepError::new_err(
                "step_wait: no step in flight: call step_async(actions) first",
            ));
        };
        match py.detach(|| ticket.wait()) {
            Ok(Ok(())) => Ok(arrays.into_tuple(py)),
            Ok(Err(error)) => Err(to_py(error)),
            Err(panic) => Err(PyRuntimeError::new_err(panic)),
        }
    }

    /// Whether a `step_async` step is in flight.
    #[getter]
    fn pending(&self) -> PyResult<bool> {
        Ok(lock(&self.in_flight).map_err(to_py)?.is_some())
    }

    /// Whether the step in flight has finished (`step_wait` would not block); `False` when
    /// none is in flight.
    fn step_ready(&self) -> PyResult<bool> {
        let in_flight = lock(&self.in_flight).map_err(to_py)?;
        Ok(in_flight.as_ref().is_some_and(|f| f.ticket.is_ready()))
    }

    /// One step of a one-env batch: `action` an int (discrete) or a float array of the
    /// action box's shape. Returns the observation (a fresh array), the reward, terminated
    /// and truncated, on the calling thread.
    fn step_one<'py>(
        &self,
        py: Python<'py>,
        action: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyArray1<f32>>, f32, bool, bool)> {
        if self.num_envs != 1 {
            return Err(PyValueError::new_err(format!(
                "step_one: the batch holds {} envs; step_one steps a batch of one",
                self.num_envs
            )));
        }
        self.idle("step_one")?;
        let actions = convert::single_action(action, &self.info)?;
        let dim = self.info.obs_dim;
        let mut one = crate::arrays::OneStep::new(dim, self.same_step);
        lock(&self.backend)
            .and_then(|mut b| b.step(&actions, &mut one.outputs()))
            .map_err(to_py)?;
        Ok((
            PyArray1::from_slice(py, one.obs()),
            one.reward(),
            one.terminated(),
            one.truncated(),
        ))
    }

    /// Overwrites every env's state: float64 `(n, state_dim)` in gymnasium's
    /// `env.unwrapped.state` order.
    fn set_state(&self, py: Python<'_>, states: &Bound<'_, PyAny>) -> PyResult<()> {
        let rows = convert::states(states, self.num_envs, self.info.state_names.len())?;
        self.run(py, "set_state", move |b| b.set_state(&rows))
    }

    /// Every env's state: float64 `(n, state_dim)`.
    fn get_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let flat = self.run(py, "get_state", |b| b.state())?;
        convert::rows(py, flat, self.num_envs, self.info.state_names.len())
    }

    /// Waits for a step in flight, if any, and drops its outputs.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let pending = lock(&self.in_flight).map_err(to_py)?.take();
        if let Some(InFlight { ticket, .. }) = pending {
            let _ = py.detach(|| ticket.wait());
        }
        Ok(())
    }
}

impl Drop for NativeVecEnv {
    /// A step in flight writes arrays this env holds: it must finish before they go.
    fn drop(&mut self) {
        let pending = self.in_flight.get_mut().map(Option::take);
        if let Ok(Some(InFlight { ticket, arrays })) = pending {
            let _ = ticket.wait();
            drop(arrays);
        }
    }
}
