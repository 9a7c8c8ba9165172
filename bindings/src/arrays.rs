//! The numpy arrays a step writes its outputs into, and the raw view of them the step's
//! threads write through.
//!
//! With `copy=True` every step returns arrays of its own ([`Recycler::take`]): the step's
//! worker threads write into them directly, so the caller keeps them and nothing is copied.
//! They are new arrays, or arrays of an earlier step that Python no longer references (the
//! recycler's reference is the only one left, no weak reference exists, and the array's
//! shape, dtype, data and flags are as made), so no caller can see them written again; this saves numpy's allocation and glibc's consolidation of freed
//! 64 KiB blocks, which cost about 0.5 us of a 7 us step at 4,096 CartPole envs. With
//! `copy=False` every step writes the env's own arrays ([`StepArrays::fresh`] once, then
//! [`StepArrays::clone_ref`]), which the caller receives as views, valid until the next step.
//! [`Outputs`] is the choice between the two (and device views, which make no host arrays).

use std::sync::Mutex;

use cartfuse_env::HostOutputs;
use numpy::ndarray::{Dimension, IntoDimension};
use numpy::{Element, PyArray, PyArray1, PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;

use crate::error::{lock, to_py};

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

/// A new C-contiguous `f32` array of `shape`, left uninitialised: every step writes all of it
/// before returning it to Python (a failed step returns none of its arrays).
fn floats<'py, S: IntoDimension>(py: Python<'py>, shape: S) -> Bound<'py, PyArray<f32, S::Dim>> {
    // SAFETY: numpy allocates the array; see above for the writes.
    unsafe { PyArray::new(py, shape, false) }
}

/// A new bool array of `n` flags, false: the step's `&mut [bool]` must hold valid bools.
fn flags(py: Python<'_>, n: usize) -> Bound<'_, PyArray1<bool>> {
    PyArray1::zeros(py, [n], false)
}

/// Bytes the data of a `copy=False` env's own arrays is aligned to: JAX (XLA's CPU client)
/// takes a DLPack buffer in place only at this alignment and copies it otherwise; numpy
/// aligns its allocations to 16 bytes.
pub const SHARED_ALIGN: usize = 64;

/// A C-contiguous array of `shape` whose data starts at a multiple of [`SHARED_ALIGN`]
/// bytes: a view into an array numpy allocated a little larger by `make` (its base).
fn aligned<'py, T: Element, D: Dimension>(
    py: Python<'py>,
    shape: &[usize],
    make: impl FnOnce(usize) -> Bound<'py, PyArray1<T>>,
) -> PyResult<Bound<'py, PyArray<T, D>>> {
    let size = std::mem::size_of::<T>();
    let len: usize = shape.iter().product();
    let whole = make(len + SHARED_ALIGN / size);
    let address = whole.data() as usize;
    let skip = (SHARED_ALIGN - address % SHARED_ALIGN) % SHARED_ALIGN / size;
    let part = pyo3::types::PySlice::new(py, skip as isize, (skip + len) as isize, 1);
    let view = whole
        .get_item(part)?
        .call_method1("reshape", (shape.to_vec(),))?;
    Ok(view.cast_into::<PyArray<T, D>>()?)
}

impl StepArrays {
    /// New C-contiguous arrays for `n` envs of `dim`-long observations, their data aligned
    /// to [`SHARED_ALIGN`] bytes; final observations when `same_step`. Floats are left
    /// uninitialised (every step writes all of them); flags start false.
    pub fn fresh(py: Python<'_>, n: usize, dim: usize, same_step: bool) -> PyResult<Self> {
        let rows = |py| aligned(py, &[n, dim], |len| floats(py, [len]));
        Ok(Self {
            obs: rows(py)?.unbind(),
            reward: aligned(py, &[n], |len| floats(py, [len]))?.unbind(),
            terminated: aligned(py, &[n], |len| flags(py, len))?.unbind(),
            truncated: aligned(py, &[n], |len| flags(py, len))?.unbind(),
            final_obs: same_step.then(|| rows(py)).transpose()?.map(Bound::unbind),
        })
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

/// How many arrays of each output a [`Recycler`] keeps: the arrays of the step before last
/// are free again in a plain `obs, ... = env.step(a)` loop (the last step's are still bound
/// while the next one runs), one more covers `step_async` issued before the caller drops them.
const RECYCLED_PER_OUTPUT: usize = 3;

/// The arrays of one output that a `copy=True` env has handed out recently.
struct Pool<T: Element, D: Dimension> {
    /// The shape every array of the pool has.
    shape: Vec<usize>,
    arrays: Vec<Kept<T, D>>,
    /// The slot a new array replaces once the pool is full (the oldest).
    next: usize,
}

/// An array of a [`Pool`], with the header fields it was made with.
struct Kept<T: Element, D: Dimension> {
    array: Py<PyArray<T, D>>,
    data: *mut std::ffi::c_char,
    descr: *mut numpy::npyffi::PyArray_Descr,
}

// SAFETY: the pointers are only compared, never dereferenced; the array is a `Py`, which is
// `Send` (the recycler lives in a `Mutex` of an env Python may hand between threads).
unsafe impl<T: Element, D: Dimension> Send for Kept<T, D> {}

impl<T: Element, D: Dimension> Pool<T, D> {
    fn new(shape: &[usize]) -> Self {
        Self {
            shape: shape.to_vec(),
            arrays: Vec::with_capacity(RECYCLED_PER_OUTPUT),
            next: 0,
        }
    }

    /// An array nobody else references, or `make()`'s, which the pool then keeps.
    fn take<'py>(
        &mut self,
        py: Python<'py>,
        make: impl FnOnce() -> Bound<'py, PyArray<T, D>>,
    ) -> Py<PyArray<T, D>> {
        use numpy::npyffi::flags::{
            NPY_ARRAY_C_CONTIGUOUS, NPY_ARRAY_OWNDATA, NPY_ARRAY_WRITEABLE,
        };
        const AS_MADE: std::ffi::c_int =
            NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_OWNDATA | NPY_ARRAY_WRITEABLE;
        // Free: referenced by the pool alone, no weak reference, and still as it was made (a
        // caller may have set its `shape`, `dtype` or `flags.writeable` in place before
        // dropping it).
        let free = |kept: &Kept<T, D>| {
            let array = kept.array.bind(py);
            // SAFETY: a live numpy array object, whose header and reference count are read,
            // not written, with the GIL held.
            unsafe {
                let fields = &(*array.as_array_ptr()).fields;
                pyo3::ffi::Py_REFCNT(array.as_ptr()) == 1
                    && fields.weakreflist.is_null()
                    && fields.data == kept.data
                    && fields.descr == kept.descr
                    && fields.flags & AS_MADE == AS_MADE
                    && array.shape() == self.shape.as_slice()
            }
        };
        if let Some(kept) = self.arrays.iter().find(|kept| free(kept)) {
            return kept.array.clone_ref(py);
        }
        let made = make();
        // SAFETY: as above, a fresh array's header.
        let (data, descr) = unsafe {
            let fields = &(*made.as_array_ptr()).fields;
            (fields.data, fields.descr)
        };
        let kept = Kept {
            array: made.clone().unbind(),
            data,
            descr,
        };
        if self.arrays.len() < RECYCLED_PER_OUTPUT {
            self.arrays.push(kept);
        } else {
            self.arrays[self.next] = kept;
            self.next = (self.next + 1) % RECYCLED_PER_OUTPUT;
        }
        made.unbind()
    }
}

/// The output arrays a `copy=True` env hands out, each written again only once Python holds
/// no reference to it.
pub struct Recycler {
    n: usize,
    dim: usize,
    obs: Pool<f32, numpy::Ix2>,
    reward: Pool<f32, numpy::Ix1>,
    terminated: Pool<bool, numpy::Ix1>,
    truncated: Pool<bool, numpy::Ix1>,
    final_obs: Option<Pool<f32, numpy::Ix2>>,
}

impl Recycler {
    /// Arrays for `n` envs of `dim`-long observations; final observations when `same_step`.
    pub fn new(n: usize, dim: usize, same_step: bool) -> Self {
        Self {
            n,
            dim,
            obs: Pool::new(&[n, dim]),
            reward: Pool::new(&[n]),
            terminated: Pool::new(&[n]),
            truncated: Pool::new(&[n]),
            final_obs: same_step.then(|| Pool::new(&[n, dim])),
        }
    }

    /// `(n, dim)`: envs and the length of an observation.
    pub fn shape(&self) -> (usize, usize) {
        (self.n, self.dim)
    }

    /// Arrays for the next step that no caller can see (their contents are stale: every
    /// step writes all of them, as the env's own arrays under `copy=False` rely on too).
    pub fn take(&mut self, py: Python<'_>) -> StepArrays {
        let (n, dim) = (self.n, self.dim);
        StepArrays {
            obs: self.obs.take(py, || floats(py, [n, dim])),
            reward: self.reward.take(py, || floats(py, [n])),
            terminated: self.terminated.take(py, || flags(py, n)),
            truncated: self.truncated.take(py, || flags(py, n)),
            final_obs: (self.final_obs.as_mut()).map(|pool| pool.take(py, || floats(py, [n, dim]))),
        }
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

/// Where each step's output arrays come from, by the env's `copy` and its device.
pub enum Outputs {
    /// `copy=True`: arrays of the step's own, recycled once Python has dropped them.
    Recycled(Box<Mutex<Recycler>>),
    /// `copy=False`: the env's own arrays, written by every step.
    Own(StepArrays),
    /// `copy=False` where the runtime has device views: the outputs stay on the device
    /// (`NativeVecEnv::step_views`), so no host array is made unless a host step asks
    /// (then as under `copy=True`).
    Views(Box<Mutex<Recycler>>),
}

impl Outputs {
    /// The outputs of `n` envs of `dim` observations: `copy`, or views where the device
    /// has them (`views`), or the env's own arrays.
    pub fn new(
        py: Python<'_>,
        copy: bool,
        views: bool,
        n: usize,
        dim: usize,
        same_step: bool,
    ) -> PyResult<Self> {
        let recycler = || Box::new(Mutex::new(Recycler::new(n, dim, same_step)));
        Ok(match (copy, views) {
            (true, _) => Self::Recycled(recycler()),
            (false, true) => Self::Views(recycler()),
            (false, false) => Self::Own(StepArrays::fresh(py, n, dim, same_step)?),
        })
    }

    /// Whether every step returns arrays of its own (`copy=True`).
    pub fn copies(&self) -> bool {
        matches!(self, Self::Recycled(_))
    }

    /// The arrays the next step writes: the env's own, or ones no caller references.
    pub fn next(&self, py: Python<'_>) -> PyResult<StepArrays> {
        match self {
            Self::Own(own) => Ok(own.clone_ref(py)),
            Self::Recycled(recycler) | Self::Views(recycler) => {
                Ok(lock(recycler).map_err(to_py)?.take(py))
            }
        }
    }

    /// `reset`'s observations (`n * dim`, row-major) as the array the caller receives: the
    /// env's own under `copy=False` on the host, a new one otherwise.
    pub fn reset_obs<'py>(
        &self,
        py: Python<'py>,
        obs: Vec<f32>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        match self {
            Self::Own(own) => own.fill_obs(py, &obs),
            Self::Recycled(recycler) | Self::Views(recycler) => {
                let (n, dim) = lock(recycler).map_err(to_py)?.shape();
                crate::convert::rows(py, obs, n, dim)
            }
        }
    }
}
