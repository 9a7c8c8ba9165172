//! From kernels to launches: one launch per kernel, or horizontal fusion by dependency level.

use super::kernels::PlannedKernel;
use super::spec::Grouping;
use crate::graph::{Graph, NodeId};

/// One launch: one kernel, or several kernels on disjoint cube ranges (horizontal fusion),
/// or a copy of loop-carried state (the `xla-default` while-loop copy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannedLaunch {
    /// Kernels issued together, by index into [`Plan::kernels`](super::Plan::kernels).
    Kernels(Vec<usize>),
    /// Copies the next value of carried `input` into the input's own buffer.
    CopyState {
        /// The carried input node.
        input: NodeId,
    },
}

impl PlannedLaunch {
    /// The kernels this launch runs, by index into [`Plan::kernels`](super::Plan::kernels)
    /// (none for a state copy).
    pub fn kernels(&self) -> &[usize] {
        match self {
            PlannedLaunch::Kernels(kernels) => kernels,
            PlannedLaunch::CopyState { .. } => &[],
        }
    }
}

/// The launches of `kernels` under `grouping`.
pub fn group(graph: &Graph, kernels: &[PlannedKernel], grouping: Grouping) -> Vec<PlannedLaunch> {
    match grouping {
        Grouping::HorizontalLoopFusion => super::xla::horizontal::launches(graph, kernels),
        Grouping::EachKernel => (0..kernels.len())
            .map(|k| PlannedLaunch::Kernels(vec![k]))
            .collect(),
        Grouping::ByLevel => by_level(kernels),
    }
}

/// Horizontal fusion: kernels at the same dependency depth share one launch (rows kernels,
/// whose thread counts differ, launch alone).
fn by_level(kernels: &[PlannedKernel]) -> Vec<PlannedLaunch> {
    let mut level = vec![0usize; kernels.len()];
    for (k, kernel) in kernels.iter().enumerate() {
        level[k] = kernel
            .reads
            .iter()
            .filter_map(|slot| {
                kernels[..k]
                    .iter()
                    .position(|other| other.writes.iter().any(|(s, _)| s == slot))
            })
            .map(|writer| level[writer] + 1)
            .max()
            .unwrap_or(0);
    }
    let depth = level.iter().max().map_or(0, |d| d + 1);
    let mut launches = Vec::new();
    for d in 0..depth {
        let at_level: Vec<usize> = (0..kernels.len()).filter(|k| level[*k] == d).collect();
        let lanes: Vec<usize> = at_level
            .iter()
            .copied()
            .filter(|k| kernels[*k].rows_of.is_none())
            .collect();
        if !lanes.is_empty() {
            launches.push(PlannedLaunch::Kernels(lanes));
        }
        for k in at_level
            .into_iter()
            .filter(|k| kernels[*k].rows_of.is_some())
        {
            launches.push(PlannedLaunch::Kernels(vec![k]));
        }
    }
    launches
}
