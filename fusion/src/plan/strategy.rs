//! The named strategies and their options.

use std::fmt;
use std::str::FromStr;

use super::kernels::{build_kernels, horizontal_launches};
use super::partition::{PartitionRules, Partitioner};
use super::{Plan, PlanError, PlannedLaunch};
use crate::graph::Graph;

/// How a graph is partitioned into kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// One kernel per op; every intermediate goes through memory.
    Eager,
    /// Producer-to-consumer fusion plus fusion merging, with XLA-style rules.
    Vertical,
    /// The independent kernels of `Vertical` issued together, one launch per dependency level.
    Horizontal,
    /// Vertical plus multi-output (sibling) fusion: the fewest kernels reductions allow.
    Fused,
    /// `Fused` repeated for K steps in one launch, loop-carried state in registers.
    FusedSteps(u32),
    /// The boundaries the XLA study found in its baseline: opaque random ops, a multi-user
    /// pack not fused into its users, and loop-carried state copied between steps.
    XlaDefault,
    /// Kernels given explicitly by the caller ([`Plan::from_partition`]).
    Partition,
}

impl Strategy {
    /// Every strategy with a fixed name, and `fused-x10`.
    pub const ALL: [Strategy; 6] = [
        Strategy::Eager,
        Strategy::Vertical,
        Strategy::Horizontal,
        Strategy::Fused,
        Strategy::FusedSteps(10),
        Strategy::XlaDefault,
    ];
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Strategy::Eager => f.write_str("eager"),
            Strategy::Vertical => f.write_str("vertical"),
            Strategy::Horizontal => f.write_str("horizontal"),
            Strategy::Fused => f.write_str("fused"),
            Strategy::FusedSteps(k) => write!(f, "fused-x{k}"),
            Strategy::XlaDefault => f.write_str("xla-default"),
            Strategy::Partition => f.write_str("partition"),
        }
    }
}

impl FromStr for Strategy {
    type Err = PlanError;

    fn from_str(name: &str) -> Result<Self, PlanError> {
        match name {
            "eager" => Ok(Strategy::Eager),
            "vertical" => Ok(Strategy::Vertical),
            "horizontal" => Ok(Strategy::Horizontal),
            "fused" => Ok(Strategy::Fused),
            "xla-default" => Ok(Strategy::XlaDefault),
            other => other
                .strip_prefix("fused-x")
                .and_then(|k| k.parse::<u32>().ok())
                .filter(|k| *k >= 1)
                .map(Strategy::FusedSteps)
                .ok_or_else(|| PlanError::UnknownStrategy(other.into())),
        }
    }
}

/// Knobs of the planner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanOptions {
    /// How many op instances vertical fusion may duplicate in total (XLA duplicates cheap
    /// producers into several consumers rather than materialize them).
    pub duplication_budget: usize,
    /// The most buffers one kernel may bind (the device's storage-buffer limit, minus the
    /// two params buffers).
    pub max_bindings: usize,
    /// `xla-default` only: random ops are opaque (XLA's baseline). Off replays the study's
    /// "random numbers fused" step of the ablation.
    pub opaque_random: bool,
}

impl PlanOptions {
    /// Buffers a generated kernel binds besides its plan slots: the two params buffers.
    pub const RESERVED_BINDINGS: usize = 2;

    /// Default options with the binding limit of `client`'s device.
    pub fn for_device<R: cubecl::Runtime>(client: &cubecl::prelude::ComputeClient<R>) -> Self {
        // cubecl's `max_bindings` already leaves room for the runtime's own metadata buffer.
        let device_limit = client.properties().hardware.max_bindings as usize;
        Self {
            max_bindings: device_limit.saturating_sub(Self::RESERVED_BINDINGS),
            ..Self::default()
        }
    }
}

impl Default for PlanOptions {
    fn default() -> Self {
        Self {
            duplication_budget: 16,
            max_bindings: 64,
            opaque_random: true,
        }
    }
}

pub(super) fn build(
    graph: &Graph,
    strategy: Strategy,
    options: &PlanOptions,
) -> Result<Plan, PlanError> {
    let rules = match strategy {
        Strategy::Eager => PartitionRules::eager(),
        Strategy::Vertical | Strategy::Horizontal => PartitionRules::vertical(options),
        Strategy::Fused | Strategy::FusedSteps(_) => PartitionRules::fused(options),
        Strategy::XlaDefault => PartitionRules::xla_default(options),
        Strategy::Partition => {
            return Err(PlanError::UnknownStrategy(
                "partition` needs explicit kernels: use `Plan::from_partition".into(),
            ));
        }
    };
    let groups = Partitioner::new(graph, rules).partition();
    let mut kernels = build_kernels(graph, groups)?;
    let too_wide = |kernels: &[super::PlannedKernel]| {
        kernels.iter().any(|k| k.bindings() > options.max_bindings)
    };
    if matches!(strategy, Strategy::Fused | Strategy::FusedSteps(_)) && too_wide(&kernels) {
        // One kernel would bind more buffers than the device allows: fall back to
        // producer-consumer fusion, which gives each output its own kernel.
        let bindings = kernels.iter().map(|k| k.bindings()).max().unwrap_or(0);
        kernels = build_kernels(
            graph,
            Partitioner::new(graph, PartitionRules::vertical(options)).partition(),
        )?;
        for kernel in &mut kernels {
            kernel.why.push(format!(
                "fused would bind {bindings} buffers in one kernel; the device allows {}",
                options.max_bindings
            ));
        }
    }
    for kernel in &kernels {
        let bindings = kernel.bindings();
        if bindings > options.max_bindings {
            return Err(PlanError::TooManyBindings {
                kernel: kernel.name.clone(),
                bindings,
                max: options.max_bindings,
            });
        }
    }
    let mut launches: Vec<PlannedLaunch> = match strategy {
        Strategy::Horizontal => horizontal_launches(&kernels),
        _ => (0..kernels.len())
            .map(|k| PlannedLaunch::Kernels(vec![k]))
            .collect(),
    };
    if strategy == Strategy::XlaDefault {
        launches.extend(
            graph
                .carries()
                .iter()
                .map(|c| PlannedLaunch::CopyState { input: c.input }),
        );
    }
    let steps_per_launch = match strategy {
        Strategy::FusedSteps(k) => {
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
            k
        }
        _ => 1,
    };
    Ok(Plan {
        strategy,
        kernels,
        launches,
        steps_per_launch,
    })
}
