//! A population learner against the native one: [`difference_from_native`] runs one PPO
//! update of a made-up population through the tensor learner and the native learner
//! ([`learner_difference_from_native`]: through any learner) and returns how far apart
//! they end. The tests run it on NdArray (`train/tests/tensor_learner.rs`) and on wgpu
//! (the runtime suites, burn's learner and the kernel learner), so every backend is held
//! to the same bound.

use burn::tensor::backend::AutodiffBackend;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use super::TensorLearner;
use crate::error::TrainError;
use crate::learner::{Learner, NetShape, StepSettings};
use crate::population::{AgentSamples, HostSamples, LossSums, PopulationLearner, UpdateWork};
use crate::rollout::{EpisodeReturns, Rollout};

/// How far the tensor learner ended from the native learner after one update.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    /// Largest absolute difference of a weight.
    pub weights: f32,
    /// Largest absolute difference of a loss sum.
    pub losses: f32,
    /// Largest change of a weight by the native learner's update (how far both moved).
    pub moved: f32,
    /// Whether the agent that stopped kept its weights bit for bit on both.
    pub stopped_agent_kept_its_weights: bool,
}

/// A made-up update of `agents` agents (the last one stopped), `samples` samples each of
/// observations 4 wide, networks `hidden` wide, `epochs` epochs of `minibatches`
/// minibatches, every agent with its own learning rate, clip range and entropy weight.
pub struct MadeUp {
    /// The agents' networks.
    pub shape: NetShape,
    samples: Vec<AgentSamples>,
    targets: Vec<Option<(Vec<f32>, Vec<f32>)>>,
    active: Vec<bool>,
    orders: Vec<Vec<Vec<usize>>>,
    settings: Vec<StepSettings>,
    minibatches: usize,
}

impl MadeUp {
    /// The update; see the [type docs](Self).
    pub fn new(
        agents: usize,
        samples: usize,
        hidden: usize,
        (epochs, minibatches): (usize, usize),
    ) -> Self {
        let shape = NetShape::new(4, hidden, 2);
        let mut rng = StdRng::seed_from_u64(7);
        let mut all = Vec::with_capacity(agents);
        let (mut targets, mut orders, mut settings) = (Vec::new(), Vec::new(), Vec::new());
        for agent in 0..agents {
            let mut rollout = Rollout::new(samples, shape.obs_dim);
            rollout.obs = (0..samples * shape.obs_dim)
                .map(|_| rng.random_range(-2.0..2.0))
                .collect();
            rollout.actions = (0..samples).map(|_| rng.random_range(0..2)).collect();
            rollout.log_probs = (0..samples)
                .map(|_| rng.random_range(-1.2f32..-0.3))
                .collect();
            let mut draw = |scale: f32| -> Vec<f32> {
                (0..samples)
                    .map(|_| rng.random_range(-scale..scale))
                    .collect()
            };
            let (advantages, returns) = (draw(2.0), draw(5.0));
            let stopped = agent + 1 == agents;
            targets.push((!stopped).then_some((advantages, returns)));
            let mut order: Vec<usize> = (0..samples).collect();
            orders.push(match stopped {
                true => Vec::new(),
                false => (0..epochs)
                    .map(|_| {
                        order.shuffle(&mut rng);
                        order.clone()
                    })
                    .collect(),
            });
            let a = agent as f32;
            settings.push(StepSettings {
                learning_rate: 1e-3 * (1.0 + a),
                clip_coef: 0.1 + 0.1 * a,
                ent_coef: 0.01 * a,
                vf_coef: 0.5,
                max_grad_norm: if agent == 0 { 0.05 } else { 0.5 },
            });
            all.push(AgentSamples {
                rollout,
                returns: EpisodeReturns::new(1, 1),
            });
        }
        Self {
            shape,
            samples: all,
            active: targets.iter().map(Option::is_some).collect(),
            targets,
            orders,
            settings,
            minibatches,
        }
    }

    /// The update's samples and work for a learner.
    pub fn work(&self) -> (HostSamples<'_>, UpdateWork<'_>) {
        let samples = HostSamples {
            samples: &self.samples,
            targets: &self.targets,
        };
        let work = UpdateWork {
            active: &self.active,
            orders: &self.orders,
            settings: &self.settings,
            minibatches: self.minibatches,
        };
        (samples, work)
    }
}

/// One update of `agents` made-up agents (at least 2; the last stopped) with `hidden`
/// units, 2 epochs of 2 minibatches of 32 samples, through the native learner and through
/// [`TensorLearner`] on `device`, from the same weights.
pub fn difference_from_native<B: AutodiffBackend>(
    agents: usize,
    hidden: usize,
    device: &B::Device,
) -> Result<Difference, TrainError> {
    learner_difference_from_native(agents, hidden, |start| {
        Ok(TensorLearner::<B>::new(start, device))
    })
}

/// [`difference_from_native`] through the learner `make` builds from the starting weights.
pub fn learner_difference_from_native<L: PopulationLearner>(
    agents: usize,
    hidden: usize,
    make: impl FnOnce(Learner) -> Result<L, TrainError>,
) -> Result<Difference, TrainError> {
    let made_up = MadeUp::new(agents.max(2), 64, hidden, (2, 2));
    let seeds: Vec<u64> = (1..=made_up.samples.len() as u64).collect();
    let start = Learner::from_seeds(made_up.shape, &seeds);
    let mut native = start.clone();
    let mut other = make(start.clone())?;
    let (samples, work) = made_up.work();
    let native_sums = native.update(samples, &work)?;
    let other_sums = other.update(samples, &work)?;
    let other = other.into_host();
    let largest = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max)
    };
    let flat = |sums: &[LossSums]| sums.concat();
    let k = seeds.len();
    let weights = (0..k)
        .map(|a| largest(native.params(a), other.params(a)))
        .fold(0.0f32, f32::max);
    let moved = (0..k)
        .map(|a| largest(native.params(a), start.params(a)))
        .fold(0.0f32, f32::max);
    let last = k - 1;
    Ok(Difference {
        moved,
        weights,
        losses: largest(&flat(&native_sums), &flat(&other_sums)),
        stopped_agent_kept_its_weights: native.params(last) == start.params(last)
            && other.params(last) == start.params(last),
    })
}
