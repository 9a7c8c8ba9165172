//! [`Plan::build`]: a graph planned by following its strategy's [`StrategySpec`].

use super::error::PlanError;
use super::kernels::PlannedLaunch;
use super::kernels::{PlannedKernel, build_kernels};
use super::launches;
use super::options::PlanOptions;
use super::partition::{PartitionRules, Partitioner};
use super::planned::Plan;
use super::spec::{CarriedState, FusionRules, Steps, StrategySpec};
use super::strategy::Strategy;
use super::xla::{self, XlaRules};
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
        if let (Some(param), Some(k)) = (spec.param, strategy.param())
            && !(param.min..=param.max).contains(&k)
        {
            return Err(PlanError::UnknownStrategy(format!("{}{k}", spec.name)));
        }
        let Some(rules) = spec.rules else {
            return Err(PlanError::UnknownStrategy(format!(
                "{}` needs explicit kernels: use `Plan::from_partition",
                spec.name
            )));
        };
        let mut kernels = partition(graph, spec, rules, options)?;
        if let Some(fallback) = spec.fallback
            && kernels.iter().any(|k| k.bindings() > options.max_bindings)
        {
            // One kernel would bind more buffers than the device allows: fall back (to
            // producer-consumer fusion, which gives each output its own kernel).
            let bindings = kernels.iter().map(|k| k.bindings()).max().unwrap_or(0);
            kernels = partition(graph, spec, fallback, options)?;
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
        let steps_per_launch = match spec.steps {
            Steps::One => 1,
            Steps::Param => {
                single_lanes_kernel(strategy, &kernels)?;
                strategy
                    .param()
                    .expect("stepped strategies are parametrised")
            }
        };
        Ok(Plan {
            strategy,
            kernels,
            launches,
            steps_per_launch,
        })
    }
}

fn partition(
    graph: &Graph,
    spec: &StrategySpec,
    rules: FusionRules,
    options: &PlanOptions,
) -> Result<Vec<PlannedKernel>, PlanError> {
    if spec.xla_pipeline {
        let rules = XlaRules {
            opaque_random: options.opaque_random,
            concat_rule: options.concat_rule,
        };
        return build_kernels(graph, xla::partition(graph, rules));
    }
    let rules = PartitionRules::new(spec.name, rules, options);
    build_kernels(graph, Partitioner::new(graph, rules).partition())
}

/// A stepped plan repeats one lanes kernel: several kernels, or rows, cannot be stepped.
fn single_lanes_kernel(strategy: Strategy, kernels: &[PlannedKernel]) -> Result<(), PlanError> {
    if kernels.len() != 1 {
        return Err(PlanError::NotSingleKernel {
            strategy: strategy.to_string(),
            kernels: kernels.len(),
            reason: kernels
                .iter()
                .flat_map(|k| k.why.clone())
                .collect::<Vec<_>>()
                .join("; "),
        });
    }
    if kernels[0].rows_of.is_some() {
        return Err(PlanError::NotSingleKernel {
            strategy: strategy.to_string(),
            kernels: 1,
            reason: "row reductions are not stepped".into(),
        });
    }
    Ok(())
}
