//! One PPO update (the default 20 epochs of one minibatch of 256, the 4 -> 64 -> 64 actor and
//! critic) of `K` made-up agents on wgpu's default adapter by the hand-written kernels (what
//! `--learner device` learns on: one launch a minibatch step), by burn's tensor ops fused
//! (burn's fusion over `CubeBackend`, `--learner device-burn`) and unfused (`CubeBackend`
//! alone), and by the native learner on the CPU, timed in turns: each round times one
//! update of each, and the median of the rounds is printed per `K` with the spread, with
//! the kernels' time over each other learner's. It shows what batching the agents buys (an
//! update's launches do not grow with `K`) and what fusing the whole step into one kernel
//! buys (count launches with `CUBECL_DEBUG_OPTION=profile`).
//!
//! ```text
//! cargo run --release -p cartfuse-train --features wgpu --example device_update -- [ROUNDS] [K..]
//! ```

use std::time::Instant;

use burn::backend::Autodiff;
use burn::backend::wgpu::{WgpuDevice, WgpuRuntime};
use cartfuse_train::device_collect::DeviceLearner;
use cartfuse_train::device_population::DeviceTensorLearner;
use cartfuse_train::kernel_learner::{KernelLearner, Target};
use cartfuse_train::learner::Learner;
use cartfuse_train::population::PopulationLearner;
use cartfuse_train::tensor_learner::TensorLearner;
use cartfuse_train::tensor_learner::check::MadeUp;

/// The median of `values`, with their least and greatest.
fn median(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    (
        values[values.len() / 2],
        values[0],
        values[values.len() - 1],
    )
}

/// Seconds `run` took.
fn timed(
    run: impl FnOnce() -> Result<(), Box<dyn std::error::Error>>,
) -> Result<f64, Box<dyn std::error::Error>> {
    let t = Instant::now();
    run()?;
    Ok(t.elapsed().as_secs_f64())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let rounds = args.first().copied().unwrap_or(5).max(1);
    let sizes = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        vec![2, 16, 64]
    };
    let opened = cartfuse_fusion::cube::device::wgpu_client()?;
    let target = match cartfuse_fusion::cube::is_cpu_emulated(&opened.description) {
        true => Target::CpuEmulated,
        false => Target::Gpu,
    };
    let device = WgpuDevice::default();
    println!("s/update, median of {rounds} rounds in turns (least-greatest)");
    println!(
        "agents  kernels                  burn fused               burn unfused             native (CPU)             kernels/fused       kernels/unfused     kernels/native"
    );
    let show = |(m, lo, hi): (f64, f64, f64)| format!("{m:.4} ({lo:.4}-{hi:.4})");
    for &k in &sizes {
        // K + 1 agents, the last one stopped (as after some reach the target).
        let made_up = MadeUp::new(k + 1, 256, 64, (20, 1));
        let seeds: Vec<u64> = (1..=k as u64 + 1).collect();
        let start = Learner::from_seeds(made_up.shape, &seeds);
        let mut native = start.clone();
        let mut kernels = KernelLearner::<WgpuRuntime>::new(start.clone(), &device, target)?;
        let mut fused = DeviceTensorLearner::<WgpuRuntime>::new(start.clone(), &device);
        let mut unfused =
            TensorLearner::<Autodiff<DeviceLearner<WgpuRuntime>>>::new(start, &device);
        let (samples, work) = made_up.work();
        // Compiles the kernels (and lets fusion find its plans).
        kernels.update(samples, &work)?;
        fused.update(samples, &work)?;
        unfused.update(samples, &work)?;
        let mut times: [Vec<f64>; 4] = Default::default();
        for _ in 0..rounds {
            times[0].push(timed(|| Ok(kernels.update(samples, &work).map(drop)?))?);
            times[1].push(timed(|| Ok(fused.update(samples, &work).map(drop)?))?);
            times[2].push(timed(|| Ok(unfused.update(samples, &work).map(drop)?))?);
            times[3].push(timed(|| Ok(native.update(samples, &work).map(drop)?))?);
        }
        let over = |other: usize| {
            let ratios = times[0].iter().zip(&times[other]).map(|(f, o)| f / o);
            let (m, lo, hi) = median(ratios.collect());
            format!("{m:.2}x ({lo:.2}-{hi:.2})")
        };
        let (by_fused, by_unfused, by_native) = (over(1), over(2), over(3));
        let [kt, f, u, n] = times.map(median);
        println!(
            "{k:6}  {:24} {:24} {:24} {:24} {by_fused:19} {by_unfused:19} {by_native}",
            show(kt),
            show(f),
            show(u),
            show(n)
        );
    }
    Ok(())
}
