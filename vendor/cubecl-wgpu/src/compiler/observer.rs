//! cartfuse's patch (vendor/README.md): a function every kernel definition passes through
//! when cubecl-wgpu compiles it, so a process can translate the same kernels for another
//! target (cartfuse writes the CUDA C++ of each, `CARTFUSE_CUDA_SOURCES`).

use std::sync::OnceLock;

use cubecl_core::{ExecutionMode, ir::StorageType, prelude::KernelDefinition};

/// Called with a copy of each kernel definition once cubecl-wgpu has compiled it, with the
/// mode and address type it was compiled for.
pub type KernelDefinitionObserver = fn(&KernelDefinition, ExecutionMode, StorageType);

static OBSERVER: OnceLock<KernelDefinitionObserver> = OnceLock::new();

/// Sets the process's observer; `false` when one was already set (it stays).
pub fn observe_kernel_definitions(observer: KernelDefinitionObserver) -> bool {
    OBSERVER.set(observer).is_ok()
}

pub(crate) fn observing() -> bool {
    OBSERVER.get().is_some()
}

/// A copy of `kernel` that compiles on its own. A scope's copies share its allocator, whose
/// pool of mutable locals the first compile takes (and declares): the pooled locals move to
/// the scope's own list of locals first, which every copy then holds and declares alike.
pub(crate) fn detached_copy(kernel: &mut KernelDefinition) -> KernelDefinition {
    let pooled = kernel.body.allocator.take_variables();
    kernel.body.locals.extend(pooled);
    kernel.clone()
}

pub(crate) fn notify(kernel: &KernelDefinition, mode: ExecutionMode, addr_type: StorageType) {
    if let Some(observer) = OBSERVER.get() {
        observer(kernel, mode, addr_type);
    }
}
