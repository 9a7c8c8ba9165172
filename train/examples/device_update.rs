//! One PPO update (the default 20 epochs of one minibatch of 256, the 4 -> 64 -> 64 actor and
//! critic) of `K` made-up agents by the device learner on wgpu's default adapter (burn's
//! `CubeBackend` + Autodiff) and by the native learner on the CPU, timed in turns: each round
//! times one update of each, and the median of the rounds is printed per `K` with the
//! spread. It shows what batching the agents buys: an update's launches do not grow with
//! `K`.
//!
//! ```text
//! cargo run --release -p cartfuse-train --features wgpu --example device_update -- [ROUNDS] [K..]
//! ```

use std::time::Instant;

use burn::backend::Autodiff;
use burn::backend::wgpu::{WgpuDevice, WgpuRuntime};
use cartfuse_train::device_collect::DeviceLearner;
use cartfuse_train::learner::Learner;
use cartfuse_train::population::PopulationLearner;
use cartfuse_train::tensor_learner::TensorLearner;
use cartfuse_train::tensor_learner::check::MadeUp;

fn median(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    (
        values[values.len() / 2],
        values[0],
        values[values.len() - 1],
    )
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
    cartfuse_fusion::cube::device::wgpu_client()?;
    let device = WgpuDevice::default();
    println!("agents  device s/update (min-max)  native s/update (min-max)  device/native");
    for &k in &sizes {
        // K + 1 agents, the last one stopped (as after some reach the target).
        let made_up = MadeUp::new(k + 1, 256, 64, (20, 1));
        let seeds: Vec<u64> = (1..=k as u64 + 1).collect();
        let start = Learner::from_seeds(made_up.shape, &seeds);
        let mut native = start.clone();
        let mut tensor = TensorLearner::<Autodiff<DeviceLearner<WgpuRuntime>>>::new(start, &device);
        let (samples, work) = made_up.work();
        tensor.update(samples, &work)?; // compiles its kernels
        let (mut on_device, mut on_cpu) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let t = Instant::now();
            tensor.update(samples, &work)?;
            on_device.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            native.update(samples, &work)?;
            on_cpu.push(t.elapsed().as_secs_f64());
        }
        let ratios = on_device.iter().zip(&on_cpu).map(|(d, c)| d / c).collect();
        let (d, c, r) = (median(on_device), median(on_cpu), median(ratios));
        println!(
            "{k:6}  {:.4} ({:.4}-{:.4})        {:.4} ({:.4}-{:.4})         {:.2}x ({:.2}-{:.2})",
            d.0, d.1, d.2, c.0, c.1, c.2, r.0, r.1, r.2
        );
    }
    Ok(())
}
