//! What `cartfuse train` prints: a single run's report, or a population's table and
//! summary; as text, or as one JSON object with `--json`.

use std::path::Path;

use cartfuse::env::{CartPole, GraphEnv};
use cartfuse::train::TrainReport;
use cartfuse::train::population::PopulationReport;

use super::args::TrainArgs;

/// Where the envs ran, what learnt, and where the policy acted, in words.
pub type Described<'a> = (&'a str, &'a str, &'a str);

/// A single run's report (JSON with `--json`, with its per-update history).
pub fn single(
    report: &TrainReport,
    args: &TrainArgs,
    described: Described<'_>,
) -> anyhow::Result<()> {
    if args.json {
        println!("{}", serde_json::to_string(report)?);
        return Ok(());
    }
    header(described);
    let c = &report.config;
    println!(
        "envs x rollout steps: {} x {}, seed {}",
        c.num_envs, c.num_steps, c.seed
    );
    match (&report.solved, c.target_return) {
        (Some(solved), Some(target)) => println!(
            "mean return >= {target} after {} env-steps, {:.1} s wall time",
            solved.env_steps, solved.seconds
        ),
        (None, Some(target)) => println!(
            "mean return did not reach {target} within {} env-steps",
            c.total_env_steps
        ),
        (_, None) => {}
    }
    match report.final_mean_return {
        Some(mean) => println!(
            "final mean return:    {mean:.1} (last {} of {} episodes)",
            c.return_window.min(report.episodes as usize),
            report.episodes
        ),
        None => println!("final mean return:    n/a (no episode finished)"),
    }
    println!("env-steps:            {}", report.env_steps);
    timings(
        (report.seconds, report.rollout_seconds, report.learn_seconds),
        report.env_steps,
        c.update_epochs,
    );
    saved(args.save.as_deref(), None);
    Ok(())
}

/// A population's summary (JSON with `--json`) or its table.
pub fn population(
    report: &PopulationReport,
    args: &TrainArgs,
    described: Described<'_>,
) -> anyhow::Result<()> {
    if args.json {
        println!("{}", serde_json::to_string(&report.summary())?);
        return Ok(());
    }
    header(described);
    let shared = &report.config.shared;
    println!(
        "agents:               {} x {} envs x {} rollout steps",
        report.agents.len(),
        shared.num_envs,
        shared.num_steps
    );
    println!(
        "{:>6} {:>9} {:>8} {:>6} {:>15} {:>11} {:>11}",
        "seed", "lr", "ent", "clip", "env-steps to", "seconds to", "final mean"
    );
    for agent in &report.agents {
        let s = &agent.settings;
        let (steps, seconds) = agent.solved.as_ref().map_or(("-".into(), "-".into()), |x| {
            (x.env_steps.to_string(), format!("{:.1}", x.seconds))
        });
        let last = agent
            .final_mean_return
            .map_or("n/a".into(), |m| format!("{m:.1}"));
        println!(
            "{:>6} {:>9.2e} {:>8} {:>6} {steps:>15} {seconds:>11} {last:>11}",
            s.seed, s.learning_rate, s.ent_coef, s.clip_coef
        );
    }
    if let Some(target) = shared.target_return {
        println!(
            "{} of {} agents reached a mean return of {target}",
            report.reached_target(),
            report.agents.len()
        );
    }
    timings(
        (report.seconds, report.rollout_seconds, report.learn_seconds),
        report.env_steps(),
        shared.update_epochs,
    );
    saved(args.save.as_deref(), Some(report));
    Ok(())
}

fn header((device, learner, rollout): Described<'_>) {
    println!("environment:          {}", CartPole::ID);
    println!("envs device:          {device}");
    println!("learner:              {learner}");
    println!("rollout:              {rollout}");
}

fn timings((wall, rollout, learn): (f64, f64, f64), env_steps: u64, epochs: usize) {
    let per_s = |seconds: f64| env_steps as f64 / seconds.max(1e-12);
    println!("wall time:            {wall:.1} s");
    println!(
        "rollout time:         {rollout:.1} s, {:.3e} env-steps/s (policy forward + env step)",
        per_s(rollout)
    );
    println!(
        "learning:             {learn:.1} s, {:.3e} env-steps/s ({epochs} epochs per sample)",
        per_s(learn)
    );
}

fn saved(path: Option<&Path>, population: Option<&PopulationReport>) {
    let Some(path) = path else { return };
    match population {
        None => println!("weights saved to:     {}.mpk", path.display()),
        Some(report) => println!(
            "weights saved to:     {}-seed<seed>.mpk ({} files)",
            path.display(),
            report.agents.len()
        ),
    }
}
