//! DLPack in both directions, through `dlpark`: [`DeviceArray`], a view of memory an env
//! keeps on its device that `torch.from_dlpack`, `jax.dlpack.from_dlpack` and
//! `numpy.from_dlpack` take without a copy, and [`import_actions`], which takes a CUDA tensor
//! of actions (a torch or JAX array) in place.
//!
//! A view is valid until the env's next step or reset, which overwrite (or, after a reset,
//! replace) its memory; the memory itself stays allocated while any view or tensor made
//! from it lives. Every step that returns views has finished on the device before it
//! returns, so a consumer may read them on any stream: `__dlpack__` ignores `stream`. The
//! other way round nothing is ordered for it: a step with host actions does not wait for
//! consumer work still reading the last views (the consumer finishes it first; a step with
//! a CUDA tensor of actions waits for CUDA's legacy stream, where torch's default work runs).

use std::ffi::c_void;
use std::sync::Arc;

use dlpark::ffi::{DLDataType, DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned};
use dlpark::metadata::Dynamic;
use dlpark::python::producer::{DlpackExporter, ExportRequest, export_dlpack};
use dlpark::{DlpackFlags, Managed, ManagedTensorBase};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::envs::EnvInfo;
use crate::resident::Memory;
use cartfuse_env::spaces::ActionSpace;

/// The element types an env's device memory holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    /// Observations, rewards, continuous actions.
    F32,
    /// Flags (0 or 1; the device keeps them as 32-bit words) and discrete actions.
    I32,
}

impl Element {
    fn dtype(self) -> DLDataType {
        match self {
            Element::F32 => DLDataType::F32,
            Element::I32 => DLDataType::I32,
        }
    }

    /// numpy's name of the type.
    pub fn name(self) -> &'static str {
        match self {
            Element::F32 => "float32",
            Element::I32 => "int32",
        }
    }
}

/// A view of an env's output on its device, exported through DLPack
/// (`torch.from_dlpack(view)`), valid until the env's next step or reset.
#[pyclass(module = "cartfuse._native", frozen)]
pub struct DeviceArray {
    memory: Arc<Memory>,
    shape: Vec<i64>,
    element: Element,
}

impl DeviceArray {
    /// A view of `memory` as a C-contiguous array of `shape`.
    pub fn new(memory: Arc<Memory>, shape: &[usize], element: Element) -> Self {
        Self {
            memory,
            shape: shape.iter().map(|&d| d as i64).collect(),
            element,
        }
    }

    fn managed<M: ManagedTensorBase>(&self) -> PyResult<Managed<M>> {
        let mut tensor = Dynamic::compact(self.shape.clone())
            .initialize_as::<M>(Arc::clone(&self.memory))
            .map_err(|error| PyRuntimeError::new_err(format!("DLPack export: {error}")))?;
        tensor
            .set_data(self.memory.address as *mut c_void)
            .set_device(self.memory.device)
            .set_dtype(self.element.dtype());
        // SAFETY: the data pointer addresses `shape`'s elements of the env's buffer, which
        // the context (an `Arc` of the memory and its handle) keeps allocated until the
        // consumer's deleter runs; shape and strides are the compact ones dlpark wrote.
        Ok(unsafe { tensor.finish() })
    }
}

impl DlpackExporter for DeviceArray {
    fn device(&self) -> DLDevice {
        self.memory.device
    }

    fn flags(&self) -> DlpackFlags {
        DlpackFlags::empty()
    }

    fn prepare_export(&self, _py: Python<'_>, _request: &ExportRequest<'_>) -> PyResult<()> {
        // The step that made this view finished on the device before returning it.
        Ok(())
    }

    fn export_legacy(&self, _py: Python<'_>) -> PyResult<Managed<DLManagedTensor>> {
        self.managed()
    }

    fn export_versioned(&self, _py: Python<'_>) -> PyResult<Managed<DLManagedTensorVersioned>> {
        self.managed()
    }
}

#[pymethods]
impl DeviceArray {
    /// The array's shape.
    #[getter]
    fn shape(&self) -> Vec<i64> {
        self.shape.clone()
    }

    /// numpy's name of the element type (`"float32"` or `"int32"`).
    #[getter]
    fn dtype(&self) -> &'static str {
        self.element.name()
    }

    /// The device, as torch names it (`"cuda:0"`, `"cpu"`).
    #[getter]
    fn device(&self) -> String {
        device_name(self.memory.device)
    }

    /// The array as a DLPack capsule (the Python array API's `__dlpack__`).
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(u32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let request = ExportRequest::parse(stream.as_ref(), max_version, dl_device, copy)?;
        export_dlpack(self, py, request)
    }

    /// `(device type, device id)` as DLPack numbers them (2 is CUDA, 1 the CPU).
    fn __dlpack_device__(&self) -> (u32, i32) {
        (
            self.memory.device.device_type.0,
            self.memory.device.device_id,
        )
    }

    fn __len__(&self) -> usize {
        self.shape.first().map_or(0, |&d| d as usize)
    }

    fn __repr__(&self) -> String {
        format!(
            "DeviceArray(shape={:?}, dtype={}, device={})",
            self.shape,
            self.element.name(),
            device_name(self.memory.device)
        )
    }
}

fn device_name(device: DLDevice) -> String {
    match device.device_type {
        DLDeviceType::CUDA => format!("cuda:{}", device.device_id),
        DLDeviceType::CPU => "cpu".into(),
        other => format!("dlpack device {}:{}", other.0, device.device_id),
    }
}

/// A copy of host `values` as a CPU [`DeviceArray`]: the export path of the device views,
/// checkable by `numpy.from_dlpack` on a machine without a GPU.
pub fn host_array(values: Vec<f32>) -> DeviceArray {
    let shape = [values.len()];
    let address = values.as_ptr() as u64;
    let memory = Memory {
        device: DLDevice::CPU,
        address,
        keep: Box::new(values),
    };
    DeviceArray::new(Arc::new(memory), &shape, Element::F32)
}

/// Actions imported through DLPack, in place: valid while this lives.
pub struct ImportedActions {
    /// The imported tensor (its deleter runs on drop).
    _tensor: dlpark::python::ImportedDlpack,
    /// The address of the first action.
    pub address: u64,
    /// Bytes the actions take.
    pub bytes: usize,
}

/// Whether `actions` is a DLPack producer on a CUDA device.
pub fn is_cuda(actions: &Bound<'_, PyAny>) -> bool {
    actions.hasattr("__dlpack_device__").unwrap_or(false)
        && dlpark::python::dlpack_device(actions.as_borrowed())
            .is_ok_and(|device| device.device_type == DLDeviceType::CUDA)
}

/// CUDA's legacy default stream, the one the actions must be ready on when imported: the
/// copy out of them runs there, and the host waits for it before stepping.
struct LegacyStream;

// SAFETY: the legacy default stream (DLPack's `1`) exists in every CUDA context.
unsafe impl dlpark::python::DlpackStream for LegacyStream {
    fn as_python_arg(
        &self,
        _py: Python<'_>,
        _device: DLDevice,
    ) -> PyResult<dlpark::python::StreamArg> {
        Ok(dlpark::python::consumer::stream::cuda(std::ptr::null_mut()))
    }
}

/// Whether a tensor of `shape` with `strides` (in elements; `None`: compact) lays its
/// elements out row-major without gaps. A dimension of size 1 may have any stride, as
/// DLPack and torch allow (a one-env slice such as `x[::2]`, a transposed `(1, k)`).
fn is_contiguous(shape: &[i64], strides: Option<&[i64]>) -> bool {
    let Some(strides) = strides else {
        return true;
    };
    if shape.len() != strides.len() {
        return false;
    }
    let mut expected = 1;
    for (&size, &stride) in shape.iter().zip(strides).rev() {
        if size != 1 && stride != expected {
            return false;
        }
        expected *= size;
    }
    true
}

/// Imports `actions`, a tensor of `n` envs' actions of the environment `info` describes,
/// on `device`, in place (on CUDA: ready on CUDA's legacy default stream). Discrete actions
/// are int32 `(n,)`, a `Box`'s float32 `(n, k)` (or `(n,)` when `k` is 1). Wrong devices,
/// types, shapes and strides are `TypeError`/`ValueError`s naming `actions`.
pub fn import_actions(
    actions: &Bound<'_, PyAny>,
    info: &EnvInfo,
    n: usize,
    device: DLDevice,
) -> PyResult<ImportedActions> {
    let (element, expected) = match &info.action {
        ActionSpace::Discrete(_) => (Element::I32, vec![vec![n]]),
        ActionSpace::Box(_) => {
            let k = info.action_size();
            let flat = (k == 1).then(|| vec![n]);
            let shapes = [Some(vec![n, k]), flat].into_iter().flatten().collect();
            (Element::F32, shapes)
        }
    };
    let stream = (device.device_type == DLDeviceType::CUDA)
        .then_some(&LegacyStream as &dyn dlpark::python::DlpackStream);
    let tensor =
        match dlpark::python::ImportRequest::new(actions.as_borrowed())?.import(stream, None) {
            Ok(tensor) => tensor,
            // A producer from before DLPack 1.0's keywords (`max_version`): the stream alone.
            Err(error) if error.is_instance_of::<PyTypeError>(actions.py()) => {
                let kwargs = pyo3::types::PyDict::new(actions.py());
                if stream.is_some() {
                    kwargs.set_item("stream", 1)?;
                }
                let capsule = actions.call_method("__dlpack__", (), Some(&kwargs))?;
                dlpark::python::from_dlpack(capsule.as_borrowed(), None, None)?
            }
            Err(error) => return Err(error),
        };
    let view = tensor
        .validate()
        .map_err(|error| PyValueError::new_err(format!("actions: {error}")))?;
    if view.device() != device {
        return Err(PyValueError::new_err(format!(
            "actions: expected a tensor on {}, got one on {}",
            device_name(device),
            device_name(view.device())
        )));
    }
    if !view.dtype().matches(element.dtype()) {
        let hint = match element {
            Element::I32 => "int32 (torch: actions.int())",
            Element::F32 => "float32 (torch: actions.float())",
        };
        return Err(PyTypeError::new_err(format!(
            "actions: expected a tensor of {hint}, got DLPack type code {} of {} bits",
            view.dtype().code.0,
            view.dtype().bits
        )));
    }
    let shape: Vec<usize> = view.shape().iter().map(|&d| d as usize).collect();
    if !expected.contains(&shape) {
        let shapes: Vec<String> = expected.iter().map(|s| format!("{s:?}")).collect();
        return Err(PyValueError::new_err(format!(
            "actions: expected shape {}, got {shape:?}",
            shapes.join(" or ")
        )));
    }
    if !is_contiguous(view.shape(), view.strides()) {
        return Err(PyValueError::new_err(
            "actions: expected a contiguous tensor (torch: actions.contiguous())",
        ));
    }
    let address = view.data_ptr() as u64 + view.byte_offset();
    let bytes = view.num_bytes();
    Ok(ImportedActions {
        _tensor: tensor,
        address,
        bytes,
    })
}
