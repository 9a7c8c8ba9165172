//! The planned engine: an environment's step graph under a fusion plan, and its reset graph
//! as one fused kernel, both run by the backend's [`Executor`].
//!
//! Resets are drawn on the device by the reset graph (the same counter-based draws as the
//! step's autoreset), so no state travels device -> host -> device. The reset runner's new
//! state buffers are handed to the step runner without a copy; three buffers per component
//! rotate between the two runners, so no runner ever reads a buffer it writes in one call.
//!
//! A population's envs are one engine whose lanes are cut into banks, one per agent
//! ([`PlannedEngine::with_graph_in_banks`]): each bank has its own seed and step params and
//! counts its lanes from zero, so bank `b` steps as a lone engine of its lanes would, bit
//! for bit, in the same launches as every other bank.

use std::sync::Arc;

use cartfuse_fusion::exec::LaunchLedger;
use cartfuse_fusion::exec::{Backend, Executor};
use cartfuse_fusion::graph::{HostArray, Scalar};
use cartfuse_fusion::plan::{Plan, PlanOptions, Strategy};

use super::draw_ahead::{DrawAhead, step_reading_draws};
use super::pages::{StepPages, steps_per_launch};
use super::{ActionFlag, OutputArena, StepBuffer, StepEngine};
use crate::environment::{EpisodeOptions, GraphEnv};
use crate::error::EnvError;
use crate::graph::{PACKED_STATE, StateLayout, graph_params, reset_graph, step_graph};
use crate::step_engine::{LaneKeys, ResetRequest, Seeding};

mod reset;

/// Prefix of the reset kernel's name in the launch ledger.
pub const RESET_KERNEL_PREFIX: &str = "reset";

/// Counters the reset graph reads and writes beside the state.
const COUNTERS: [&str; 3] = ["elapsed", "resets", "needs_reset"];

/// A graph plan and its reset kernel on backend `B`.
pub struct PlannedEngine<B: Backend> {
    backend: B,
    step: Executor<B>,
    reset: Executor<B>,
    layout: StateLayout,
    state_names: &'static [&'static str],
    params: Vec<(&'static str, Scalar)>,
    n: usize,
    banks: usize,
    /// Each lane's key, as uploaded into both runners' key inputs.
    keys: LaneKeys,
    /// The environment's default reset bounds, and the ones the reset runner has now.
    default_bounds: Vec<(f64, f64)>,
    reset_bounds: Vec<(f64, f64)>,
    /// One word per lane: all ones, all zeros (masks and restarts that cover every lane or
    /// none, bound without an upload).
    all_lanes: B::Buffer,
    no_lanes: B::Buffer,
    showing_reset: bool,
    draw_ahead: Option<DrawAhead<B>>,
    /// A `fused-xK` call's steps over several launches, when K steps of outputs exceed
    /// the device's largest buffer.
    pages: Option<StepPages<B>>,
    /// The step's outputs and an invalid-action flag in one allocation (not when paged, or
    /// when the graph lacks an env's outputs).
    arena: Option<OutputArena<B::Buffer>>,
    ledger: Arc<LaunchLedger>,
}

impl<B: Backend> PlannedEngine<B> {
    /// Plans `env`'s step with `strategy` (on `layout`, with `options`; reading its draws
    /// from a [`DrawAhead`] when `draw_ahead`) for `n` lanes. A `fused-xK` call whose K
    /// steps of outputs exceed the backend's largest buffer runs as [`StepPages`].
    pub fn new<E: GraphEnv>(
        backend: &B,
        env: &E,
        episode: &EpisodeOptions,
        (strategy, layout, options, draw_ahead): (Strategy, StateLayout, &PlanOptions, bool),
        n: usize,
        ledger: Arc<LaunchLedger>,
    ) -> Result<Self, EnvError> {
        let graph = step_graph(env, episode.autoreset, layout);
        Self::with_graph(
            backend,
            env,
            episode,
            graph,
            (strategy, layout, options, draw_ahead),
            n,
            ledger,
        )
    }

    /// As [`Self::new`], for `graph`: the env's step graph, or a policy rollout's step
    /// ([`crate::rollout::rollout_graph`]), which chooses its own actions.
    pub fn with_graph<E: GraphEnv>(
        backend: &B,
        env: &E,
        episode: &EpisodeOptions,
        graph: cartfuse_fusion::graph::Graph,
        settings: (Strategy, StateLayout, &PlanOptions, bool),
        n: usize,
        ledger: Arc<LaunchLedger>,
    ) -> Result<Self, EnvError> {
        Self::with_graph_in_banks(backend, env, episode, graph, settings, (n, 1), ledger)
    }

    /// As [`Self::with_graph`], the `n` lanes cut into `banks` equal banks (a population:
    /// see the [module docs](self)). Banks need the draws in the step (no draw-ahead) and
    /// one launch a call.
    pub fn with_graph_in_banks<E: GraphEnv>(
        backend: &B,
        env: &E,
        episode: &EpisodeOptions,
        mut graph: cartfuse_fusion::graph::Graph,
        (strategy, layout, options, draw_ahead): (Strategy, StateLayout, &PlanOptions, bool),
        (n, banks): (usize, usize),
        ledger: Arc<LaunchLedger>,
    ) -> Result<Self, EnvError> {
        if banks > 1 && draw_ahead {
            return Err(EnvError::Unsupported(
                "envs in banks with their draws made ahead".into(),
            ));
        }
        let draw_ahead = match draw_ahead {
            true => {
                graph = step_reading_draws(&graph);
                Some(DrawAhead::new::<E>(backend, options, n, ledger.clone())?)
            }
            false => None,
        };
        let (strategy, pages) = match strategy {
            Strategy::FusedSteps(k) => {
                let per_launch = steps_per_launch(&graph, k, n, backend.max_buffer_bytes());
                let pages = (k / per_launch) as usize;
                if pages > 1 {
                    tracing::info!(
                        "fused-x{k} over {n} envs: {k} steps of outputs exceed the largest \
                         buffer ({} bytes), so a call runs {pages} launches of {per_launch} steps",
                        backend.max_buffer_bytes()
                    );
                }
                (Strategy::FusedSteps(per_launch), pages)
            }
            other => (other, 1),
        };
        if banks > 1 && pages > 1 {
            return Err(EnvError::Unsupported(format!(
                "{n} envs in {banks} banks under {strategy}: its steps' outputs exceed the \
                 largest buffer; run fewer steps a call"
            )));
        }
        let plan = Plan::build(&graph, strategy, options)?;
        let mut step =
            Executor::banked(backend.clone(), graph, plan, n, banks)?.with_ledger(ledger.clone());
        let (pages, arena) = match pages {
            1 => (None, gather_outputs(&mut step)?),
            pages => (Some(StepPages::new(backend, &step, pages)?), None),
        };
        let reset_graph = reset_graph(env, layout);
        let mut reset_plan = Plan::build(&reset_graph, Strategy::Fused, options)?;
        for kernel in &mut reset_plan.kernels {
            kernel.name = format!("{RESET_KERNEL_PREFIX}_{}", kernel.name);
        }
        let reset = Executor::banked(backend.clone(), reset_graph, reset_plan, n, banks)?
            .with_ledger(ledger.clone());
        let mut engine = Self {
            backend: backend.clone(),
            all_lanes: backend.upload_u32(&vec![1; n]),
            no_lanes: backend.upload_u32(&vec![0; n]),
            step,
            reset,
            layout,
            state_names: E::STATE,
            params: graph_params(env, episode),
            n,
            banks,
            keys: LaneKeys::new(n),
            default_bounds: env.reset_bounds(),
            reset_bounds: env.reset_bounds(),
            showing_reset: true,
            draw_ahead,
            pages,
            arena,
            ledger,
        };
        for (name, value) in &engine.params {
            for runner in [&mut engine.step, &mut engine.reset] {
                if runner.has_param(name) {
                    runner.set_param(name, *value)?;
                }
            }
        }
        engine.upload_keys()?;
        // Every input starts zeroed, so the first reset has state and counters to read.
        let zeros = vec![0.0; n];
        engine.set_state(&vec![zeros; E::STATE.len()])?;
        for counter in COUNTERS {
            let zeros = HostArray::U32(vec![0; n]);
            if engine.step.has_input(counter) {
                engine.step.set_input(counter, &zeros)?;
            }
            // With autoreset disabled the step has no reset counters: the reset graph
            // carries them alone.
            engine.reset.set_input(counter, &zeros)?;
        }
        Ok(engine)
    }

    /// The names of the carried state inputs in this layout.
    fn state_inputs(&self) -> Vec<&'static str> {
        match self.layout {
            StateLayout::StructOfArrays => self.state_names.to_vec(),
            StateLayout::Packed => vec![PACKED_STATE],
        }
    }

    /// The buffers of step output `name` after the last call, in step order: one, or one
    /// per launch when a `fused-xK` call ran over several ([`StepPages`]).
    pub fn output_pages(&self, name: &str) -> Vec<&B::Buffer> {
        match &self.pages {
            Some(pages) => pages.output(name),
            None => self.step.output(name).ok().into_iter().collect(),
        }
    }

    /// The step's executor (its params' layout and buffer: [`crate::rollout`]).
    pub(crate) fn step_executor(&self) -> &Executor<B> {
        &self.step
    }

    /// The step's executor, to place its params.
    pub(crate) fn step_executor_mut(&mut self) -> &mut Executor<B> {
        &mut self.step
    }

    /// Overwrites step input `name` (a policy's draw counter).
    pub fn set_step_input(&mut self, name: &str, values: &HostArray) -> Result<(), EnvError> {
        Ok(self.step.set_input(name, values)?)
    }

    /// Enqueues one call of a step that chooses its own actions (a policy rollout's).
    pub fn act(&mut self) -> Result<(), EnvError> {
        self.run_call(None)
    }

    fn run_call(&mut self, actions: Option<&B::Buffer>) -> Result<(), EnvError> {
        // Whatever happens below, the last step's outputs are no longer what they were.
        self.showing_reset = false;
        if let Some(pages) = &mut self.pages {
            return pages.run(&self.backend, &mut self.step, actions, &self.ledger);
        }
        if let Some(actions) = actions {
            self.step.bind_input("action", actions)?;
        }
        if let Some(draw_ahead) = &mut self.draw_ahead {
            draw_ahead.bind_next(&mut self.step)?;
        }
        self.step.run()?;
        Ok(())
    }
}

/// The step outputs a host step reads (obs, reward, flags and, in `SameStep`, final
/// observations) and a flag word gathered into one arena; `None` for a graph without them.
fn gather_outputs<B: Backend>(
    step: &mut Executor<B>,
) -> Result<Option<OutputArena<B::Buffer>>, EnvError> {
    let mut outputs = vec![
        StepBuffer::Obs,
        StepBuffer::Reward,
        StepBuffer::Terminated,
        StepBuffer::Truncated,
    ];
    if !outputs
        .iter()
        .all(|o| step.bound().output(o.name()).is_ok())
    {
        return Ok(None);
    }
    if step.bound().output(StepBuffer::FinalObs.name()).is_ok() {
        outputs.push(StepBuffer::FinalObs);
    }
    let names: Vec<&str> = outputs.iter().map(|o| o.name()).collect();
    let arena = step.gather_outputs(&names, &[1])?;
    step.backend()
        .write_u32(&arena.parts[outputs.len()], &[0])?;
    Ok(Some(OutputArena {
        arena,
        flag: Some(outputs.len()),
        outputs,
    }))
}

impl<B: Backend> StepEngine<B> for PlannedEngine<B> {
    fn steps_per_call(&self) -> u32 {
        let pages = self.pages.as_ref().map_or(1, StepPages::count);
        self.step.plan().steps_per_launch * pages as u32
    }

    fn set_ledger(&mut self, ledger: Arc<LaunchLedger>) {
        self.ledger = ledger.clone();
        self.step.set_ledger(ledger.clone());
        if let Some(draw_ahead) = &mut self.draw_ahead {
            draw_ahead.set_ledger(ledger.clone());
        }
        self.reset.set_ledger(ledger);
    }

    fn reset(&mut self, request: &ResetRequest<'_>) -> Result<(), EnvError> {
        if let Some(mask) = request.mask
            && mask.len() != self.n
        {
            return Err(EnvError::WrongCount {
                what: "reset_mask entries",
                per_env: 1,
                expected: self.n,
                found: mask.len(),
            });
        }
        self.set_reset_bounds(request.bounds)?;
        if let Some(draw_ahead) = &mut self.draw_ahead {
            let Seeding::Batch { seed, .. } = request.seeding else {
                return Err(EnvError::Unsupported(
                    "per-env seeds with the draws made ahead (they read one batch key)".into(),
                ));
            };
            draw_ahead.set_key(cartfuse_fusion::rng::seed_key(seed))?;
        }
        let restart = self.keys.seed(request.seeding, request.mask)?;
        self.upload_keys()?;
        self.run_reset(&restart, request.mask)
    }

    fn step(&mut self, actions: &B::Buffer) -> Result<(), EnvError> {
        self.run_call(Some(actions))
    }

    fn buffer(&self, which: StepBuffer) -> Option<&B::Buffer> {
        match self.pages(which)[..] {
            [one] => Some(one),
            _ => None,
        }
    }

    fn pages(&self, which: StepBuffer) -> Vec<&B::Buffer> {
        if which == StepBuffer::Obs && self.showing_reset {
            return self.reset.output("obs").ok().into_iter().collect();
        }
        self.output_pages(which.name())
    }

    fn output_arena(&self) -> Option<&OutputArena<B::Buffer>> {
        self.arena.as_ref().filter(|_| !self.showing_reset)
    }

    fn action_flag(&self) -> Option<ActionFlag<'_, B::Buffer>> {
        Some(ActionFlag {
            buffer: self.arena.as_ref()?.flag()?,
            raised_by_step: false,
        })
    }

    fn set_state(&mut self, columns: &[Vec<f32>]) -> Result<(), EnvError> {
        match self.layout {
            StateLayout::StructOfArrays => {
                for (name, column) in self.state_names.iter().zip(columns) {
                    self.step.set_input(name, &HostArray::F32(column.clone()))?;
                }
            }
            StateLayout::Packed => {
                let packed = (0..self.n)
                    .flat_map(|i| columns.iter().map(move |c| c[i]))
                    .collect();
                self.step.set_input(PACKED_STATE, &HostArray::F32(packed))?;
            }
        }
        for counter in ["elapsed", "needs_reset"] {
            if self.step.has_input(counter) {
                self.step
                    .set_input(counter, &HostArray::U32(vec![0; self.n]))?;
            }
        }
        if !self.step.has_input("resets") && self.reset.has_input("needs_reset") {
            // Autoreset disabled: the reset graph keeps the counters itself.
            self.reset
                .set_input("needs_reset", &HostArray::U32(vec![0; self.n]))?;
        }
        Ok(())
    }

    fn state_columns(&self) -> Result<Vec<Vec<f32>>, EnvError> {
        let f32s = |array: HostArray| match array {
            HostArray::F32(values) => values,
            HostArray::U32(_) => unreachable!("the state is f32"),
        };
        let k = self.state_names.len();
        Ok(match self.layout {
            StateLayout::StructOfArrays => self
                .state_names
                .iter()
                .map(|name| Ok(f32s(self.step.read_input(name)?)))
                .collect::<Result<_, EnvError>>()?,
            StateLayout::Packed => {
                let packed = f32s(self.step.read_input(PACKED_STATE)?);
                (0..k)
                    .map(|c| packed.chunks_exact(k).map(|row| row[c]).collect())
                    .collect()
            }
        })
    }

    fn elapsed(&self) -> Result<Vec<u32>, EnvError> {
        match self.step.read_input("elapsed")? {
            HostArray::U32(values) => Ok(values),
            HostArray::F32(_) => unreachable!("elapsed is u32"),
        }
    }
}

impl<B: Backend> PlannedEngine<B> {
    /// The backend the engine runs on.
    pub fn backend(&self) -> &B {
        &self.backend
    }
}
