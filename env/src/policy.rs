//! The policy a rollout step runs inside the graph: an actor-critic of two `tanh` MLPs
//! ([`PolicySpec`]) whose weights are runtime params ([`PolicyWeights`]), and the names the
//! rollout graph gives its weights, draw key and step counter.

use crate::nn::{self, MlpShape};
use cartfuse_fusion::graph::{DType, GraphBuilder, Var};

use crate::environment::GraphEnv;
use crate::error::EnvError;
use crate::spaces::ActionSpace;

/// Param prefix of the actor's weights.
pub const ACTOR: &str = "actor";
/// Param prefix of the critic's weights.
pub const CRITIC: &str = "critic";
/// The per-lane input counting policy steps: the second word of each draw's counter.
pub const POLICY_STEP: &str = "policy_step";
/// Params holding the policy's draw key.
pub const POLICY_KEY: [&str; 2] = ["policy_key0", "policy_key1"];

/// The outputs a rollout step writes beside the env's.
pub const POLICY_OUTPUTS: [&str; 3] = ["action", "log_prob", "value"];

/// An actor-critic of two `tanh` MLPs over the observation: logits of a discrete action
/// space, and a state value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PolicySpec {
    /// Observation -> logits.
    pub actor: MlpShape,
    /// Observation -> value.
    pub critic: MlpShape,
}

impl PolicySpec {
    /// Actor and critic with the hidden widths `hidden` for `env`'s observation and
    /// discrete actions.
    pub fn tanh_mlp<E: GraphEnv>(env: &E, hidden: &[u32]) -> Result<Self, EnvError> {
        let ActionSpace::Discrete(space) = env.action_space() else {
            return Err(EnvError::InvalidRollout(format!(
                "{} has a continuous action space; the rollout's policy draws discrete actions",
                E::ID
            )));
        };
        let widths = |out: u32| {
            let mut widths = vec![E::OBS_DIM as u32];
            widths.extend_from_slice(hidden);
            widths.push(out);
            MlpShape::new(widths).map_err(|e| EnvError::InvalidRollout(e.to_string()))
        };
        Ok(Self {
            actor: widths(space.n)?,
            critic: widths(1)?,
        })
    }

    /// Chooses the action on `obs` in graph `g`: writes `action`, `log_prob` and `value`,
    /// and carries the policy step counter.
    pub(crate) fn act<'g>(&self, g: &'g GraphBuilder, obs: &[Var<'g>]) -> Var<'g> {
        let logits = nn::mlp(g, &self.actor, ACTOR, obs);
        let value = nn::mlp(g, &self.critic, CRITIC, obs)[0];
        let log_probs = nn::log_softmax(&logits);
        let step = g.input(POLICY_STEP, DType::U32);
        let key = POLICY_KEY.map(|name| g.param(name, DType::U32));
        let u = nn::unit_uniform(g, key, [g.lane_index(), step]);
        let action = nn::categorical(g, &log_probs, u);
        g.output("action", action);
        g.output("log_prob", nn::pick(g, &log_probs, action));
        g.output("value", value);
        g.carry(step, step + g.u32(1));
        action
    }
}

/// A policy's weights, each MLP's flat in [`MlpShape::param_names`] order (per layer: the
/// weights row by row, `[out][in]`, then the biases).
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyWeights {
    /// The actor's.
    pub actor: Vec<f32>,
    /// The critic's.
    pub critic: Vec<f32>,
}
