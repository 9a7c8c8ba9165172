//! Compare burn's backends on the CartPole step with cartfuse's fused plan and the
//! hand-written kernel, on your machine.
//!
//! ```sh
//! cargo run --release --example burn_backends            # n = 1024 and 65536
//! cargo run --release --example burn_backends -- 4096    # your sizes
//! cargo run --release --features cuda --example burn_backends -- --cuda 65536  # adds burn's CUDA backend
//! ```

use cartfuse::fusion::cube::Cube;
use cartfuse::fusion::cube::device::wgpu_client;
use cartfuse::fusion::plan::Strategy;
use cartfuse::harness::profile::{ProfileSettings, profile_cartpole};
use cartfuse::harness::studies::burn::{BurnBackend, bench_backend};
use cartfuse::{CartPoleConfig, StepPlan};

fn main() -> anyhow::Result<()> {
    let cuda = std::env::args().any(|a| a == "--cuda");
    let sizes: Vec<usize> = match std::env::args()
        .skip(1)
        .filter(|a| a != "--cuda")
        .map(|a| a.parse())
        .collect::<Result<Vec<_>, _>>()?
    {
        sizes if sizes.is_empty() => vec![1024, 65_536],
        sizes => sizes,
    };
    let settings = ProfileSettings {
        min_seconds_per_repeat: 0.2,
        repeats: 3,
        calls_per_repeat: None,
    };
    let opened = wgpu_client()?;
    println!("device: {}\n", opened.description);
    println!(
        "{:<22} {:>9} {:>14} {:>12} {:>18} {:>12}",
        "backend", "n", "env-steps/s", "time/step", "fused kernels/step", "warm-up"
    );
    for &n in &sizes {
        #[cfg_attr(not(feature = "cuda"), allow(unused_mut))]
        let mut backends = BurnBackend::ALL.to_vec();
        if cuda {
            #[cfg(feature = "cuda")]
            backends.push(BurnBackend::CudaFusion);
            #[cfg(not(feature = "cuda"))]
            anyhow::bail!("--cuda needs a build with `--features cuda`");
        }
        for backend in backends {
            let p = bench_backend(backend, n, &settings);
            let fused = p
                .fused_blocks_per_step
                .map_or("-".into(), |f| format!("{f:.1}"));
            println!(
                "{:<22} {:>9} {:>14.4e} {:>10.1}us {:>18} {:>9} steps",
                p.backend,
                n,
                p.env_steps_per_s,
                p.step_s_median * 1e6,
                fused,
                p.warmup_steps
            );
        }
        for plan in [StepPlan::Graph(Strategy::Fused), StepPlan::HandWritten] {
            let config = CartPoleConfig::default();
            let p = profile_cartpole(Cube::new(&opened), config, plan, n, &settings, |_, _| {})?;
            println!(
                "{:<22} {:>9} {:>14.4e} {:>10.1}us {:>18} {:>15}",
                format!("cartfuse {}", p.plan),
                n,
                p.env_steps_per_s,
                p.step_s_median * 1e6,
                p.launches_per_step,
                "-"
            );
        }
        println!();
    }
    Ok(())
}
