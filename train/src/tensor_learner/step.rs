//! One minibatch step of every agent at once ([`step`]): both networks forward as batched
//! matrix products over copies of each layer's part of the flat parameters ([`views`]),
//! PPO's loss summed over the agents (each agent's gradient is its own loss's), backward,
//! each agent's global-norm clip and Adam ([`Adam`]) over the whole `[K, P]` with its own
//! settings ([`StepScalars`]).

use burn::tensor::activation::log_softmax;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Tensor, TensorData};

use super::samples::DeviceMinibatch;
use super::{Block, Inner};
use crate::learner::ADAM_EPSILON;
use crate::learner::kernels::{ADAM_BETAS, AdamStep};
use crate::population::UpdateWork;

/// Adam's moments of the flat parameters (`[K, P]` each) and each agent's step count.
pub struct Adam<B: Backend> {
    moments: (Tensor<B, 2>, Tensor<B, 2>),
    time: Vec<i32>,
}

impl<B: Backend> Adam<B> {
    /// Moments at zero for the agents' flat parameters `params` (`[K, P]`).
    pub fn new(params: &Tensor<B, 2>) -> Self {
        Self {
            moments: (params.zeros_like(), params.zeros_like()),
            time: vec![0; params.dims()[0]],
        }
    }

    /// Counts one step of every agent active in `work`; returns each agent's step (an
    /// agent that stopped gets learning rate 0).
    pub fn advance(&mut self, work: &UpdateWork<'_>) -> Vec<AdamStep> {
        (0..self.time.len())
            .map(|agent| {
                let active = work.active(agent);
                self.time[agent] += i32::from(active);
                let lr = if active {
                    work.settings[agent].learning_rate
                } else {
                    0.0
                };
                AdamStep::new(self.time[agent].max(1), ADAM_EPSILON, lr, 1.0)
            })
            .collect()
    }
}

/// Each agent's settings of one step as `[K, 1]` tensors (the loss's as `[K, 1, 1]`).
pub struct StepScalars<B: Backend> {
    lr: Tensor<B, 2>,
    clip: Tensor<B, 3>,
    ent_coef: Tensor<B, 3>,
    vf_coef: Tensor<B, 3>,
    max_grad_norm: Tensor<B, 2>,
    combined: Tensor<B, 2>,
    epsilon: Tensor<B, 2>,
}

impl<B: Backend> StepScalars<B> {
    /// The settings of `work` and `adam`'s steps, uploaded in one write.
    pub fn new(work: &UpdateWork<'_>, adam: &[AdamStep], device: &B::Device) -> Self {
        const COLUMNS: usize = 7;
        let k = adam.len();
        let mut values = Vec::with_capacity(k * COLUMNS);
        for (s, a) in work.settings.iter().zip(adam) {
            values.extend([
                a.lr,
                s.clip_coef,
                s.ent_coef,
                s.vf_coef,
                s.max_grad_norm,
                a.combined,
                a.epsilon,
            ]);
        }
        let all: Tensor<B, 2> = Tensor::from_data(TensorData::new(values, [k, COLUMNS]), device);
        let column = |c: usize| all.clone().slice([0..k, c..c + 1]);
        let per_row = |c: usize| column(c).unsqueeze_dim(2);
        Self {
            lr: column(0),
            clip: per_row(1),
            ent_coef: per_row(2),
            vf_coef: per_row(3),
            max_grad_norm: column(4),
            combined: column(5),
            epsilon: column(6),
        }
    }
}

/// Each layer's weights and biases of the agents' flat parameters `params` (`[K, P]`), in
/// the order of `blocks`: `[K, fan_in, fan_out]` and `[K, 1, fan_out]` (one copy each).
pub(super) fn views<B: Backend>(params: &Tensor<B, 2>, blocks: &[Block]) -> Vec<Tensor<B, 3>> {
    let k = params.dims()[0];
    (blocks.iter())
        .map(|b| {
            let [rows, cols] = b.dims;
            params
                .clone()
                .slice([0..k, b.range.clone()])
                .reshape([k, rows, cols])
        })
        .collect()
}

/// A `tanh` MLP of three dense layers on `x`: `layers` holds each layer's weights, then its
/// biases ([`views`]).
pub(super) fn mlp<B: Backend>(layers: &[Tensor<B, 3>], x: Tensor<B, 3>) -> Tensor<B, 3> {
    let mut x = x;
    for (l, layer) in layers.chunks(2).enumerate() {
        x = x.matmul(layer[0].clone()) + layer[1].clone();
        if l < 2 {
            x = x.tanh();
        }
    }
    x
}

/// One gradient step of every agent on `batch` (`state`: the flat parameters and Adam;
/// `blocks`: the layers' places in them); returns each agent's policy loss, value loss and
/// entropy, `[K, 3]`.
pub fn step<B: AutodiffBackend>(
    (params, adam): (&mut Tensor<Inner<B>, 2>, &mut Adam<Inner<B>>),
    blocks: &[Block],
    batch: DeviceMinibatch<Inner<B>>,
    scalars: &StepScalars<Inner<B>>,
) -> Tensor<Inner<B>, 2> {
    // Each layer's weights a leaf of their own: the gradient comes back per layer and is
    // laid out flat by one `cat`, where a gradient through `slice` would zero a `[K, P]`
    // per layer and add the layers' up (35 launches and passes over `[K, P]` a step).
    let leaves: Vec<Tensor<B, 3>> = (views(params, blocks).into_iter())
        .map(|view| Tensor::from_inner(view).require_grad())
        .collect();
    let constant = |t: Tensor<Inner<B>, 3>| Tensor::<B, 3>::from_inner(t);
    let [k, m, _] = batch.obs.dims();
    let obs = constant(batch.obs);
    let (actor, critic) = leaves.split_at(leaves.len() / 2);
    let log_probs = log_softmax(mlp(actor, obs.clone()), 2);
    let taken = log_probs
        .clone()
        .gather(2, Tensor::from_inner(batch.actions));
    let entropy = (log_probs.clone().exp() * log_probs)
        .sum_dim(2)
        .neg()
        .mean_dim(1);
    let ratio = (taken - constant(batch.old_log_probs)).exp();
    let clip = constant(scalars.clip.clone()).expand([k, m, 1]);
    let bounded = ratio
        .clone()
        .max_pair(clip.clone().neg() + 1.0)
        .min_pair(clip + 1.0);
    let advantages = constant(batch.advantages);
    let unclipped = advantages.clone().neg() * ratio;
    let clipped = advantages.neg() * bounded;
    let policy_loss = unclipped.max_pair(clipped).mean_dim(1);
    let errors = mlp(critic, obs) - constant(batch.targets);
    let value_loss = errors.square().mean_dim(1) * 0.5;
    let loss = policy_loss.clone() - entropy.clone() * constant(scalars.ent_coef.clone())
        + value_loss.clone() * constant(scalars.vf_coef.clone());
    let gradients = loss.sum().backward();
    let grads = (leaves.iter().zip(blocks))
        .map(|(leaf, block)| {
            let grad = leaf.grad(&gradients).expect("every layer feeds the loss");
            grad.reshape([k, block.range.len()])
        })
        .collect();
    let grads = Tensor::cat(grads, 1);
    let norm = grads.clone().square().sum_dim(1).sqrt();
    let scale = (scalars.max_grad_norm.clone() / (norm + 1e-6)).clamp_max(1.0);
    let (beta_1, beta_2) = ADAM_BETAS;
    let (m1, m2) = &mut adam.moments;
    let g = grads * scale;
    *m1 = m1.clone() * beta_1 + g.clone() * (1.0 - beta_1);
    *m2 = m2.clone() * beta_2 + g.clone() * g * (1.0 - beta_2);
    let update =
        (m1.clone() * scalars.combined.clone()) / (m2.clone().sqrt() + scalars.epsilon.clone());
    *params = params.clone() - update * scalars.lr.clone();
    let row = |t: Tensor<B, 3>| t.inner().reshape([k, 1]);
    Tensor::cat(vec![row(policy_loss), row(value_loss), row(entropy)], 1)
}
