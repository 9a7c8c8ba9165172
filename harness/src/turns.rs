//! Two plans timed in turns, for a ratio that the machine's drift does not decide.
//!
//! The ablation times each plan over every size before the next plan starts, so two rows
//! are measured minutes apart. On the 2-core VMs this project measures on that is enough
//! to move a ratio by 2x: two-thread CPU steps run at one of two speeds for tens of seconds
//! at a time, and single lavapipe cells differ by 30% between runs. Here both plans are
//! built, compiled and warmed first; then each round times one repeat of the plan and one
//! of the reference, back to back, alternating which goes first. Each round's ratio is
//! kept, and the median round is the verdict, with the spread of the rounds beside it.

use cartfuse_env::{
    AutoresetMode, CartPoleConfig, EnvBackend, EnvError, EpisodeOptions, GraphEnv, StepPlan,
};
use cartfuse_fusion::plan::Strategy;

use crate::profile::TimedEnv;

/// How long and how often to alternate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TurnsSettings {
    /// Rounds at least; each times one repeat of both plans.
    pub rounds: usize,
    /// Each repeat runs at least this long.
    pub min_seconds_per_repeat: f64,
    /// Past `rounds`, more rounds run until the rounds have taken this many seconds...
    pub min_seconds: f64,
    /// ...or this many rounds have run.
    pub max_rounds: usize,
}

impl TurnsSettings {
    /// The full report's: at least 15 rounds of 0.2 s repeats, and more, up to 61, until a
    /// size has taken 10 s. Single rounds on lavapipe spread by 20-40%, and with 7 rounds
    /// the median moved by up to 8% between two full runs (0.92x and 0.86x for the same
    /// two kernels at n = 1024). With 15 the rounds at n = 64 still spread from 0.62x to
    /// 1.23x and the median came out at 0.897x, where the two runs before had 0.95x and
    /// 0.97x; where a step is short (small n) more rounds cost little. The first full run
    /// with the budget timed 15 to 61 rounds per size (61 at n = 1 and 64 on lavapipe), in
    /// 20 min 41 s against 18 min 52 s for the run before.
    pub fn full() -> Self {
        Self {
            rounds: 15,
            min_seconds_per_repeat: 0.2,
            min_seconds: 10.0,
            max_rounds: 61,
        }
    }

    /// `--quick`: 3 rounds of 0.05 s repeats.
    pub fn quick() -> Self {
        Self::exactly(3, 0.05)
    }

    /// `rounds` rounds of repeats of at least `min_seconds_per_repeat`, no more.
    pub fn exactly(rounds: usize, min_seconds_per_repeat: f64) -> Self {
        Self {
            rounds,
            min_seconds_per_repeat,
            min_seconds: 0.0,
            max_rounds: rounds,
        }
    }
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
    /// Each round's speed ratio, `reference` time / `plan` time (above 1: `plan` is faster).
    pub fn ratios(&self) -> Vec<f64> {
        self.reference_step_s
            .iter()
            .zip(&self.plan_step_s)
            .map(|(r, p)| r / p)
            .collect()
    }

    /// The median round's ratio.
    pub fn median_ratio(&self) -> f64 {
        median(self.ratios())
    }

    /// The slowest and the fastest round's ratio.
    pub fn ratio_range(&self) -> (f64, f64) {
        let ratios = self.ratios();
        let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let max = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (min, max)
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

fn median(mut values: Vec<f64>) -> f64 {
    assert!(!values.is_empty(), "a median of no rounds");
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// Times `plan` against `reference` on `num_envs` envs of `env_params`, in turns, calling
/// `progress(done, total)` after each round.
pub fn time_in_turns<E: GraphEnv, B: EnvBackend>(
    backend: &B,
    env_params: E,
    episode: EpisodeOptions,
    (plan, reference): (StepPlan, StepPlan),
    num_envs: usize,
    settings: &TurnsSettings,
    mut progress: impl FnMut(usize, usize),
) -> Result<InTurns, EnvError> {
    if settings.rounds == 0 {
        return Err(EnvError::InvalidParam {
            name: "rounds",
            value: 0.0,
            expected: "at least 1 round",
        });
    }
    let device = backend.description();
    let mut timed = [
        TimedEnv::new(backend.clone(), env_params.clone(), episode, plan, num_envs)?,
        TimedEnv::new(backend.clone(), env_params, episode, reference, num_envs)?,
    ];
    let calls = timed
        .each_ref()
        .map(|t| t.calls_for(settings.min_seconds_per_repeat));
    let mut step_s = [Vec::new(), Vec::new()];
    let start = std::time::Instant::now();
    let max_rounds = settings.max_rounds.max(settings.rounds);
    let mut round = 0;
    while round < settings.rounds
        || (round < max_rounds && start.elapsed().as_secs_f64() < settings.min_seconds)
    {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for side in order {
            let seconds = timed[side].time_calls(calls[side])?;
            step_s[side].push(seconds / (calls[side] as f64 * timed[side].steps_per_call() as f64));
        }
        round += 1;
        progress(round, settings.rounds.max(round));
    }
    let [plan_step_s, reference_step_s] = step_s;
    Ok(InTurns {
        runtime: backend.runtime_name().into(),
        device,
        num_envs,
        plan: plan.to_string(),
        reference: reference.to_string(),
        plan_step_s,
        reference_step_s,
    })
}

/// `fused` against the hand-written CartPole step (`NextStep` autoreset) at each of `sizes`
/// on `backend`, timed in turns; a size that does not fit is left out (the ablation says why).
pub fn fused_against_hand_written<B: EnvBackend>(
    backend: &B,
    sizes: &[usize],
    settings: &TurnsSettings,
    progress: &mut impl FnMut(&str),
) -> Result<Vec<InTurns>, EnvError> {
    let config = CartPoleConfig {
        autoreset: AutoresetMode::NextStep,
        ..CartPoleConfig::default()
    };
    let mut out = Vec::new();
    for &n in sizes {
        progress(&format!(
            "{}: fused against hand-written in turns, n = {n}",
            backend.runtime_name()
        ));
        match time_in_turns(
            backend,
            config.params,
            config.episode(),
            (StepPlan::Graph(Strategy::Fused), StepPlan::HandWritten),
            n,
            settings,
            |_, _| {},
        ) {
            Ok(turns) => out.push(turns),
            Err(EnvError::TooManyEnvs { .. }) => {}
            Err(other) => return Err(other),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cartfuse_fusion::cpu::Cpu;

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
        assert_eq!(t.ratios(), vec![2.0, 0.5, 1.0, 0.8, 1.25]);
        assert_eq!(t.median_ratio(), 1.0);
        assert_eq!(t.ratio_range(), (0.5, 2.0));
        assert_eq!(t.plan_median_s(), 1.0);
        assert_eq!(t.reference_median_s(), 1.0);
        assert!(t.within(0.1));
        // An even count takes the mean of the middle two: ratios 0.8 and 0.9 -> 0.85.
        let slow = turns(&[1.0, 1.0], &[0.8, 0.9]);
        assert!((slow.median_ratio() - 0.85).abs() < 1e-12);
        assert!(!slow.within(0.1));
        assert!(slow.within(0.2));
    }

    #[test]
    fn both_plans_are_timed_every_round() {
        let config = CartPoleConfig {
            autoreset: AutoresetMode::NextStep,
            ..CartPoleConfig::default()
        };
        let time = |plan: Strategy, num_envs: usize, settings: &TurnsSettings| {
            time_in_turns(
                &Cpu::default(),
                config.params,
                config.episode(),
                (StepPlan::Graph(plan), StepPlan::HandWritten),
                num_envs,
                settings,
                |_, _| {},
            )
        };
        let settings = TurnsSettings::exactly(3, 0.001);
        let t = time(Strategy::FusedSteps(4), 128, &settings).unwrap();
        assert_eq!(
            (t.plan.as_str(), t.reference.as_str()),
            ("fused-x4", "hand-written")
        );
        assert_eq!((t.plan_step_s.len(), t.reference_step_s.len()), (3, 3));
        assert!(t.ratios().iter().all(|r| r.is_finite() && *r > 0.0));
        // A time budget no round can meet runs up to the round limit.
        let budget = TurnsSettings {
            min_seconds: 1e9,
            max_rounds: 5,
            ..settings
        };
        let t = time(Strategy::Fused, 8, &budget).unwrap();
        assert_eq!((t.plan_step_s.len(), t.reference_step_s.len()), (5, 5));
        let none = TurnsSettings {
            rounds: 0,
            ..settings
        };
        assert!(matches!(
            time(Strategy::Fused, 8, &none),
            Err(EnvError::InvalidParam { name: "rounds", .. })
        ));
    }
}
