//! A plan lowered once for a backend's [`Target`]: the executor lowers every plan here, and
//! a backend only compiles and runs what it is handed ([`Backend::prepare`]).
//!
//! A target is a description, decided by the backend once: how a launch's parts run
//! relative to each other, whether dense layers become loops over the params buffer, how
//! many loop iterations and storage bindings a thread or launch may have, whether a launch
//! may bind one buffer twice, whether carries updated in place are read from their output's
//! binding, and which launches may update carries in place at all. [`Lowered::for_target`]
//! applies it: lower ([`crate::lir::lower`]), compact ([`crate::lir::compact`]), check the
//! loop budget ([`crate::lir::loop_budget`]), choose the carries updated in place
//! ([`crate::lir::in_place`]), rewrite their reads ([`crate::lir::state_reads`]) and check
//! the bindings.
//!
//! [`Backend::prepare`]: super::Backend::prepare

use std::sync::Arc;

use super::{BoundPlan, ExecError};
use crate::graph::NodeId;
use crate::lir::compact::compact;
use crate::lir::in_place::{PartOrder, carries_in_place};
use crate::lir::loop_budget::{launch_iterations, steps_within};
use crate::lir::lower::lower_plan;
use crate::lir::program::{LaunchProgram, LoweredLaunch};
use crate::lir::state_reads::{binds_once, read_state_from_outputs};
use crate::plan::PlanOptions;

/// Whether a lowered launch may update the carries it reads and writes in place.
pub type InPlaceRule = Arc<dyn Fn(&LoweredLaunch) -> bool + Send + Sync>;

/// What a backend's device asks of lowering (see the [module docs](self)).
#[derive(Clone)]
pub struct Target {
    /// How a launch's parts run: one after another (the CPU), or at the same time in
    /// different threads (device kernels).
    pub part_order: PartOrder,
    /// Dense layers run as loops over the params buffer ([`crate::lir::compact`]).
    pub compact: bool,
    /// The loop iterations a thread runs correctly (Mesa's lavapipe: 65,535), if limited.
    pub loop_limit: Option<u64>,
    /// The storage buffers a launch may bind, params included, if limited.
    pub max_bindings: Option<usize>,
    /// A launch may bind one buffer twice (a carry updated in place, read and written):
    /// wgpu binds every storage buffer read-write; CUDA declares read-only buffers
    /// `const __restrict__`, so there such a carry stays double-buffered.
    pub aliasing: bool,
    /// A carry updated in place is read from its output's binding (device kernels bind it
    /// once); otherwise launches keep reading the state's slot.
    pub state_from_outputs: bool,
    /// Which launches may update a carry in place.
    pub in_place_launch: InPlaceRule,
}

/// A plan's launches lowered for one target: what [`Backend::prepare`](super::Backend)
/// compiles.
#[derive(Debug, Clone)]
pub struct Lowered {
    /// Every kernel launch of the plan, in order, as bound (reads rewritten where the target
    /// asks).
    pub launches: Vec<LoweredLaunch>,
    /// Whether each launch may run several lanes a thread (decided before reads were
    /// rewritten).
    pub vectorizable: Vec<bool>,
    /// Carried inputs the launches update in place (their state and next value share a
    /// buffer), a subset of what [`BoundPlan::may_update_in_place`] allows.
    pub in_place: Vec<NodeId>,
}

impl Lowered {
    /// Lowers the plan of `bound` for `target`; refuses a launch whose threads would run
    /// more loop iterations than the target's limit, or that binds more buffers than it has.
    pub fn for_target(bound: &BoundPlan, target: &Target) -> Result<Self, ExecError> {
        let (graph, plan) = (bound.graph(), bound.plan());
        let mut lowered = lower_plan(graph, plan);
        if target.compact {
            for launch in &mut lowered {
                let parts = launch.program.parts.iter().map(compact).collect();
                launch.program = LaunchProgram::new(parts);
            }
        }
        if let Some(limit) = target.loop_limit {
            for launch in &lowered {
                let iterations = launch_iterations(&launch.program);
                if iterations > limit {
                    return Err(ExecError::TooManyLoopIterations {
                        kernel: launch.name.clone(),
                        iterations,
                        limit,
                        most_steps: steps_within(&launch.program, limit),
                    });
                }
            }
        }
        let may_update = |p: usize| (target.in_place_launch)(&lowered[p]);
        let in_place: Vec<NodeId> = carries_in_place(
            graph,
            &lowered,
            plan.steps_per_launch,
            target.part_order,
            may_update,
        )
        .into_iter()
        .map(|(input, _)| input.node())
        .filter(|&input| bound.may_update_in_place(input))
        .filter(|&input| target.aliasing || lowered.iter().all(|l| binds_once(l, input)))
        .collect();
        let vectorizable = lowered.iter().map(|l| l.vectorizable).collect();
        if target.state_from_outputs {
            lowered = (lowered.iter())
                .map(|launch| read_state_from_outputs(launch, &in_place))
                .collect();
        }
        if let Some(limit) = target.max_bindings {
            for launch in &lowered {
                let bindings = binding_count(launch);
                if bindings > limit {
                    return Err(ExecError::TooManyBindings {
                        launch: launch.name.clone(),
                        bindings,
                        limit,
                    });
                }
            }
        }
        Ok(Self {
            launches: lowered,
            vectorizable,
            in_place,
        })
    }
}

/// Storage buffers `launch` binds, the params buffers included (cubecl's `max_bindings`
/// already leaves room for its metadata buffer).
pub fn binding_count(launch: &LoweredLaunch) -> usize {
    let b = &launch.bindings;
    b.in_f.len() + b.in_u.len() + b.out_f.len() + b.out_u.len() + PlanOptions::RESERVED_BINDINGS
}
