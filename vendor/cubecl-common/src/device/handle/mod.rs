mod base;

pub use base::*;

use crate::device::{DeviceId, DeviceService, ServerUtilitiesHandle};

#[cfg(feature = "std")]
#[allow(dead_code)]
mod channel;

#[allow(dead_code)]
mod mutex;

#[cfg(feature = "std")]
#[allow(dead_code)]
mod reentrant;

#[cfg(feature = "std")]
pub mod thread_choice;

/// cartfuse's patch: under `std` the handle is chosen when the process first opens a
/// service of each type ([`thread_choice`]): upstream's device thread fed by a channel, or
/// the calling thread under a reentrant mutex (upstream's choice for wasm only).
#[cfg(feature = "std")]
enum Inner<S: DeviceService> {
    Channel(channel::ChannelDeviceHandle<S>),
    Caller(reentrant::ReentrantMutexDeviceHandle<S>),
}

#[cfg(feature = "std")]
macro_rules! dispatch {
    ($inner:expr, $handle:ident => $body:expr) => {
        match $inner {
            Inner::Channel($handle) => $body,
            Inner::Caller($handle) => $body,
        }
    };
}

#[cfg(feature = "std")]
impl<S: DeviceService> Clone for Inner<S> {
    fn clone(&self) -> Self {
        match self {
            Inner::Channel(handle) => Inner::Channel(handle.clone()),
            Inner::Caller(handle) => Inner::Caller(handle.clone()),
        }
    }
}

#[cfg(feature = "std")]
impl<S: DeviceService> Inner<S> {
    fn blocking() -> bool {
        thread_choice::on_calling_thread::<S>()
    }

    fn insert(device_id: DeviceId, service: S) -> Result<Self, ServiceCreationError> {
        Ok(if Self::blocking() {
            Inner::Caller(DeviceHandleSpec::insert(device_id, service)?)
        } else {
            Inner::Channel(DeviceHandleSpec::insert(device_id, service)?)
        })
    }

    fn new(device_id: DeviceId) -> Self {
        if Self::blocking() {
            Inner::Caller(DeviceHandleSpec::new(device_id))
        } else {
            Inner::Channel(DeviceHandleSpec::new(device_id))
        }
    }

    fn device_id(&self) -> DeviceId {
        dispatch!(self, handle => handle.device_id())
    }

    fn utilities(&self) -> ServerUtilitiesHandle {
        dispatch!(self, handle => handle.utilities())
    }

    fn flush_queue(&self) {
        dispatch!(self, handle => handle.flush_queue())
    }

    fn submit_blocking<'a, R: Send, T: FnOnce(&mut S) -> R + Send + 'a>(
        &self,
        task: T,
    ) -> Result<R, CallError> {
        dispatch!(self, handle => handle.submit_blocking(task))
    }

    fn submit<T: FnOnce(&mut S) + Send + 'static>(&self, task: T) {
        dispatch!(self, handle => handle.submit(task))
    }

    fn exclusive<R: Send, T: FnOnce() -> R + Send>(&self, task: T) -> Result<R, CallError> {
        dispatch!(self, handle => handle.exclusive(task))
    }
}

#[cfg(all(not(feature = "std"), not(multi_threading)))]
type Inner<S> = mutex::MutexDeviceHandle<S>;

/// TODO: Docs
pub struct DeviceHandle<S: DeviceService> {
    handle: Inner<S>,
}

impl<S: DeviceService> Clone for DeviceHandle<S> {
    fn clone(&self) -> Self {
        Self {
            handle: self.handle.clone(),
        }
    }
}

#[allow(missing_docs)]
impl<S: DeviceService> DeviceHandle<S> {
    /// Whether calls run on the calling thread (cartfuse's patch: no longer `const`, the
    /// choice is made at run time).
    #[cfg(feature = "std")]
    pub fn is_blocking() -> bool {
        Inner::<S>::blocking()
    }

    #[cfg(not(feature = "std"))]
    pub const fn is_blocking() -> bool {
        <Inner<S> as DeviceHandleSpec<S>>::BLOCKING
    }

    pub fn insert(device_id: super::DeviceId, service: S) -> Result<Self, ServiceCreationError> {
        Ok(Self {
            handle: Inner::<S>::insert(device_id, service)?,
        })
    }

    pub fn new(device_id: super::DeviceId) -> Self {
        Self {
            handle: Inner::<S>::new(device_id),
        }
    }

    pub fn device_id(&self) -> DeviceId {
        self.handle.device_id()
    }

    pub fn utilities(&self) -> ServerUtilitiesHandle {
        self.handle.utilities()
    }

    pub fn submit_blocking<'a, R: Send, T: FnOnce(&mut S) -> R + Send + 'a>(
        &self,
        task: T,
    ) -> Result<R, CallError> {
        self.handle.submit_blocking(task)
    }

    pub fn submit<T: FnOnce(&mut S) + Send + 'static>(&self, task: T) {
        self.handle.submit(task)
    }

    pub fn flush_queue(&self) {
        self.handle.flush_queue();
    }

    pub fn exclusive<R: Send, T: FnOnce() -> R + Send>(&self, task: T) -> Result<R, CallError> {
        self.handle.exclusive(task)
    }
}

#[cfg(test)]
mod tests_channel {
    type DeviceHandle<S> = channel::ChannelDeviceHandle<S>;

    include!("./tests.rs");
    include!("./tests_recursive.rs");
}

#[cfg(test)]
mod tests_mutex {
    type DeviceHandle<S> = mutex::MutexDeviceHandle<S>;

    include!("./tests.rs");
}

#[cfg(test)]
mod tests_reentrant {
    type DeviceHandle<S> = reentrant::ReentrantMutexDeviceHandle<S>;

    include!("./tests.rs");
    include!("./tests_recursive.rs");
}
