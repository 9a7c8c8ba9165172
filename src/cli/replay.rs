//! `cartfuse replay`: recorded episodes of any environment, one per lane.

use anyhow::Context;
use cartfuse::env::registry::unknown_env;
use cartfuse::env::{GraphEnv, with_env};
use cartfuse::fusion::device::Device;
use cartfuse::fusion::dispatch_backend;
use cartfuse::replay::{parse_replay_input, replay};

use super::args::ReplayArgs;

/// Replays `--input` and writes the result to `--output` or stdout.
pub fn run(device: Device, args: ReplayArgs) -> anyhow::Result<()> {
    let input = &args.input;
    let text = std::fs::read_to_string(input)
        .with_context(|| format!("cannot read {}", input.display()))?;
    let result = with_env!(
        args.env.id.as_str(),
        |E| {
            let env = E::default();
            let episodes = parse_replay_input(&env, &text)
                .with_context(|| format!("in {} ({})", input.display(), E::ID))?;
            let limit = args.max_episode_steps.unwrap_or(E::MAX_EPISODE_STEPS);
            dispatch_backend!(device, |backend: B| {
                anyhow::Ok(replay(backend, env, limit, &episodes)?)
            })?
        },
        anyhow::bail!(unknown_env(&args.env.id))
    );
    let text = serde_json::to_string(&result)?;
    match args.output {
        Some(path) => std::fs::write(&path, text + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => println!("{text}"),
    }
    Ok(())
}
