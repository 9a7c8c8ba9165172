//! The numpy arrays a step writes its outputs into, and the raw view of them the step's
//! threads write through.
//!
//! With `copy=True` every step gets fresh arrays ([`StepArrays::fresh`]): the step's worker
//! threads write into them directly, so the caller keeps them and nothing is copied. With
//! `copy=False` every step writes the env's own arrays ([`StepArrays::fresh`] once, then
//! [`StepArrays::clone_ref`]), which the caller receives as views, valid until the next step.

use cartfuse_env::HostOutputs;
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// Observations, rewards, terminated, truncated and (`SameStep`) final observations.
pub type StepTuple<'py> = (
    Bound<'py, PyArray2<f32>>,
    Bound<'py, PyArray1<f32>>,
    Bound<'py, PyArray1<bool>>,
    Bound<'py, PyArray1<bool>>,
    Option<Bound<'py, PyArray2<f32>>>,
);

/// The arrays of one step's outputs.
pub struct StepArrays {
    obs: Py<PyArray2<f32>>,
    reward: Py<PyArray1<f32>>,
    terminated: Py<PyArray1<bool>>,
    truncated: Py<PyArray1<bool>>,
    final_obs: Option<Py<PyArray2<f32>>>,
}

impl StepArrays {
    /// New C-contiguous arrays for `n` envs of `dim`-long observations; final observations
    /// when `same_step`. Floats are left uninitialised (every step writes all of them); flags
    /// start false.
    pub fn fresh(py: Python<'_>, n: usize, dim: usize, same_step: bool) -> Self {
        // SAFETY: numpy allocates the arrays; every float is written before the arrays are
        // returned to Python (a failed step returns none of them).
        let floats = |shape: [usize; 2]| unsafe { PyArray2::<f32>::new(py, shape, false) };
        Self {
            obs: floats([n, dim]).unbind(),
            // SAFETY: as above.
            reward: unsafe { PyArray1::<f32>::new(py, [n], false) }.unbind(),
            terminated: PyArray1::zeros(py, [n], false).unbind(),
            truncated: PyArray1::zeros(py, [n], false).unbind(),
            final_obs: same_step.then(|| floats([n, dim]).unbind()),
        }
    }

    /// Another handle on the same arrays.
    pub fn clone_ref(&self, py: Python<'_>) -> Self {
        Self {
            obs: self.obs.clone_ref(py),
            reward: self.reward.clone_ref(py),
            terminated: self.terminated.clone_ref(py),
            truncated: self.truncated.clone_ref(py),
            final_obs: self.final_obs.as_ref().map(|a| a.clone_ref(py)),
        }
    }

    /// Copies `obs` (`[n * dim]`, a reset's) into the observation array and returns it.
    pub fn fill_obs<'py>(
        &self,
        py: Python<'py>,
        obs: &[f32],
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let array = self.obs.bind(py).clone();
        // SAFETY: no step is in flight (the caller checked), so nothing else writes the array
        // while this copy does; the GIL is held.
        let rows = unsafe { array.as_slice_mut() }
            .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
        rows.copy_from_slice(obs);
        Ok(array)
    }

    /// Raw pointers to the arrays' memory, for the step's threads.
    pub fn target(&self, py: Python<'_>) -> Target {
        let (obs, reward) = (self.obs.bind(py), self.reward.bind(py));
        Target {
            obs: obs.data(),
            obs_len: PyUntypedArrayMethods::len(obs),
            reward: reward.data(),
            n: PyUntypedArrayMethods::len(reward),
            terminated: self.terminated.bind(py).data(),
            truncated: self.truncated.bind(py).data(),
            final_obs: self.final_obs.as_ref().map(|a| a.bind(py).data()),
        }
    }

    /// The arrays as the tuple a step returns.
    pub fn into_tuple(self, py: Python<'_>) -> StepTuple<'_> {
        (
            self.obs.into_bound(py),
            self.reward.into_bound(py),
            self.terminated.into_bound(py),
            self.truncated.into_bound(py),
            self.final_obs.map(|a| a.into_bound(py)),
        )
    }
}

/// Raw pointers into a [`StepArrays`]: valid while the arrays live and nothing else touches
/// them (the env keeps them until the step has finished).
pub struct Target {
    obs: *mut f32,
    obs_len: usize,
    reward: *mut f32,
    n: usize,
    terminated: *mut bool,
    truncated: *mut bool,
    final_obs: Option<*mut f32>,
}

// SAFETY: the pointers are handed to one step at a time, on one thread (whose workers
// write disjoint parts); the env keeps the arrays alive and unread until it has finished.
unsafe impl Send for Target {}

impl Target {
    /// The arrays as the step's outputs.
    ///
    /// # Safety
    /// The arrays must outlive `'a`, and nothing else may read or write them meanwhile.
    pub unsafe fn outputs<'a>(&self) -> HostOutputs<'a> {
        // SAFETY: the arrays are C-contiguous numpy arrays of these lengths (`fresh`), alive
        // and unshared for `'a` as the caller guarantees; the flags hold valid bools.
        unsafe {
            HostOutputs {
                obs: std::slice::from_raw_parts_mut(self.obs, self.obs_len),
                reward: std::slice::from_raw_parts_mut(self.reward, self.n),
                terminated: std::slice::from_raw_parts_mut(self.terminated, self.n),
                truncated: std::slice::from_raw_parts_mut(self.truncated, self.n),
                final_obs: self
                    .final_obs
                    .map(|rows| std::slice::from_raw_parts_mut(rows, self.obs_len)),
            }
        }
    }
}

/// The outputs of one env's step, on the stack of the calling thread (`step_one`).
pub struct OneStep {
    obs: Vec<f32>,
    reward: [f32; 1],
    terminated: [bool; 1],
    truncated: [bool; 1],
    final_obs: Option<Vec<f32>>,
}

impl OneStep {
    /// Room for one env's outputs.
    pub fn new(dim: usize, same_step: bool) -> Self {
        Self {
            obs: vec![0.0; dim],
            reward: [0.0],
            terminated: [false],
            truncated: [false],
            final_obs: same_step.then(|| vec![0.0; dim]),
        }
    }

    /// The outputs to step into.
    pub fn outputs(&mut self) -> HostOutputs<'_> {
        HostOutputs {
            obs: &mut self.obs,
            reward: &mut self.reward,
            terminated: &mut self.terminated,
            truncated: &mut self.truncated,
            final_obs: self.final_obs.as_deref_mut(),
        }
    }

    /// The observation.
    pub fn obs(&self) -> &[f32] {
        &self.obs
    }

    /// The reward.
    pub fn reward(&self) -> f32 {
        self.reward[0]
    }

    /// Whether the episode terminated.
    pub fn terminated(&self) -> bool {
        self.terminated[0]
    }

    /// Whether the episode was truncated.
    pub fn truncated(&self) -> bool {
        self.truncated[0]
    }
}
