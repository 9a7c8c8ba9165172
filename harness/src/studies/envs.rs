//! Every registered environment under every plan (`cartfuse reproduce --env all`): launches,
//! bytes, FLOPs and env-steps/s over n, on the native CPU and on the device, to show where
//! fusion pays most. Acrobot's step (one RK4 step: four derivative evaluations) is a long
//! elementwise chain; CartPole's is short.

use cartfuse_env::registry::{ENV_IDS, unknown_env};
use cartfuse_env::{AutoresetMode, EnvBackend, EpisodeOptions, GraphEnv, with_env};
use cartfuse_fusion::cpu::Cpu;

use crate::cells::{AblationCell, cells_in_turns, set_over_eager};
use crate::error::ReproduceError;
use crate::profile::flops_per_env_step;
use crate::studies::cpu::cpu_plans;
use crate::turns::TurnsSettings;

/// One environment under one plan at one size on one runtime.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EnvCell {
    /// gymnasium id.
    pub env: String,
    /// `cpu`, or the device's runtime name.
    pub runtime: String,
    /// FLOPs of one env-step, counted on the step graph (the same for every plan).
    pub flops_per_env_step: f64,
    /// The plan (`row`) at this size, timed in turns with the environment's other plans;
    /// its factor over eager on the same runtime, round by round.
    #[serde(flatten)]
    pub cell: AblationCell,
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
        self.cells.iter().find(|c| {
            c.env == env && c.runtime == runtime && c.cell.row == plan && c.cell.num_envs == n
        })
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
    settings: &TurnsSettings,
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
    envs * sizes
}

/// Every plan of every environment in `envs` at every size on `backend` (labelled
/// `runtime`), the plans of one environment and size timed in turns; `progress(message)`
/// before each size. Plans an environment lacks (the hand-written kernel outside CartPole)
/// are left out; sizes that do not fit become [`Skipped`](crate::error::Skipped) cells.
pub fn measure_envs<B: EnvBackend>(
    backend: &B,
    runtime: &str,
    envs: &[&str],
    sizes: &[usize],
    settings: &TurnsSettings,
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
    settings: &TurnsSettings,
    progress: &mut impl FnMut(&str),
    cells: &mut Vec<EnvCell>,
) -> Result<(), ReproduceError> {
    let episode = EpisodeOptions::default_for::<E>();
    let flops = flops_per_env_step(&env, AutoresetMode::NextStep);
    for &n in sizes {
        progress(&format!(
            "{}: every plan in turns on {runtime}, n = {n}",
            E::ID
        ));
        let mut at_n = cells_in_turns(backend, (env.clone(), episode), &cpu_plans(), n, settings)?;
        set_over_eager(&mut at_n);
        cells.extend(at_n.into_iter().map(|cell| EnvCell {
            env: E::ID.into(),
            runtime: runtime.into(),
            flops_per_env_step: flops,
            cell,
        }));
    }
    Ok(())
}
