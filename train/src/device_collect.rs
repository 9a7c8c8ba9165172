//! [`DeviceCollector`]: burn's policy and cartfuse's envs on one CubeCL device, nothing on
//! the host between steps.
//!
//! The learner is burn's `CubeBackend` on the runtime the envs run on (wgpu, or CUDA with
//! the feature). Both open the device through CubeCL's one client per device, so a buffer
//! the env writes is a burn tensor by wrapping its handle ([`CubeTensor::new_contiguous`])
//! and a burn tensor is the env's action buffer by handing over its handle. Each step:
//! - the policy's forward pass on the observation tensor, the log-softmax, and the
//!   categorical draw (`u` against the cumulative probabilities, counted) run as burn ops;
//! - the actions go to the env's step as a device buffer ([`VecEnv::step_device`]);
//! - the env's observations, rewards, flags and final observations come back as tensors,
//!   and truncated episodes are bootstrapped with the value of their final observation;
//! - the samples stay on the device as tensors.
//!
//! The only host traffic of a step is upload of its `n` uniforms, drawn on the host from
//! the counter-based generator every source shares (the host and fused sources draw the
//! same numbers). After `num_steps` steps the update's samples are read back once (the
//! learner's [`Rollout`] is host memory, as for the other sources), with the invalid-action
//! flag. The env's buffers are overwritten by its next step, so each observation kept is
//! copied on the device first.

use burn::tensor::{DType, Int, Shape, Tensor, TensorData, TensorPrimitive};
use burn_cubecl::CubeBackend;
pub use burn_cubecl::CubeRuntime;
use burn_cubecl::cubecl::server::Handle;
use burn_cubecl::tensor::CubeTensor;
use cartfuse_env::vec_env::DeviceActions;
use cartfuse_env::{GraphEnv, VecEnv};
use cartfuse_fusion::cube::Cube;

use crate::collect::{BurnPolicy, Collector};
use crate::error::TrainError;
use crate::policy::{action_uniform, to_host};
use crate::rollout::{EpisodeReturns, Rollout};

/// burn's backend on CubeCL runtime `R`, without fusion: its tensors are plain handles
/// of `R`'s client.
pub type DeviceLearner<R> = CubeBackend<R, f32, i32, u32>;

/// burn's device for runtime `R` (the runtime's own device).
pub type LearnerDevice<R> = burn::tensor::Device<DeviceLearner<R>>;

/// The policy in burn and the env step on one device; samples read back once per update.
pub struct DeviceCollector<'e, E: GraphEnv<Action = u32>, R: CubeRuntime> {
    env: &'e mut VecEnv<E, Cube<R>>,
    obs: Tensor<DeviceLearner<R>, 2>,
    obs_host: Vec<f32>,
    key: [u32; 2],
    step: u32,
}

impl<'e, E: GraphEnv<Action = u32>, R: CubeRuntime> DeviceCollector<'e, E, R> {
    /// Resets `env` from `seed` and puts its observations on `device` (burn's device for
    /// the env's runtime); draws actions from stream `key`, policy step 0 first.
    pub fn new(
        env: &'e mut VecEnv<E, Cube<R>>,
        seed: u64,
        key: [u32; 2],
        device: &LearnerDevice<R>,
    ) -> Result<Self, TrainError> {
        let obs_host = env.reset(Some(seed))?;
        let n = env.num_envs();
        let obs = Tensor::from_data(TensorData::new(obs_host.clone(), [n, E::OBS_DIM]), device);
        Ok(Self {
            env,
            obs,
            obs_host,
            key,
            step: 0,
        })
    }
}

/// The env's `f32` buffer `handle` as a burn tensor of shape `dims`.
pub(crate) fn floats<R: CubeRuntime, const D: usize>(
    backend: &Cube<R>,
    device: &LearnerDevice<R>,
    handle: &Handle,
    dims: [usize; D],
) -> Tensor<DeviceLearner<R>, D> {
    Tensor::from_primitive(TensorPrimitive::Float(wrap(
        backend,
        device,
        handle,
        Shape::new(dims),
        DType::F32,
    )))
}

/// The env's `u32` 0/1 flags `handle` as a burn int tensor of shape `dims` (`i32`, same
/// bits).
pub(crate) fn flags<R: CubeRuntime, const D: usize>(
    backend: &Cube<R>,
    device: &LearnerDevice<R>,
    handle: &Handle,
    dims: [usize; D],
) -> Tensor<DeviceLearner<R>, D, Int> {
    Tensor::from_primitive(wrap(backend, device, handle, Shape::new(dims), DType::I32))
}

/// The env's buffer `handle` as burn's tensor primitive of `shape` (`dtype` as stored).
fn wrap<R: CubeRuntime>(
    backend: &Cube<R>,
    device: &LearnerDevice<R>,
    handle: &Handle,
    shape: Shape,
    dtype: DType,
) -> CubeTensor<R> {
    CubeTensor::new_contiguous(
        backend.client().clone(),
        device.clone(),
        shape,
        handle.clone(),
        dtype,
    )
}

/// One step's samples, on the device.
struct StepSamples<R: CubeRuntime> {
    obs: Tensor<DeviceLearner<R>, 2>,
    actions: Tensor<DeviceLearner<R>, 1, Int>,
    log_probs: Tensor<DeviceLearner<R>, 1>,
    values: Tensor<DeviceLearner<R>, 1>,
    rewards: Tensor<DeviceLearner<R>, 1>,
    bootstrapped: Tensor<DeviceLearner<R>, 1>,
    dones: Tensor<DeviceLearner<R>, 1, Int>,
}

impl<E: GraphEnv<Action = u32>, R: CubeRuntime> Collector<BurnPolicy<DeviceLearner<R>>>
    for DeviceCollector<'_, E, R>
{
    fn obs(&self) -> &[f32] {
        &self.obs_host
    }

    fn collect(
        &mut self,
        policy: &BurnPolicy<DeviceLearner<R>>,
        (steps, gamma): (usize, f32),
        rollout: &mut Rollout,
        returns: &mut EpisodeReturns,
    ) -> Result<(), TrainError> {
        let (n, dim) = (self.env.num_envs(), E::OBS_DIM);
        let (device, policy) = (&policy.device, &policy.model);
        let backend = self.env.backend().clone();
        let mut samples = Vec::with_capacity(steps);
        for _ in 0..steps {
            let obs = self.obs.clone();
            let logits = policy.logits(obs.clone());
            let values = policy.value(obs.clone());
            // `log softmax` as the host computes it: max subtracted, then the log-sum.
            let max = logits.clone().max_dim(1);
            let shifted = logits - max;
            let log_sum = shifted.clone().exp().sum_dim(1).log();
            let log_probs = shifted - log_sum;
            let uniforms: Vec<f32> = (0..n as u32)
                .map(|env| action_uniform(self.key, env, self.step))
                .collect();
            self.step = self.step.wrapping_add(1);
            let u =
                Tensor::<DeviceLearner<R>, 2>::from_data(TensorData::new(uniforms, [n, 1]), device);
            // The first action whose cumulative probability exceeds `u`: the count of
            // cumulative sums (all but the last) that `u` has reached.
            let actions_count = log_probs.dims()[1];
            let cumulative = log_probs.clone().exp().cumsum(1);
            let passed = u
                .expand([n, actions_count - 1])
                .greater_equal(cumulative.slice([0..n, 0..actions_count - 1]))
                .int()
                .sum_dim(1);
            let chosen = log_probs.gather(1, passed.clone()).reshape([n]);
            let actions = passed.reshape([n]);
            let handle = actions.clone().into_primitive().handle;
            let step = self.env.step_device(&DeviceActions::from_buffer(handle))?;
            let next = floats(&backend, device, step.obs()?, [n, dim]);
            let reward = floats(&backend, device, step.reward()?, [n]);
            let terminated = flags(&backend, device, step.terminated()?, [n]);
            let truncated = flags(&backend, device, step.truncated()?, [n]);
            let final_obs = step.final_obs().ok_or_else(|| TrainError::InvalidConfig {
                setting: "env",
                reason: "the device source needs SameStep autoreset (final observations)".into(),
            })??;
            let final_obs = floats(&backend, device, final_obs, [n, dim]);
            // Truncated, not terminated: reward + gamma V(final observation), as the host
            // sources add it (other rows keep their reward bit for bit).
            let cut = truncated
                .clone()
                .equal_elem(1)
                .bool_and(terminated.clone().equal_elem(0));
            let bootstrap = reward.clone() + policy.value(final_obs).mul_scalar(gamma);
            let bootstrapped = reward.clone().mask_where(cut, bootstrap);
            let dones = (terminated + truncated).clamp_max(1);
            samples.push(StepSamples {
                obs,
                actions,
                log_probs: chosen,
                values,
                // Copies: the env overwrites its buffers at the next step.
                rewards: reward.mul_scalar(1.0),
                bootstrapped,
                dones,
            });
            self.obs = next.mul_scalar(1.0);
        }
        self.env.check_device_actions()?;
        read_back(samples, rollout, returns, n)?;
        self.obs_host = to_host(self.obs.clone())?;
        debug_assert_eq!(self.obs_host.len(), n * dim);
        Ok(())
    }
}

/// Appends `samples` (step-major) to `rollout` and records finished episodes, one read per
/// kind of sample.
fn read_back<R: CubeRuntime>(
    samples: Vec<StepSamples<R>>,
    rollout: &mut Rollout,
    returns: &mut EpisodeReturns,
    n: usize,
) -> Result<(), TrainError> {
    let mut obs = Vec::with_capacity(samples.len());
    let (mut actions, mut log_probs, mut values) = (Vec::new(), Vec::new(), Vec::new());
    let (mut rewards, mut bootstrapped, mut dones) = (Vec::new(), Vec::new(), Vec::new());
    for s in samples {
        obs.push(s.obs);
        actions.push(s.actions);
        log_probs.push(s.log_probs);
        values.push(s.values);
        rewards.push(s.rewards);
        bootstrapped.push(s.bootstrapped);
        dones.push(s.dones);
    }
    let ints = |t: Vec<Tensor<DeviceLearner<R>, 1, Int>>| {
        Tensor::cat(t, 0)
            .into_data()
            .convert::<i32>()
            .to_vec::<i32>()
            .map_err(|e| TrainError::Tensor(format!("{e:?}")))
    };
    rollout.obs.extend(to_host(Tensor::cat(obs, 0))?);
    rollout
        .actions
        .extend(ints(actions)?.into_iter().map(|a| a as u32));
    rollout
        .log_probs
        .extend(to_host(Tensor::cat(log_probs, 0))?);
    rollout.values.extend(to_host(Tensor::cat(values, 0))?);
    rollout
        .rewards
        .extend(to_host(Tensor::cat(bootstrapped, 0))?);
    let raw = to_host(Tensor::cat(rewards, 0))?;
    let done: Vec<bool> = ints(dones)?.into_iter().map(|d| d != 0).collect();
    for (i, (&reward, &done)) in raw.iter().zip(&done).enumerate() {
        returns.record(i % n, reward, done);
    }
    rollout.dones.extend(done);
    Ok(())
}
