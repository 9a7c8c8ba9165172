//! `cartfuse burn-probe` (hidden): the child process of the harness's `LaunchProbe`.

use cartfuse::harness::burn_bench::{BurnBackend, launches_per_step_from_log};

use super::args::{BurnBackendArg, BurnProbeArgs};

/// The harness backend of an argument.
pub fn backend(arg: BurnBackendArg) -> BurnBackend {
    match arg {
        BurnBackendArg::WgpuFusion => BurnBackend::WgpuFusion,
        BurnBackendArg::WgpuUnfused => BurnBackend::WgpuUnfused,
    }
}

/// Prints the launches per step counted from the execution log.
pub fn run(args: BurnProbeArgs) -> anyhow::Result<()> {
    println!(
        "{}",
        launches_per_step_from_log(backend(args.backend), args.envs, args.steps, &args.log)
    );
    Ok(())
}
