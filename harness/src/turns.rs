//! Plans timed in turns, for ratios that the machine's drift does not decide.
//!
//! Timing each plan over every size before the next plan starts puts two rows minutes
//! apart. On the 2-core VMs this project measures on that is enough to move a ratio by 2x:
//! two-thread CPU steps run at one of two speeds for tens of seconds at a time, and single
//! lavapipe cells differ by 30% between runs. Here every plan of a comparison is built,
//! compiled and warmed first; then each round times one repeat of every plan, back to back,
//! in an order that rotates between rounds ([`round_order`]). Each round's ratio of two
//! plans is kept, and the median round is the verdict, with the slowest and the fastest
//! round beside it ([`RoundRatio`]).

use std::time::Instant;

use cartfuse_env::{
    AutoresetMode, CartPoleConfig, EnvBackend, EnvError, EpisodeOptions, GraphEnv, StepPlan,
};

use crate::profile::{StepProfile, TimedEnv, flops_per_env_step, median};

/// How long and how often to time in turns.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct TurnsSettings {
    /// Rounds at least; each times one repeat of every plan.
    pub min_rounds: usize,
    /// Each repeat runs at least this long (seconds).
    pub repeat_s: f64,
    /// Past `min_rounds`, more rounds run until the rounds of one size have taken this many
    /// seconds...
    pub budget_s: f64,
    /// ...or this many rounds have run.
    pub max_rounds: usize,
}

impl TurnsSettings {
    /// The default report's: at least 9 rounds of 0.05 s repeats, and more, up to 301,
    /// until a size has taken 15 s. With the nine ablation rows and eager in one rotation
    /// a round takes about 0.5 s at small n and 1-2 s at n = 1M on lavapipe.
    pub fn default_report() -> Self {
        Self {
            min_rounds: 9,
            repeat_s: 0.05,
            budget_s: 15.0,
            max_rounds: 301,
        }
    }

    /// `--full`: at least 15 rounds of 0.1 s repeats, and more, up to 301, until a size has
    /// taken 45 s. Two plans alone in turns (the report before the whole ladder was timed
    /// so) spread by 20-40% a round on lavapipe, and with 7 rounds the median moved by up
    /// to 8% between two full runs; 15 to 61 rounds held the medians of the last runs
    /// within the spread of their rounds.
    pub fn full() -> Self {
        Self {
            min_rounds: 15,
            repeat_s: 0.1,
            budget_s: 45.0,
            max_rounds: 301,
        }
    }

    /// `--quick`: 3 rounds of 0.05 s repeats.
    pub fn quick() -> Self {
        Self::exactly(3, 0.05)
    }

    /// `rounds` rounds of repeats of at least `repeat_s`, no more.
    pub fn exactly(rounds: usize, repeat_s: f64) -> Self {
        Self {
            min_rounds: rounds,
            repeat_s,
            budget_s: 0.0,
            max_rounds: rounds,
        }
    }

    /// The same settings with `budget_s` seconds per size.
    pub fn with_budget(self, budget_s: f64) -> Self {
        Self { budget_s, ..self }
    }

    /// Whether another round runs after `rounds` rounds that took `elapsed_s` seconds: up
    /// to `min_rounds`, then within the budget up to `max_rounds`. With a budget, a size
    /// whose rounds are slow (n = 1M on lavapipe: eager alone takes seconds a call on a
    /// loaded machine) stops short of `min_rounds` at twice the budget, after at least
    /// [`FLOOR_ROUNDS`] rounds, so the run keeps its time.
    fn another_round(&self, rounds: usize, elapsed_s: f64) -> bool {
        let capped = self.budget_s > 0.0 && elapsed_s >= 2.0 * self.budget_s;
        (rounds < self.min_rounds && (rounds < FLOOR_ROUNDS || !capped))
            || (rounds < self.max_rounds.max(self.min_rounds) && elapsed_s < self.budget_s)
    }

    /// One line for the report: `"at least 9 rounds of 0.05 s repeats per size, more until
    /// the size has taken 15 s (at most 301)"`.
    pub fn describe(&self) -> String {
        if self.max_rounds <= self.min_rounds {
            format!(
                "{} rounds of {} s repeats per size",
                self.min_rounds, self.repeat_s
            )
        } else {
            format!(
                "at least {} rounds of {} s repeats per size, more until the size has taken \
                 {} s (at most {} rounds; where rounds are slow, fewer, at least {}, stopping \
                 at {} s)",
                self.min_rounds,
                self.repeat_s,
                self.budget_s,
                self.max_rounds,
                FLOOR_ROUNDS,
                2.0 * self.budget_s
            )
        }
    }
}

/// Rounds every size gets, whatever its budget.
pub const FLOOR_ROUNDS: usize = 3;

/// A repeat may run this many times its planned length before it stops early.
const REPEAT_LIMIT: f64 = 4.0;

/// Something timed in turns: repeats of back-to-back calls.
pub trait Turn {
    /// Up to `calls` back-to-back calls, stopping early past `limit_s` seconds:
    /// `(seconds, calls made)`, synchronised before and after.
    fn time_repeat(&mut self, calls: u64, limit_s: f64) -> Result<(f64, u64), EnvError>;
    /// Calls that make one repeat last at least `seconds`.
    fn calls_for(&self, seconds: f64) -> u64;
    /// Env steps per call.
    fn steps_per_call(&self) -> usize;
}

impl<E: GraphEnv, B: EnvBackend> Turn for TimedEnv<E, B> {
    fn time_repeat(&mut self, calls: u64, limit_s: f64) -> Result<(f64, u64), EnvError> {
        TimedEnv::time_repeat(self, calls, limit_s)
    }

    fn calls_for(&self, seconds: f64) -> u64 {
        TimedEnv::calls_for(self, seconds)
    }

    fn steps_per_call(&self) -> usize {
        TimedEnv::steps_per_call(self)
    }
}

/// The order in which round `round` times `k` plans: rotated by one place every two rounds
/// and reversed in every odd round, so each plan takes every position and each pair runs
/// in both orders.
pub fn round_order(round: usize, k: usize) -> Vec<usize> {
    let start = (round / 2) % k.max(1);
    let mut order: Vec<usize> = (0..k).map(|i| (start + i) % k).collect();
    if round % 2 == 1 {
        order.reverse();
    }
    order
}

/// What [`run_rounds`] measured: each plan's seconds per env-batch step, one per round,
/// and the calls each plan made in all.
#[derive(Debug, Clone, PartialEq)]
pub struct Rounds {
    /// Seconds per env-batch step, `[plan][round]`.
    pub step_s: Vec<Vec<f64>>,
    /// Calls made per plan, every round together.
    pub calls: Vec<u64>,
}

/// Times `turns` in rounds as `settings` says, calling `progress(rounds done)` after each
/// round. A repeat that runs past four times its planned length stops early (the machine
/// slowed down after the calls were sized) and counts the calls it made.
pub fn run_rounds(
    turns: &mut [&mut dyn Turn],
    settings: &TurnsSettings,
    mut progress: impl FnMut(usize),
) -> Result<Rounds, EnvError> {
    if settings.min_rounds == 0 {
        return Err(EnvError::InvalidParam {
            name: "rounds",
            value: 0.0,
            expected: "at least 1 round",
        });
    }
    let calls: Vec<u64> = turns
        .iter()
        .map(|t| t.calls_for(settings.repeat_s))
        .collect();
    let mut rounds = Rounds {
        step_s: vec![Vec::new(); turns.len()],
        calls: vec![0; turns.len()],
    };
    let start = Instant::now();
    let mut round = 0;
    while !turns.is_empty() && settings.another_round(round, start.elapsed().as_secs_f64()) {
        for i in round_order(round, turns.len()) {
            let (seconds, made) =
                turns[i].time_repeat(calls[i], REPEAT_LIMIT * settings.repeat_s)?;
            rounds.step_s[i].push(seconds / (made as f64 * turns[i].steps_per_call() as f64));
            rounds.calls[i] += made;
        }
        round += 1;
        progress(round);
    }
    Ok(rounds)
}

/// A speed ratio taken round by round: each round's time of the reference over the time of
/// the plan (above 1: the plan is faster), as the median round's, the slowest and the
/// fastest round's, and the number of rounds.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct RoundRatio {
    /// The median round's ratio.
    pub median: f64,
    /// The lowest round's ratio.
    pub slowest_round: f64,
    /// The highest round's ratio.
    pub fastest_round: f64,
    /// Rounds.
    pub rounds: usize,
}

impl RoundRatio {
    /// The ratio of `reference_s[r] / plan_s[r]` over rounds `r`; `None` without rounds or
    /// when the two were not timed in the same rounds.
    pub fn of(reference_s: &[f64], plan_s: &[f64]) -> Option<Self> {
        if reference_s.is_empty() || reference_s.len() != plan_s.len() {
            return None;
        }
        let ratios: Vec<f64> = reference_s.iter().zip(plan_s).map(|(r, p)| r / p).collect();
        Some(Self {
            slowest_round: ratios.iter().copied().fold(f64::INFINITY, f64::min),
            fastest_round: ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            rounds: ratios.len(),
            median: median(ratios),
        })
    }

    /// Whether `value` lies between the slowest and the fastest round.
    pub fn spread_covers(&self, value: f64) -> bool {
        (self.slowest_round..=self.fastest_round).contains(&value)
    }

    /// `"1.23x (rounds 0.98-1.51x, 31 rounds)"`.
    pub fn text(&self) -> String {
        format!(
            "{:.2}x (rounds {:.2}-{:.2}x, {} rounds)",
            self.median, self.slowest_round, self.fastest_round, self.rounds
        )
    }
}

/// One plan's part of a comparison in turns: its profile (median, fastest and slowest of its
/// rounds; launches and bytes from the ledger over them) and its seconds per step in each
/// round.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanInTurns {
    /// The profile.
    pub profile: StepProfile,
    /// Seconds per env-batch step, one per round.
    pub round_step_s: Vec<f64>,
}

/// Builds `num_envs` envs of `env_params` under each of `plans` on `backend` and times
/// those built in turns. A plan that does not fit ([`EnvError::TooManyEnvs`]) or that the
/// environment lacks ([`EnvError::PlanUnavailable`]) gives its error in its place; any
/// other error stops the comparison. `progress(rounds done)` after each round.
pub fn plans_in_turns<E: GraphEnv, B: EnvBackend>(
    backend: &B,
    env_params: E,
    episode: EpisodeOptions,
    plans: &[StepPlan],
    num_envs: usize,
    settings: &TurnsSettings,
    progress: impl FnMut(usize),
) -> Result<Vec<Result<PlanInTurns, EnvError>>, EnvError> {
    let flops = flops_per_env_step(&env_params, episode.autoreset);
    let mut built = Vec::with_capacity(plans.len());
    for &plan in plans {
        match TimedEnv::new(backend.clone(), env_params.clone(), episode, plan, num_envs) {
            Ok(timed) => built.push(Ok(timed)),
            Err(e @ (EnvError::TooManyEnvs { .. } | EnvError::PlanUnavailable { .. })) => {
                built.push(Err(e))
            }
            Err(other) => return Err(other),
        }
    }
    let mut timed: Vec<&mut TimedEnv<E, B>> =
        built.iter_mut().filter_map(|t| t.as_mut().ok()).collect();
    let before: Vec<_> = timed.iter().map(|t| t.env().ledger().totals()).collect();
    let calls: Vec<u64> = timed
        .iter()
        .map(|t| t.calls_for(settings.repeat_s))
        .collect();
    let rounds = {
        let mut turns: Vec<&mut dyn Turn> = timed
            .iter_mut()
            .map(|t| &mut **t as &mut dyn Turn)
            .collect();
        run_rounds(&mut turns, settings, progress)?
    };
    let summaries: Vec<PlanInTurns> = timed
        .iter()
        .zip(rounds.step_s)
        .zip(before.iter().zip(calls.into_iter().zip(rounds.calls)))
        .map(|((t, round_step_s), (before, calls))| PlanInTurns {
            profile: t.summarize(calls, &round_step_s, before, flops),
            round_step_s,
        })
        .collect();
    let mut summaries = summaries.into_iter();
    Ok(built
        .into_iter()
        .map(|b| b.map(|_| summaries.next().expect("one summary per plan built")))
        .collect())
}

/// Two plans at one size, timed in turns.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct InTurns {
    /// The runtime (`cpu`, `wgpu`, `cuda`).
    pub runtime: String,
    /// Where they ran, as the backend describes itself.
    pub device: String,
    /// Envs stepped in parallel.
    pub num_envs: usize,
    /// The plan compared.
    pub plan: String,
    /// The plan it is compared with.
    pub reference: String,
    /// Seconds per batch step of `plan`, one per round.
    pub plan_step_s: Vec<f64>,
    /// Seconds per batch step of `reference`, one per round.
    pub reference_step_s: Vec<f64>,
}

impl InTurns {
    /// `reference` time / `plan` time round by round (above 1: `plan` is faster).
    pub fn ratio(&self) -> RoundRatio {
        RoundRatio::of(&self.reference_step_s, &self.plan_step_s)
            .expect("both plans timed in the same rounds")
    }

    /// The median round's ratio.
    pub fn median_ratio(&self) -> f64 {
        self.ratio().median
    }

    /// The slowest and the fastest round's ratio.
    pub fn ratio_range(&self) -> (f64, f64) {
        let ratio = self.ratio();
        (ratio.slowest_round, ratio.fastest_round)
    }

    /// Median seconds per step of `plan`.
    pub fn plan_median_s(&self) -> f64 {
        median(self.plan_step_s.clone())
    }

    /// Median seconds per step of `reference`.
    pub fn reference_median_s(&self) -> f64 {
        median(self.reference_step_s.clone())
    }

    /// Whether `plan` is at most `tolerance` slower than `reference` in the median round
    /// (`tolerance` 0.1: the median ratio is at least 0.9).
    pub fn within(&self, tolerance: f64) -> bool {
        self.median_ratio() >= 1.0 - tolerance
    }
}

/// Times `plan` against `reference` on `num_envs` envs of `env_params`, in turns, calling
/// `progress(rounds done)` after each round.
pub fn time_in_turns<E: GraphEnv, B: EnvBackend>(
    backend: &B,
    env_params: E,
    episode: EpisodeOptions,
    (plan, reference): (StepPlan, StepPlan),
    num_envs: usize,
    settings: &TurnsSettings,
    progress: impl FnMut(usize),
) -> Result<InTurns, EnvError> {
    let mut timed = plans_in_turns(
        backend,
        env_params,
        episode,
        &[plan, reference],
        num_envs,
        settings,
        progress,
    )?
    .into_iter();
    let mut next = || timed.next().expect("one result per plan");
    let (plan_rounds, reference_rounds) = (next()?, next()?);
    Ok(InTurns {
        runtime: backend.runtime_name().into(),
        device: backend.description(),
        num_envs,
        plan: plan.to_string(),
        reference: reference.to_string(),
        plan_step_s: plan_rounds.round_step_s,
        reference_step_s: reference_rounds.round_step_s,
    })
}

/// CartPole's episode options of the report: `NextStep` autoreset, the registered limit.
pub fn cartpole_next_step() -> CartPoleConfig {
    CartPoleConfig {
        autoreset: AutoresetMode::NextStep,
        ..CartPoleConfig::default()
    }
}

#[cfg(test)]
mod tests;
