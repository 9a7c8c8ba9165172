//! [`KernelLearner`]: PPO's update for a population of `K` agents as hand-written CubeCL
//! kernels, one launch per minibatch step whatever `K` ([`kernel::ppo_step()`]: a cube per
//! agent), where burn's tensor ops take about 120 launches a step even fused
//! ([`crate::tensor_learner`]).
//!
//! The agents' weights and Adam's moments are `[K, P]` device buffers the learner owns,
//! with a gradient scratch of `G` slots an agent (`G` groups of a cube's units, each taking
//! `R` consecutive rows of every `G * R` of the minibatch, [`kernel`]); the kernel steps them
//! in place. Per update, the host writes two tables
//! (every step's minibatch indices, `[S, K, m]`, and every step's settings of every agent:
//! the annealed learning rate, the clip and loss weights, Adam's bias corrections, whether
//! the agent learns), launches the `S` steps, and reads back the loss sums (one read).
//! An agent that stopped is not stepped at all (its weights, moments and step count stay
//! as they are), as on the native learner.
//!
//! Truncation bootstrapping and GAE on the device stay burn's ([`samples_of`]: a few
//! launches an update, not a step), over a snapshot of the weights.
//!
//! It computes what the native [`Learner`] computes, in another order of rounding (the
//! kernel sums each row's products in order; the native learner's products are blocked):
//! `tests/device_learner.rs` holds an update within 1e-4 of the native learner's.

pub mod kernel;
pub mod owners;

use burn::tensor::{Tensor, TensorData, TensorPrimitive};
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::tensor::CubeTensor;
use cartfuse_fusion::cube::buffers::{download, upload};
use cubecl::prelude::*;
use cubecl::server::Handle;

use crate::device_collect::{CubeRuntime, DeviceLearner, LearnerDevice};
use crate::device_fusion::{FusedLearner, fuse_float, resolve_float, resolve_int};
use crate::error::TrainError;
use crate::learner::kernels::{ADAM_BETAS, AdamStep};
use crate::learner::{ADAM_EPSILON, Learner, NetShape};
use crate::population::{HostSamples, LossSums, PopulationLearner, UpdateWork};
use crate::tensor_learner::samples::DeviceSamples;
use crate::tensor_learner::targets::{DeviceTrajectory, samples_of};
use crate::tensor_learner::{Block, blocks};
use kernel::SETTINGS;

/// Units a cube of the kernel holds at most (WebGPU's default limit of invocations a
/// workgroup).
const MAX_UNITS: usize = 256;

/// Where the kernel runs, which decides how its cubes take a minibatch ([`Layout`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A GPU: up to 8 groups of units a cube, each taking up to 4 rows together, for
    /// parallel units and short chains of work between barriers.
    Gpu,
    /// A device emulated on the CPU's cores (lavapipe): one group taking up to 16 rows
    /// together, for the fewest loads a row; there a cube's units are lanes of one core
    /// and every load counts (an update of 2 agents took 2.24 s with 1 group of 15 rows
    /// against 2.82 s with 4 groups of 3, 2026-11-29 in the results log).
    CpuEmulated,
}

impl Target {
    /// Groups of a cube and rows a group takes together, at most.
    fn most(self) -> (usize, usize) {
        match self {
            Target::Gpu => (8, 4),
            Target::CpuEmulated => (1, 16),
        }
    }
}

/// Shared memory a cube uses at most, bytes (below every device's limit, so that cubes
/// share a multiprocessor).
const SHARED_BUDGET: usize = 24 * 1024;

/// How [`kernel::ppo_step()`]'s cubes take a minibatch: `groups` groups of a unit per hidden
/// unit, each taking `rows_each` rows together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    groups: usize,
    rows_each: usize,
}

impl Layout {
    /// The most rows at once on `target` for networks of `shape` on a device whose cubes
    /// hold at most `units` units and `shared` bytes of shared memory; an error when the
    /// kernel cannot run them.
    fn for_device(
        shape: &NetShape,
        target: Target,
        units: usize,
        shared: usize,
    ) -> Result<Self, TrainError> {
        let units = units.min(MAX_UNITS);
        let (d, h, outputs) = (shape.obs_dim, shape.hidden, shape.actions + 1);
        let reason = if h < d {
            Some(format!("at least the observation's {d} values"))
        } else if h < outputs {
            Some(format!("more than the {} actions", shape.actions))
        } else if h > units {
            Some(format!("at most the device's {units} units a cube"))
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(TrainError::InvalidConfig {
                setting: "hidden",
                reason: format!(
                    "the kernel learner runs a unit per hidden unit: {h} must be {reason}"
                ),
            });
        }
        let budget = shared.min(SHARED_BUDGET) / 4;
        let row = d + 6 * h + 2 * outputs;
        let fits =
            |groups: usize, rows_each: usize| groups * h + 1 + groups * rows_each * row <= budget;
        let (groups, rows_each) = target.most();
        let mut layout = Layout {
            groups: (units / h).clamp(1, groups),
            rows_each: rows_each.min(h / outputs),
        };
        while !fits(layout.groups, layout.rows_each) {
            match layout {
                Layout {
                    rows_each: 1,
                    groups: 1,
                } => {
                    return Err(TrainError::InvalidConfig {
                        setting: "hidden",
                        reason: format!(
                            "one minibatch row of {h} hidden units needs more shared memory \
                             than the device's {shared} bytes"
                        ),
                    });
                }
                Layout { rows_each: 1, .. } => layout.groups -= 1,
                _ => layout.rows_each -= 1,
            }
        }
        Ok(layout)
    }
}

/// `K` agents' actor-critics and Adam states on a CubeCL device, stepped by
/// [`kernel::ppo_step()`]. See the [module docs](self).
pub struct KernelLearner<R: CubeRuntime> {
    host: Learner,
    device: LearnerDevice<R>,
    client: ComputeClient<R>,
    /// Every agent's flat parameters, `[K, P]`.
    params: CubeTensor<R>,
    /// Adam's moments, `[K, P]` each.
    moment_1: Handle,
    moment_2: Handle,
    /// The gradients' scratch, `[K, G, P]`.
    grads: Handle,
    /// How a cube takes the minibatch.
    layout: Layout,
    /// Where each layer sits in a row of `params` (for the critic burn evaluates).
    blocks: Vec<Block>,
    /// Adam steps each agent has taken.
    time: Vec<i32>,
}

impl<R: CubeRuntime> KernelLearner<R> {
    /// The agents of `host` (their weights; Adam's moments start at zero) on `device`, a
    /// `target` device.
    ///
    /// The kernel runs cubes of a unit per hidden unit: `hidden` must be at least the
    /// observation's width, more than the actions, and at most the device's units a cube.
    pub fn new(
        host: Learner,
        device: &LearnerDevice<R>,
        target: Target,
    ) -> Result<Self, TrainError> {
        let (shape, k) = (host.shape(), host.agents());
        let flat: Vec<f32> = (0..k).flat_map(|a| host.params(a).to_vec()).collect();
        let params: Tensor<DeviceLearner<R>, 2> =
            Tensor::from_data(TensorData::new(flat, [k, shape.params()]), device);
        let params = params.into_primitive().tensor();
        let client = params.client.clone();
        let hardware = &client.properties().hardware;
        let layout = Layout::for_device(
            &shape,
            target,
            hardware.max_units_per_cube as usize,
            hardware.max_shared_memory_size,
        )?;
        let zeros = vec![0.0f32; k * shape.params()];
        Ok(Self {
            moment_1: upload(&client, &zeros),
            moment_2: upload(&client, &zeros),
            grads: upload(&client, &vec![0.0f32; layout.groups * k * shape.params()]),
            layout,
            blocks: blocks(&shape),
            time: vec![0; k],
            device: device.clone(),
            client,
            params,
            host,
        })
    }

    /// The device the agents' state lives on.
    pub fn device(&self) -> &LearnerDevice<R> {
        &self.device
    }

    /// Agents held.
    pub fn agents(&self) -> usize {
        self.host.agents()
    }

    /// A copy of every agent's flat parameters as they are now, `[K, P]` (enqueued at
    /// once: the next update's kernels, which step the weights in place, run after it).
    pub fn params(&self) -> Tensor<FusedLearner<R>, 2> {
        let now: Tensor<DeviceLearner<R>, 2> =
            Tensor::from_primitive(TensorPrimitive::Float(self.params.clone()));
        fuse_float(now.mul_scalar(1.0))
    }

    /// This update's samples of trajectory `t` under the current weights, on the device
    /// ([`samples_of`]).
    pub fn device_samples(
        &self,
        t: DeviceTrajectory<FusedLearner<R>>,
        gamma_lambda: (f32, f32),
    ) -> DeviceSamples<FusedLearner<R>> {
        samples_of(&self.params(), &self.blocks, t, gamma_lambda)
    }

    /// Reads the weights back into the host copy ([`PopulationLearner::host`]; one read).
    pub fn read_weights(&mut self) -> Result<(), TrainError> {
        let all = download::<R, f32>(&self.client, &self.params.handle)
            .map_err(|e| TrainError::Tensor(e.to_string()))?;
        let len = self.agents() * self.host.shape().params();
        self.host.set_all_params(&all[..len]);
        Ok(())
    }

    /// Every active agent's epochs of minibatch steps over `samples`, on the device: one
    /// launch a step; returns each agent's [`LossSums`] (one read). The host copy of the
    /// weights is [`Self::read_weights`]'s to update.
    pub fn update_on_device(
        &mut self,
        samples: &DeviceSamples<FusedLearner<R>>,
        work: &UpdateWork<'_>,
    ) -> Result<Vec<LossSums>, TrainError> {
        let k = self.agents();
        let steps = work.epochs() * work.minibatches;
        let m = work.minibatch_size();
        if steps == 0 || m == 0 || !(0..k).any(|a| work.active(a)) {
            return Ok(vec![[0.0; 3]; k]);
        }
        let (indices, settings) = self.tables(work);
        let shape = self.host.shape();
        let [_, n, dim] = samples.obs.dims();
        let floats = |t: &Tensor<FusedLearner<R>, 3>| into_contiguous(resolve_float(t.clone()));
        let (obs, old, advantages, targets) = (
            floats(&samples.obs),
            floats(&samples.old_log_probs),
            floats(&samples.advantages),
            floats(&samples.targets),
        );
        let actions = into_contiguous(resolve_int(samples.actions.clone()));
        let client = &self.client;
        let indices = upload(client, &indices);
        let settings = upload(client, &settings);
        let sums = upload(client, &vec![0.0f32; 3 * k]);
        let total = k * shape.params();
        let units = self.layout.groups * shape.hidden;
        let cube_dim = CubeDim::new_1d(units as u32);
        let cubes = cubecl::calculate_cube_count_elemwise(client, k * units, cube_dim);
        let (beta_1, beta_2) = ADAM_BETAS;
        for step in 0..steps {
            // SAFETY: every array is bound with its true element count; the kernel reads
            // sample rows below `n` of agents below `k` (the indices come from `work`,
            // whose orders are permutations of each agent's `n` samples) and writes only
            // its own agent's rows.
            unsafe {
                kernel::ppo_step::launch_unchecked::<R>(
                    client,
                    cubes.clone(),
                    cube_dim,
                    ArrayArg::from_raw_parts(obs.handle.clone(), k * n * dim),
                    ArrayArg::from_raw_parts(actions.handle.clone(), k * n),
                    ArrayArg::from_raw_parts(old.handle.clone(), k * n),
                    ArrayArg::from_raw_parts(advantages.handle.clone(), k * n),
                    ArrayArg::from_raw_parts(targets.handle.clone(), k * n),
                    ArrayArg::from_raw_parts(indices.clone(), steps * k * m),
                    ArrayArg::from_raw_parts(settings.clone(), steps * k * SETTINGS),
                    ArrayArg::from_raw_parts(self.params.handle.clone(), total),
                    ArrayArg::from_raw_parts(self.moment_1.clone(), total),
                    ArrayArg::from_raw_parts(self.moment_2.clone(), total),
                    ArrayArg::from_raw_parts(self.grads.clone(), self.layout.groups * total),
                    ArrayArg::from_raw_parts(sums.clone(), 3 * k),
                    k as u32,
                    n as u32,
                    m as u32,
                    step as u32,
                    beta_1,
                    beta_2,
                    shape.obs_dim as u32,
                    shape.hidden as u32,
                    shape.actions as u32,
                    self.layout.groups as u32,
                    self.layout.rows_each as u32,
                );
            }
        }
        let sums =
            download::<R, f32>(client, &sums).map_err(|e| TrainError::Tensor(e.to_string()))?;
        Ok((0..k)
            .map(|a| match work.active(a) {
                true => [sums[3 * a], sums[3 * a + 1], sums[3 * a + 2]],
                false => [0.0; 3],
            })
            .collect())
    }

    /// Every step's minibatch indices (`[S, K, m]`) and every agent's settings of every
    /// step (`[S, K, SETTINGS]`, zeros for an agent that does not learn); counts the
    /// learning agents' Adam steps.
    fn tables(&mut self, work: &UpdateWork<'_>) -> (Vec<u32>, Vec<f32>) {
        let (k, m) = (self.agents(), work.minibatch_size());
        let steps = work.epochs() * work.minibatches;
        let mut indices = vec![0u32; steps * k * m];
        let mut settings = vec![0.0f32; steps * k * SETTINGS];
        for epoch in 0..work.epochs() {
            for minibatch in 0..work.minibatches {
                let step = epoch * work.minibatches + minibatch;
                for agent in 0..k {
                    if !work.active(agent) || work.orders[agent].len() <= epoch {
                        continue;
                    }
                    let row = step * k + agent;
                    let mine = work.indices(agent, epoch, minibatch);
                    for (into, &i) in indices[row * m..(row + 1) * m].iter_mut().zip(mine) {
                        *into = i as u32;
                    }
                    self.time[agent] += 1;
                    let s = &work.settings[agent];
                    let adam = AdamStep::new(self.time[agent], ADAM_EPSILON, s.learning_rate, 1.0);
                    settings[row * SETTINGS..(row + 1) * SETTINGS].copy_from_slice(&[
                        adam.lr,
                        s.clip_coef,
                        s.ent_coef,
                        s.vf_coef,
                        s.max_grad_norm,
                        adam.combined,
                        adam.epsilon,
                        1.0,
                    ]);
                }
            }
        }
        (indices, settings)
    }
}

impl<R: CubeRuntime> PopulationLearner for KernelLearner<R> {
    fn host(&self) -> &Learner {
        &self.host
    }

    fn update(
        &mut self,
        host: HostSamples<'_>,
        work: &UpdateWork<'_>,
    ) -> Result<Vec<LossSums>, TrainError> {
        let obs_dim = self.host.shape().obs_dim;
        let samples = DeviceSamples::<FusedLearner<R>>::upload(host, work, obs_dim, &self.device);
        let sums = self.update_on_device(&samples, work)?;
        // The host samples' next rollout reads the host copy.
        self.read_weights()?;
        Ok(sums)
    }

    fn into_host(self) -> Learner {
        self.host
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cubes_take_as_many_rows_as_fit() {
        let layout = |d, h, target, units, shared| {
            Layout::for_device(&NetShape::new(d, h, 2), target, units, shared)
        };
        let of = |groups, rows_each| Layout { groups, rows_each };
        // 24 KiB of the 48: three rows a group (four would take 25.7 KiB).
        assert_eq!(layout(4, 64, Target::Gpu, 1024, 49152).unwrap(), of(4, 3));
        // 16 KiB of shared memory: fewer rows a group.
        assert_eq!(layout(4, 64, Target::Gpu, 256, 16384).unwrap(), of(4, 2));
        // Three units are enough for the logits and the value of one row.
        assert_eq!(layout(4, 4, Target::Gpu, 256, 49152).unwrap(), of(8, 1));
        // On the CPU's cores: one group, as many rows as 24 KiB hold.
        assert_eq!(
            layout(4, 64, Target::CpuEmulated, 256, 49152).unwrap(),
            of(1, 15)
        );
        assert_eq!(
            layout(4, 12, Target::CpuEmulated, 256, 49152).unwrap(),
            of(1, 4)
        );
        let err = |d, h| {
            layout(d, h, Target::Gpu, 256, 49152)
                .unwrap_err()
                .to_string()
        };
        assert!(
            err(2, 2).contains("more than the 2 actions"),
            "{}",
            err(2, 2)
        );
        assert!(err(8, 6).contains("observation's 8 values"));
        assert!(err(4, 512).contains("at most the device's 256 units"));
    }
}
