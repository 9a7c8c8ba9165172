//! The policy-inside-the-rollout section: PPO's sample collection with the policy in burn
//! against the policy fused into the env's step, and PPO's time to its target, per device.
//! Tables and sentences come from the run.

use crate::studies::policy::{HOST_SOURCE, PolicyStudy, TrainingRun};
use crate::studies::population::PopulationRun;

use super::table::{Cell, Format, Shown, Table, col};

/// Collection env-steps/s of every source at every size on every device.
pub fn rollouts(studies: &[PolicyStudy]) -> Table {
    let points = studies
        .iter()
        .flat_map(|s| s.points.iter().map(move |p| (s, p)));
    let title = "Policy rollout: burn policy + env step against the policy fused into the step";
    Table::of(title, "policy_rollout.csv", points)
        .col(col("device", ""), |(s, _)| Cell::text(&s.device))
        .num(col("n", ""), Format::Fixed(0), |(_, p)| p.num_envs as f64)
        .col(col("source", ""), |(_, p)| Cell::text(&p.source))
        .num(col("env-steps/s", "1/s"), Format::Si, |(_, p)| {
            p.env_steps_per_s.as_ref().ok().copied()
        })
        .num(
            col("x burn policy + env step", ""),
            Format::Ratio,
            |(s, p)| {
                let speedup = s.speedup(&p.source, p.num_envs);
                speedup.filter(|_| p.source != HOST_SOURCE)
            },
        )
        .num(
            col("env launches per step", ""),
            Format::Fixed(2),
            |(_, p)| p.launches_per_step,
        )
        .col(col("skipped", "").shown(Shown::WhenPresent), |(_, p)| {
            Cell::skipped(&p.env_steps_per_s)
        })
        .build()
}

/// One row of the training table: one PPO run, or a whole population.
struct Trained<'s> {
    device: &'s str,
    source: String,
    seed: Cell,
    steps_to_target: Option<f64>,
    seconds_to_target: Option<f64>,
    final_mean_return: Option<f64>,
    env_steps: u64,
    env_steps_per_s: Option<f64>,
    /// A population's seconds collecting and learning.
    split: Option<(f64, f64)>,
    error: Option<&'s str>,
}

/// Every PPO run, then each population (one row: the median agent's env-steps and the whole
/// population's seconds to the target, every agent's env-steps run).
pub fn training(studies: &[PolicyStudy]) -> Table {
    let mut rows = Vec::new();
    for study in studies {
        let device = study.device.as_str();
        rows.extend(study.training.iter().map(|run| Trained {
            device,
            source: run.source.clone(),
            seed: Cell::Number(run.seed as f64, Format::Fixed(0)),
            steps_to_target: run.solved.map(|s| s.0 as f64),
            seconds_to_target: run.solved.map(|s| s.1),
            final_mean_return: run.final_mean_return,
            env_steps: run.env_steps,
            env_steps_per_s: run.error.is_none().then_some(run.rollout_env_steps_per_s),
            split: None,
            error: run.error.as_deref(),
        }));
        rows.extend(study.population.iter().map(|p| {
            Trained {
                device,
                source: format!(
                    "{}: population of {}, {} reached the target",
                    p.source, p.agents, p.reached_target
                ),
                seed: Cell::text(format!("1-{}", p.agents)),
                steps_to_target: p.median_env_steps_to_target.map(|s| s as f64),
                seconds_to_target: (p.reached_target == p.agents).then_some(p.seconds),
                final_mean_return: p.median_final_mean_return,
                env_steps: p.env_steps,
                env_steps_per_s: p.error.is_none().then_some(p.env_steps_per_s),
                split: p
                    .error
                    .is_none()
                    .then_some((p.rollout_seconds, p.learn_seconds)),
                error: p.error.as_deref(),
            }
        }));
    }
    Table::of("PPO to the target return", "policy_training.csv", rows)
        .col(col("device", ""), |r| Cell::text(r.device))
        .col(col("samples from", ""), |r| Cell::text(&r.source))
        .col(col("seed", ""), |r| r.seed.clone())
        .num(col("env-steps to target", ""), Format::Fixed(0), |r| {
            r.steps_to_target
        })
        .num(col("seconds to target", "s"), Format::Fixed(1), |r| {
            r.seconds_to_target
        })
        .num(col("final mean return", ""), Format::Fixed(1), |r| {
            r.final_mean_return
        })
        .num(col("env-steps run", ""), Format::Fixed(0), |r| {
            r.env_steps as f64
        })
        .num(col("collection env-steps/s", "1/s"), Format::Si, |r| {
            r.env_steps_per_s
        })
        .num(col("collecting", "s"), Format::Fixed(1), |r| {
            r.split.map(|s| s.0)
        })
        .num(col("learning", "s"), Format::Fixed(1), |r| {
            r.split.map(|s| s.1)
        })
        .col(col("error", "").shown(Shown::WhenPresent), |r| {
            Cell::text(r.error.unwrap_or_default())
        })
        .build()
}

/// `(device: source, [(n, env-steps/s)])` of every measured source, for the plot.
pub fn series(studies: &[PolicyStudy]) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for study in studies {
        for point in &study.points {
            let Ok(rate) = point.env_steps_per_s else {
                continue;
            };
            let label = format!("{}: {}", study.device, point.source);
            let xy = (point.num_envs as f64, rate);
            match series.iter_mut().find(|(l, _)| *l == label) {
                Some((_, points)) => points.push(xy),
                None => series.push((label, vec![xy])),
            }
        }
    }
    series
}

/// What the numbers say, device by device.
pub fn commentary(studies: &[PolicyStudy]) -> Vec<String> {
    let mut sentences = Vec::new();
    for study in studies {
        sentences.extend(rollout_sentence(study));
        sentences.extend(training_sentences(study));
        sentences.extend(
            study
                .population
                .as_ref()
                .map(|p| population_sentence(study, p)),
        );
    }
    sentences
}

/// How far a population got, against one agent alone with burn's learner.
fn population_sentence(study: &PolicyStudy, p: &PopulationRun) -> String {
    if let Some(error) = &p.error {
        return format!(
            "On {}, the population of {} ({}) did not run: {error}.",
            study.device, p.agents, p.source
        );
    }
    let mut sentence = format!(
        "On {}, {} of a population of {} PPO agents trained together ({}) reached {} in \
         {:.1} s for the whole population, {:.1} s of it collecting and {:.1} s learning",
        study.device,
        p.reached_target,
        p.agents,
        p.source,
        study.target_return,
        p.seconds,
        p.rollout_seconds,
        p.learn_seconds
    );
    if let (Some(seconds), Some(steps)) = (p.median_seconds_to_target, p.median_env_steps_to_target)
    {
        sentence += &format!(" (the median agent: {seconds:.1} s, {steps} env-steps)");
    }
    let alone: Vec<f64> = study
        .training
        .iter()
        .filter(|r| r.source == HOST_SOURCE)
        .filter_map(|r| r.solved.map(|s| s.1))
        .collect();
    if !alone.is_empty() {
        let mut alone = alone;
        alone.sort_by(f64::total_cmp);
        sentence += &format!(
            "; one agent alone with burn's learner took {:.1} s (median of {})",
            alone[alone.len() / 2],
            alone.len()
        );
    }
    sentence + "."
}

/// The best fused source at the largest size against the host source, and the sizes where
/// fusing pays: all, none, all from one size on, or the few where it does.
fn rollout_sentence(study: &PolicyStudy) -> Option<String> {
    let largest = study.points.iter().map(|p| p.num_envs).max()?;
    let (best, speedup) = study
        .points
        .iter()
        .filter(|p| p.num_envs == largest && p.source != HOST_SOURCE)
        .filter_map(|p| Some((p.source.as_str(), study.speedup(&p.source, largest)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let mut sizes: Vec<usize> = study.points.iter().map(|p| p.num_envs).collect();
    sizes.dedup();
    let wins: Vec<(usize, bool)> = sizes
        .iter()
        .map(|&n| (n, study.speedup(best, n).is_some_and(|s| s > 1.0)))
        .collect();
    let mut sentence = format!(
        "On {} at n = {largest}, {best} collects {speedup:.2}x as many env-steps/s as {HOST_SOURCE}",
        study.device
    );
    let first_win = wins.iter().position(|w| w.1);
    match first_win {
        None => sentence += ", and slower than it at every size measured.",
        Some(0) if wins.iter().all(|w| w.1) => sentence += " and is faster at every size measured.",
        Some(from) if wins[from..].iter().all(|w| w.1) => {
            let (n, below) = (wins[from].0, wins[from - 1].0);
            let slower = study.speedup(best, below).unwrap_or(f64::NAN);
            sentence += &format!("; it pays from n = {n} on (at n = {below} it is {slower:.2}x).");
        }
        Some(_) => {
            let faster: Vec<String> = wins
                .iter()
                .filter(|w| w.1)
                .map(|w| {
                    let s = study.speedup(best, w.0).unwrap_or(f64::NAN);
                    format!("n = {} ({s:.2}x)", w.0)
                })
                .collect();
            sentence += &format!("; it is faster only at {}.", faster.join(", "));
        }
    }
    Some(sentence)
}

/// Spread of the time and env-steps to the target for each source (runs that could not
/// start, listed with their error in the table, are left out).
fn training_sentences(study: &PolicyStudy) -> Vec<String> {
    let ran = |r: &&TrainingRun| r.error.is_none();
    let mut sources: Vec<&str> = study
        .training
        .iter()
        .filter(ran)
        .map(|r| r.source.as_str())
        .collect();
    sources.dedup();
    sources
        .into_iter()
        .map(|source| {
            let runs: Vec<&TrainingRun> = study
                .training
                .iter()
                .filter(ran)
                .filter(|r| r.source == source)
                .collect();
            let solved: Vec<(u64, f64)> = runs.iter().filter_map(|r| r.solved).collect();
            let mut sentence = format!(
                "On {}, PPO with samples from {source} reached {} in {} of {} runs",
                study.device,
                study.target_return,
                solved.len(),
                runs.len()
            );
            if let [(steps, seconds)] = solved[..] {
                sentence += &format!(": {seconds:.1} s to the target, after {steps} env-steps");
            } else if !solved.is_empty() {
                let (steps, seconds) = spread(&solved);
                sentence += &format!(
                    ": {} s to the target (median; {}), after {} env-steps (median; {})",
                    fmt_f(seconds.1),
                    range(seconds.0, seconds.2),
                    steps.1 as u64,
                    range(steps.0, steps.2)
                );
            }
            sentence.push('.');
            sentence
        })
        .collect()
}

/// `(min, median, max)` of the env-steps and of the seconds.
fn spread(solved: &[(u64, f64)]) -> ((f64, f64, f64), (f64, f64, f64)) {
    let stats = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[0], v[v.len() / 2], v[v.len() - 1])
    };
    (
        stats(solved.iter().map(|s| s.0 as f64).collect()),
        stats(solved.iter().map(|s| s.1).collect()),
    )
}

fn fmt_f(x: f64) -> String {
    format!("{x:.1}")
}

fn range(lo: f64, hi: f64) -> String {
    if lo > 1000.0 {
        format!("{lo:.0} to {hi:.0}")
    } else {
        format!("{lo:.1} to {hi:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Skipped;
    use crate::studies::policy::RolloutPoint;
    use crate::studies::population::POPULATION_SOURCE;

    fn point(source: &str, n: usize, rate: f64) -> RolloutPoint {
        RolloutPoint {
            source: source.into(),
            num_envs: n,
            env_steps_per_s: Ok(rate),
            launches_per_step: Some(0.1),
        }
    }

    fn run(source: &str, seed: u64, solved: Option<(u64, f64)>) -> TrainingRun {
        TrainingRun {
            source: source.into(),
            seed,
            solved,
            env_steps: solved.map_or(500_000, |s| s.0),
            final_mean_return: Some(480.0),
            seconds: solved.map_or(60.0, |s| s.1),
            rollout_env_steps_per_s: 1e5,
            error: None,
        }
    }

    #[test]
    fn commentary_follows_the_numbers() {
        let study = PolicyStudy {
            device: "cpu".into(),
            steps: 10,
            points: vec![
                point(HOST_SOURCE, 8, 2e5),
                point("fused-x10", 8, 1e5),
                point(HOST_SOURCE, 4096, 4e5),
                point("fused-x10", 4096, 2.4e6),
                RolloutPoint {
                    env_steps_per_s: Err(Skipped {
                        reason: "too many bindings".into(),
                    }),
                    launches_per_step: None,
                    ..point("vertical", 4096, 0.0)
                },
            ],
            training: vec![
                run(HOST_SOURCE, 1, Some((300_000, 14.0))),
                run(HOST_SOURCE, 2, Some((200_000, 12.0))),
                run(HOST_SOURCE, 3, None),
                TrainingRun {
                    error: Some("not compiled here".into()),
                    ..run("fused-x8", 1, None)
                },
            ],
            population: None,
            target_return: 475.0,
        };
        let sentences = commentary(std::slice::from_ref(&study));
        assert_eq!(sentences.len(), 2, "{sentences:?}");
        assert_eq!(
            sentences[0],
            "On cpu at n = 4096, fused-x10 collects 6.00x as many env-steps/s as burn policy + \
             env step; it pays from n = 4096 on (at n = 8 it is 0.50x)."
        );
        assert_eq!(
            sentences[1],
            "On cpu, PPO with samples from burn policy + env step reached 475 in 2 of 3 runs: \
             14.0 s to the target (median; 12.0 to 14.0), after 300000 env-steps (median; \
             200000 to 300000)."
        );
        // Faster at the smallest size only (lavapipe's pattern): said as such.
        let small_only = PolicyStudy {
            points: vec![
                point(HOST_SOURCE, 8, 1e4),
                point("fused-x10", 8, 1.5e4),
                point(HOST_SOURCE, 4096, 3e5),
                point("fused-x10", 4096, 1.2e5),
            ],
            ..study.clone()
        };
        assert_eq!(
            rollout_sentence(&small_only).unwrap(),
            "On cpu at n = 4096, fused-x10 collects 0.40x as many env-steps/s as burn policy + \
             env step; it is faster only at n = 8 (1.50x)."
        );
        let one = PolicyStudy {
            training: vec![run("fused-x8", 1, Some((123_456, 9.5)))],
            ..study.clone()
        };
        assert_eq!(
            training_sentences(&one),
            [
                "On cpu, PPO with samples from fused-x8 reached 475 in 1 of 1 runs: 9.5 s to the \
              target, after 123456 env-steps."
            ]
        );
        let csv = rollouts(std::slice::from_ref(&study)).csv();
        assert_eq!(csv.lines().count(), 6, "{csv}");
        assert!(csv.contains("too many bindings"), "{csv}");
        assert_eq!(
            training(std::slice::from_ref(&study)).csv().lines().count(),
            5
        );

        let with_population = PolicyStudy {
            population: Some(PopulationRun {
                source: POPULATION_SOURCE.into(),
                rollout_seconds: 3.5,
                learn_seconds: 54.8,
                agents: 64,
                reached_target: 64,
                seconds: 58.3,
                median_seconds_to_target: Some(40.0),
                median_env_steps_to_target: Some(66_560),
                median_final_mean_return: Some(477.0),
                env_steps: 64 * 70_000,
                env_steps_per_s: 7.7e4,
                error: None,
            }),
            ..study
        };
        let sentences = commentary(std::slice::from_ref(&with_population));
        assert_eq!(
            sentences[2],
            format!(
                "On cpu, 64 of a population of 64 PPO agents trained together \
                 ({POPULATION_SOURCE}) reached 475 in 58.3 s for the whole population, 3.5 s \
                 of it collecting and 54.8 s learning (the median agent: 40.0 s, 66560 env-steps); one agent alone with burn's learner \
                 took 14.0 s (median of 2)."
            )
        );
        let csv = training(&[with_population]).csv();
        assert_eq!(csv.lines().count(), 6, "{csv}");
        assert!(
            csv.contains("population of 64, 64 reached the target"),
            "{csv}"
        );
    }
}
