//! [`CpuBuffer`]: host memory shared by handle, the CPU's counterpart of a device buffer.
//!
//! Runners hand buffers to each other without copying (a reset runner's new state becomes
//! the step runner's input), exactly as device handles are shared. Each buffer sits behind
//! its own mutex: a runner locks the distinct buffers it binds for the length of one run,
//! so a buffer read from another thread meanwhile waits instead of racing. Uncontended, a
//! lock costs one atomic operation.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Words of padding after every buffer: a chunk's last vector may read past the end.
pub(super) const PAD: usize = 16;

/// A buffer of 32-bit words in host memory, cloned by handle.
#[derive(Clone)]
pub struct CpuBuffer {
    words: Arc<Mutex<Vec<u32>>>,
    len: usize,
}

impl std::fmt::Debug for CpuBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CpuBuffer({} words)", self.len)
    }
}

impl CpuBuffer {
    /// `len` zero words.
    pub fn zeroed(len: usize) -> Self {
        Self::from_words(vec![0; len + PAD], len)
    }

    /// A buffer holding `values`' bit patterns.
    pub fn from_u32(values: &[u32]) -> Self {
        Self::from_words([values, &[0; PAD]].concat(), values.len())
    }

    /// A buffer holding `values`' bit patterns.
    pub fn from_f32(values: &[f32]) -> Self {
        Self::from_u32(bytemuck::cast_slice(values))
    }

    fn from_words(words: Vec<u32>, len: usize) -> Self {
        Self {
            words: Arc::new(Mutex::new(words)),
            len,
        }
    }

    /// Elements (32-bit words), padding excluded.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `self` and `other` are the same memory.
    pub fn same(&self, other: &CpuBuffer) -> bool {
        Arc::ptr_eq(&self.words, &other.words)
    }

    /// Exclusive access to the words, padding included, for the length of a kernel (a panic
    /// elsewhere cannot leave the words half-typed, so a poisoned lock is taken over).
    pub fn lock(&self) -> MutexGuard<'_, Vec<u32>> {
        self.words.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The words as `u32`.
    pub fn to_u32(&self) -> Vec<u32> {
        self.lock()[..self.len].to_vec()
    }

    /// The words as `f32`.
    pub fn to_f32(&self) -> Vec<f32> {
        bytemuck::cast_slice(&self.lock()[..self.len]).to_vec()
    }
}
