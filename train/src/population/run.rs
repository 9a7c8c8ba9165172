//! [`train_population_on`]: a population trained on envs it builds on one backend, with the
//! policies acting on the host or fused into the envs' step ([`Rollouts`]).

use cartfuse_env::rollout::PolicyRollout;
use cartfuse_env::spaces::ActionSpace;
use cartfuse_env::{AutoresetMode, EnvBackend, EpisodeOptions, GraphEnv, StepPlan, VecEnv};
use cartfuse_fusion::plan::Strategy;

use crate::collect::HostCollector;
use crate::error::TrainError;
use crate::learner::Learner;
use crate::ppo::UpdateStats;
use crate::streams;

use super::{
    Banked, PerAgent, PopulationConfig, PopulationLearner, PopulationReport, train_population,
};

/// Where a population's policies act while collecting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rollouts {
    /// The native learner's forward pass on the host observations, then one env step of
    /// the env planned as `StepPlan` says.
    Host(StepPlan),
    /// The policies fused into the envs' step graph under this plan, every agent's envs one
    /// batch ([`Banked`]): `num_steps / K` launches of policy + env per update for the whole
    /// population under `fused-xK`.
    Fused(Strategy),
}

/// Trains `config`'s population (`learner` holds its agents) on `env` with `episode`'s
/// settings (`SameStep` autoreset) on `backend`: each agent gets `num_envs` envs of its
/// own, reset from its seed.
pub fn train_population_on<E, B, L>(
    backend: &B,
    env: &E,
    episode: &EpisodeOptions,
    rollouts: Rollouts,
    config: &PopulationConfig,
    learner: L,
    progress: impl FnMut(usize, &UpdateStats),
) -> Result<(L, PopulationReport), TrainError>
where
    E: GraphEnv<Action = u32>,
    B: EnvBackend,
    L: PopulationLearner,
{
    check_env(env, episode, config, learner.host())?;
    let n = config.shared.num_envs;
    let seeds: Vec<u64> = config.agents.iter().map(|a| a.seed).collect();
    match rollouts {
        Rollouts::Host(plan) => {
            let mut envs = seeds
                .iter()
                .map(|_| VecEnv::build(backend.clone(), env.clone(), n, *episode, plan))
                .collect::<Result<Vec<_>, _>>()?;
            let collectors = envs
                .iter_mut()
                .zip(&seeds)
                .map(|(env, &seed)| HostCollector::new(env, seed, streams::action_key(seed)))
                .collect::<Result<Vec<_>, _>>()?;
            train_population(&mut PerAgent::new(collectors, n), config, learner, progress)
        }
        Rollouts::Fused(strategy) => {
            let mut rollout =
                banked_rollout(backend, env, episode, strategy, config, learner.host())?;
            let keys: Vec<[u32; 2]> = seeds.iter().map(|s| streams::action_key(*s)).collect();
            let mut source = Banked::new(&mut rollout, &seeds, &keys)?;
            train_population(&mut source, config, learner, progress)
        }
    }
}

/// Checks `config` and that PPO here can train `host`'s networks on `env` with `episode`'s
/// settings: `SameStep` autoreset, discrete actions, the networks' widths.
pub(crate) fn check_env<E: GraphEnv<Action = u32>>(
    env: &E,
    episode: &EpisodeOptions,
    config: &PopulationConfig,
    host: &Learner,
) -> Result<(), TrainError> {
    config.validate()?;
    let invalid = |setting, reason: String| Err(TrainError::InvalidConfig { setting, reason });
    if episode.autoreset != AutoresetMode::SameStep {
        return invalid(
            "env",
            "PPO here steps envs with SameStep autoreset (final observations for truncation \
             bootstrapping)"
                .into(),
        );
    }
    let shape = host.shape();
    let actions = match env.action_space() {
        ActionSpace::Discrete(space) => space.n as usize,
        ActionSpace::Box(_) => {
            return invalid("env", "PPO here needs a discrete action space".into());
        }
    };
    if shape.obs_dim != E::OBS_DIM || shape.actions != actions {
        return invalid(
            "env",
            format!(
                "{} observes {} values and has {actions} actions; the networks read {} and \
                 choose among {}",
                E::ID,
                E::OBS_DIM,
                shape.obs_dim,
                shape.actions
            ),
        );
    }
    Ok(())
}

/// The population's envs as one batch on `backend`, `host`'s policies fused into their
/// step under `strategy` (one bank of `num_envs` envs per agent); `num_steps` must be a
/// multiple of the steps one call runs.
pub(crate) fn banked_rollout<E: GraphEnv<Action = u32>, B: EnvBackend>(
    backend: &B,
    env: &E,
    episode: &EpisodeOptions,
    strategy: Strategy,
    config: &PopulationConfig,
    host: &Learner,
) -> Result<PolicyRollout<B>, TrainError> {
    let (spec, _) = host.shape().rollout_weights(host.params(0))?;
    let banks = (config.agents.len(), config.shared.num_envs);
    let rollout = PolicyRollout::population(backend, env, episode, spec, strategy, banks)?;
    let per_call = rollout.steps_per_call() as usize;
    if !config.shared.num_steps.is_multiple_of(per_call) {
        return Err(TrainError::InvalidConfig {
            setting: "num_steps",
            reason: format!(
                "must be a multiple of the {per_call} steps one call of the rollout's plan \
                 runs, got {}",
                config.shared.num_steps
            ),
        });
    }
    Ok(rollout)
}
