//! From kernels to launches: one launch per kernel, or horizontal fusion by dependency level.

use super::kernels::{PlannedKernel, PlannedLaunch, writers};
use super::spec::Grouping;
use crate::graph::Graph;

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
        level[k] = writers(&kernels[..k], &kernel.reads)
            .map(|writer| level[writer] + 1)
            .max()
            .unwrap_or(0);
    }
    let depth = level.iter().max().map_or(0, |d| d + 1);
    let mut launches = Vec::new();
    for d in 0..depth {
        let (rows, lanes): (Vec<usize>, Vec<usize>) = (0..kernels.len())
            .filter(|k| level[*k] == d)
            .partition(|k| kernels[*k].rows_of.is_some());
        if !lanes.is_empty() {
            launches.push(PlannedLaunch::Kernels(lanes));
        }
        launches.extend(rows.into_iter().map(|k| PlannedLaunch::Kernels(vec![k])));
    }
    launches
}
