//! [`NetShape`]: the actor-critic's layer widths, where each weight and bias sits in one
//! agent's flat parameter vector, and the initial weights drawn from a seed.
//!
//! An agent's parameters are one `Vec<f32>`: the actor's three dense layers, then the
//! critic's, each layer its weights `[fan_in][fan_out]` row by row (burn's `Linear` layout)
//! and then its biases. A population keeps `K` such vectors back to back.

use std::ops::Range;

use cartfuse_env::nn::MlpShape;
use cartfuse_env::policy::{PolicySpec, PolicyWeights};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::error::TrainError;

/// Which of the two networks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Net {
    /// Observation -> action logits.
    Actor,
    /// Observation -> state value.
    Critic,
}

impl Net {
    /// Both, actor first (their order in the flat vector).
    pub const BOTH: [Net; 2] = [Net::Actor, Net::Critic];
}

/// One dense layer's place in a network's slice of the flat vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layer {
    /// Inputs.
    pub fan_in: usize,
    /// Outputs.
    pub fan_out: usize,
    /// Offset of the weights (`fan_in * fan_out`, row `i` holds input `i`'s weights).
    pub weight: usize,
    /// Offset of the `fan_out` biases.
    pub bias: usize,
}

impl Layer {
    /// The weights' range.
    pub fn weights(&self) -> Range<usize> {
        self.weight..self.weight + self.fan_in * self.fan_out
    }

    /// The biases' range.
    pub fn biases(&self) -> Range<usize> {
        self.bias..self.bias + self.fan_out
    }
}

/// Two `tanh` MLPs of two hidden layers over the observation: logits of `actions` discrete
/// actions, and a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct NetShape {
    /// Values per observation.
    pub obs_dim: usize,
    /// Width of both hidden layers of both networks.
    pub hidden: usize,
    /// Discrete actions.
    pub actions: usize,
}

impl NetShape {
    /// The shape for `obs_dim` observations, `actions` actions and `hidden` units.
    pub fn new(obs_dim: usize, hidden: usize, actions: usize) -> Self {
        Self {
            obs_dim,
            hidden,
            actions,
        }
    }

    /// Widths of `net`: inputs, the two hidden layers, outputs.
    pub fn widths(&self, net: Net) -> [usize; 4] {
        let out = match net {
            Net::Actor => self.actions,
            Net::Critic => 1,
        };
        [self.obs_dim, self.hidden, self.hidden, out]
    }

    /// `net`'s three layers, offsets from the start of its slice.
    pub fn layers(&self, net: Net) -> [Layer; 3] {
        let widths = self.widths(net);
        let mut offset = 0;
        std::array::from_fn(|l| {
            let (fan_in, fan_out) = (widths[l], widths[l + 1]);
            let layer = Layer {
                fan_in,
                fan_out,
                weight: offset,
                bias: offset + fan_in * fan_out,
            };
            offset += (fan_in + 1) * fan_out;
            layer
        })
    }

    /// Where `net` sits in an agent's flat vector.
    pub fn range(&self, net: Net) -> Range<usize> {
        let count = |net: Net| {
            self.widths(net)
                .windows(2)
                .map(|w| (w[0] + 1) * w[1])
                .sum::<usize>()
        };
        match net {
            Net::Actor => 0..count(Net::Actor),
            Net::Critic => count(Net::Actor)..count(Net::Actor) + count(Net::Critic),
        }
    }

    /// Weights and biases of one agent.
    pub fn params(&self) -> usize {
        self.range(Net::Critic).end
    }

    /// The initial parameters of the agent seeded `seed`: every weight uniform in
    /// `±gain * sqrt(6 / (fan_in + fan_out))` (Glorot), drawn layer by layer in the flat
    /// order from one `StdRng`, biases zero. The policy's last layer has gain 0.01
    /// (CleanRL's `std=0.01`), so the first policy is near uniform; every other gain is 1.
    pub fn init(&self, seed: u64) -> Vec<f32> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut flat = vec![0.0f32; self.params()];
        for net in Net::BOTH {
            let start = self.range(net).start;
            for (l, layer) in self.layers(net).iter().enumerate() {
                let gain = if net == Net::Actor && l == 2 {
                    0.01
                } else {
                    1.0
                };
                let bound = gain * (6.0 / (layer.fan_in + layer.fan_out) as f32).sqrt();
                let weights = layer.weights();
                for w in &mut flat[start + weights.start..start + weights.end] {
                    *w = rng.random_range(-bound..=bound);
                }
            }
        }
        flat
    }

    /// Where each of `net`'s weights in the policy rollout's order sits in the flat vector:
    /// per layer, the weights `[out][in]` row by row (the flat vector holds `[in][out]`),
    /// then the biases.
    fn rollout_order_of(&self, net: Net) -> Vec<usize> {
        let start = self.range(net).start;
        let mut order = Vec::new();
        for layer in self.layers(net) {
            let (w, fan_out) = (start + layer.weights().start, layer.fan_out);
            order.extend(
                (0..fan_out).flat_map(|o| (0..layer.fan_in).map(move |i| w + i * fan_out + o)),
            );
            order.extend(layer.biases().map(|b| start + b));
        }
        order
    }

    /// Where each weight of the policy rollout's [`PolicyWeights`] (the actor's, then the
    /// critic's) sits in the flat vector.
    pub fn rollout_order(&self) -> Vec<usize> {
        let mut order = self.rollout_order_of(Net::Actor);
        order.extend(self.rollout_order_of(Net::Critic));
        order
    }

    /// The policy rollout's view of the flat parameters `flat`: its [`PolicySpec`] and
    /// [`PolicyWeights`] (in [`Self::rollout_order`]).
    pub fn rollout_weights(&self, flat: &[f32]) -> Result<(PolicySpec, PolicyWeights), TrainError> {
        let mlp = |net: Net| -> Result<(MlpShape, Vec<f32>), TrainError> {
            let values = self
                .rollout_order_of(net)
                .iter()
                .map(|&j| flat[j])
                .collect();
            let widths = self.widths(net).iter().map(|&w| w as u32).collect();
            let shape = MlpShape::new(widths).map_err(|e| TrainError::Tensor(e.to_string()))?;
            Ok((shape, values))
        };
        let (actor_shape, actor) = mlp(Net::Actor)?;
        let (critic_shape, critic) = mlp(Net::Critic)?;
        Ok((
            PolicySpec {
                actor: actor_shape,
                critic: critic_shape,
            },
            PolicyWeights { actor, critic },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_tile_the_flat_vector() {
        let shape = NetShape::new(4, 64, 2);
        let actor = shape.layers(Net::Actor);
        assert_eq!(actor[0].weights(), 0..256);
        assert_eq!(actor[0].biases(), 256..320);
        assert_eq!(actor[2].biases(), (320 + 4160 + 128)..(320 + 4160 + 130));
        assert_eq!(shape.range(Net::Actor), 0..4610);
        assert_eq!(shape.range(Net::Critic), 4610..(4610 + 4545));
        assert_eq!(shape.params(), 9155);
        let init = shape.init(3);
        assert_eq!(init, shape.init(3));
        assert_ne!(init, shape.init(4));
        // Biases start at zero; the policy's last layer is 100x smaller.
        assert!(init[actor[0].biases()].iter().all(|&b| b == 0.0));
        let bound = |l: &Layer| (6.0 / (l.fan_in + l.fan_out) as f32).sqrt();
        let last = &init[actor[2].weights()];
        assert!(last.iter().all(|w| w.abs() <= 0.01 * bound(&actor[2])));
        assert!(
            init[actor[1].weights()]
                .iter()
                .any(|w| w.abs() > 0.5 * bound(&actor[1]))
        );
    }

    #[test]
    fn rollout_weights_transpose_each_layer() {
        let shape = NetShape::new(2, 3, 2);
        let flat: Vec<f32> = (0..shape.params()).map(|i| i as f32).collect();
        let (spec, weights) = shape.rollout_weights(&flat).unwrap();
        assert_eq!(spec.actor.widths(), [2, 3, 3, 2]);
        assert_eq!(spec.critic.widths(), [2, 3, 3, 1]);
        // Actor layer 0: w[in][out] = in * 3 + out, read as [out][in]; then biases 6..9.
        assert_eq!(
            weights.actor[..9],
            [0.0, 3.0, 1.0, 4.0, 2.0, 5.0, 6.0, 7.0, 8.0]
        );
        assert_eq!(weights.actor.len(), spec.actor.param_count());
        assert_eq!(weights.critic.len(), spec.critic.param_count());
        assert_eq!(weights.critic[0], shape.range(Net::Critic).start as f32);
    }
}
