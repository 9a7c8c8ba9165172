//! [`ActorCritic`]: the MLP policy and value network (two `tanh` hidden layers each, as
//! CleanRL's `ppo.py`), and the host-side categorical draw that picks actions from it.

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::tensor::activation::tanh;
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use cartfuse_env::policy::{PolicySpec, PolicyWeights};

use crate::error::TrainError;
use crate::shape::{Layer, Net, NetShape};

/// Separate policy and value MLPs over the observation (burn's view of [`NetShape`]).
#[derive(Module, Debug)]
pub struct ActorCritic<B: Backend> {
    actor: [Linear<B>; 3],
    critic: [Linear<B>; 3],
}

/// A dense layer of `fan_in` inputs and `fan_out` outputs from the flat slices `weights`
/// (`[fan_in][fan_out]`) and `biases`.
fn dense<B: Backend>(layer: &Layer, params: &[f32], device: &B::Device) -> Linear<B> {
    let weights = TensorData::new(
        params[layer.weights()].to_vec(),
        [layer.fan_in, layer.fan_out],
    );
    let biases = TensorData::new(params[layer.biases()].to_vec(), [layer.fan_out]);
    Linear {
        weight: Param::from_tensor(Tensor::from_data(weights, device)),
        bias: Some(Param::from_tensor(Tensor::from_data(biases, device))),
    }
}

impl<B: Backend> ActorCritic<B> {
    /// A network for `obs_dim` observations and `actions` discrete actions, `hidden` wide,
    /// its weights drawn from `seed` ([`NetShape::init`]).
    pub fn new(
        obs_dim: usize,
        actions: usize,
        hidden: usize,
        seed: u64,
        device: &B::Device,
    ) -> Self {
        let shape = NetShape::new(obs_dim, hidden, actions);
        Self::from_params(&shape, &shape.init(seed), device)
    }

    /// The network of `shape` holding the flat parameters `params` (one agent's, in
    /// [`NetShape`]'s order).
    pub fn from_params(shape: &NetShape, params: &[f32], device: &B::Device) -> Self {
        let mlp = |net: Net| {
            let slice = &params[shape.range(net)];
            shape.layers(net).map(|layer| dense(&layer, slice, device))
        };
        Self {
            actor: mlp(Net::Actor),
            critic: mlp(Net::Critic),
        }
    }

    /// The network's shape, read from its layers.
    pub fn shape(&self) -> NetShape {
        let [obs_dim, hidden] = self.actor[0].weight.dims();
        let [_, actions] = self.actor[2].weight.dims();
        NetShape::new(obs_dim, hidden, actions)
    }

    /// The flat parameters, in [`NetShape`]'s order.
    pub fn params(&self) -> Result<Vec<f32>, TrainError> {
        let mut flat = Vec::with_capacity(self.shape().params());
        for layer in self.actor.iter().chain(&self.critic) {
            flat.extend(to_host(layer.weight.val())?);
            match &layer.bias {
                Some(bias) => flat.extend(to_host(bias.val())?),
                None => flat.extend(std::iter::repeat_n(0.0, layer.weight.dims()[1])),
            }
        }
        Ok(flat)
    }

    fn mlp(layers: &[Linear<B>; 3], obs: Tensor<B, 2>) -> Tensor<B, 2> {
        let h = tanh(layers[0].forward(obs));
        let h = tanh(layers[1].forward(h));
        layers[2].forward(h)
    }

    /// Action logits, `[batch, actions]`.
    pub fn logits(&self, obs: Tensor<B, 2>) -> Tensor<B, 2> {
        Self::mlp(&self.actor, obs)
    }

    /// The weights as a policy rollout reads them ([`PolicyWeights`]: per layer, the
    /// weights `[out][in]` row by row, then the biases), and the rollout's [`PolicySpec`].
    pub fn rollout_weights(&self) -> Result<(PolicySpec, PolicyWeights), TrainError> {
        self.shape().rollout_weights(&self.params()?)
    }

    /// State values, `[batch]`.
    pub fn value(&self, obs: Tensor<B, 2>) -> Tensor<B, 1> {
        let batch = obs.dims()[0];
        Self::mlp(&self.critic, obs).reshape([batch])
    }
}

/// A tensor's values on the host.
pub(crate) fn to_host<B: Backend, const D: usize>(
    tensor: Tensor<B, D>,
) -> Result<Vec<f32>, TrainError> {
    tensor
        .into_data()
        .to_vec::<f32>()
        .map_err(|e| TrainError::Tensor(format!("{e:?}")))
}

/// `log softmax(logits)` of one row, in `f32` (max subtracted first).
pub fn log_softmax_row(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let log_sum = logits.iter().map(|l| (l - max).exp()).sum::<f32>().ln();
    logits.iter().map(|l| l - max - log_sum).collect()
}

/// Draws an action from `log_probs` (one row) with the uniform `u` in `[0, 1)`: the first
/// action whose cumulative probability exceeds `u` (the last one if rounding leaves the
/// sum below `u`).
pub fn categorical(log_probs: &[f32], u: f32) -> usize {
    let mut cumulative = 0.0f32;
    for (action, lp) in log_probs.iter().enumerate() {
        cumulative += lp.exp();
        if u < cumulative {
            return action;
        }
    }
    log_probs.len() - 1
}

/// The uniform in `[0, 1)` of env `env` at global step `step` of stream `key`: 24 bits of
/// one Threefry-2x32 word, the counter-based generator the kernels share, so a policy
/// evaluated on a device can make the same draw.
pub fn action_uniform(key: [u32; 2], env: u32, step: u32) -> f32 {
    cartfuse_env::nn::unit_uniform_host(key, [env, step])
}

#[cfg(test)]
mod tests {
    use super::*;
    use cartfuse_fusion::rng;

    #[test]
    fn log_softmax_row_normalises_and_categorical_follows_it() {
        let lp = log_softmax_row(&[0.0, (3.0f32).ln()]);
        assert!((lp[0].exp() - 0.25).abs() < 1e-6 && (lp[1].exp() - 0.75).abs() < 1e-6);
        assert_eq!(categorical(&lp, 0.0), 0);
        assert_eq!(categorical(&lp, 0.249), 0);
        assert_eq!(categorical(&lp, 0.251), 1);
        assert_eq!(categorical(&lp, 0.999_999), 1);
    }

    #[test]
    fn action_uniforms_are_in_range_and_spread() {
        let key = rng::seed_key(7);
        let draws: Vec<f32> = (0..10_000).map(|t| action_uniform(key, 3, t)).collect();
        assert!(draws.iter().all(|u| (0.0..1.0).contains(u)));
        let mean = draws.iter().sum::<f32>() / draws.len() as f32;
        assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
        assert_ne!(action_uniform(key, 3, 0), action_uniform(key, 4, 0));
    }
}
