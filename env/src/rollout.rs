//! A policy inside the rollout: the step graph of an environment with an actor-critic MLP in
//! front of its dynamics, so T steps of policy + env for `n` envs run in T / K launches
//! under any fusion plan on any backend (the on-device "Anakin" design; the study's
//! "fusing simulation with inference").
//!
//! The rollout step reads no action: it observes the current state, evaluates the actor
//! and the critic ([`crate::nn::mlp`], weights as runtime params), draws the
//! action from the actor's log-softmax with the counter-based generator, and steps the
//! environment with it. Beside the env's outputs it writes `action`, `log_prob` and
//! `value`. The draw of env `i` at policy step `t` reads word 0 of Threefry block `(i, t)`
//! under the policy's key ([`crate::nn::unit_uniform_host`] on the host), so a
//! host policy with the same weights and key draws the same actions.
//!
//! [`PolicyRollout`] runs it and hands the learner a [`Trajectory`]. A population of agents
//! is one rollout whose envs are cut into one bank per agent
//! ([`PolicyRollout::population`]): each agent acts under its own weights, draw key and
//! reset seed, as it would alone, in the same launches as every other agent.

mod device_weights;
mod trajectory;

pub use trajectory::Trajectory;

use std::sync::Arc;

use cartfuse_fusion::exec::Backend;
use cartfuse_fusion::exec::LaunchLedger;
use cartfuse_fusion::graph::Graph;
use cartfuse_fusion::graph::{HostArray, Scalar};
use cartfuse_fusion::plan::Strategy;

use crate::engine::{PlannedEngine, ResetRequest, Seeding, StepBuffer, StepEngine, layout_for};
use crate::environment::{EpisodeOptions, GraphEnv};
use crate::error::EnvError;
use crate::graph::{StateLayout, build_step};
use crate::params::AutoresetMode;
use crate::policy::{ACTOR, CRITIC, POLICY_KEY, POLICY_STEP, PolicySpec, PolicyWeights};

/// The rollout step of `env` under `policy`: the step graph, its action chosen in the graph.
pub fn rollout_graph<E: GraphEnv>(
    env: &E,
    autoreset: AutoresetMode,
    layout: StateLayout,
    policy: &PolicySpec,
) -> Graph {
    build_step(env, autoreset, layout, Some(policy))
}

/// A policy and an environment stepped together, `K` steps a call under `fused-xK`.
pub struct PolicyRollout<B: Backend> {
    engine: PlannedEngine<B>,
    spec: PolicySpec,
    /// The actor's then the critic's param names, in [`PolicyWeights`] order.
    weight_names: Vec<String>,
    n: usize,
    agents: usize,
    obs_dim: usize,
    autoreset: AutoresetMode,
    seed: Option<u64>,
}

impl<B: Backend> PolicyRollout<B> {
    /// `n` envs of `env` acting under `policy`, the step planned with `strategy`. The
    /// weights start at zero (a uniform policy); set them with [`Self::set_weights`].
    pub fn new<E: GraphEnv<Action = u32>>(
        backend: &B,
        env: &E,
        episode: &EpisodeOptions,
        policy: PolicySpec,
        strategy: Strategy,
        n: usize,
    ) -> Result<Self, EnvError> {
        Self::population(backend, env, episode, policy, strategy, (1, n))
    }

    /// `agents` agents with `envs_per_agent` envs each, stepped as one batch of
    /// `agents * envs_per_agent` envs (agent `a`'s are envs `a * envs_per_agent..`): each
    /// agent acts under its own weights ([`Self::set_agent_weights`]) and draw key
    /// ([`Self::set_draws_each`]) on envs reset from its own seed ([`Self::reset_each`]),
    /// and so follows the trajectory a rollout of its envs alone would, bit for bit.
    pub fn population<E: GraphEnv<Action = u32>>(
        backend: &B,
        env: &E,
        episode: &EpisodeOptions,
        policy: PolicySpec,
        strategy: Strategy,
        (agents, envs_per_agent): (usize, usize),
    ) -> Result<Self, EnvError> {
        episode.validate()?;
        if envs_per_agent == 0 {
            return Err(EnvError::ZeroEnvs);
        }
        if agents == 0 {
            return Err(EnvError::InvalidRollout(
                "a population needs an agent".into(),
            ));
        }
        let n = agents.checked_mul(envs_per_agent).ok_or_else(|| {
            EnvError::InvalidRollout(format!(
                "{agents} agents of {envs_per_agent} envs overflow a count of envs"
            ))
        })?;
        if policy.actor.inputs() as usize != E::OBS_DIM
            || policy.critic.inputs() as usize != E::OBS_DIM
            || policy.critic.outputs() != 1
        {
            return Err(EnvError::InvalidRollout(format!(
                "{} observes {} values: the actor and critic must read {0} and the critic \
                 write 1 (actor {:?}, critic {:?})",
                E::ID,
                E::OBS_DIM,
                policy.actor.widths(),
                policy.critic.widths()
            )));
        }
        let layout = layout_for(strategy);
        let graph = rollout_graph(env, episode.autoreset, layout, &policy);
        let options = backend.plan_options();
        let engine = PlannedEngine::with_graph_in_banks(
            backend,
            env,
            episode,
            graph,
            (strategy, layout, &options, false),
            (n, agents),
            Arc::new(LaunchLedger::new()),
        )?;
        let weight_names = [ACTOR, CRITIC]
            .iter()
            .zip([&policy.actor, &policy.critic])
            .flat_map(|(prefix, shape)| shape.param_names(prefix))
            .collect();
        let mut rollout = Self {
            engine,
            weight_names,
            spec: policy,
            n,
            agents,
            obs_dim: E::OBS_DIM,
            autoreset: episode.autoreset,
            seed: None,
        };
        rollout.set_draws([0, 0], 0)?;
        Ok(rollout)
    }

    /// The policy's shape.
    pub fn spec(&self) -> &PolicySpec {
        &self.spec
    }

    /// How finished episodes restart.
    pub fn autoreset(&self) -> AutoresetMode {
        self.autoreset
    }

    /// Envs stepped at once (of all agents).
    pub fn num_envs(&self) -> usize {
        self.n
    }

    /// Agents whose envs are stepped together (1 unless built as a population).
    pub fn agents(&self) -> usize {
        self.agents
    }

    /// Steps one call runs (`K` of `fused-xK`, else 1); [`Self::collect`] takes multiples.
    pub fn steps_per_call(&self) -> u32 {
        self.engine.steps_per_call()
    }

    /// Records launches in `ledger` from now on.
    pub fn set_ledger(&mut self, ledger: Arc<LaunchLedger>) {
        self.engine.set_ledger(ledger);
    }

    /// Loads the policy's weights for every agent (a buffer write; nothing recompiles).
    pub fn set_weights(&mut self, weights: &PolicyWeights) -> Result<(), EnvError> {
        let values = weight_values(&self.spec, &self.weight_names, weights)?;
        Ok(self.engine.step_executor_mut().set_params(&values)?)
    }

    /// Loads agent `agent`'s weights (its envs act under them; the others' are untouched).
    pub fn set_agent_weights(
        &mut self,
        agent: usize,
        weights: &PolicyWeights,
    ) -> Result<(), EnvError> {
        self.check_agent(agent)?;
        let values = weight_values(&self.spec, &self.weight_names, weights)?;
        Ok((self.engine.step_executor_mut()).set_bank_params(agent, &values)?)
    }

    fn check_agent(&self, agent: usize) -> Result<(), EnvError> {
        if agent >= self.agents {
            return Err(EnvError::InvalidRollout(format!(
                "agent {agent} of a population of {}",
                self.agents
            )));
        }
        Ok(())
    }

    /// The policy's draws from now on: stream `key`, every env at policy step `step`.
    pub fn set_draws(&mut self, key: [u32; 2], step: u32) -> Result<(), EnvError> {
        self.engine
            .step_executor_mut()
            .set_params(&key_params(key))?;
        self.engine
            .set_step_input(POLICY_STEP, &HostArray::U32(vec![step; self.n]))
    }

    /// Each agent's draws from now on: agent `a`'s from stream `keys[a]`, every env at
    /// policy step `step`.
    pub fn set_draws_each(&mut self, keys: &[[u32; 2]], step: u32) -> Result<(), EnvError> {
        if keys.len() != self.agents {
            return Err(EnvError::InvalidRollout(format!(
                "a population of {} needs one draw key per agent, got {}",
                self.agents,
                keys.len()
            )));
        }
        for (agent, key) in keys.iter().enumerate() {
            (self.engine.step_executor_mut()).set_bank_params(agent, &key_params(*key))?;
        }
        self.engine
            .set_step_input(POLICY_STEP, &HostArray::U32(vec![step; self.n]))
    }

    /// Resets every env from `seed`'s stream; returns the observations, `[n, obs_dim]`.
    pub fn reset(&mut self, seed: u64) -> Result<Vec<f32>, EnvError> {
        let seeding = Seeding::Batch {
            seed,
            restart: true,
        };
        self.engine.reset(&ResetRequest::all(seeding))?;
        self.seed = Some(seed);
        self.observations()
    }

    /// Resets agent `a`'s envs from `seeds[a]`'s stream, as [`Self::reset`] resets a lone
    /// agent's; returns every env's observations, `[n, obs_dim]`.
    pub fn reset_each(&mut self, seeds: &[u64]) -> Result<Vec<f32>, EnvError> {
        self.engine.reset_banks(seeds, true)?;
        self.seed = seeds.first().copied();
        self.observations()
    }

    fn observations(&self) -> Result<Vec<f32>, EnvError> {
        let obs = self
            .engine
            .buffer(StepBuffer::Obs)
            .ok_or(EnvError::NotReset)?;
        Ok(self.engine.backend().read_f32(obs)?)
    }

    /// The calls [`Self::act`] takes to run `steps` steps (a positive multiple of
    /// [`Self::steps_per_call`]), once the envs were reset.
    pub fn calls_for(&self, steps: usize) -> Result<usize, EnvError> {
        if self.seed.is_none() {
            return Err(EnvError::NotReset);
        }
        let per_call = self.steps_per_call() as usize;
        if steps == 0 || !steps.is_multiple_of(per_call) {
            return Err(EnvError::InvalidRollout(format!(
                "steps must be a positive multiple of the {per_call} steps one call runs, got {steps}"
            )));
        }
        Ok(steps / per_call)
    }

    /// Enqueues one call: [`Self::steps_per_call`] steps of policy and env; nothing is
    /// read. Its outputs are [`Self::output_pages`] until the next call.
    pub fn act(&mut self) -> Result<(), EnvError> {
        if self.seed.is_none() {
            return Err(EnvError::NotReset);
        }
        self.engine.act()
    }

    /// Output `name` (`obs`, `final_obs`, `action`, `log_prob`, `value`, `reward`,
    /// `terminated`, `truncated`) of the last call, on the device: its pages in step order,
    /// each a run of steps of every env, step-major (`[steps, envs, width]`; flags are
    /// 32-bit words, 0 or 1). The next call overwrites them.
    pub fn output_pages(&self, name: &str) -> Vec<&B::Buffer> {
        self.engine.output_pages(name)
    }

    /// The backend the rollout runs on.
    pub fn backend(&self) -> &B {
        self.engine.backend()
    }

    /// Runs `steps` steps of policy and env (a multiple of [`Self::steps_per_call`]) and
    /// copies what they wrote to the host.
    pub fn collect(&mut self, steps: usize) -> Result<Trajectory, EnvError> {
        let calls = self.calls_for(steps)?;
        let (n, dim) = (self.n, self.obs_dim);
        let same_step = self.autoreset == AutoresetMode::SameStep;
        let mut t = Trajectory {
            num_envs: n,
            obs_dim: dim,
            next_obs: Vec::with_capacity(steps * n * dim),
            actions: Vec::with_capacity(steps * n),
            log_probs: Vec::with_capacity(steps * n),
            values: Vec::with_capacity(steps * n),
            rewards: Vec::with_capacity(steps * n),
            terminated: Vec::with_capacity(steps * n),
            truncated: Vec::with_capacity(steps * n),
            final_obs: same_step.then(|| Vec::with_capacity(steps * n * dim)),
        };
        let backend = self.engine.backend().clone();
        for _ in 0..calls {
            self.act()?;
            let f32s = |name: &str, into: &mut Vec<f32>| -> Result<(), EnvError> {
                for page in self.engine.output_pages(name) {
                    into.extend(backend.read_f32(page)?);
                }
                Ok(())
            };
            f32s("obs", &mut t.next_obs)?;
            f32s("log_prob", &mut t.log_probs)?;
            f32s("value", &mut t.values)?;
            f32s("reward", &mut t.rewards)?;
            if let Some(final_obs) = &mut t.final_obs {
                f32s("final_obs", final_obs)?;
            }
            for page in self.engine.output_pages("action") {
                t.actions.extend(backend.read_u32(page)?);
            }
            for (name, into) in [
                ("terminated", &mut t.terminated),
                ("truncated", &mut t.truncated),
            ] {
                for page in self.engine.output_pages(name) {
                    into.extend(backend.read_flags(page)?);
                }
            }
        }
        Ok(t)
    }
}

/// The policy's draw key as its two named params.
fn key_params(key: [u32; 2]) -> [(&'static str, Scalar); 2] {
    [0, 1].map(|w| (POLICY_KEY[w], Scalar::U32(key[w])))
}

/// `weights` checked against the policy's shape, as named params.
fn weight_values<'w>(
    spec: &PolicySpec,
    names: &'w [String],
    weights: &PolicyWeights,
) -> Result<Vec<(&'w str, Scalar)>, EnvError> {
    for (prefix, shape, values) in [
        (ACTOR, &spec.actor, &weights.actor),
        (CRITIC, &spec.critic, &weights.critic),
    ] {
        if values.len() != shape.param_count() {
            return Err(EnvError::InvalidRollout(format!(
                "the {prefix} {:?} has {} weights and biases, got {}",
                shape.widths(),
                shape.param_count(),
                values.len()
            )));
        }
        if let Some(bad) = values.iter().position(|w| !w.is_finite()) {
            return Err(EnvError::InvalidRollout(format!(
                "{prefix} weight {bad} is {}",
                values[bad]
            )));
        }
    }
    Ok(names
        .iter()
        .zip(weights.actor.iter().chain(&weights.critic))
        .map(|(name, w)| (name.as_str(), Scalar::F32(*w)))
        .collect())
}

#[cfg(test)]
mod tests {
    use cartfuse_fusion::lir::compact::compact;
    use cartfuse_fusion::lir::loop_budget::{
        LAVAPIPE_LOOP_ITERATIONS, launch_iterations, steps_within,
    };
    use cartfuse_fusion::lir::lower::lower_plan;
    use cartfuse_fusion::lir::program::{Instr, LaunchProgram};
    use cartfuse_fusion::plan::{Plan, PlanOptions};

    use super::*;
    use crate::cartpole::CartPole;

    /// PPO's 4-64-64 policy under `fused-x8` runs 653 loop iterations a step (rows, and
    /// chunks of 16 terms), far under lavapipe's 65,535 a thread, which it once crossed at
    /// the 8th step (one term per iteration); up to `fused-x100` fits.
    #[test]
    fn the_fused_x8_policy_kernel_stays_within_lavapipe_loop_limit() {
        let env = CartPole::default();
        let spec = PolicySpec::tanh_mlp(&env, &[64, 64]).unwrap();
        let graph = rollout_graph(
            &env,
            AutoresetMode::SameStep,
            layout_for(Strategy::FusedSteps(8)),
            &spec,
        );
        let plan = Plan::build(&graph, Strategy::FusedSteps(8), &PlanOptions::default()).unwrap();
        let launches = lower_plan(&graph, &plan);
        assert_eq!(launches.len(), 1);
        let launch = LaunchProgram::new(vec![compact(&launches[0].program.parts[0])]);
        // Actor 64 + 64 * 4 + 2 * 4, critic 64 + 64 * 4 + 4, the step loop 1.
        assert_eq!(launch_iterations(&launch), 8 * 653);
        assert_eq!(steps_within(&launch, LAVAPIPE_LOOP_ITERATIONS), Some(100));
    }

    /// The generated kernel of the fused 4 -> 64 -> 64 policy step runs each of the six
    /// layers as one loop: the program lavapipe compiles in seconds, not the 1,417
    /// instructions and 259 loops it spent over ten minutes on.
    #[test]
    fn the_fused_policy_kernel_runs_each_layer_as_one_loop() {
        let env = CartPole::default();
        let spec = PolicySpec::tanh_mlp(&env, &[64, 64]).unwrap();
        let graph = rollout_graph(&env, AutoresetMode::SameStep, StateLayout::default(), &spec);
        let plan = Plan::build(&graph, Strategy::Fused, &PlanOptions::default()).unwrap();
        let launches = lower_plan(&graph, &plan);
        assert_eq!(launches.len(), 1);
        let program = compact(&launches[0].program.parts[0]);
        let layers: Vec<(u32, u32, bool)> = program
            .body
            .iter()
            .filter_map(|instr| match *instr {
                Instr::DenseParams {
                    rows,
                    len,
                    activation,
                    ..
                } => Some((rows, len, activation.is_some())),
                _ => None,
            })
            .collect();
        let actor = [(64, 4, true), (64, 64, true), (2, 64, false)];
        let critic = [(64, 4, true), (64, 64, true), (1, 64, false)];
        assert_eq!(layers, [actor, critic].concat());
        let dots = program
            .body
            .iter()
            .filter(|i| matches!(i, Instr::DotParams { .. }));
        assert_eq!(dots.count(), 0);
        // 137 until each reset draw was placed in its bounds (a multiply and an add each) and
        // the reset key became per-lane inputs (2026-11-28).
        assert_eq!(program.body.len(), 146);
    }
}
