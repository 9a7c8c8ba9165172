//! What a runtime offers the device-resident step of Python's `copy=False` on CUDA: the
//! addresses of its buffers, for [`DeviceArray`](crate::dlpack::DeviceArray) views, and a
//! copy of actions from another library's CUDA tensor into one of its buffers.
//!
//! Only CUDA has both: DLPack names no consumer of wgpu's buffers, and the CPU runtime's
//! `copy=False` already writes numpy arrays in place.

use std::any::Any;

use cartfuse_env::EnvBackend;
use dlpark::ffi::DLDevice;

use crate::error::BackendError;

/// Bytes on a device that a [`DeviceArray`](crate::dlpack::DeviceArray) shows, and what keeps them allocated.
pub struct Memory {
    /// The DLPack device.
    pub device: DLDevice,
    /// The first byte's address on that device.
    pub address: u64,
    /// Holds the allocation (the runtime's buffer handle) while any view of it lives.
    pub keep: Box<dyn Any + Send + Sync>,
}

/// A runtime's buffers as DLPack sees them.
pub trait ResidentMemory: EnvBackend {
    /// Where each of `buffers` lives, each holding its buffer allocated.
    fn export(&self, buffers: &[&Self::Buffer]) -> Result<Vec<Memory>, BackendError>;

    /// The DLPack device id of this runtime's device (`None`: no DLPack device).
    fn dlpack_device_id(&self) -> Option<i32>;

    /// Copies `bytes` from `from` to `into` (addresses on this device), after every operation
    /// enqueued on CUDA's legacy default stream (where the imported actions are ready), and
    /// waits for the copy: the next launch, on the runtime's own stream, reads them.
    fn copy_in(&self, into: u64, from: u64, bytes: usize) -> Result<(), BackendError>;
}

/// The error of a runtime without device views.
pub fn no_views(runtime: &str) -> BackendError {
    BackendError::invalid(
        "copy",
        format!(
            "device views (copy=False steps that keep outputs on the device) need device=\"cuda\"; \
             this env runs on {runtime:?}"
        ),
    )
}

impl ResidentMemory for cartfuse_fusion::cpu::Cpu {
    fn export(&self, _buffers: &[&Self::Buffer]) -> Result<Vec<Memory>, BackendError> {
        Err(no_views("cpu"))
    }

    fn dlpack_device_id(&self) -> Option<i32> {
        None
    }

    fn copy_in(&self, _: u64, _: u64, _: usize) -> Result<(), BackendError> {
        Err(no_views("cpu"))
    }
}

#[cfg(feature = "wgpu")]
impl ResidentMemory for cartfuse_fusion::cube::Cube<cubecl::wgpu::WgpuRuntime> {
    fn export(&self, _buffers: &[&Self::Buffer]) -> Result<Vec<Memory>, BackendError> {
        Err(no_views("wgpu"))
    }

    fn dlpack_device_id(&self) -> Option<i32> {
        None
    }

    fn copy_in(&self, _: u64, _: u64, _: usize) -> Result<(), BackendError> {
        Err(no_views("wgpu"))
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    use std::sync::OnceLock;

    use cartfuse_fusion::cube::Cube;
    use cubecl::cuda::CudaRuntime;
    use cubecl::device::Device;
    use cubecl::device_handle::DeviceHandle;
    use cubecl::prelude::Runtime;
    use cubecl::server::{ComputeServer, Handle, ServerError};
    use cubecl::stream_id::StreamId;
    use cudarc::driver::{result, sys};
    use dlpark::ffi::DLDevice;

    use super::{Memory, ResidentMemory};
    use crate::error::BackendError;

    fn failed(what: &str, error: impl std::fmt::Debug) -> BackendError {
        BackendError::Runtime(format!("CUDA {what}: {error:?}"))
    }

    /// Makes device `index`'s primary context (the one cubecl, torch and JAX share) current
    /// on the calling thread, retained once per process.
    fn bind_context(index: usize) -> Result<(), BackendError> {
        static CONTEXT: OnceLock<Result<usize, String>> = OnceLock::new();
        let context = CONTEXT.get_or_init(|| {
            // SAFETY: the driver was initialised when cubecl opened the device; the
            // context is retained for the life of the process.
            unsafe {
                let device = result::device::get(index as i32).map_err(|e| format!("{e:?}"))?;
                let context = result::primary_ctx::retain(device).map_err(|e| format!("{e:?}"))?;
                Ok(context as usize)
            }
        });
        let context = context.clone().map_err(|e| failed("context", e))?;
        // SAFETY: a retained primary context, never released.
        unsafe { result::ctx::set_current(context as sys::CUcontext) }
            .map_err(|e| failed("context", e))
    }

    impl ResidentMemory for Cube<CudaRuntime> {
        /// Every buffer's address in one round trip to cubecl's server.
        fn export(&self, buffers: &[&Handle]) -> Result<Vec<Memory>, BackendError> {
            let device = self.runtime_device();
            let bindings: Vec<_> = buffers.iter().map(|h| (*h).clone().binding()).collect();
            let stream = StreamId::current();
            let addresses = DeviceHandle::<<CudaRuntime as Runtime>::Server>::new(device.to_id())
                .submit_blocking(move |server| {
                    (bindings.into_iter())
                        .map(|binding| {
                            let resource = server.get_resource(binding, stream)?;
                            Ok(resource.resource().ptr)
                        })
                        .collect::<Result<Vec<u64>, ServerError>>()
                })
                .map_err(|e| failed("server", e))?
                .map_err(|e| failed("buffer address", e))?;
            let id = device.index as i32;
            Ok((buffers.iter().zip(addresses))
                .map(|(handle, address)| Memory {
                    device: DLDevice::cuda(id),
                    address,
                    keep: Box::new((*handle).clone()),
                })
                .collect())
        }

        fn dlpack_device_id(&self) -> Option<i32> {
            Some(self.runtime_device().index as i32)
        }

        fn copy_in(&self, into: u64, from: u64, bytes: usize) -> Result<(), BackendError> {
            bind_context(self.runtime_device().index)?;
            // CUDA's legacy default stream (CU_STREAM_LEGACY).
            let legacy = 0x1 as sys::CUstream;
            // SAFETY: both addresses are live device memory of `bytes` in the current
            // context (the imported tensor is held by the caller, the buffer by the env); the
            // host waits for the copy before either can go.
            unsafe {
                result::memcpy_dtod_async(into, from, bytes, legacy)
                    .map_err(|e| failed("copy of the actions", e))?;
                result::stream::synchronize(legacy).map_err(|e| failed("wait for the actions", e))
            }
        }
    }
}
