//! The single integration-test binary (cubecl and wgpu are linked once).
//!
//! The suites that exercise a runtime are written once and compiled once per runtime by
//! `runtime_suites!`: `wgpu` (the default adapter; a machine without one fails these tests
//! with install instructions, nothing is skipped silently), `cpu` (the native runtime,
//! compiled kernels), `cpu_interpreted` (its op-by-op interpreter) and, built with
//! `--features cuda`, `cuda`.
//! Suites about the binary and burn run once.

// Loading each suite file once per runtime module is the point: one instantiation per runtime.
#![allow(clippy::duplicate_mod)]

/// The burn-tensor step against the reference.
mod burn;
/// The binary end to end.
mod cli;
/// The binary's `bench` command end to end.
mod cli_bench;
/// The binary's study commands end to end.
mod cli_study;
/// Float slices compared within a tolerance.
mod close;
/// `scripts/cuda-compile-check.sh`'s refusals, without clang or a GPU.
mod cuda_compile_check;
/// burn's policy and the env step on one device (wgpu), against the host source; the device
/// learner, and a population whose samples stay on the device.
#[cfg(feature = "wgpu")]
mod device_learner;
/// The trajectories recorded from gymnasium.
mod fixtures;
/// `scripts/gpu-check.sh` without a GPU: arguments, the no-GPU path, the summary.
mod gpu_check;
/// `scripts/gpu-session.sh` without a GPU: its parts in order under one budget.
mod gpu_session;
/// Random valid graphs for the property tests.
mod graph_gen;
/// `scripts/host-path.sh` (issue 49's host-path table) on wgpu and the CPU.
mod host_path;
/// The release binary's SIMD code is inlined under its target features.
mod inlining;
/// Recorded episodes replayed on every runtime, the runtimes compared.
mod replays;
/// `cartfuse train` end to end.
mod train_cli;
/// XLA's fusion pipeline: its rules on random graphs, its kernel counts on the study's program.
mod xla_pipeline;

/// Declares the runtime-generic suites in the calling module, which defines `TestBackend`
/// and `backend()` (`wgpu/mod.rs`, `cpu/mod.rs`).
macro_rules! runtime_suites {
    () => {
        #[path = "../util.rs"]
        mod util;

        /// Exact launch and byte counts.
        #[path = "../accounting.rs"]
        mod accounting;
        /// Autoreset modes, truncation and step counters, step by step against the reference.
        #[path = "../episodes.rs"]
        mod episodes;
        /// Every bad input gets its error.
        #[path = "../errors.rs"]
        mod errors;
        /// Every environment against trajectories recorded from gymnasium itself.
        #[path = "../gymnasium.rs"]
        mod gymnasium;
        /// Every float op against the CPU runtime's definitions, as the backend promises.
        #[path = "../math.rs"]
        mod math;
        /// `fused-xK` calls paged over several launches past the largest buffer.
        #[path = "../paging.rs"]
        mod paging;
        /// One-step parity with the f64 reference.
        #[path = "../parity.rs"]
        mod parity;
        /// Every plan of a graph against the interpreter.
        #[path = "../plans.rs"]
        mod plans;
        /// Random graphs under every strategy against the interpreter.
        #[path = "../random_graphs.rs"]
        mod random_graphs;
        /// Reset bounds, seeding and host/device RNG identity.
        #[path = "../resets.rs"]
        mod resets;
        /// A policy fused into the rollout against burn's, and across plans.
        #[path = "../rollout.rs"]
        mod rollout;
        /// `fused-xK` against single fused steps.
        #[path = "../steps.rs"]
        mod steps;
        /// A host step is one round trip, counted.
        #[path = "../transfers.rs"]
        mod transfers;
    };
}

/// The runtime suites on the native CPU runtime (its default engine: compiled kernels).
mod cpu;
/// The runtime suites on the native CPU runtime's interpreter.
mod cpu_interpreted;
/// The runtime suites on CUDA (with the `cuda` feature).
#[cfg(feature = "cuda")]
mod cuda;
/// The runtime suites on wgpu's default adapter.
mod wgpu;
