//! `cartfuse bench`: one plan, measured.

use anyhow::Context;
use cartfuse::env::StepPlan;
use cartfuse::env::registry::unknown_env;
use cartfuse::env::{EpisodeOptions, GraphEnv, with_env};
use cartfuse::fusion::device::Device;
use cartfuse::fusion::dispatch_backend;
use cartfuse::fusion::exec::Backend;
use cartfuse::harness::profile::{ProfileSettings, profile_env};
use cartfuse::harness::turns::{InTurns, TurnsSettings, time_in_turns};

use super::args::BenchArgs;
use super::progress;

/// Profiles the plan and prints the result (text or one JSON object).
pub fn run(device: Device, args: BenchArgs) -> anyhow::Result<()> {
    if device == Device::Cpu && args.cubecl_log.is_some() {
        anyhow::bail!(
            "--cubecl-log counts the kernels CubeCL executes; the CPU runtime runs none (use \
             --device wgpu or --device cuda)"
        );
    }
    let envs = usize::try_from(args.envs).context("--envs does not fit this machine")?;
    if let Some(against) = args.against {
        return run_in_turns(device, &args, against, envs);
    }
    let k = u64::from(args.plan.steps_per_call());
    let settings = ProfileSettings {
        repeats: args.repeats as usize,
        calls_per_repeat: args.steps.map(|s| s.div_ceil(k)),
        ..ProfileSettings::default()
    };
    dispatch_backend!(device, |backend: B| {
        let description = backend.description();
        let bar = progress::bar(settings.repeats as u64, "bench");
        let progress = |done: usize, _| bar.set_position(done as u64);
        let profile = with_env!(
            args.env.id.as_str(),
            |E| {
                let episode = registered_episode::<E>(args.autoreset);
                let env = E::default();
                profile_env(backend, env, episode, args.plan, envs, &settings, progress)
                    .map_err(anyhow::Error::from)
            },
            Err(anyhow::anyhow!(unknown_env(&args.env.id)))
        )?;
        bar.finish_and_clear();
        if args.json {
            let mut value = serde_json::to_value(&profile)?;
            if let Some(log) = &args.cubecl_log {
                value["runtime_launches"] = runtime_launches(log, profile.launches_total).into();
            }
            println!("{value}");
        } else {
            println!(
                "plan:               {} of {} on {} ({})",
                profile.plan, args.env.id, device, description
            );
            println!("envs:               {}", profile.num_envs);
            println!(
                "env-steps/s:        {:.4e} (median of {} repeats of {} calls)",
                profile.env_steps_per_s, settings.repeats, profile.calls_per_repeat
            );
            println!(
                "time per step:      {:.3} us (min {:.3}, max {:.3})",
                profile.step_s_median * 1e6,
                profile.step_s_min * 1e6,
                profile.step_s_max * 1e6
            );
            println!("launches per step:  {}", profile.launches_per_step);
            println!("bytes per env-step: {}", profile.bytes_per_env_step);
            println!("JIT compile:        {:.1} ms", profile.compile_s * 1e3);
        }
        anyhow::Ok(())
    })
}

/// Episodes of `E` as registered (its time limit), with the chosen autoreset mode.
fn registered_episode<E: GraphEnv>(autoreset: cartfuse::AutoresetMode) -> EpisodeOptions {
    EpisodeOptions {
        autoreset,
        max_episode_steps: E::MAX_EPISODE_STEPS,
    }
}

/// `--against`: both plans timed in turns, one line each and the median round's ratio.
fn run_in_turns(
    device: Device,
    args: &BenchArgs,
    against: StepPlan,
    envs: usize,
) -> anyhow::Result<()> {
    // Repeats of 0.2 s: two plans alone take little time a round.
    let settings = TurnsSettings::exactly(args.repeats as usize, 0.2);
    let turns: InTurns = dispatch_backend!(device, |backend: B| {
        let bar = progress::bar(settings.min_rounds as u64, "rounds in turns");
        let progress = |done: usize| bar.set_position(done as u64);
        let turns = with_env!(
            args.env.id.as_str(),
            |E| {
                time_in_turns(
                    &backend,
                    E::default(),
                    registered_episode::<E>(args.autoreset),
                    (args.plan, against),
                    envs,
                    &settings,
                    progress,
                )
                .map_err(anyhow::Error::from)
            },
            Err(anyhow::anyhow!(unknown_env(&args.env.id)))
        )?;
        bar.finish_and_clear();
        anyhow::Ok(turns)
    })?;
    let (slowest, fastest) = turns.ratio_range();
    if args.json {
        let mut value = serde_json::to_value(&turns)?;
        value["median_ratio"] = turns.median_ratio().into();
        value["slowest_round_ratio"] = slowest.into();
        value["fastest_round_ratio"] = fastest.into();
        println!("{value}");
        return Ok(());
    }
    println!(
        "{} against {} of {} on {} ({}), {} envs, {} rounds in turns",
        turns.plan, turns.reference, args.env.id, device, turns.device, envs, settings.min_rounds
    );
    for (plan, median) in [
        (&turns.plan, turns.plan_median_s()),
        (&turns.reference, turns.reference_median_s()),
    ] {
        println!(
            "{plan:>14}: {:.3} us per step, {:.4e} env-steps/s (median round)",
            median * 1e6,
            envs as f64 / median
        );
    }
    println!(
        "   speed ratio: {:.3}x (time of {} / time of {}; rounds {slowest:.3}x to {fastest:.3}x)",
        turns.median_ratio(),
        turns.reference,
        turns.plan
    );
    Ok(())
}

/// Kernel executions recorded in CubeCL's log `path`, waiting (up to 10 s) until the
/// runtime's asynchronous logger has written at least `expected` of them.
fn runtime_launches(path: &std::path::Path, expected: u64) -> u64 {
    let count = || {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter(|line| line.starts_with("Executing "))
            .count() as u64
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut seen = count();
    while seen < expected && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        seen = count();
    }
    seen
}
