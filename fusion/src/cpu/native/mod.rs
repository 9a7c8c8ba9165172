//! Compiled CPU kernels: each planned launch as C, built by the system C compiler.
//!
//! The interpreter ([`super::interp::program`]) runs a launch as a list of SIMD loops, one per op,
//! each reading and writing chunk slots; `perf` put the fused CartPole step at several
//! cycles per op and vector, against about one for straight-line code holding values in
//! registers. This engine writes each launch as a C function whose lane loop is the whole
//! step ([`emit`]), compiles all launches of an executor as one translation unit
//! ([`compiler`]), and calls it over the same lane ranges and threads as the interpreter.
//! That is the route of XLA:CPU and `TorchInductor`'s CPU backend (generated source, an
//! optimising compiler, a cached shared object); a C compiler is used instead of linking
//! LLVM because every machine that builds cartfuse has one (Rust links with it), and crates
//! that embed LLVM download it at build time.
//!
//! Results are the interpreter's bits: the same instruction list, the C [`prelude`]'s
//! functions ported operation by operation from [`super::interp::math`] and [`super::interp::threefry`],
//! compiled without FMA contraction or fast-math. Launches the emitter does not write
//! (row reductions) run on the interpreter within the same executor.
//!
//! Which engine runs is [`CpuEngine`], chosen by [`CpuEngine::detect`].

pub mod compiler;
pub mod emit;
mod prelude;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::cpu::SimdLevel;
use crate::cpu::binder::Binder;
use crate::lir::program::LoweredLaunch;
pub use compiler::NativeError;
pub use emit::KernelFn;

/// How the CPU runtime executes a launch; its name (`Display`) is the one used on the
/// command line and in reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::Display, strum::EnumIter)]
#[strum(serialize_all = "lowercase")]
pub enum CpuEngine {
    /// Op by op over chunks of lanes (no compiler needed, nothing to compile).
    Interpreted,
    /// Each launch compiled to native code by the system C compiler.
    Compiled,
}

impl CpuEngine {
    /// `CARTFUSE_CPU_ENGINE` (`compiled` or `interpreted`) when set; otherwise `Compiled`
    /// when a C compiler answers, else `Interpreted` (logged once).
    pub fn detect() -> CpuEngine {
        if let Ok(asked) = std::env::var("CARTFUSE_CPU_ENGINE") {
            match asked.parse() {
                Ok(engine) => return engine,
                Err(e) => tracing::warn!("ignoring CARTFUSE_CPU_ENGINE: {e}"),
            }
        }
        match compiler::compiler() {
            Ok(_) => CpuEngine::Compiled,
            Err(e) => {
                static WARNED: std::sync::Once = std::sync::Once::new();
                WARNED.call_once(|| {
                    tracing::warn!("CPU kernels run interpreted (slower): {e}");
                });
                CpuEngine::Interpreted
            }
        }
    }
}

impl std::str::FromStr for CpuEngine {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        crate::switches::parse_choice(s, "CPU engine")
    }
}

/// The compiled launches of one executor.
pub struct NativeKernels {
    /// Keeps the functions' code mapped.
    _library: Arc<libloading::Library>,
    /// Per lowered launch: its function, or `None` where it runs interpreted.
    pub kernels: Vec<Option<KernelFn>>,
}

/// Nanoseconds spent in [`compile_launches`] by this process.
static BUILD_NANOS: AtomicU64 = AtomicU64::new(0);

/// Total wall time this process has spent building compiled kernels (emitting, compiling or
/// finding them in the cache, loading): the CPU's ahead-of-time share of a plan's JIT cost,
/// which a profiler adds to the first run's (device runtimes compile at the first launch).
pub fn total_build_time() -> Duration {
    Duration::from_nanos(BUILD_NANOS.load(Ordering::Relaxed))
}

/// Compiles every launch the emitter can write, as one shared object.
pub fn compile_launches(
    launches: &[LoweredLaunch],
    steps: u32,
    binder: &Binder<'_>,
    level: SimdLevel,
    split_guards: bool,
    masked_from: Option<u64>,
) -> Result<NativeKernels, NativeError> {
    let start = Instant::now();
    let mut source = prelude::prelude();
    let mut names = Vec::with_capacity(launches.len());
    for (i, launch) in launches.iter().enumerate() {
        let name = format!("cf_launch_{i}");
        match emit::emit_launch(launch, steps, &name, binder, split_guards, masked_from) {
            Ok(code) => {
                source.push_str(&code);
                names.push(Some(name));
            }
            Err(why) => {
                tracing::debug!(launch = %launch.name, ?why, "runs interpreted");
                names.push(None);
            }
        }
    }
    let library = compiler::build(&source, level)?;
    let load = |name: &String| {
        // SAFETY: every emitted function has the `KernelFn` signature.
        let f = unsafe { library.get::<KernelFn>(name.as_bytes()) };
        f.map(|f| *f).map_err(|source| NativeError::Load {
            path: name.clone(),
            source,
        })
    };
    let kernels = (names.iter().map(|name| name.as_ref().map(load).transpose()))
        .collect::<Result<_, NativeError>>()?;
    BUILD_NANOS.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    Ok(NativeKernels {
        _library: library,
        kernels,
    })
}
