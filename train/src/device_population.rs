//! [`train_population_on_device`]: a population whose samples never leave the device.
//!
//! The policies are fused into the envs' step ([`PolicyRollout::population`], every
//! agent's envs one batch) on a CubeCL runtime, and a device learner ([`DeviceResident`]:
//! the hand-written kernels, [`KernelLearner`], or [`TensorLearner`] on burn's fusion over
//! `CubeBackend` of the same runtime, [`FusedLearner`]) opens the same device through
//! CubeCL's one client per device, so what the rollout writes is a burn tensor by wrapping
//! its handle. Per update:
//! - each call's outputs (observations, actions, log-probabilities, values, rewards, flags,
//!   final observations) are copied on the device out of the rollout's buffers, which the
//!   next call overwrites, and joined into the update's trajectory
//!   ([`DeviceTrajectory`], `[T, n, ..]`);
//! - the rewards and done flags come back in one read (8 bytes a sample, against 56 for
//!   the whole trajectory), for the record of finished episodes the progress lines and the
//!   target read ([`EpisodeReturns`], kept on the host in `f64` as every source keeps it);
//! - truncation bootstrapping, the values after the last step and GAE run on the device as
//!   burn tensor ops ([`DeviceResident::device_samples`]), and so does the update
//!   ([`DeviceResident::update_on_device`]): its loss sums are read back;
//! - the new weights go to the rollout on the device: the step's `f32` params (a row per
//!   agent: its weights in the rollout's order, the env's constants) are gathered from the
//!   learner's `[K, P]` parameters in one launch ([`RolloutParams`]) and the step binds
//!   that buffer ([`PolicyRollout::set_f32_params_buffer`]). The host copy of the weights
//!   is read once, at the end.
//!
//! Each agent follows the updates it follows with the host's samples ([`crate::population::Banked`]):
//! the rollout is the same, and the targets differ by rounding (the critic's values of
//! final observations come from burn's matrix products instead of the native learner's).

use std::time::Instant;

use burn::backend::Autodiff;
use burn::tensor::{Int, Tensor, TensorData};
use burn_cubecl::kernel::into_contiguous;
use cartfuse_env::rollout::PolicyRollout;
use cartfuse_env::{EpisodeOptions, GraphEnv};
use cartfuse_fusion::cube::Cube;
use cartfuse_fusion::exec::Backend as FusionBackend;
use cartfuse_fusion::plan::Strategy;

use crate::device_collect::{CubeRuntime, LearnerDevice, flags, floats};
use crate::device_fusion::{FusedLearner, fuse_float, fuse_int, resolve_float};
use crate::error::TrainError;
use crate::kernel_learner::KernelLearner;
use crate::learner::NetShape;
use crate::policy::to_host;
use crate::population::run::{banked_rollout, check_env};
use crate::population::{
    Agents, LossSums, PopulationConfig, PopulationLearner, PopulationReport, UpdateWork,
    check_counts,
};
use crate::ppo::UpdateStats;
use crate::rollout::EpisodeReturns;
use crate::streams;
use crate::tensor_learner::TensorLearner;
use crate::tensor_learner::samples::DeviceSamples;
use crate::tensor_learner::targets::{DeviceTrajectory, ended};

/// burn's device learner on runtime `R`: its fusion over `CubeBackend`, with autodiff.
pub type DeviceTensorLearner<R> = TensorLearner<Autodiff<FusedLearner<R>>>;

/// A population learner whose weights and update live on runtime `R`'s device, its
/// samples handed over as tensors there: burn's ([`DeviceTensorLearner`]) or the
/// hand-written kernels' ([`KernelLearner`]).
pub trait DeviceResident<R: CubeRuntime>: PopulationLearner {
    /// The device the agents' state lives on.
    fn device(&self) -> &LearnerDevice<R>;
    /// Every agent's flat parameters as of the last update, `[K, P]`.
    fn params(&self) -> Tensor<FusedLearner<R>, 2>;
    /// This update's samples of trajectory `t` under the current weights, with GAE's
    /// `(gamma, lambda)` ([`crate::tensor_learner::targets::samples_of`]).
    fn device_samples(
        &self,
        t: DeviceTrajectory<FusedLearner<R>>,
        gamma_lambda: (f32, f32),
    ) -> DeviceSamples<FusedLearner<R>>;
    /// Every active agent's epochs of minibatch steps over `samples`; returns each
    /// agent's loss sums (one read). The host copy is [`Self::read_weights`]'s to update.
    fn update_on_device(
        &mut self,
        samples: &DeviceSamples<FusedLearner<R>>,
        work: &UpdateWork<'_>,
    ) -> Result<Vec<LossSums>, TrainError>;
    /// Reads the weights back into the host copy (one read).
    fn read_weights(&mut self) -> Result<(), TrainError>;
}

impl<R: CubeRuntime> DeviceResident<R> for DeviceTensorLearner<R> {
    fn device(&self) -> &LearnerDevice<R> {
        TensorLearner::device(self)
    }

    fn params(&self) -> Tensor<FusedLearner<R>, 2> {
        TensorLearner::params(self)
    }

    fn device_samples(
        &self,
        t: DeviceTrajectory<FusedLearner<R>>,
        gamma_lambda: (f32, f32),
    ) -> DeviceSamples<FusedLearner<R>> {
        TensorLearner::device_samples(self, t, gamma_lambda)
    }

    fn update_on_device(
        &mut self,
        samples: &DeviceSamples<FusedLearner<R>>,
        work: &UpdateWork<'_>,
    ) -> Result<Vec<LossSums>, TrainError> {
        TensorLearner::update_on_device(self, samples, work)
    }

    fn read_weights(&mut self) -> Result<(), TrainError> {
        TensorLearner::read_weights(self)
    }
}

impl<R: CubeRuntime> DeviceResident<R> for KernelLearner<R> {
    fn device(&self) -> &LearnerDevice<R> {
        KernelLearner::device(self)
    }

    fn params(&self) -> Tensor<FusedLearner<R>, 2> {
        KernelLearner::params(self)
    }

    fn device_samples(
        &self,
        t: DeviceTrajectory<FusedLearner<R>>,
        gamma_lambda: (f32, f32),
    ) -> DeviceSamples<FusedLearner<R>> {
        KernelLearner::device_samples(self, t, gamma_lambda)
    }

    fn update_on_device(
        &mut self,
        samples: &DeviceSamples<FusedLearner<R>>,
        work: &UpdateWork<'_>,
    ) -> Result<Vec<LossSums>, TrainError> {
        KernelLearner::update_on_device(self, samples, work)
    }

    fn read_weights(&mut self) -> Result<(), TrainError> {
        KernelLearner::read_weights(self)
    }
}

/// Trains `config`'s population (`learner` holds its agents) on `env` with `episode`'s
/// settings (`SameStep` autoreset) on `backend`, the policies fused into the envs' step
/// under `strategy` and the samples kept on the device. See the [module docs](self).
pub fn train_population_on_device<E, R, L>(
    backend: &Cube<R>,
    env: &E,
    episode: &EpisodeOptions,
    strategy: Strategy,
    config: &PopulationConfig,
    mut learner: L,
    mut progress: impl FnMut(usize, &UpdateStats),
) -> Result<(L, PopulationReport), TrainError>
where
    E: GraphEnv<Action = u32>,
    R: CubeRuntime,
    L: DeviceResident<R>,
{
    check_env(env, episode, config, learner.host())?;
    let shared = &config.shared;
    let (k, m) = (config.agents.len(), shared.num_envs);
    check_counts(config, (k, m), learner.host())?;
    let mut rollout = banked_rollout(backend, env, episode, strategy, config, learner.host())?;
    let seeds: Vec<u64> = config.agents.iter().map(|a| a.seed).collect();
    let keys: Vec<[u32; 2]> = seeds.iter().map(|s| streams::action_key(*s)).collect();
    rollout.set_draws_each(&keys, 0)?;
    let first = rollout.reset_each(&seeds)?;
    let device = learner.device().clone();
    let params = RolloutParams::new(&rollout, &learner.host().shape(), &device)?;
    let mut source = OnDevice {
        obs: Tensor::from_data(TensorData::new(first, [k * m, E::OBS_DIM]), &device),
        rollout: &mut rollout,
        device,
    };
    let mut returns: Vec<EpisodeReturns> = (0..k)
        .map(|_| EpisodeReturns::new(m, shared.return_window))
        .collect();
    let mut agents = Agents::new(config);
    let updates = shared.num_updates();
    for update in 0..updates {
        let Some(active) = agents.learning() else {
            break;
        };
        let collect = Instant::now();
        params.load(source.rollout, learner.params())?;
        let trajectory = source.collect(shared.num_steps)?;
        record_episodes(&trajectory, &active, &mut returns)?;
        agents.rollout_time += collect.elapsed();

        let learn = Instant::now();
        let samples = learner.device_samples(trajectory, (shared.gamma, shared.gae_lambda));
        let schedule = agents.schedule((update, updates), active, shared);
        let sums: Vec<LossSums> = learner.update_on_device(&samples, &schedule.work())?;
        agents.learn_time += learn.elapsed();
        let returns: Vec<&EpisodeReturns> = returns.iter().collect();
        agents.record(
            update,
            (&schedule.active, &returns, &sums),
            shared,
            &mut progress,
        );
    }
    learner.read_weights()?;
    Ok((learner, agents.report(config)))
}

/// The fused step's `f32` params made on the device from the learner's weights: one gather
/// per update instead of reading the weights to the host and writing each agent's back.
pub struct RolloutParams<R: CubeRuntime> {
    /// For each column of an agent's row of the step's `f32` params, the column of
    /// `[learner's parameters | constants]` it takes.
    columns: Tensor<FusedLearner<R>, 1, Int>,
    /// Every agent's `f32` params that are not weights (the env's constants), as the
    /// rollout was built, `[K, C]` (none when every one is a weight).
    constants: Option<Tensor<FusedLearner<R>, 2>>,
}

impl<R: CubeRuntime> RolloutParams<R> {
    /// The gather from a learner of `shape`'s flat parameters into `rollout`'s params.
    pub fn new(
        rollout: &PolicyRollout<Cube<R>>,
        shape: &NetShape,
        device: &LearnerDevice<R>,
    ) -> Result<Self, TrainError> {
        let (slots, order) = (rollout.weight_slots()?, shape.rollout_order());
        let width = rollout.f32_params_per_agent();
        if slots.len() != order.len() {
            return Err(TrainError::Tensor(format!(
                "the rollout's policy has {} weights, the learner's {}",
                slots.len(),
                order.len()
            )));
        }
        let mut source: Vec<Option<usize>> = vec![None; width];
        for (&slot, &flat) in slots.iter().zip(&order) {
            source[slot] = Some(flat);
        }
        let others: Vec<usize> = (0..width).filter(|&c| source[c].is_none()).collect();
        let learned = shape.params();
        let columns: Vec<i32> = (source.iter().enumerate())
            .map(|(c, flat)| match flat {
                Some(flat) => *flat as i32,
                None => (learned + others.partition_point(|&o| o < c)) as i32,
            })
            .collect();
        let table = rollout.f32_params()?;
        let agents = table.len() / width;
        let constants: Vec<f32> = (0..agents)
            .flat_map(|a| others.iter().map(move |&c| (a, c)))
            .map(|(a, c)| table[a * width + c])
            .collect();
        Ok(Self {
            columns: Tensor::from_data(TensorData::new(columns, [width]), device),
            constants: (!others.is_empty()).then(|| {
                Tensor::from_data(TensorData::new(constants, [agents, others.len()]), device)
            }),
        })
    }

    /// Hands `rollout` every agent's weights from `params` (`[K, P]`, the learner's), in
    /// one gather on the device.
    pub fn load(
        &self,
        rollout: &mut PolicyRollout<Cube<R>>,
        params: Tensor<FusedLearner<R>, 2>,
    ) -> Result<(), TrainError> {
        let all = match &self.constants {
            Some(constants) => Tensor::cat(vec![params, constants.clone()], 1),
            None => params,
        };
        let rows = all.select(1, self.columns.clone());
        let buffer = into_contiguous(resolve_float(rows)).handle;
        Ok(rollout.set_f32_params_buffer(buffer)?)
    }
}

/// A population's fused rollout read as burn tensors on the learner's device.
struct OnDevice<'r, R: CubeRuntime> {
    rollout: &'r mut PolicyRollout<Cube<R>>,
    /// The observations the next step's actions are chosen on, `[n, obs_dim]`.
    obs: Tensor<FusedLearner<R>, 2>,
    device: LearnerDevice<R>,
}

/// One output of the rollout: its name, and the width of a lane's value (`obs_dim` for 0).
type Output = (&'static str, usize);

/// The rollout's outputs read as floats.
const FLOAT_OUTPUTS: FloatParts<Output> = FloatParts {
    obs: ("obs", 0),
    final_obs: ("final_obs", 0),
    log_probs: ("log_prob", 1),
    values: ("value", 1),
    rewards: ("reward", 1),
};

/// The rollout's outputs read as 32-bit integers (one a lane and step).
const INT_OUTPUTS: IntParts<&str> = IntParts {
    actions: "action",
    terminated: "terminated",
    truncated: "truncated",
};

/// Something per float output of the rollout.
#[derive(Debug, Clone, Default)]
struct FloatParts<T> {
    obs: T,
    final_obs: T,
    log_probs: T,
    values: T,
    rewards: T,
}

impl<T> FloatParts<T> {
    fn each_mut(&mut self) -> [&mut T; 5] {
        [
            &mut self.obs,
            &mut self.final_obs,
            &mut self.log_probs,
            &mut self.values,
            &mut self.rewards,
        ]
    }

    fn each(&self) -> [&T; 5] {
        [
            &self.obs,
            &self.final_obs,
            &self.log_probs,
            &self.values,
            &self.rewards,
        ]
    }
}

/// Something per integer output of the rollout.
#[derive(Debug, Clone, Default)]
struct IntParts<T> {
    actions: T,
    terminated: T,
    truncated: T,
}

impl<T> IntParts<T> {
    fn each_mut(&mut self) -> [&mut T; 3] {
        [&mut self.actions, &mut self.terminated, &mut self.truncated]
    }

    fn each(&self) -> [&T; 3] {
        [&self.actions, &self.terminated, &self.truncated]
    }
}

/// Copies of one update's calls' outputs, in call order.
type Floats<R> = Vec<Tensor<FusedLearner<R>, 3>>;
type Ints<R> = Vec<Tensor<FusedLearner<R>, 3, Int>>;

impl<R: CubeRuntime> OnDevice<'_, R> {
    /// Runs `steps` steps of every env and returns what they wrote, on the device.
    fn collect(&mut self, steps: usize) -> Result<DeviceTrajectory<FusedLearner<R>>, TrainError> {
        let calls = self.rollout.calls_for(steps)?;
        let [n, dim] = self.obs.dims();
        let backend = self.rollout.backend().clone();
        let mut floats_out = FloatParts::<Floats<R>>::default();
        let mut ints_out = IntParts::<Ints<R>>::default();
        for _ in 0..calls {
            self.rollout.act()?;
            for (&(name, width), into) in
                FLOAT_OUTPUTS.each().into_iter().zip(floats_out.each_mut())
            {
                let width = if width == 0 { dim } else { width };
                for page in self.rollout.output_pages(name) {
                    let rows = backend.buffer_len(page) / (n * width);
                    let wrapped = floats(&backend, &self.device, page, [rows, n, width]);
                    // A copy, enqueued now (unfused): the next call overwrites the
                    // rollout's buffers.
                    into.push(fuse_float(wrapped.mul_scalar(1.0)));
                }
            }
            for (&name, into) in INT_OUTPUTS.each().into_iter().zip(ints_out.each_mut()) {
                for page in self.rollout.output_pages(name) {
                    let rows = backend.buffer_len(page) / n;
                    let wrapped = flags(&backend, &self.device, page, [rows, n, 1]);
                    into.push(fuse_int(wrapped.add_scalar(0)));
                }
            }
        }
        let column = |parts: Floats<R>| Tensor::cat(parts, 0).reshape([steps, n]);
        let flags = |parts: Ints<R>| Tensor::cat(parts, 0).reshape([steps, n]);
        let next_obs = Tensor::cat(floats_out.obs, 0);
        let (terminated, truncated) = (flags(ints_out.terminated), flags(ints_out.truncated));
        let chosen_on = match steps {
            1 => self.obs.clone().reshape([1, n, dim]),
            _ => Tensor::cat(
                vec![
                    self.obs.clone().reshape([1, n, dim]),
                    next_obs.clone().slice([0..steps - 1, 0..n, 0..dim]),
                ],
                0,
            ),
        };
        self.obs = next_obs
            .slice([steps - 1..steps, 0..n, 0..dim])
            .reshape([n, dim]);
        Ok(DeviceTrajectory {
            obs: chosen_on,
            next_obs: self.obs.clone(),
            actions: flags(ints_out.actions),
            log_probs: column(floats_out.log_probs),
            values: column(floats_out.values),
            rewards: column(floats_out.rewards),
            dones: ended(&terminated, &truncated),
            terminated,
            truncated,
            final_obs: Tensor::cat(floats_out.final_obs, 0),
        })
    }
}

/// Reads `t`'s rewards and done flags back (one read) and records every `active` agent's
/// finished episodes in `returns`, in the order the host sources record them.
fn record_episodes<R: CubeRuntime>(
    t: &DeviceTrajectory<FusedLearner<R>>,
    active: &[bool],
    returns: &mut [EpisodeReturns],
) -> Result<(), TrainError> {
    let [steps, n] = t.rewards.dims();
    let both = to_host(Tensor::cat(vec![t.rewards.clone(), t.dones.clone()], 0))?;
    let (rewards, dones) = both.split_at(steps * n);
    let m = n / returns.len();
    for (agent, returns) in returns.iter_mut().enumerate() {
        if !active[agent] {
            continue;
        }
        for step in 0..steps {
            let lanes = step * n + agent * m..step * n + (agent + 1) * m;
            for (env, i) in lanes.enumerate() {
                returns.record(env, rewards[i], dones[i] != 0.0);
            }
        }
    }
    Ok(())
}
