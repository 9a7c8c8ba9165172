//! `cartfuse replay`: recorded episodes, one per lane.

use anyhow::Context;
use cartfuse::CartPoleConfig;
use cartfuse::fusion::device::Device;
use cartfuse::fusion::dispatch_backend;
use cartfuse::replay::{parse_replay_input, replay};

use super::args::ReplayArgs;

/// Replays `--input` and writes the result to `--output` or stdout.
pub fn run(device: Device, args: ReplayArgs) -> anyhow::Result<()> {
    let input = &args.input;
    let text = std::fs::read_to_string(input)
        .with_context(|| format!("cannot read {}", input.display()))?;
    let episodes = parse_replay_input(&text).with_context(|| format!("in {}", input.display()))?;
    let config = CartPoleConfig {
        max_episode_steps: args.max_episode_steps,
        ..Default::default()
    };
    let result = dispatch_backend!(device, |backend: B| {
        anyhow::Ok(replay(backend, config, &episodes)?)
    })?;
    let text = serde_json::to_string(&result)?;
    match args.output {
        Some(path) => std::fs::write(&path, text + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => println!("{text}"),
    }
    Ok(())
}
