//! Where a device host step's time goes (issue 49: "find where the time goes first").
//!
//! A CartPole-v1 batch under the default plan (`fused`) on the default device of a cubecl
//! runtime (`--device wgpu`, the default, or `--device cuda` in a build with `--features
//! cuda`), at one env and at 4,096 (`--sizes`; above 4,096 envs a block makes fewer calls,
//! `STEPS_PER_BLOCK * 4096 / n` and at least 5, so that it lasts about as long as at 4,096).
//! Every round times, back to back, blocks of:
//!
//! - `resident`: device-resident steps ([`VecEnv::step_device`]) and one wait at the end,
//!   per step: what the device sustains when launches queue up;
//! - `launch + wait`: one device-resident step and a wait for it, per step: the latency of a
//!   single launch through cubecl;
//! - `host step`: [`VecEnv::step_into`] (actions written from the host, the step launched,
//!   the outputs read into host memory allocated once: one round trip);
//! - `write + wait`: the actions written into a device buffer allocated once, and a wait
//!   (the upload's share of a host step; on wgpu the host's side alone, as the write goes
//!   out with the next submission and a wait with nothing launched submits nothing). The
//!   write goes out from the backend's staging (host memory allocated once, page-locked on
//!   CUDA; `fusion::cube::staging`); `unstaged write + wait` from a new `Vec` each time, as
//!   every write went before the staging;
//! - `wait`: a wait with nothing enqueued, and `read`: a read of four words with nothing
//!   enqueued (cubecl's floor for a round trip).
//!
//! and prints each block's median over the rounds, the median per-round ratio of the host
//! step to the resident step, and of the staged write to the unstaged one, with their ranges,
//! and what the staging holds. `scripts/gpu-check.sh` runs it on CUDA,
//! with cubecl's calls on its device thread and on the calling thread
//! (`CARTFUSE_DEVICE_THREAD`).
//!
//! ```sh
//! cargo run --release --example host_step -- [--device wgpu|cuda] [--sizes N,...] [ROUNDS] [STEPS_PER_BLOCK]
//! ```

use std::time::Instant;

use cartfuse::env::{CartPole, EpisodeOptions, StepPlan, VecEnv};
use cartfuse::fusion::cube::Cube;
use cartfuse::fusion::cube::device::OpenedDevice;
use cartfuse::fusion::cubecl::Runtime;
use cartfuse::fusion::exec::Backend;
use clap::{Parser, ValueEnum};

/// The blocks of one round, in microseconds per call.
const BLOCKS: [&str; 7] = [
    "resident",
    "launch + wait",
    "host step",
    "write + wait",
    "unstaged write + wait",
    "wait",
    "read",
];

/// The cubecl runtimes this example can open.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Device {
    /// The default wgpu adapter (Vulkan; lavapipe where there is no GPU).
    Wgpu,
    /// CUDA device 0 (needs a build with `--features cuda` and an NVIDIA driver).
    Cuda,
}

/// Where a device host step's time goes, block by block, at each batch size.
#[derive(Debug, Parser)]
struct Args {
    /// The runtime to measure.
    #[arg(long, value_enum, default_value_t = Device::Wgpu)]
    device: Device,
    /// Batch sizes, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_values_t = [1, 4096],
        value_parser = clap::value_parser!(u32).range(1..),
    )]
    sizes: Vec<u32>,
    /// Rounds, each timing every block once; the medians are over them.
    #[arg(default_value_t = 11, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// Calls a block (up to 4,096 envs; fewer above).
    #[arg(default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    steps_per_block: u32,
}

/// Calls a block at `n` envs: `steps_per_block` up to 4,096 envs, above that in proportion
/// to 4,096 / `n` and at least 5.
fn calls_at(n: u32, steps_per_block: u32) -> u32 {
    match n <= 4096 {
        true => steps_per_block,
        false => ((u64::from(steps_per_block) * 4096 / u64::from(n)) as u32).max(5),
    }
}

/// Microseconds per call of `call`, over `calls` of them after one untimed.
fn per_call(calls: u32, mut call: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    call()?;
    let start = Instant::now();
    for _ in 0..calls {
        call()?;
    }
    Ok(start.elapsed().as_secs_f64() * 1e6 / f64::from(calls))
}

/// One round of every block on `env`, in [`BLOCKS`]' order.
fn round<R: Runtime>(env: &mut VecEnv<CartPole, Cube<R>>, calls: u32) -> anyhow::Result<[f64; 7]> {
    let n = env.num_envs();
    let pattern: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    let device_actions = env.upload_actions(&pattern)?;
    env.sync()?;
    let start = Instant::now();
    for _ in 0..calls {
        env.step_device(&device_actions)?;
    }
    env.sync()?;
    let resident = start.elapsed().as_secs_f64() * 1e6 / f64::from(calls);
    let launch_wait = per_call(calls, || {
        env.step_device(&device_actions)?;
        Ok(env.sync()?)
    })?;
    let mut owned = env.owned_outputs();
    let mut out = owned.as_host();
    let host = per_call(calls, || Ok(env.step_into(&pattern, &mut out)?))?;
    let backend = env.backend();
    let actions = backend.upload_u32(&pattern);
    let write = per_call(calls, || {
        backend.write_u32(&actions, &pattern)?;
        Ok(backend.sync()?)
    })?;
    let unstaged = per_call(calls, || {
        backend.write_u32_unstaged(&actions, &pattern)?;
        Ok(backend.sync()?)
    })?;
    let wait = per_call(calls, || Ok(env.sync()?))?;
    let words = backend.upload_u32(&[1, 2, 3, 4]);
    let read = per_call(calls, || Ok(backend.read_u32(&words).map(drop)?))?;
    Ok([resident, launch_wait, host, write, unstaged, wait, read])
}

/// The median and range of `values`.
fn summary(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    (
        values[values.len() / 2],
        values[0],
        values[values.len() - 1],
    )
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    match args.device {
        Device::Wgpu => measure(cartfuse::fusion::cube::device::wgpu_client()?, &args),
        #[cfg(feature = "cuda")]
        Device::Cuda => measure(cartfuse::fusion::cube::device::cuda_client()?, &args),
        #[cfg(not(feature = "cuda"))]
        Device::Cuda => anyhow::bail!(
            "--device cuda needs a build with CUDA: cargo run --release --features cuda --example host_step"
        ),
    }
}

/// Every block at each of `args.sizes` on `opened`, printed.
fn measure<R: Runtime>(opened: OpenedDevice<R>, args: &Args) -> anyhow::Result<()> {
    let rounds = args.rounds;
    println!("device: {}", opened.description);
    println!("{rounds} rounds a size; medians over the rounds, us per call");
    for &n in &args.sizes {
        let calls = calls_at(n, args.steps_per_block);
        let mut env = VecEnv::build(
            Cube::new(&opened),
            CartPole::default(),
            n as usize,
            EpisodeOptions::default_for::<CartPole>(),
            StepPlan::default(),
        )?;
        env.reset(Some(0))?;
        let measured: Vec<[f64; 7]> = (0..rounds)
            .map(|_| round(&mut env, calls))
            .collect::<anyhow::Result<_>>()?;
        let column = |i: usize| summary(measured.iter().map(|m| m[i]).collect()).0;
        let cells: Vec<String> = (BLOCKS.iter().enumerate())
            .map(|(i, name)| format!("{name} {:.1}", column(i)))
            .collect();
        println!("n = {n} ({calls} calls a block): {}", cells.join(", "));
        let (ratio, low, high) = summary(measured.iter().map(|m| m[2] / m[0]).collect());
        println!("  host step / resident step: {ratio:.2}x ({low:.2}-{high:.2})");
        let (ratio, low, high) = summary(measured.iter().map(|m| m[2] / m[1]).collect());
        println!("  host step / launch + wait: {ratio:.2}x ({low:.2}-{high:.2})");
        let (ratio, low, high) = summary(measured.iter().map(|m| m[3] / m[4]).collect());
        println!("  staged write / unstaged write: {ratio:.2}x ({low:.2}-{high:.2})");
        let staging = env.backend().staging();
        println!(
            "  staging: {} slots, {} bytes, page-locked: {}, writes past its limits: {}",
            staging.slots, staging.bytes, staging.pinned, staging.writes_past_limits
        );
    }
    Ok(())
}
