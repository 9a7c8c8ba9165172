//! A `fused-xK` call whose K steps of outputs exceed the device's largest buffer, paged
//! over several launches.
//!
//! The step then runs as `fused-xK'` with K' the largest divisor of K whose outputs fit,
//! K / K' launches per call. Each page owns its outputs (K' steps of each, step-major): the
//! runner writes into a page's buffers because they are swapped in for the launch, so no
//! output is copied. Each page reads its K' steps of actions from a copy of its range of
//! the call's actions (one [`Backend::copy_range`] launch per page). The cost of paging is
//! then `K / K' - 1` more step launches and `K / K'` copies of `4 K' n` bytes per call, all
//! in the ledger. State stays carried in the runner between pages, and the draws depend
//! on each lane's reset count, not on the launch, so a paged call gives the same bits as
//! one launch would.

use std::sync::Arc;

use cartfuse_fusion::exec::LaunchLedger;
use cartfuse_fusion::exec::{Backend, Executor};
use cartfuse_fusion::graph::{Graph, Shape};

use crate::error::EnvError;

/// The outputs and actions of each page of a call.
pub struct StepPages<B: Backend> {
    /// Per page: every output of the step graph, by name.
    outputs: Vec<Vec<(String, B::Buffer)>>,
    /// Per page: its range of the call's actions.
    actions: Vec<B::Buffer>,
}

/// Steps one launch of a `fused-x{steps}` call over `n` lanes of `graph` may run: the
/// largest divisor of `steps` for which the widest value, one row per lane and step, fits
/// `max_bytes` (1 when even one step does not).
pub fn steps_per_launch(graph: &Graph, steps: u32, n: usize, max_bytes: u64) -> u32 {
    let widest = graph
        .ids()
        .map(|id| match graph.node(id).shape {
            Shape::Lanes => 1,
            Shape::Packed(k) => u64::from(k),
        })
        .max()
        .unwrap_or(1);
    (1..=steps)
        .rev()
        .filter(|k| steps.is_multiple_of(*k))
        .find(|k| u64::from(*k) * n as u64 * widest * 4 <= max_bytes)
        .unwrap_or(1)
}

impl<B: Backend> StepPages<B> {
    /// Buffers for `pages` pages of `runner`'s outputs and actions.
    pub fn new(backend: &B, runner: &Executor<B>, pages: usize) -> Result<Self, EnvError> {
        let names: Vec<String> = runner
            .graph()
            .outputs()
            .iter()
            .map(|o| o.name.clone())
            .collect();
        let zeros = |len: usize| backend.upload_u32(&vec![0; len]);
        // One action per env and step of a launch (not read from the runner: a device
        // runner has no action buffer until one is bound).
        let actions_len = runner.plan().steps_per_launch as usize * runner.lanes();
        let mut outputs = Vec::with_capacity(pages);
        for _ in 0..pages {
            let page = names
                .iter()
                .map(|name| {
                    let len = backend.buffer_len(runner.output(name)?);
                    Ok((name.clone(), zeros(len)))
                })
                .collect::<Result<Vec<_>, EnvError>>()?;
            outputs.push(page);
        }
        Ok(Self {
            outputs,
            actions: (0..pages).map(|_| zeros(actions_len)).collect(),
        })
    }

    /// Launches per call.
    pub fn count(&self) -> usize {
        self.actions.len()
    }

    /// Runs every page of one call with `actions` (all pages' steps, step-major; `None`
    /// for a step that chooses its own actions).
    pub fn run(
        &mut self,
        backend: &B,
        runner: &mut Executor<B>,
        actions: Option<&B::Buffer>,
        ledger: &Arc<LaunchLedger>,
    ) -> Result<(), EnvError> {
        for (page, (outputs, page_actions)) in
            self.outputs.iter_mut().zip(&self.actions).enumerate()
        {
            if let Some(actions) = actions {
                let len = backend.buffer_len(page_actions);
                backend.copy_range(actions, page * len, page_actions, ledger)?;
                runner.bind_input("action", page_actions)?;
            }
            for (name, buffer) in outputs.iter_mut() {
                runner.swap_output(name, buffer)?;
            }
            let ran = runner.run();
            // Swapped back even after a failed run, so each page keeps its own buffers.
            for (name, buffer) in outputs.iter_mut() {
                runner.swap_output(name, buffer)?;
            }
            ran?;
        }
        Ok(())
    }

    /// Output `name` of every page, in step order.
    pub fn output(&self, name: &str) -> Vec<&B::Buffer> {
        self.outputs
            .iter()
            .filter_map(|page| page.iter().find(|(n, _)| n == name).map(|(_, b)| b))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cartfuse_fusion::graph::{DType, GraphBuilder};

    #[test]
    fn steps_per_launch_is_the_largest_divisor_that_fits() {
        let g = GraphBuilder::new();
        let x = g.input("x", DType::F32);
        g.output("obs", g.pack(&[x, x * 2.0, x * 3.0, x * 4.0]));
        let graph = g.build().unwrap();
        // 16 bytes a lane and step: 10 steps of 1000 lanes need 160,000 bytes.
        assert_eq!(steps_per_launch(&graph, 10, 1000, 160_000), 10);
        assert_eq!(steps_per_launch(&graph, 10, 1000, 159_999), 5);
        assert_eq!(steps_per_launch(&graph, 10, 1000, 80_000), 5);
        assert_eq!(steps_per_launch(&graph, 10, 1000, 79_999), 2);
        assert_eq!(steps_per_launch(&graph, 7, 1000, 100_000), 1);
        assert_eq!(steps_per_launch(&graph, 10, 1000, 1), 1);
    }
}
