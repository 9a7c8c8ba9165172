//! The runtime suites on the native CPU runtime's interpreter (every thread, the best SIMD
//! level), which runs launches op by op where the default engine compiles them.

use cartfuse::fusion::cpu::{CpuEngine, CpuOptions};

/// The backend these suites run on.
pub type TestBackend = cartfuse::fusion::cpu::Cpu;

/// The host CPU, interpreting.
pub fn backend() -> TestBackend {
    cartfuse::fusion::cpu::Cpu::new(CpuOptions {
        engine: CpuEngine::Interpreted,
        ..CpuOptions::default()
    })
    .expect("the detected SIMD level is supported")
}

runtime_suites!();
