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
mod tests {
    use super::*;
    use cartfuse_fusion::cpu::Cpu;
    use cartfuse_fusion::plan::Strategy;

    fn turns(plan: &[f64], reference: &[f64]) -> InTurns {
        InTurns {
            runtime: "cpu".into(),
            device: "a CPU".into(),
            num_envs: 64,
            plan: "fused".into(),
            reference: "hand-written".into(),
            plan_step_s: plan.to_vec(),
            reference_step_s: reference.to_vec(),
        }
    }

    #[test]
    fn the_verdict_is_the_median_round() {
        // Rounds of ratio 2, 0.5, 1.0, 0.8, 1.25: sorted 0.5 0.8 1.0 1.25 2.0.
        let t = turns(&[1.0, 2.0, 1.0, 1.0, 0.8], &[2.0, 1.0, 1.0, 0.8, 1.0]);
        assert_eq!(
            t.ratio(),
            RoundRatio {
                median: 1.0,
                slowest_round: 0.5,
                fastest_round: 2.0,
                rounds: 5
            }
        );
        assert_eq!(t.ratio_range(), (0.5, 2.0));
        assert_eq!(t.plan_median_s(), 1.0);
        assert_eq!(t.reference_median_s(), 1.0);
        assert!(t.within(0.1));
        assert!(t.ratio().spread_covers(1.9) && !t.ratio().spread_covers(2.1));
        assert_eq!(t.ratio().text(), "1.00x (rounds 0.50-2.00x, 5 rounds)");
        // An even count takes the mean of the middle two: ratios 0.8 and 0.9 -> 0.85.
        let slow = turns(&[1.0, 1.0], &[0.8, 0.9]);
        assert!((slow.median_ratio() - 0.85).abs() < 1e-12);
        assert!(!slow.within(0.1));
        assert!(slow.within(0.2));
        // Rounds that do not pair up give no ratio.
        assert_eq!(RoundRatio::of(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(RoundRatio::of(&[], &[]), None);
    }

    #[test]
    fn slow_rounds_stop_at_twice_the_budget() {
        let settings = TurnsSettings::default_report();
        assert!(
            settings.another_round(8, 20.0),
            "min rounds within twice the budget"
        );
        assert!(!settings.another_round(5, 30.0), "past twice the budget");
        assert!(
            settings.another_round(2, 300.0),
            "never fewer than three rounds"
        );
        assert!(settings.another_round(40, 14.0) && !settings.another_round(40, 15.0));
        assert!(!settings.another_round(301, 1.0));
        // Without a budget the rounds asked for always run.
        assert!(TurnsSettings::exactly(9, 0.05).another_round(8, 1e6));
    }

    #[test]
    fn the_order_rotates_and_turns_round() {
        let orders: Vec<Vec<usize>> = (0..6).map(|r| round_order(r, 3)).collect();
        assert_eq!(
            orders,
            [
                vec![0, 1, 2],
                vec![2, 1, 0],
                vec![1, 2, 0],
                vec![0, 2, 1],
                vec![2, 0, 1],
                vec![1, 0, 2]
            ]
        );
        // Every plan takes every position over the cycle.
        for plan in 0..3 {
            let mut positions: Vec<usize> = orders
                .iter()
                .map(|o| o.iter().position(|&p| p == plan).unwrap())
                .collect();
            positions.sort();
            assert_eq!(positions, [0, 0, 1, 1, 2, 2]);
        }
        assert_eq!(round_order(0, 2), [0, 1]);
        assert_eq!(round_order(1, 2), [1, 0]);
    }

    /// A plan whose calls take a known time (`actual_s`; sized as if `call_s`), recording
    /// when it ran.
    struct Fake {
        call_s: f64,
        actual_s: f64,
        log: std::rc::Rc<std::cell::RefCell<Vec<usize>>>,
        id: usize,
    }

    impl Turn for Fake {
        fn time_repeat(&mut self, calls: u64, limit_s: f64) -> Result<(f64, u64), EnvError> {
            self.log.borrow_mut().push(self.id);
            // Calls slower than planned stop at the limit (at least one is made).
            let made = calls.min(((limit_s / self.actual_s) as u64).max(1));
            Ok((self.actual_s * made as f64, made))
        }
        fn calls_for(&self, seconds: f64) -> u64 {
            (seconds / self.call_s).ceil() as u64
        }
        fn steps_per_call(&self) -> usize {
            1
        }
    }

    #[test]
    fn rounds_run_in_the_rotated_order_within_the_budget() {
        let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut fakes: Vec<Fake> = [1e-3, 2e-3, 4e-3]
            .iter()
            .enumerate()
            .map(|(id, &call_s)| Fake {
                call_s,
                actual_s: call_s,
                log: log.clone(),
                id,
            })
            .collect();
        let mut turns: Vec<&mut dyn Turn> = fakes.iter_mut().map(|f| f as &mut dyn Turn).collect();
        let mut seen = Vec::new();
        let rounds = run_rounds(&mut turns, &TurnsSettings::exactly(4, 0.01), |r| {
            seen.push(r)
        })
        .unwrap();
        assert_eq!(seen, [1, 2, 3, 4]);
        assert_eq!(rounds.step_s.len(), 3);
        assert!(rounds.step_s.iter().all(|s| s.len() == 4));
        assert!((rounds.step_s[2][0] - 4e-3).abs() < 1e-12);
        // 10 ms repeats: 10, 5 and 3 calls a round.
        assert_eq!(rounds.calls, [40, 20, 12]);
        assert_eq!(&log.borrow()[..6], &[0, 1, 2, 2, 1, 0]);
        // A budget no round can meet runs up to the round limit; no rounds is an error.
        let budget = TurnsSettings {
            budget_s: 1e9,
            max_rounds: 7,
            ..TurnsSettings::exactly(2, 0.01)
        };
        let rounds = run_rounds(&mut turns, &budget, |_| {}).unwrap();
        assert!(rounds.step_s.iter().all(|s| s.len() == 7));
        drop(turns);
        // A plan that slowed to 25 ms a call after its calls were sized (10 of 1 ms for a
        // 10 ms repeat) stops at the limit, 4 x 10 ms: one call of 25 ms, counted as such.
        fakes[0].actual_s = 0.025;
        let mut turns: Vec<&mut dyn Turn> = fakes.iter_mut().map(|f| f as &mut dyn Turn).collect();
        let rounds = run_rounds(&mut turns, &TurnsSettings::exactly(1, 0.01), |_| {}).unwrap();
        assert_eq!(rounds.calls[0], 1);
        assert_eq!(rounds.step_s[0], [0.025]);
        assert!(matches!(
            run_rounds(&mut turns, &TurnsSettings::exactly(0, 0.01), |_| {}),
            Err(EnvError::InvalidParam { name: "rounds", .. })
        ));
    }

    #[test]
    fn plans_are_built_timed_and_profiled_in_turns() {
        let config = cartpole_next_step();
        let settings = TurnsSettings::exactly(3, 0.001);
        let t = time_in_turns(
            &Cpu::default(),
            config.params,
            config.episode(),
            (
                StepPlan::Graph(Strategy::FusedSteps(4)),
                StepPlan::HandWritten,
            ),
            128,
            &settings,
            |_| {},
        )
        .unwrap();
        assert_eq!(
            (t.plan.as_str(), t.reference.as_str()),
            ("fused-x4", "hand-written")
        );
        assert_eq!((t.plan_step_s.len(), t.reference_step_s.len()), (3, 3));
        assert!(t.ratio().median.is_finite() && t.ratio().median > 0.0);
        let timed = plans_in_turns(
            &Cpu::default(),
            config.params,
            config.episode(),
            &[
                StepPlan::Graph(Strategy::Eager),
                StepPlan::Graph(Strategy::Fused),
            ],
            64,
            &settings,
            |_| {},
        )
        .unwrap();
        let eager = timed[0].as_ref().unwrap();
        let fused = timed[1].as_ref().unwrap();
        assert_eq!(fused.profile.launches_per_step, 1.0);
        assert!(eager.profile.launches_per_step > 10.0);
        assert_eq!(eager.round_step_s.len(), 3);
        assert_eq!(
            fused.profile.step_s_median,
            median(fused.round_step_s.clone())
        );
    }
}
