//! The native learner: PPO's gradient steps for a population of `K` actor-critics at once,
//! written out on the CPU (forward, backward, global-norm clip and Adam), so a step costs
//! its arithmetic and not its dispatch.
//!
//! Why not burn here: profiled with `perf` on the 2-core development machine, the default
//! run spent 56% of its time in glibc's scalar double-precision `tanh` (burn NdArray's
//! `tanh` converts each f32 to f64 and back), 11% in matrixmultiply's kernels and most of
//! the rest in ndarray's per-op allocation and shape bookkeeping (see `docs/training.md`).
//! burn's other CPU backend (Flex) also calls a scalar `tanh` per element. Here `tanh` is
//! the CPU runtime's vectorised one ([`cartfuse_fusion::cpu::interp::math::tanh`], the same bits
//! the fused policy computes), the products are matrixmultiply's (as burn's), and each
//! layer is one pass over the whole minibatch.
//!
//! - [`NetShape`] (in [`crate::shape`]): the flat parameter layout and the initial weights;
//! - [`matmul`]: the three products a dense layer needs;
//! - [`kernels`]: `tanh`, its gradient, bias gradients and Adam, vectorised;
//! - [`mlp`]: one MLP's forward and backward passes;
//! - [`loss`]: PPO's loss and its gradient with respect to the networks' outputs;
//! - [`Learner`]: `K` agents' parameters and Adam states, stepped together: each layer one
//!   pass per agent over its whole minibatch, agents spread over the cores, each clipped by
//!   its own global norm and stepped with its own settings ([`StepSettings`]).
//!
//! Agents never share a number: agent `i`'s step reads only its own parameters, samples and
//! settings, so its history is the same whatever else the population holds.

pub mod kernels;
pub mod loss;
pub mod matmul;
pub mod mlp;

use cartfuse_fusion::cpu::SimdLevel;
use rayon::prelude::*;

use crate::minibatch::Minibatch;
pub use crate::shape::{Net, NetShape};
use kernels::AdamStep;
use mlp::{Backprop, Trace};

/// Adam's epsilon (CleanRL's `eps=1e-5`).
pub const ADAM_EPSILON: f32 = 1e-5;

/// One agent's settings for one gradient step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepSettings {
    /// Adam's learning rate for this step (already annealed).
    pub learning_rate: f32,
    /// PPO's ratio clip.
    pub clip_coef: f32,
    /// Weight of the entropy bonus.
    pub ent_coef: f32,
    /// Weight of the value loss.
    pub vf_coef: f32,
    /// The agent's gradients are scaled to at most this global L2 norm.
    pub max_grad_norm: f32,
}

/// What one gradient step computed for one agent (before the step).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepLosses {
    /// The clipped policy loss.
    pub policy_loss: f32,
    /// The value loss (before `vf_coef`).
    pub value_loss: f32,
    /// The policy's mean entropy.
    pub entropy: f32,
    /// The global L2 norm of the agent's gradients before clipping.
    pub grad_norm: f32,
}

/// The scratch of one network's step.
#[derive(Debug, Default, Clone)]
struct NetScratch {
    trace: Trace,
    backprop: Backprop,
    d_out: Vec<f32>,
    /// `(policy loss, entropy)` of an actor, `(value loss, 0)` of a critic.
    losses: (f32, f32),
    /// Sum of the squared gradients.
    squares: f64,
}

/// `K` agents' weights and Adam states.
#[derive(Debug, Clone)]
pub struct Learner {
    shape: NetShape,
    params: Vec<f32>,
    grads: Vec<f32>,
    moment_1: Vec<f32>,
    moment_2: Vec<f32>,
    /// Adam steps taken by each agent.
    time: Vec<i32>,
    /// One actor's and one critic's scratch per worker thread (kept warm in its cache).
    scratch: Vec<[NetScratch; 2]>,
    /// Each agent's minibatch, refilled at every step of an update (kept between updates).
    pub(crate) minibatches: Vec<Minibatch>,
    level: SimdLevel,
}

impl Learner {
    /// One agent per flat parameter vector of `params` (each [`NetShape::params`] long),
    /// Adam's moments at zero.
    pub fn new(shape: NetShape, params: Vec<Vec<f32>>) -> Self {
        let per_agent = shape.params();
        assert!(
            params.iter().all(|p| p.len() == per_agent),
            "each agent holds {per_agent} parameters"
        );
        let agents = params.len();
        let flat: Vec<f32> = params.concat();
        let total = flat.len();
        Self {
            shape,
            params: flat,
            grads: vec![0.0; total],
            moment_1: vec![0.0; total],
            moment_2: vec![0.0; total],
            time: vec![0; agents],
            scratch: vec![Default::default(); rayon::current_num_threads().max(1)],
            minibatches: vec![Minibatch::default(); agents],
            level: SimdLevel::detect(),
        }
    }

    /// Fresh agents, one per seed ([`NetShape::init`]).
    pub fn from_seeds(shape: NetShape, seeds: &[u64]) -> Self {
        Self::new(shape, seeds.iter().map(|&s| shape.init(s)).collect())
    }

    /// The networks' shape.
    pub fn shape(&self) -> NetShape {
        self.shape
    }

    /// Agents held.
    pub fn agents(&self) -> usize {
        self.time.len()
    }

    /// Agent `agent`'s flat parameters.
    pub fn params(&self, agent: usize) -> &[f32] {
        let p = self.shape.params();
        &self.params[agent * p..(agent + 1) * p]
    }

    /// Overwrites every agent's parameters with `flat` (`K` flat vectors back to back);
    /// Adam's state is left as it is.
    pub fn set_all_params(&mut self, flat: &[f32]) {
        assert_eq!(flat.len(), self.params.len(), "one flat vector per agent");
        self.params.copy_from_slice(flat);
    }

    /// The output of agent `agent`'s network `net` on the `rows` observations `obs`.
    fn output(&self, agent: usize, net: Net, obs: &[f32], rows: usize) -> Vec<f32> {
        let params = &self.params(agent)[self.shape.range(net)];
        let mut trace = Trace::default();
        mlp::forward(
            self.level,
            params,
            &self.shape.layers(net),
            obs,
            rows,
            &mut trace,
        );
        trace.out().to_vec()
    }

    /// The actor's logits (`[rows, actions]`) and the critic's values (`[rows]`) of agent
    /// `agent` on the `rows` observations `obs`.
    pub fn evaluate(&self, agent: usize, obs: &[f32], rows: usize) -> (Vec<f32>, Vec<f32>) {
        (
            self.output(agent, Net::Actor, obs, rows),
            self.values(agent, obs, rows),
        )
    }

    /// The critic's values (`[rows]`) of agent `agent` on the `rows` observations `obs`.
    pub fn values(&self, agent: usize, obs: &[f32], rows: usize) -> Vec<f32> {
        self.output(agent, Net::Critic, obs, rows)
    }

    /// One gradient step of every agent named in `batches` (`(agent, its minibatch)`, in
    /// increasing agent order), agent `i` with `settings[i]`; returns each one's losses in
    /// the order of `batches`. Agents are spread over the cores (one agent runs on the
    /// calling thread), each worker taking a contiguous run of agents.
    pub fn step(
        &mut self,
        batches: &[(usize, &Minibatch)],
        settings: &[StepSettings],
    ) -> Vec<StepLosses> {
        assert_eq!(settings.len(), self.agents());
        assert!(
            batches.windows(2).all(|w| w[0].0 < w[1].0)
                && batches.last().is_none_or(|b| b.0 < self.agents()),
            "batches name distinct agents in increasing order"
        );
        let (shape, level, p) = (self.shape, self.level, self.shape.params());
        let mut tasks = Vec::with_capacity(batches.len());
        let mut next = batches.iter().peekable();
        let state = self
            .params
            .chunks_mut(p)
            .zip(self.grads.chunks_mut(p))
            .zip(self.moment_1.chunks_mut(p).zip(self.moment_2.chunks_mut(p)))
            .zip(self.time.iter_mut());
        for (index, (((params, grads), (m, v)), time)) in state.enumerate() {
            let Some(&(_, batch)) = next.next_if(|b| b.0 == index) else {
                continue;
            };
            let agent = AgentState {
                params,
                grads,
                moments: (m, v),
                time,
            };
            tasks.push((agent, batch, &settings[index]));
        }
        // Contiguous runs of agents, one per worker and its scratch.
        let per_worker = tasks.len().div_ceil(self.scratch.len()).max(1);
        let mut runs = Vec::with_capacity(self.scratch.len());
        while !tasks.is_empty() {
            let rest = tasks.split_off(per_worker.min(tasks.len()));
            runs.push(std::mem::replace(&mut tasks, rest));
        }
        let run = |(run, scratch): (
            Vec<(AgentState<'_>, &Minibatch, &StepSettings)>,
            &mut [NetScratch; 2],
        )| {
            run.into_iter()
                .map(|(agent, batch, settings)| {
                    agent.step((level, &shape), batch, settings, scratch)
                })
                .collect::<Vec<_>>()
        };
        let work = runs.into_iter().zip(self.scratch.iter_mut());
        let losses: Vec<Vec<StepLosses>> = if work.len() == 1 {
            work.map(run).collect()
        } else {
            work.collect::<Vec<_>>().into_par_iter().map(run).collect()
        };
        losses.concat()
    }
}

/// One agent's parameters, gradients and Adam state, borrowed for a step.
struct AgentState<'a> {
    params: &'a mut [f32],
    grads: &'a mut [f32],
    moments: (&'a mut [f32], &'a mut [f32]),
    time: &'a mut i32,
}

impl AgentState<'_> {
    /// Both networks' gradients on `batch`, the clip to the agent's global norm, and Adam.
    fn step(
        self,
        (level, shape): (SimdLevel, &NetShape),
        batch: &Minibatch,
        settings: &StepSettings,
        scratch: &mut [NetScratch; 2],
    ) -> StepLosses {
        for (net, scratch) in Net::BOTH.into_iter().zip(scratch.iter_mut()) {
            let range = shape.range(net);
            net_gradients(
                (level, shape),
                net,
                (batch, settings),
                &self.params[range.clone()],
                &mut self.grads[range],
                scratch,
            );
        }
        let [actor, critic] = &*scratch;
        let norm = (actor.squares + critic.squares).sqrt() as f32;
        let scale = settings.max_grad_norm / (norm + 1e-6);
        *self.time += 1;
        let step = AdamStep::new(
            *self.time,
            ADAM_EPSILON,
            settings.learning_rate,
            if scale < 1.0 { scale } else { 1.0 },
        );
        let (m, v) = self.moments;
        kernels::adam(level, step, self.params, self.grads, m, v);
        StepLosses {
            policy_loss: actor.losses.0,
            entropy: actor.losses.1,
            value_loss: critic.losses.0,
            grad_norm: norm,
        }
    }
}

/// One network's part of a step: forward on the minibatch, its loss terms' gradient, and
/// backward into `grads` (with their sum of squares in `scratch`).
fn net_gradients(
    (level, shape): (SimdLevel, &NetShape),
    net: Net,
    (batch, settings): (&Minibatch, &StepSettings),
    params: &[f32],
    grads: &mut [f32],
    scratch: &mut NetScratch,
) {
    let layers = shape.layers(net);
    let rows = batch.len();
    mlp::forward(level, params, &layers, &batch.obs, rows, &mut scratch.trace);
    let out = scratch.trace.out();
    scratch.losses = match net {
        Net::Actor => loss::policy(
            out,
            batch,
            settings.clip_coef,
            settings.ent_coef,
            &mut scratch.d_out,
        ),
        Net::Critic => (
            loss::value(out, &batch.targets, settings.vf_coef, &mut scratch.d_out),
            0.0,
        ),
    };
    mlp::backward(
        level,
        params,
        &layers,
        &batch.obs,
        &scratch.trace,
        &scratch.d_out,
        grads,
        &mut scratch.backprop,
    );
    scratch.squares = grads.iter().map(|&g| f64::from(g) * f64::from(g)).sum();
}
