//! The cells of the report's plan tables: every row of a table at one size built, warmed and
//! timed in turns ([`crate::turns`]), and each row's factors over the rows it is compared
//! with (the row before, xla-default, eager), taken round by round.

use cartfuse_env::{EnvBackend, EnvError, EpisodeOptions, GraphEnv, StepPlan};

use crate::error::{ReproduceError, Skipped};
use crate::profile::StepProfile;
use crate::turns::{InTurns, RoundRatio, TurnsSettings, cartpole_next_step, plans_in_turns};

/// One factor of each comparison a cell takes part in.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct Speedups {
    /// Over the measured row before it in the ladder.
    pub over_previous: Option<f64>,
    /// Over the ladder's first row, xla-default.
    pub over_xla_default: Option<f64>,
    /// Over eager on the same runtime.
    pub over_eager: Option<f64>,
}

/// What a cell's factor is taken over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// The measured row before it.
    Previous,
    /// xla-default, the ladder's first row.
    XlaDefault,
    /// Eager on the same runtime.
    Eager,
}

impl Over {
    fn of(self, speedups: &Speedups) -> Option<f64> {
        match self {
            Over::Previous => speedups.over_previous,
            Over::XlaDefault => speedups.over_xla_default,
            Over::Eager => speedups.over_eager,
        }
    }

    fn of_mut(self, speedups: &mut Speedups) -> &mut Option<f64> {
        match self {
            Over::Previous => &mut speedups.over_previous,
            Over::XlaDefault => &mut speedups.over_xla_default,
            Over::Eager => &mut speedups.over_eager,
        }
    }
}

/// One row of a plan table at one size.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AblationCell {
    /// Row label.
    pub row: String,
    /// Env count.
    pub num_envs: usize,
    /// The profile (from the rounds in turns), or why there is none.
    pub profile: Result<StepProfile, Skipped>,
    /// Rounds in turns at this size (every row of the table at this size ran in each).
    pub rounds: usize,
    /// This row's seconds per env-batch step in each round.
    pub round_step_s: Vec<f64>,
    /// Time-per-step ratio, median round: previous measured row / this row.
    pub speedup_over_previous: Option<f64>,
    /// Time-per-step ratio, median round: xla-default / this row.
    pub speedup_over_xla_default: Option<f64>,
    /// Time-per-step ratio, median round: eager / this row.
    pub speedup_over_eager: Option<f64>,
    /// Each factor's lowest round.
    pub slowest_round: Speedups,
    /// Each factor's highest round.
    pub fastest_round: Speedups,
}

impl AblationCell {
    /// The profile of a cell that ran.
    pub fn ran(&self) -> Option<&StepProfile> {
        self.profile.as_ref().ok()
    }

    /// A cell of `row` at `n` with `profile` and its rounds, no factors yet.
    pub fn new(
        row: &str,
        num_envs: usize,
        profile: Result<StepProfile, Skipped>,
        round_step_s: Vec<f64>,
    ) -> Self {
        Self {
            row: row.into(),
            num_envs,
            profile,
            rounds: round_step_s.len(),
            round_step_s,
            speedup_over_previous: None,
            speedup_over_xla_default: None,
            speedup_over_eager: None,
            slowest_round: Speedups::default(),
            fastest_round: Speedups::default(),
        }
    }

    /// The median round's factors.
    pub fn speedups(&self) -> Speedups {
        Speedups {
            over_previous: self.speedup_over_previous,
            over_xla_default: self.speedup_over_xla_default,
            over_eager: self.speedup_over_eager,
        }
    }

    /// The factor over `over`, round by round, if it was taken.
    pub fn factor(&self, over: Over) -> Option<RoundRatio> {
        Some(RoundRatio {
            median: over.of(&self.speedups())?,
            slowest_round: over.of(&self.slowest_round)?,
            fastest_round: over.of(&self.fastest_round)?,
            rounds: self.rounds,
        })
    }

    /// Takes the factor over `over` against `reference`'s rounds (`None` clears it).
    pub fn set_factor(&mut self, over: Over, reference: Option<&AblationCell>) {
        let ratio = reference
            .filter(|r| r.profile.is_ok() && self.profile.is_ok())
            .and_then(|r| RoundRatio::of(&r.round_step_s, &self.round_step_s));
        let median = match over {
            Over::Previous => &mut self.speedup_over_previous,
            Over::XlaDefault => &mut self.speedup_over_xla_default,
            Over::Eager => &mut self.speedup_over_eager,
        };
        *median = ratio.map(|r| r.median);
        *over.of_mut(&mut self.slowest_round) = ratio.map(|r| r.slowest_round);
        *over.of_mut(&mut self.fastest_round) = ratio.map(|r| r.fastest_round);
    }

    /// The median time per step, if it ran.
    pub fn step_time(&self) -> Option<f64> {
        self.profile.as_ref().ok().map(|p| p.step_s_median)
    }
}

/// The reason a size does not fit, as a cell shows it.
pub fn too_big(error: &EnvError) -> Option<Skipped> {
    match error {
        EnvError::TooManyEnvs {
            requested,
            max,
            limit,
        } => Some(Skipped {
            reason: format!("does not fit: {requested} envs, at most {max} ({limit})"),
        }),
        _ => None,
    }
}

/// Every `(label, plan)` of `rows` stepping `env_params` over `n` envs on `backend`, timed
/// in turns: one cell per row, in order ([`Skipped`] where the size does not fit), without
/// factors; a plan the environment lacks is left out.
pub fn cells_in_turns<E: GraphEnv, B: EnvBackend>(
    backend: &B,
    (env_params, episode): (E, EpisodeOptions),
    rows: &[(&str, StepPlan)],
    n: usize,
    settings: &TurnsSettings,
) -> Result<Vec<AblationCell>, ReproduceError> {
    let plans: Vec<StepPlan> = rows.iter().map(|(_, plan)| *plan).collect();
    let timed = plans_in_turns(backend, env_params, episode, &plans, n, settings, |_| {})?;
    let mut cells = Vec::new();
    for ((label, _), timed) in rows.iter().zip(timed) {
        match timed {
            Ok(t) => cells.push(AblationCell::new(label, n, Ok(t.profile), t.round_step_s)),
            Err(EnvError::PlanUnavailable { .. }) => {}
            Err(error) => match too_big(&error) {
                Some(skipped) => cells.push(AblationCell::new(label, n, Err(skipped), Vec::new())),
                None => return Err(error.into()),
            },
        }
    }
    Ok(cells)
}

/// CartPole (`NextStep` autoreset) under every `(label, plan)` of `rows` at `n` on
/// `backend`, timed in turns (see [`cells_in_turns`]).
pub fn cartpole_cells<B: EnvBackend>(
    backend: &B,
    rows: &[(&str, StepPlan)],
    n: usize,
    settings: &TurnsSettings,
) -> Result<Vec<AblationCell>, ReproduceError> {
    let config = cartpole_next_step();
    cells_in_turns(
        backend,
        (config.params, config.episode()),
        rows,
        n,
        settings,
    )
}

/// Sets every cell's factor over the cell labelled `eager` among `cells` (one size).
pub fn set_over_eager(cells: &mut [AblationCell]) {
    let eager = cells.iter().find(|c| c.row == "eager").cloned();
    for cell in cells.iter_mut().filter(|c| c.row != "eager") {
        cell.set_factor(Over::Eager, eager.as_ref());
    }
}

/// `plan` against `reference` at every size where both rows of `cells` ran (on `backend`),
/// from the rounds both took part in.
pub fn pairs_in_turns<B: EnvBackend>(
    cells: &[AblationCell],
    (plan, reference): (&str, &str),
    backend: &B,
) -> Vec<InTurns> {
    let measured = |row: &str, n: usize| {
        cells
            .iter()
            .find(|c| c.row == row && c.num_envs == n && c.profile.is_ok())
    };
    let mut sizes: Vec<usize> = Vec::new();
    for cell in cells {
        if !sizes.contains(&cell.num_envs) {
            sizes.push(cell.num_envs);
        }
    }
    sizes
        .into_iter()
        .filter_map(|n| {
            let (p, r) = (measured(plan, n)?, measured(reference, n)?);
            Some(InTurns {
                runtime: backend.runtime_name().into(),
                device: backend.description(),
                num_envs: n,
                plan: plan.into(),
                reference: reference.into(),
                plan_step_s: p.round_step_s.clone(),
                reference_step_s: r.round_step_s.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(row: &str, rounds: &[f64]) -> AblationCell {
        let profile = crate::profile::test_profile(row, 64, rounds[0], 1.0);
        AblationCell::new(row, 64, Ok(profile), rounds.to_vec())
    }

    #[test]
    fn factors_are_taken_round_by_round() {
        let mut cells = vec![
            cell("eager", &[4.0, 4.0, 8.0]),
            cell("fused", &[1.0, 2.0, 2.0]),
        ];
        set_over_eager(&mut cells);
        // Rounds 4/1, 4/2, 8/2: median 4, slowest 2, fastest 4.
        let fused = &cells[1];
        assert_eq!(
            fused.factor(Over::Eager),
            Some(RoundRatio {
                median: 4.0,
                slowest_round: 2.0,
                fastest_round: 4.0,
                rounds: 3
            })
        );
        assert_eq!(fused.speedup_over_eager, Some(4.0));
        assert_eq!(fused.factor(Over::Previous), None);
        assert_eq!(cells[0].factor(Over::Eager), None);
        // A skipped reference clears the factor.
        let mut skipped = cells[0].clone();
        skipped.profile = Err(Skipped {
            reason: "does not fit".into(),
        });
        cells[1].set_factor(Over::Eager, Some(&skipped));
        assert_eq!(cells[1].factor(Over::Eager), None);
        let json = serde_json::to_value(&cells[1]).unwrap();
        assert_eq!(json["rounds"], 3);
        assert!(json["slowest_round"]["over_eager"].is_null());
    }

    #[test]
    fn only_sizes_that_do_not_fit_become_skipped_cells() {
        let error = EnvError::TooManyEnvs {
            requested: 10,
            max: 5,
            limit: "a limit".into(),
        };
        assert_eq!(
            too_big(&error).unwrap().reason,
            "does not fit: 10 envs, at most 5 (a limit)"
        );
        assert!(
            too_big(&EnvError::InvalidParam {
                name: "x",
                value: 0.0,
                expected: "y"
            })
            .is_none()
        );
    }
}
