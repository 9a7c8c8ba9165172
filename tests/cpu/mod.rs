//! The runtime suites on the native CPU runtime (every thread, the best SIMD level).

/// The backend these suites run on.
pub type TestBackend = cartfuse::fusion::cpu::Cpu;

/// The host CPU.
pub fn backend() -> TestBackend {
    cartfuse::fusion::cpu::Cpu::default()
}

runtime_suites!();
