//! Every CubeCL runtime as a [`Backend`]: buffers are device handles, plans run through
//! [`PlanExecutor`].

use std::sync::Arc;

use cubecl::prelude::*;
use cubecl::server::Handle;

use super::{Backend, PlanRunner};
use crate::buffers::{ReadError, download, upload};
use crate::codegen::kernel::copy_range;
use crate::codegen::loop_budget::LAVAPIPE_LOOP_ITERATIONS;
use crate::exec::{ExecError, PlanExecutor};
use crate::graph::Graph;
use crate::interpret::{HostArray, Scalar};
use crate::launch::{LaunchLedger, copy_range_record, elementwise_launch_shape};
use crate::plan::{Plan, PlanOptions};

/// A CubeCL runtime `R` with an open client and the adapter's description.
pub struct Cube<R: Runtime> {
    client: ComputeClient<R>,
    description: Arc<str>,
    /// A lower largest buffer than the device's ([`Backend::with_max_buffer_bytes`]).
    max_buffer_bytes: Option<u64>,
    /// The most loop iterations a thread may run (lavapipe's; see
    /// [`crate::codegen::loop_budget`]).
    loop_limit: Option<u64>,
}

impl<R: Runtime> Clone for Cube<R> {
    fn clone(&self) -> Self {
        Self {
            client: self.client.clone(),
            description: self.description.clone(),
            max_buffer_bytes: self.max_buffer_bytes,
            loop_limit: self.loop_limit,
        }
    }
}

impl<R: Runtime> Cube<R> {
    /// Wraps an open client; `description` names the adapter in reports. An llvmpipe
    /// adapter (lavapipe) gets its loop limit checked before any plan runs.
    pub fn new(client: ComputeClient<R>, description: impl Into<Arc<str>>) -> Self {
        let description: Arc<str> = description.into();
        let loop_limit = description
            .to_lowercase()
            .contains("llvmpipe")
            .then_some(LAVAPIPE_LOOP_ITERATIONS);
        Self {
            client,
            description,
            max_buffer_bytes: None,
            loop_limit,
        }
    }

    /// The compute client every launch goes to.
    pub fn client(&self) -> &ComputeClient<R> {
        &self.client
    }
}

impl<R: Runtime> std::fmt::Debug for Cube<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cube<{}>({})", R::name(&self.client), self.description)
    }
}

impl<R: Runtime> Backend for Cube<R> {
    type Buffer = Handle;
    type Runner = PlanExecutor<R>;

    fn runtime_name(&self) -> &'static str {
        R::name(&self.client)
    }

    fn description(&self) -> String {
        self.description.to_string()
    }

    fn max_buffer_bytes(&self) -> u64 {
        let device = self.client.properties().memory.max_page_size;
        self.max_buffer_bytes
            .map_or(device, |limit| limit.min(device))
    }

    fn with_max_buffer_bytes(mut self, bytes: u64) -> Self {
        self.max_buffer_bytes = Some(bytes);
        self
    }

    fn plan_options(&self) -> PlanOptions {
        PlanOptions::for_device(&self.client)
    }

    fn upload_f32(&self, values: &[f32]) -> Handle {
        upload(&self.client, values)
    }

    fn upload_u32(&self, values: &[u32]) -> Handle {
        upload(&self.client, values)
    }

    fn read_f32(&self, buffer: &Handle) -> Result<Vec<f32>, ReadError> {
        download::<R, f32>(&self.client, buffer)
    }

    fn read_u32(&self, buffer: &Handle) -> Result<Vec<u32>, ReadError> {
        download::<R, u32>(&self.client, buffer)
    }

    fn buffer_len(&self, buffer: &Handle) -> usize {
        (buffer.size_in_used() / 4) as usize
    }

    fn copy_range(
        &self,
        from: &Handle,
        start: usize,
        into: &Handle,
        ledger: &LaunchLedger,
    ) -> Result<(), ExecError> {
        let len = self.buffer_len(into);
        super::check_range(self.buffer_len(from), start, len)?;
        let start = u32::try_from(start).map_err(|_| {
            ExecError::Unsupported(format!("a copy from word {start}: indices are 32-bit"))
        })?;
        let (cube_count, cube_dim) = elementwise_launch_shape(&self.client, len);
        ledger.launch(copy_range_record(len), || unsafe {
            // SAFETY: `into` holds `len` words and `from` at least `start + len` (checked).
            copy_range::launch_unchecked::<R>(
                &self.client,
                cube_count,
                cube_dim,
                ArrayArg::from_raw_parts(from.clone(), self.buffer_len(from)),
                ArrayArg::from_raw_parts(into.clone(), len),
                start,
            )
        });
        Ok(())
    }

    fn sync(&self) -> Result<(), ReadError> {
        cubecl::future::block_on(self.client.sync())
            .map_err(|error| ReadError(format!("{error:?}")))
    }

    fn runner(
        &self,
        graph: Graph,
        plan: Plan,
        lanes: usize,
        ledger: Arc<LaunchLedger>,
    ) -> Result<PlanExecutor<R>, ExecError> {
        PlanExecutor::new(self.client.clone(), graph, plan, lanes)?
            .with_loop_limit(self.loop_limit)
            .map(|executor| executor.with_ledger(ledger))
    }
}

impl<R: Runtime> PlanRunner<Cube<R>> for PlanExecutor<R> {
    fn graph(&self) -> &Graph {
        PlanExecutor::graph(self)
    }

    fn plan(&self) -> &Plan {
        PlanExecutor::plan(self)
    }

    fn lanes(&self) -> usize {
        PlanExecutor::lanes(self)
    }

    fn set_ledger(&mut self, ledger: Arc<LaunchLedger>) {
        PlanExecutor::set_ledger(self, ledger);
    }

    fn set_input(&mut self, name: &str, values: &HostArray) -> Result<(), ExecError> {
        PlanExecutor::set_input(self, name, values)
    }

    fn bind_input(&mut self, name: &str, buffer: &Handle) -> Result<(), ExecError> {
        PlanExecutor::bind_input(self, name, buffer.clone())
    }

    fn set_param(&mut self, name: &str, value: Scalar) -> Result<(), ExecError> {
        PlanExecutor::set_param(self, name, value)
    }

    fn set_params(&mut self, values: &[(&str, Scalar)]) -> Result<(), ExecError> {
        PlanExecutor::set_params(self, values)
    }

    fn output(&self, name: &str) -> Result<&Handle, ExecError> {
        self.output_handle(name)
    }

    fn swap_output(&mut self, name: &str, buffer: &mut Handle) -> Result<(), ExecError> {
        PlanExecutor::swap_output(self, name, buffer)
    }

    fn input(&self, name: &str) -> Result<&Handle, ExecError> {
        self.input_handle(name)
    }

    fn read_output(&self, name: &str) -> Result<HostArray, ExecError> {
        PlanExecutor::read_output(self, name)
    }

    fn read_input(&self, name: &str) -> Result<HostArray, ExecError> {
        PlanExecutor::read_input(self, name)
    }

    fn poison_outputs(&mut self) {
        self.allocate_outputs(true);
    }

    fn run(&mut self) -> Result<(), ExecError> {
        PlanExecutor::run(self)
    }
}
