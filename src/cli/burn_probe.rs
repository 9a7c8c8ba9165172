//! `cartfuse burn-probe` (hidden): the child process of the harness's `LaunchProbe`.

use cartfuse::harness::studies::burn::{BurnBackend, launches_per_step_from_log};

use super::args::{BurnBackendArg, BurnProbeArgs};

/// The harness backend of an argument (the wgpu backends exist only with the `wgpu`
/// feature, the CUDA one with `cuda`).
pub fn backend(arg: BurnBackendArg) -> anyhow::Result<BurnBackend> {
    match arg {
        #[cfg(feature = "wgpu")]
        BurnBackendArg::WgpuFusion => Ok(BurnBackend::WgpuFusion),
        #[cfg(feature = "wgpu")]
        BurnBackendArg::WgpuUnfused => Ok(BurnBackend::WgpuUnfused),
        #[cfg(feature = "cuda")]
        BurnBackendArg::CudaFusion => Ok(BurnBackend::CudaFusion),
        #[allow(unreachable_patterns)]
        other => anyhow::bail!("burn-probe: {other:?} needs a build with its runtime's feature"),
    }
}

/// Prints the launches per step counted from the execution log.
pub fn run(args: BurnProbeArgs) -> anyhow::Result<()> {
    println!(
        "{}",
        launches_per_step_from_log(backend(args.backend)?, args.envs, args.steps, &args.log)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn probe_backend_names_match_the_harness() {
        use cartfuse::harness::studies::burn::BurnBackend;
        for backend in BurnBackend::ALL
            .iter()
            .copied()
            .filter(|b| b.launches_kernels())
        {
            let arg = BurnBackendArg::from_str(backend.probe_arg(), false).unwrap();
            assert_eq!(super::backend(arg).unwrap(), backend);
        }
    }
}
