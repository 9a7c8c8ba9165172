//! The study's "random numbers precomputed" program: the step graph reads its reset draws
//! as inputs ([`random_as_inputs`]), and one launch of the draw-ahead graph fills them for
//! several steps at once. Step `s` of lane `i` reads Threefry blocks `(i, B s + j)`, so
//! every draw is fresh; resets then differ from the other plans' (same distribution).

use std::sync::Arc;

use cartfuse_fusion::exec::LaunchLedger;
use cartfuse_fusion::exec::{Backend, Executor};
use cartfuse_fusion::graph::Scalar;
use cartfuse_fusion::graph::transform::random_as_inputs;
use cartfuse_fusion::graph::{DType, Graph, GraphBuilder};
use cartfuse_fusion::plan::{Plan, PlanOptions, Strategy};

use crate::environment::GraphEnv;
use crate::error::EnvError;
use crate::graph::reset_blocks;

/// Prefix of the step graph's draw inputs.
const DRAW: &str = "draw";

/// Steps one draw-ahead launch fills at most (the study drew a whole rollout ahead; ten
/// steps already make the draw launch a tenth of a launch per step).
pub const MAX_STEPS_AHEAD: usize = 10;

/// The draw-ahead runner and where the step is in its buffers.
pub struct DrawAhead<B: Backend> {
    runner: Executor<B>,
    draws: usize,
    steps: usize,
    next: usize,
    drawn_steps: u32,
}

/// Steps one draw-ahead launch fills for a step of `draws` draws: [`MAX_STEPS_AHEAD`], or
/// fewer when a kernel cannot bind that many outputs under `options`.
pub fn steps_ahead(options: &PlanOptions, draws: usize) -> usize {
    (options.max_bindings / draws.max(1)).clamp(1, MAX_STEPS_AHEAD)
}

/// `step` with its random ops as inputs.
pub fn step_reading_draws(step: &Graph) -> Graph {
    random_as_inputs(step, DRAW)
        .unwrap_or_else(|error| panic!("a step graph with its draws as inputs: {error}"))
}

impl<B: Backend> DrawAhead<B> {
    /// A draw-ahead runner for `E`'s reset draws over `n` lanes, as many steps ahead as
    /// one fused kernel can write.
    pub fn new<E: GraphEnv>(
        backend: &B,
        options: &PlanOptions,
        n: usize,
        ledger: Arc<LaunchLedger>,
    ) -> Result<Self, EnvError> {
        let draws = E::RESET_DRAWS;
        let steps = steps_ahead(options, draws);
        let graph = draw_graph::<E>(steps);
        let plan = Plan::build(&graph, Strategy::Fused, options)?;
        Ok(Self {
            runner: Executor::new(backend.clone(), graph, plan, n)?.with_ledger(ledger),
            draws,
            steps,
            next: steps,
            drawn_steps: 0,
        })
    }

    /// Records launches in `ledger` from now on.
    pub fn set_ledger(&mut self, ledger: Arc<LaunchLedger>) {
        self.runner.set_ledger(ledger);
    }

    /// Sets the seed's key.
    pub fn set_key(&mut self, key: [u32; 2]) -> Result<(), EnvError> {
        self.runner.set_param("key0", Scalar::U32(key[0]))?;
        self.runner.set_param("key1", Scalar::U32(key[1]))?;
        Ok(())
    }

    /// Binds the next step's draws into `step`, drawing the next steps first when the
    /// buffers are used up.
    pub fn bind_next(&mut self, step: &mut Executor<B>) -> Result<(), EnvError> {
        if self.next == self.steps {
            self.runner
                .set_param("first_step", Scalar::U32(self.drawn_steps))?;
            self.runner.run()?;
            self.drawn_steps = self.drawn_steps.wrapping_add(self.steps as u32);
            self.next = 0;
        }
        for d in 0..self.draws {
            let buffer = self.runner.output(&output_name(d, self.next))?.clone();
            step.bind_input(&format!("{DRAW}{d}"), &buffer)?;
        }
        self.next += 1;
        Ok(())
    }
}

fn output_name(draw: usize, step: usize) -> String {
    format!("{DRAW}{draw}_step{step}")
}

/// Draw `d` of step `first_step + t` for every lane, as outputs `draw{d}_step{t}`.
fn draw_graph<E: GraphEnv>(steps: usize) -> Graph {
    let g = GraphBuilder::new();
    let key = [g.param("key0", DType::U32), g.param("key1", DType::U32)];
    let first = g.param("first_step", DType::U32);
    let lane = g.lane_index();
    let blocks = reset_blocks::<E>();
    for t in 0..steps {
        let step = first + g.u32(t as u32);
        for d in 0..E::RESET_DRAWS {
            let counter = step * g.u32(blocks) + g.u32((d / 2) as u32);
            let draw = g.random_uniform(key, [lane, counter], (d % 2) as u8);
            g.output(&output_name(d, t), draw);
        }
    }
    g.build()
        .unwrap_or_else(|error| panic!("the draw-ahead graph is ill-typed: {error}"))
}
