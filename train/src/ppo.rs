//! [`train`]: clipped PPO with GAE (CleanRL's `ppo.py`, step for step) on a [`VecEnv`].
//!
//! Rollouts run the policy without autodiff (`model.valid()`, burn's inner backend) on
//! the env's host observations; actions are drawn on the host from the counter-based
//! generator ([`crate::policy::action_uniform`]), so a run is a function of its seed.
//! Episodes restart in the same step (`SameStep` autoreset, gymnax's convention): a
//! truncated episode's reward gets `gamma * V(final observation)`, so a time limit is
//! not mistaken for a terminal state.

use std::time::{Duration, Instant};

use burn::backend::ndarray::NdArrayDevice;
use burn::backend::{Autodiff, NdArray};
use burn::module::AutodiffModule;
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::activation::log_softmax;
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Int, Tensor, TensorData};
#[cfg(feature = "cube")]
use burn_cubecl::CubeRuntime;
use cartfuse_env::rollout::PolicyRollout;
use cartfuse_env::spaces::ActionSpace;
use cartfuse_env::{AutoresetMode, EnvBackend, GraphEnv, VecEnv};
#[cfg(feature = "cube")]
use cartfuse_fusion::cube::Cube;
use cartfuse_fusion::exec::Backend as FusionBackend;
use rand::seq::SliceRandom;

use crate::clip::clip_global_norm;
use crate::collect::{BurnPolicy, Collector, FusedCollector, HostCollector, Policy};
use crate::config::PpoConfig;
#[cfg(feature = "cube")]
use crate::device_collect::{DeviceCollector, DeviceLearner, LearnerDevice};
use crate::error::TrainError;
use crate::minibatch::Minibatch;
use crate::policy::{ActorCritic, to_host};
use crate::rollout::{EpisodeReturns, Rollout};
use crate::streams;

/// What one update saw and did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct UpdateStats {
    /// Updates made so far (1 after the first).
    pub update: u64,
    /// Env-steps stepped so far.
    pub env_steps: u64,
    /// Mean return of the last `return_window` finished episodes.
    pub mean_return: Option<f64>,
    /// Episodes finished so far.
    pub episodes: u64,
    /// Mean clipped policy loss over the update's minibatches.
    pub policy_loss: f32,
    /// Mean value loss.
    pub value_loss: f32,
    /// Mean policy entropy.
    pub entropy: f32,
    /// Wall time since training started.
    pub seconds: f64,
}

/// When the target was reached.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Solved {
    /// Env-steps stepped by then.
    pub env_steps: u64,
    /// Wall time by then.
    pub seconds: f64,
}

/// The outcome of a run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrainReport {
    /// The settings.
    pub config: PpoConfig,
    /// When the mean return first reached the target (`None`: not within the budget).
    pub solved: Option<Solved>,
    /// Env-steps stepped.
    pub env_steps: u64,
    /// Episodes finished.
    pub episodes: u64,
    /// Mean return of the last `return_window` finished episodes at the end.
    pub final_mean_return: Option<f64>,
    /// Wall time of the run.
    pub seconds: f64,
    /// Time spent collecting rollouts (policy forward passes and env steps).
    pub rollout_seconds: f64,
    /// Time spent learning (advantages, forward and backward passes, Adam).
    pub learn_seconds: f64,
    /// Env-steps per second of rollout time.
    pub rollout_env_steps_per_s: f64,
    /// Env-steps per second of learning time (each sample is learnt from
    /// `update_epochs` times).
    pub learn_env_steps_per_s: f64,
    /// One entry per update.
    pub history: Vec<UpdateStats>,
}

/// A trained policy and how it was trained.
#[derive(Debug)]
pub struct Trained<B: AutodiffBackend> {
    /// The network.
    pub model: ActorCritic<B>,
    /// The run's record.
    pub report: TrainReport,
}

/// Trains a fresh [`ActorCritic`] on `env` (which must use `SameStep` autoreset and a
/// discrete action space) with `config`, calling `progress` after every update.
pub fn train<B, E, EB>(
    env: &mut VecEnv<E, EB>,
    config: &PpoConfig,
    device: &B::Device,
    progress: impl FnMut(&UpdateStats),
) -> Result<Trained<B>, TrainError>
where
    B: AutodiffBackend,
    E: GraphEnv<Action = u32>,
    EB: EnvBackend,
{
    let actions = match env.single_action_space() {
        ActionSpace::Discrete(space) => space.n as usize,
        ActionSpace::Box(_) => {
            return Err(TrainError::InvalidConfig {
                setting: "env",
                reason: "PPO here needs a discrete action space".into(),
            });
        }
    };
    let model = ActorCritic::new(E::OBS_DIM, actions, config.hidden, config.seed, device);
    train_from(env, config, model, device, progress)
}

/// As [`train`], from the weights of `model` (a checkpoint, for instance).
pub fn train_from<B, E, EB>(
    env: &mut VecEnv<E, EB>,
    config: &PpoConfig,
    model: ActorCritic<B>,
    device: &B::Device,
    mut progress: impl FnMut(&UpdateStats),
) -> Result<Trained<B>, TrainError>
where
    B: AutodiffBackend,
    E: GraphEnv<Action = u32>,
    EB: EnvBackend,
{
    check_source(config, "env", env.num_envs(), env.episode().autoreset)?;
    let start = Instant::now();
    let mut collector = HostCollector::new(env, config.seed, streams::action_key(config.seed))?;
    learn(
        start,
        &mut collector,
        E::OBS_DIM,
        config,
        model,
        device,
        &mut progress,
    )
}

/// As [`train_from`], the policy fused into the env's step: each update loads the weights
/// into `rollout`'s kernel and runs `num_steps` steps of policy + env in `num_steps / K`
/// calls. `rollout` must hold `num_envs` envs with `SameStep` autoreset and the model's
/// [`PolicySpec`](cartfuse_env::policy::PolicySpec).
pub fn train_fused_from<B, F>(
    rollout: &mut PolicyRollout<F>,
    config: &PpoConfig,
    model: ActorCritic<B>,
    device: &B::Device,
    mut progress: impl FnMut(&UpdateStats),
) -> Result<Trained<B>, TrainError>
where
    B: AutodiffBackend,
    F: FusionBackend,
{
    check_source(config, "rollout", rollout.num_envs(), rollout.autoreset())?;
    let invalid = |setting, reason: String| Err(TrainError::InvalidConfig { setting, reason });
    let per_call = rollout.steps_per_call() as usize;
    if !config.num_steps.is_multiple_of(per_call) {
        return invalid(
            "num_steps",
            format!(
                "must be a multiple of the {per_call} steps one call of the rollout's plan runs, got {}",
                config.num_steps
            ),
        );
    }
    let (spec, _) = model.valid().rollout_weights()?;
    if &spec != rollout.spec() {
        return invalid(
            "hidden",
            format!(
                "the model is {:?} / {:?}, the rollout's policy {:?} / {:?}",
                spec.actor.widths(),
                spec.critic.widths(),
                rollout.spec().actor.widths(),
                rollout.spec().critic.widths()
            ),
        );
    }
    let dim = spec.actor.inputs() as usize;
    let start = Instant::now();
    let mut collector =
        FusedCollector::new(rollout, config.seed, streams::action_key(config.seed))?;
    learn(
        start,
        &mut collector,
        dim,
        config,
        model,
        device,
        &mut progress,
    )
}

#[cfg(feature = "cube")]
/// As [`train_from`], with burn's policy and the env step on one CubeCL device: the
/// learner is burn's `CubeBackend` on the runtime of `env`'s [`Cube`] backend, and
/// observations, actions, rewards and flags pass between them as device buffers
/// ([`DeviceCollector`]); an update's samples are read back once.
pub fn train_device_from<E, R>(
    env: &mut VecEnv<E, Cube<R>>,
    config: &PpoConfig,
    model: ActorCritic<Autodiff<DeviceLearner<R>>>,
    device: &LearnerDevice<R>,
    mut progress: impl FnMut(&UpdateStats),
) -> Result<Trained<Autodiff<DeviceLearner<R>>>, TrainError>
where
    E: GraphEnv<Action = u32>,
    R: CubeRuntime,
{
    check_source(config, "env", env.num_envs(), env.episode().autoreset)?;
    let start = Instant::now();
    let mut collector =
        DeviceCollector::new(env, config.seed, streams::action_key(config.seed), device)?;
    learn(
        start,
        &mut collector,
        E::OBS_DIM,
        config,
        model,
        device,
        &mut progress,
    )
}

/// Checks `config` and that the sample source (`what`: env or rollout) holds its
/// `num_envs` envs with `SameStep` autoreset.
fn check_source(
    config: &PpoConfig,
    what: &str,
    num_envs: usize,
    autoreset: AutoresetMode,
) -> Result<(), TrainError> {
    config.validate()?;
    if num_envs != config.num_envs {
        return Err(TrainError::InvalidConfig {
            setting: "num_envs",
            reason: format!(
                "the {what} holds {num_envs} envs, the config says {}",
                config.num_envs
            ),
        });
    }
    if autoreset != AutoresetMode::SameStep {
        return Err(TrainError::InvalidConfig {
            setting: "env",
            reason: "PPO here steps envs with SameStep autoreset (final observations for truncation bootstrapping)".into(),
        });
    }
    Ok(())
}

/// The PPO loop: collect with `collector` (its envs reset at `start`, when the run's clock
/// started), learn, until the target or the budget. The collector and the progress callback
/// are trait objects, so the loop's code is generated once per learner backend, not once
/// per sample source and caller ([`NDARRAY_LEARN`]).
fn learn<B: AutodiffBackend>(
    start: Instant,
    collector: &mut dyn Collector<BurnPolicy<B::InnerBackend>>,
    dim: usize,
    config: &PpoConfig,
    mut model: ActorCritic<B>,
    device: &B::Device,
    progress: &mut dyn FnMut(&UpdateStats),
) -> Result<Trained<B>, TrainError> {
    let n = config.num_envs;
    let mut shuffle = streams::shuffle_rng(config.seed);
    let mut optim = AdamConfig::new()
        .with_epsilon(1e-5)
        .init::<B, ActorCritic<B>>();

    let (mut rollout_time, mut learn_time) = (Duration::ZERO, Duration::ZERO);
    let mut rollout = Rollout::new(n, dim);
    let mut returns = EpisodeReturns::new(n, config.return_window);
    let mut env_steps = 0u64;
    let mut history = Vec::new();
    let mut solved = None;
    let updates = config.num_updates();
    for update in 0..updates {
        let lr = if config.anneal_lr {
            config.learning_rate * (1.0 - update as f64 / updates as f64)
        } else {
            config.learning_rate
        };
        // Collect.
        let collect = Instant::now();
        let policy = BurnPolicy {
            model: model.valid(),
            device: device.clone(),
        };
        rollout.clear();
        collector.collect(
            &policy,
            (config.num_steps, config.gamma),
            &mut rollout,
            &mut returns,
        )?;
        env_steps += (config.num_steps * n) as u64;
        let next_values = policy.values(collector.obs(), n)?;
        rollout_time += collect.elapsed();

        // Learn.
        let learn = Instant::now();
        let (advantages, targets) =
            rollout.advantages(&next_values, config.gamma, config.gae_lambda);
        let mut sums = [0.0f32; 3];
        let mut minibatches = 0u32;
        let mut order: Vec<usize> = (0..rollout.len()).collect();
        let mut batch = Minibatch::default();
        for _ in 0..config.update_epochs {
            order.shuffle(&mut shuffle);
            for indices in order.chunks(config.minibatch_size()) {
                batch.gather(&rollout, &advantages, &targets, indices);
                let parts;
                (model, parts) = burn_step(model, &mut optim, &batch, (config, lr), device)?;
                for (sum, part) in sums.iter_mut().zip(parts) {
                    *sum += part;
                }
                minibatches += 1;
            }
        }
        learn_time += learn.elapsed();

        let stats = UpdateStats {
            update: update + 1,
            env_steps,
            mean_return: returns.mean(),
            episodes: returns.finished(),
            policy_loss: sums[0] / minibatches as f32,
            value_loss: sums[1] / minibatches as f32,
            entropy: sums[2] / minibatches as f32,
            seconds: start.elapsed().as_secs_f64(),
        };
        progress(&stats);
        history.push(stats);
        if let (Some(target), Some(mean)) = (config.target_return, returns.mean())
            && returns.full()
            && mean >= target
        {
            solved = Some(Solved {
                env_steps,
                seconds: start.elapsed().as_secs_f64(),
            });
            break;
        }
    }
    let per_s = |time: Duration| env_steps as f64 / time.as_secs_f64().max(1e-12);
    let report = TrainReport {
        config: config.clone(),
        solved,
        env_steps,
        episodes: returns.finished(),
        final_mean_return: returns.mean(),
        seconds: start.elapsed().as_secs_f64(),
        rollout_seconds: rollout_time.as_secs_f64(),
        learn_seconds: learn_time.as_secs_f64(),
        rollout_env_steps_per_s: per_s(rollout_time),
        learn_env_steps_per_s: per_s(learn_time),
        history,
    };
    Ok(Trained { model, report })
}

/// burn's CPU learner: NdArray under Autodiff.
pub type NdArrayLearner = Autodiff<NdArray>;

/// The PPO loop for burn's CPU learner, with the policy's evaluation inside it, generated in
/// this crate.
///
/// [`train_from`] and [`train_fused_from`] are generic, so the crate that calls them
/// generates their code, and with it burn's autodiff and NdArray ops; crates built at
/// opt-level 0 or 1 (the tests' profile, Cargo.toml) link an instance a dependency has
/// already generated instead. These pointers make this crate (opt-level 1 there, 3 in
/// `--release`) generate those instances, so the harness, built at opt-level 0 in the
/// tests' profile, trains at this crate's speed (its own copy trained 4x slower).
#[doc(hidden)]
#[allow(clippy::type_complexity)]
pub static NDARRAY_LEARN: (
    fn(
        Instant,
        &mut dyn Collector<BurnPolicy<NdArray>>,
        usize,
        &PpoConfig,
        ActorCritic<NdArrayLearner>,
        &NdArrayDevice,
        &mut dyn FnMut(&UpdateStats),
    ) -> Result<Trained<NdArrayLearner>, TrainError>,
    fn(&BurnPolicy<NdArray>, &[f32], usize) -> Result<(Vec<f32>, Vec<f32>), TrainError>,
) = (
    learn::<NdArrayLearner>,
    <BurnPolicy<NdArray> as Policy>::evaluate,
);

/// One gradient step of burn's learner: PPO's loss of `model` on `batch` (settings from
/// `config`), backward, the global-norm clip, and `optim`'s step at learning rate `lr`.
/// Returns the stepped model and the loss's parts (policy loss, value loss, entropy).
pub fn burn_step<B, O>(
    model: ActorCritic<B>,
    optim: &mut O,
    batch: &Minibatch,
    (config, lr): (&PpoConfig, f64),
    device: &B::Device,
) -> Result<(ActorCritic<B>, [f32; 3]), TrainError>
where
    B: AutodiffBackend,
    O: Optimizer<ActorCritic<B>, B>,
{
    let (loss, parts) = DeviceMinibatch::upload(batch, device).loss(&model, config)?;
    let mut grads = GradientsParams::from_grads(loss.backward(), &model);
    clip_global_norm(&model, &mut grads, config.max_grad_norm);
    Ok((optim.step(lr, model, grads), parts))
}

/// One minibatch on the learner's device.
struct DeviceMinibatch<B: AutodiffBackend> {
    obs: Tensor<B, 2>,
    actions: Tensor<B, 2, Int>,
    old_log_probs: Tensor<B, 1>,
    advantages: Tensor<B, 1>,
    targets: Tensor<B, 1>,
}

impl<B: AutodiffBackend> DeviceMinibatch<B> {
    /// The host minibatch `batch` as tensors on `device`.
    fn upload(batch: &Minibatch, device: &B::Device) -> Self {
        let m = batch.len();
        let dim = batch.obs.len() / m;
        let vector = |values: &[f32]| {
            Tensor::<B, 1>::from_data(TensorData::new(values.to_vec(), [m]), device)
        };
        let actions: Vec<i64> = batch.actions.iter().map(|&a| i64::from(a)).collect();
        Self {
            obs: Tensor::from_data(TensorData::new(batch.obs.clone(), [m, dim]), device),
            actions: Tensor::from_data(TensorData::new(actions, [m, 1]), device),
            old_log_probs: vector(&batch.old_log_probs),
            advantages: vector(&batch.advantages),
            targets: vector(&batch.targets),
        }
    }

    /// PPO's loss and its parts (policy loss, value loss, entropy) as numbers.
    fn loss(
        self,
        model: &ActorCritic<B>,
        config: &PpoConfig,
    ) -> Result<(Tensor<B, 1>, [f32; 3]), TrainError> {
        let m = self.obs.dims()[0];
        let log_probs = log_softmax(model.logits(self.obs.clone()), 1);
        let taken = log_probs.clone().gather(1, self.actions).reshape([m]);
        let entropy = (log_probs.clone().exp() * log_probs)
            .sum_dim(1)
            .reshape([m])
            .neg()
            .mean();
        let ratio = (taken - self.old_log_probs).exp();
        let clip = f64::from(config.clip_coef);
        let unclipped = self.advantages.clone().neg() * ratio.clone();
        let clipped = self.advantages.neg() * ratio.clamp(1.0 - clip, 1.0 + clip);
        let policy_loss = unclipped.max_pair(clipped).mean();
        let value_loss = (model.value(self.obs) - self.targets).square().mean() * 0.5;
        let loss = policy_loss.clone() - entropy.clone() * config.ent_coef
            + value_loss.clone() * config.vf_coef;
        let scalar = |t: Tensor<B, 1>| -> Result<f32, TrainError> { Ok(to_host(t)?[0]) };
        let parts = [scalar(policy_loss)?, scalar(value_loss)?, scalar(entropy)?];
        Ok((loss, parts))
    }
}
