//! Where plans run: one trait over every runtime, so an environment, a vector env and a test
//! suite are written once and run on each.
//!
//! A [`Backend`] owns buffers ([`Backend::Buffer`]: a CubeCL handle, or host memory for the
//! native CPU runtime) and builds [`PlanRunner`]s: the object that runs one plan of one graph
//! over `n` lanes, records each pass in the launch ledger, and keeps loop-carried state.
//!
//! - [`cube`]: every CubeCL runtime (wgpu, CUDA) through [`Cube`].
//! - [`cpu`]: the native CPU runtime through [`Cpu`].

pub mod cpu;
pub mod cube;

use std::sync::Arc;

use crate::buffers::ReadError;
use crate::exec::ExecError;
use crate::graph::Graph;
use crate::interpret::BindError;
use crate::interpret::{HostArray, Scalar};
use crate::launch::LaunchLedger;
use crate::plan::{Plan, PlanOptions};

pub use cpu::Cpu;
pub use cube::Cube;

/// A runtime that holds buffers and runs plans.
pub trait Backend: Clone + Send + 'static {
    /// A buffer of 32-bit elements on this backend.
    type Buffer: Clone + Send;
    /// Runs one plan of one graph.
    type Runner: PlanRunner<Self>;

    /// Short runtime name (`wgpu`, `cuda`, `cpu`).
    fn runtime_name(&self) -> &'static str;
    /// The device, as a person would name it (adapter, driver; CPU model and SIMD level).
    fn description(&self) -> String;
    /// The largest single buffer the backend can bind, in bytes.
    fn max_buffer_bytes(&self) -> u64;
    /// This backend reporting `bytes` as its largest buffer (never more than the device
    /// allows), as a smaller device would: vector envs then refuse or split what does not
    /// fit (a `fused-xK` call's steps over several launches). Tests use it to reach those
    /// paths on any runtime at small sizes.
    fn with_max_buffer_bytes(self, bytes: u64) -> Self;
    /// Planner limits of this backend (bindings per kernel).
    fn plan_options(&self) -> PlanOptions;

    /// A new buffer holding `values`.
    fn upload_f32(&self, values: &[f32]) -> Self::Buffer;
    /// A new buffer holding `values`.
    fn upload_u32(&self, values: &[u32]) -> Self::Buffer;
    /// Copies a whole buffer of `f32` to the host (waits for pending work).
    fn read_f32(&self, buffer: &Self::Buffer) -> Result<Vec<f32>, ReadError>;
    /// Copies a whole buffer of `u32` to the host (waits for pending work).
    fn read_u32(&self, buffer: &Self::Buffer) -> Result<Vec<u32>, ReadError>;
    /// A whole buffer of `u32` flags as `bool`s (non-zero is `true`), copied to the host.
    fn read_flags(&self, buffer: &Self::Buffer) -> Result<Vec<bool>, ReadError> {
        Ok(self.read_u32(buffer)?.iter().map(|&f| f != 0).collect())
    }
    /// Elements (32-bit) in `buffer`.
    fn buffer_len(&self, buffer: &Self::Buffer) -> usize;
    /// Enqueues a copy of `into`'s length in words of `from`, from word `start` on, into
    /// `into`: one launch, recorded in `ledger` ([`copy_range_record`]).
    ///
    /// [`copy_range_record`]: crate::launch::copy_range_record
    fn copy_range(
        &self,
        from: &Self::Buffer,
        start: usize,
        into: &Self::Buffer,
        ledger: &LaunchLedger,
    ) -> Result<(), ExecError>;
    /// Waits until every enqueued launch has finished.
    fn sync(&self) -> Result<(), ReadError>;

    /// Prepares `plan` of `graph` for `lanes` lanes, recording into `ledger`.
    fn runner(
        &self,
        graph: Graph,
        plan: Plan,
        lanes: usize,
        ledger: Arc<LaunchLedger>,
    ) -> Result<Self::Runner, ExecError>;
}

/// One plan of one graph, ready to run over a fixed number of lanes.
///
/// Inputs are owned by the runner; carried inputs advance by themselves on every
/// [`PlanRunner::run`]. Every name is checked: an unknown name or a wrong length is an
/// error, never a panic or an out-of-bounds launch.
pub trait PlanRunner<B: Backend>: Send {
    /// The graph it runs.
    fn graph(&self) -> &Graph;
    /// The plan it follows.
    fn plan(&self) -> &Plan;
    /// Lanes per step.
    fn lanes(&self) -> usize;
    /// Records launches in `ledger` from now on.
    fn set_ledger(&mut self, ledger: Arc<LaunchLedger>);
    /// Copies `values` into input `name`.
    fn set_input(&mut self, name: &str, values: &HostArray) -> Result<(), ExecError>;
    /// Uses `buffer` as input `name` (no copy where the backend allows); its length is checked.
    fn bind_input(&mut self, name: &str, buffer: &B::Buffer) -> Result<(), ExecError>;
    /// Sets runtime param `name`.
    fn set_param(&mut self, name: &str, value: Scalar) -> Result<(), ExecError>;
    /// Sets several runtime params at once (a policy's thousands of weights: one lookup
    /// each by name, one params-buffer upload in all).
    fn set_params(&mut self, values: &[(&str, Scalar)]) -> Result<(), ExecError>;
    /// The buffer of output `name`, valid until the next run.
    fn output(&self, name: &str) -> Result<&B::Buffer, ExecError>;
    /// Exchanges output `name`'s buffer with `buffer` (of the same length): the next run
    /// writes into what `buffer` was, and `buffer` keeps what the last run wrote.
    fn swap_output(&mut self, name: &str, buffer: &mut B::Buffer) -> Result<(), ExecError>;
    /// The buffer input `name` currently holds.
    fn input(&self, name: &str) -> Result<&B::Buffer, ExecError>;
    /// Output `name` copied to the host.
    fn read_output(&self, name: &str) -> Result<HostArray, ExecError>;
    /// Input `name` (for a carried input: the current state) copied to the host.
    fn read_input(&self, name: &str) -> Result<HostArray, ExecError>;
    /// Runs one call of the plan (`plan().steps_per_launch` steps).
    fn run(&mut self) -> Result<(), ExecError>;
    /// Fills every buffer the plan writes with NaN (`f32`) or `0xFFFF_FFFF` (`u32`), so a
    /// test can tell elements a run wrote from stale ones.
    fn poison_outputs(&mut self);

    /// Whether the graph has an input called `name`.
    fn has_input(&self, name: &str) -> bool {
        self.graph().input_id(name).is_some()
    }

    /// Whether the graph has a runtime param called `name`.
    fn has_param(&self, name: &str) -> bool {
        self.graph().params().iter().any(|(_, p)| *p == name)
    }
}

/// Checks that `from[start..start + len]` exists before a [`Backend::copy_range`].
pub(crate) fn check_range(from_len: usize, start: usize, len: usize) -> Result<(), ExecError> {
    if start.checked_add(len).is_none_or(|end| end > from_len) {
        return Err(BindError::BadInput {
            name: "copy_range source".into(),
            expected: format!("at least {} elements", start.saturating_add(len)),
            found: format!("a buffer of {from_len} elements"),
        }
        .into());
    }
    Ok(())
}
