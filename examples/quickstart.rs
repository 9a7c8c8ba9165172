//! Quickstart: create a batch of CartPole-v1 envs, reset, step random actions, print stats.
//!
//! ```sh
//! cargo run --release --example quickstart
//! ```

use cartfuse::fusion::cube::device::wgpu_client;
use cartfuse::{CartPoleConfig, CartPoleVecEnv};
use rand::Rng;

fn main() -> anyhow::Result<()> {
    let opened = wgpu_client()?;
    println!("device: {}", opened.description);

    let num_envs = 1024;
    let mut env = CartPoleVecEnv::on_device(&opened, num_envs, CartPoleConfig::default())?;
    println!(
        "observation space {:?}, action space {:?}",
        env.observation_space().shape,
        env.action_space()
    );

    let obs = env.reset(Some(42))?;
    println!("first observation: {:?}", obs[0]);

    let mut rng = rand::rng();
    let (mut episodes, mut total_reward) = (0u64, 0.0f64);
    for _ in 0..500 {
        let actions: Vec<u32> = (0..num_envs).map(|_| rng.random_range(0..2)).collect();
        let out = env.step(&actions)?;
        total_reward += out.reward.iter().map(|r| f64::from(*r)).sum::<f64>();
        episodes += out
            .terminated
            .iter()
            .zip(&out.truncated)
            .filter(|(term, trunc)| **term || **trunc)
            .count() as u64;
    }
    let launches = env.ledger().totals();
    println!("episodes finished: {episodes}");
    println!(
        "mean return per finished episode: {:.2}",
        total_reward / episodes.max(1) as f64
    );
    println!(
        "kernel launches: {} ({} per step after the reset), {:.1} bytes moved per env-step",
        launches.launches,
        (launches.launches - 1) / 500,
        launches.bytes_moved() as f64 / (num_envs as f64 * 501.0)
    );
    Ok(())
}
