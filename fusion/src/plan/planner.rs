//! [`Plan::build`]: a graph planned by following its strategy's
//! [`StrategySpec`](super::spec::StrategySpec).

use super::error::PlanError;
use super::kernels::{PlannedKernel, PlannedLaunch, build_kernels};
use super::launches;
use super::options::PlanOptions;
use super::partition::Partitioner;
use super::planned::Plan;
use super::spec::{CarriedState, FusionRules};
use super::strategy::Strategy;
use super::xla;
use crate::graph::Graph;

impl Plan {
    /// Plans `graph` under `strategy`: partition by the spec's rules (falling back when a
    /// kernel would bind too many buffers), group kernels into launches, add the state
    /// copies XLA keeps, and check the stepping requirement.
    pub fn build(
        graph: &Graph,
        strategy: Strategy,
        options: &PlanOptions,
    ) -> Result<Plan, PlanError> {
        let spec = strategy.spec();
        let name = strategy.to_string();
        if spec.parse(&name).is_none() {
            return Err(Strategy::unknown(name)); // a parameter out of bounds
        }
        let Some(rules) = spec.rules else {
            return Err(Strategy::unknown(format!(
                "{}` needs explicit kernels: use `Plan::from_partition",
                spec.name
            )));
        };
        let mut kernels = partition(graph, spec.name, rules, options);
        if let Some(fallback) = spec.fallback
            && kernels.iter().any(|k| k.bindings() > options.max_bindings)
        {
            // One kernel would bind more buffers than the device allows: fall back (to
            // producer-consumer fusion, which gives each output its own kernel).
            let bindings = kernels.iter().map(|k| k.bindings()).max().unwrap_or(0);
            kernels = partition(graph, spec.name, fallback, options);
            for kernel in &mut kernels {
                kernel.why.push(format!(
                    "fused would bind {bindings} buffers in one kernel; the device allows {}",
                    options.max_bindings
                ));
            }
        }
        if let Some(kernel) = kernels.iter().find(|k| k.bindings() > options.max_bindings) {
            return Err(PlanError::TooManyBindings {
                kernel: kernel.name.clone(),
                bindings: kernel.bindings(),
                max: options.max_bindings,
            });
        }
        let mut launches = launches::group(graph, &kernels, spec.grouping);
        if spec.carried == CarriedState::CopiedBack {
            let copied = xla::copies::copied_carries(graph, &kernels, &launches);
            launches.extend((copied.into_iter()).map(|input| PlannedLaunch::CopyState { input }));
        }
        if strategy.param().is_some() {
            single_lanes_kernel(strategy, &kernels)?;
        }
        Ok(Plan {
            strategy,
            kernels,
            launches,
            steps_per_launch: strategy.param().unwrap_or(1),
        })
    }
}

/// The kernels of `graph` under the `rules` of the strategy called `name`.
fn partition(
    graph: &Graph,
    name: &'static str,
    rules: FusionRules,
    options: &PlanOptions,
) -> Vec<PlannedKernel> {
    let groups = match rules {
        FusionRules::Xla => xla::partition(graph, options),
        rules => Partitioner::new(graph, name, rules, options.duplication_budget).partition(),
    };
    build_kernels(graph, groups)
}

/// A stepped plan repeats one lanes kernel: several kernels, or rows, cannot be stepped.
fn single_lanes_kernel(strategy: Strategy, kernels: &[PlannedKernel]) -> Result<(), PlanError> {
    let reason = match kernels {
        [kernel] if kernel.rows_of.is_none() => return Ok(()),
        [_] => "row reductions are not stepped".into(),
        _ => (kernels.iter().flat_map(|k| k.why.clone()))
            .collect::<Vec<_>>()
            .join("; "),
    };
    Err(PlanError::NotSingleKernel {
        strategy: strategy.to_string(),
        kernels: kernels.len(),
        reason,
    })
}
