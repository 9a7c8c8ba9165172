//! The planned engine: the CartPole graph of [`crate::graph`] run under a fusion plan by
//! the fusion crate's [`PlanExecutor`].
//!
//! Resets are drawn on the host from the same Threefry stream as the device (bit-identical
//! by construction, see [`crate::reference::reset_state`]) and uploaded: they happen once
//! per `reset` call, never inside the stepping loop, where the graph draws its own.

use std::sync::Arc;

use cartfuse_fusion::buffers::upload;
use cartfuse_fusion::exec::PlanExecutor;
use cartfuse_fusion::interpret::HostArray;
use cartfuse_fusion::launch::LaunchLedger;
use cartfuse_fusion::plan::{Plan, PlanOptions, Strategy};
use cubecl::prelude::*;
use cubecl::server::Handle;

use crate::error::EnvError;
use crate::graph::{PACKED_STATE, STATE_INPUTS, StateLayout, cartpole_step_graph, graph_params};
use crate::params::CartPoleConfig;
use crate::reference::reset_state;

/// The state layout a strategy runs on: packed where its spec says so (`xla-default`
/// replays the study's baseline, whose state is one packed array), else structure of arrays.
pub fn layout_for(strategy: Strategy) -> StateLayout {
    if strategy.spec().packed_state {
        StateLayout::Packed
    } else {
        StateLayout::StructOfArrays
    }
}

pub(crate) struct PlannedEngine<R: Runtime> {
    exec: PlanExecutor<R>,
    layout: StateLayout,
    config: CartPoleConfig,
    n: usize,
    reset_obs: Handle,
    showing_reset: bool,
}

impl<R: Runtime> PlannedEngine<R> {
    pub fn new(
        client: ComputeClient<R>,
        n: usize,
        config: &CartPoleConfig,
        (strategy, layout, options): (Strategy, StateLayout, &PlanOptions),
        ledger: Arc<LaunchLedger>,
    ) -> Result<Self, EnvError> {
        let graph = cartpole_step_graph(config.autoreset, layout);
        let plan = Plan::build(&graph, strategy, options)?;
        let mut exec = PlanExecutor::new(client, graph, plan, n)?.with_ledger(ledger);
        for (name, value) in graph_params(config, 0) {
            if exec.graph().params().iter().any(|(_, p)| *p == name) {
                exec.set_param(name, value)?;
            }
        }
        let reset_obs = exec.client().empty(16 * n);
        Ok(Self {
            exec,
            layout,
            config: *config,
            n,
            reset_obs,
            showing_reset: true,
        })
    }

    pub fn steps_per_call(&self) -> u32 {
        self.exec.plan().steps_per_launch
    }

    pub fn set_ledger(&mut self, ledger: Arc<LaunchLedger>) {
        self.exec.set_ledger(ledger);
    }

    fn has_input(&self, name: &str) -> bool {
        self.exec.graph().input_id(name).is_some()
    }

    fn set_seed(&mut self, seed: u64) -> Result<(), EnvError> {
        for (name, value) in graph_params(&self.config, seed) {
            if name.starts_with("key") && self.exec.graph().params().iter().any(|(_, p)| *p == name)
            {
                self.exec.set_param(name, value)?;
            }
        }
        Ok(())
    }

    fn upload_u32(&mut self, name: &str, values: Vec<u32>) -> Result<(), EnvError> {
        if self.has_input(name) {
            self.exec.set_input(name, &HostArray::U32(values))?;
        }
        Ok(())
    }

    fn upload_state(&mut self, columns: &[Vec<f32>; 4]) -> Result<(), EnvError> {
        match self.layout {
            StateLayout::StructOfArrays => {
                for (name, column) in STATE_INPUTS.iter().zip(columns) {
                    self.exec.set_input(name, &HostArray::F32(column.clone()))?;
                }
            }
            StateLayout::Packed => {
                let packed = (0..self.n)
                    .flat_map(|i| columns.iter().map(move |c| c[i]))
                    .collect();
                self.exec.set_input(PACKED_STATE, &HostArray::F32(packed))?;
            }
        }
        Ok(())
    }

    /// Resets every lane from `seed`: reset number 0 on `restart`, else each lane's next.
    pub fn reset(&mut self, seed: u64, restart: bool) -> Result<(), EnvError> {
        self.set_seed(seed)?;
        let counts = if restart || !self.has_input("resets") {
            vec![0u32; self.n]
        } else {
            match self.exec.read_input("resets")? {
                HostArray::U32(counts) => counts,
                HostArray::F32(_) => unreachable!("resets is a u32 input"),
            }
        };
        let states: Vec<[f32; 4]> = (0..self.n)
            .map(|i| reset_state(seed, i as u32, counts[i], &self.config.params).observation())
            .collect();
        let columns = [0, 1, 2, 3].map(|k| states.iter().map(|s| s[k]).collect::<Vec<f32>>());
        self.upload_state(&columns)?;
        self.upload_u32("resets", counts.iter().map(|c| c + 1).collect())?;
        self.upload_u32("elapsed", vec![0; self.n])?;
        self.upload_u32("needs_reset", vec![0; self.n])?;
        let flat: Vec<f32> = states.iter().flatten().copied().collect();
        self.reset_obs = upload(self.exec.client(), &flat);
        self.showing_reset = true;
        Ok(())
    }

    pub fn step(&mut self, actions: &Handle) -> Result<(), EnvError> {
        self.exec.bind_input("action", actions.clone())?;
        self.exec.run()?;
        self.showing_reset = false;
        Ok(())
    }

    pub fn obs(&self) -> &Handle {
        if self.showing_reset {
            &self.reset_obs
        } else {
            self.exec
                .output_handle("obs")
                .expect("the graph has an obs output")
        }
    }

    pub fn output(&self, name: &str) -> &Handle {
        self.exec
            .output_handle(name)
            .expect("the CartPole graph has this output")
    }

    pub fn final_obs(&self) -> Option<&Handle> {
        self.exec.output_handle("final_obs").ok()
    }

    pub fn set_state(&mut self, columns: [Vec<f32>; 4]) -> Result<(), EnvError> {
        self.upload_state(&columns)?;
        self.upload_u32("elapsed", vec![0; self.n])?;
        self.upload_u32("needs_reset", vec![0; self.n])
    }

    pub fn state_columns(&self) -> Result<[Vec<f32>; 4], EnvError> {
        let f32s = |array: HostArray| match array {
            HostArray::F32(values) => values,
            HostArray::U32(_) => unreachable!("state is f32"),
        };
        Ok(match self.layout {
            StateLayout::StructOfArrays => {
                let mut columns: [Vec<f32>; 4] = Default::default();
                for (column, name) in columns.iter_mut().zip(STATE_INPUTS) {
                    *column = f32s(self.exec.read_input(name)?);
                }
                columns
            }
            StateLayout::Packed => {
                let packed = f32s(self.exec.read_input(PACKED_STATE)?);
                [0, 1, 2, 3].map(|k| packed.chunks_exact(4).map(|row| row[k]).collect())
            }
        })
    }

    pub fn elapsed(&self) -> Result<Vec<u32>, EnvError> {
        match self.exec.read_input("elapsed")? {
            HostArray::U32(values) => Ok(values),
            HostArray::F32(_) => unreachable!("elapsed is u32"),
        }
    }
}
