//! Every registered environment under every plan (`cartfuse reproduce --env all`): launches,
//! bytes, FLOPs and env-steps/s over n, on the native CPU and on the device, to show where
//! fusion pays most. Acrobot's step (one RK4 step: four derivative evaluations) is a long
//! elementwise chain; CartPole's is short.

use cartfuse_env::registry::{ENV_IDS, unknown_env};
use cartfuse_env::{AutoresetMode, EnvBackend, EnvError, EpisodeOptions, GraphEnv, with_env};
use cartfuse_fusion::cpu::Cpu;

use crate::cpu_study::{cpu_plans, skip_if_too_big};
use crate::profile::{ProfileSettings, StepProfile, flops_per_env_step, profile_env};
use crate::reproduce::{ReproduceError, Skipped};

/// One environment under one plan at one size on one runtime.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EnvCell {
    /// gymnasium id.
    pub env: String,
    /// `cpu`, or the device's runtime name.
    pub runtime: String,
    /// Plan label.
    pub plan: String,
    /// Envs stepped in parallel.
    pub num_envs: usize,
    /// FLOPs of one env-step, counted on the step graph (the same for every plan).
    pub flops_per_env_step: f64,
    /// What was measured, or why not.
    pub profile: Result<StepProfile, Skipped>,
    /// Eager's time per step over this plan's (same env, runtime and n).
    pub speedup_over_eager: Option<f64>,
}

/// What the environment study measured.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct EnvStudy {
    /// Environments measured, in registry order.
    pub envs: Vec<String>,
    /// Sizes measured.
    pub sizes: Vec<usize>,
    /// Every cell.
    pub cells: Vec<EnvCell>,
}

impl EnvStudy {
    /// The cell of `env`/`runtime`/`plan` at `n`.
    pub fn cell(&self, env: &str, runtime: &str, plan: &str, n: usize) -> Option<&EnvCell> {
        self.cells
            .iter()
            .find(|c| c.env == env && c.runtime == runtime && c.plan == plan && c.num_envs == n)
    }

    /// The runtimes measured, in order.
    pub fn runtimes(&self) -> Vec<&str> {
        let mut runtimes: Vec<&str> = Vec::new();
        for cell in &self.cells {
            if !runtimes.contains(&cell.runtime.as_str()) {
                runtimes.push(&cell.runtime);
            }
        }
        runtimes
    }
}

/// The ids `--env` names: `all`, or one id (with CartPole beside it, the reference).
pub fn study_envs(selection: &str) -> Result<Vec<&'static str>, String> {
    if selection == "all" {
        return Ok(ENV_IDS.to_vec());
    }
    let id = ENV_IDS
        .iter()
        .find(|id| **id == selection)
        .ok_or_else(|| format!("{} (or `all`)", unknown_env(selection)))?;
    Ok(if *id == "CartPole-v1" {
        vec![id]
    } else {
        vec!["CartPole-v1", id]
    })
}

/// The study of `envs` over `sizes` on the native CPU and on `device` (named `runtime`);
/// `None` when no environment was asked for.
pub fn measure_study<B: EnvBackend>(
    device: &B,
    runtime: &str,
    (envs, sizes): (&[&'static str], &[usize]),
    settings: &ProfileSettings,
    mut progress: impl FnMut(&str),
) -> Result<Option<EnvStudy>, ReproduceError> {
    if envs.is_empty() {
        return Ok(None);
    }
    let mut cells = measure_envs(&Cpu::default(), "cpu", envs, sizes, settings, &mut progress)?;
    cells.extend(measure_envs(
        device,
        runtime,
        envs,
        sizes,
        settings,
        &mut progress,
    )?);
    Ok(Some(EnvStudy {
        envs: envs.iter().map(|id| id.to_string()).collect(),
        sizes: sizes.to_vec(),
        cells,
    }))
}

/// Measurements [`measure_envs`] takes per runtime.
pub fn env_tasks(envs: usize, sizes: usize) -> usize {
    envs * cpu_plans().len() * sizes
}

/// Profiles every plan of every environment in `envs` at every size on `backend` (labelled
/// `runtime`); `progress(message)` before each measurement. Plans an environment lacks
/// (the hand-written kernel outside CartPole) are left out; sizes that do not fit become
/// [`Skipped`] cells.
pub fn measure_envs<B: EnvBackend>(
    backend: &B,
    runtime: &str,
    envs: &[&str],
    sizes: &[usize],
    settings: &ProfileSettings,
    mut progress: impl FnMut(&str),
) -> Result<Vec<EnvCell>, ReproduceError> {
    let mut cells = Vec::new();
    for id in envs {
        with_env!(
            *id,
            |E| measure_env(
                backend,
                runtime,
                E::default(),
                sizes,
                settings,
                &mut progress,
                &mut cells
            )?,
            return Err(ReproduceError::UnknownEnv(unknown_env(id)))
        );
    }
    Ok(cells)
}

fn measure_env<E: GraphEnv, B: EnvBackend>(
    backend: &B,
    runtime: &str,
    env: E,
    sizes: &[usize],
    settings: &ProfileSettings,
    progress: &mut impl FnMut(&str),
    cells: &mut Vec<EnvCell>,
) -> Result<(), ReproduceError> {
    let episode = EpisodeOptions::default_for::<E>();
    let flops = flops_per_env_step(&env, AutoresetMode::NextStep);
    for &n in sizes {
        let first = cells.len();
        for (label, plan) in cpu_plans() {
            progress(&format!("{} {label} on {runtime}, n = {n}", E::ID));
            let profile = match profile_env(
                backend.clone(),
                env.clone(),
                episode,
                plan,
                n,
                settings,
                |_, _| {},
            ) {
                Err(EnvError::PlanUnavailable { .. }) => continue,
                profile => skip_if_too_big(profile)?,
            };
            cells.push(EnvCell {
                env: E::ID.into(),
                runtime: runtime.into(),
                plan: label.into(),
                num_envs: n,
                flops_per_env_step: flops,
                profile,
                speedup_over_eager: None,
            });
        }
        let time = |c: &EnvCell| c.profile.as_ref().ok().map(|p| p.step_s_median);
        let eager = cells[first..]
            .iter()
            .find(|c| c.plan == "eager")
            .and_then(time);
        for cell in &mut cells[first..] {
            cell.speedup_over_eager = eager.zip(time(cell)).map(|(e, t)| e / t);
        }
    }
    Ok(())
}
