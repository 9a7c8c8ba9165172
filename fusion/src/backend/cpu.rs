//! The native CPU runtime as a [`Backend`]: buffers are shared host memory
//! ([`CpuBuffer`]), plans run through [`CpuExecutor`], every launch on the calling thread
//! and rayon's pool, finished when `run` returns.

use std::sync::Arc;

use super::{Backend, PlanRunner};
use crate::buffers::ReadError;
use crate::cpu::{CpuBuffer, CpuExecutor, CpuOptions};
use crate::exec::ExecError;
use crate::graph::Graph;
use crate::interpret::{HostArray, Scalar};
use crate::launch::{LaunchLedger, copy_range_record};
use crate::plan::{Plan, PlanOptions};

/// The host CPU with the options every runner it builds uses.
#[derive(Debug, Clone)]
pub struct Cpu {
    options: CpuOptions,
    description: Arc<str>,
}

impl Cpu {
    /// The CPU with `options`; fails when the CPU lacks the requested SIMD level.
    pub fn new(options: CpuOptions) -> Result<Self, ExecError> {
        if !options.simd.is_supported() {
            return Err(ExecError::SimdUnsupported(options.simd));
        }
        let description = format!(
            "{} ({}, {} kernels, {} threads)",
            cpu_model(),
            options.simd,
            options.engine,
            options.resolved_threads()
        );
        Ok(Self {
            options,
            description: description.into(),
        })
    }

    /// The options runners are built with.
    pub fn options(&self) -> &CpuOptions {
        &self.options
    }
}

impl Default for Cpu {
    /// Every thread of rayon's pool at the best SIMD level this CPU has.
    fn default() -> Self {
        Self::new(CpuOptions::default()).expect("the detected SIMD level is supported")
    }
}

/// The CPU's model name (`/proc/cpuinfo` on Linux), or the architecture elsewhere.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, name)| name.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned())
}

impl Backend for Cpu {
    type Buffer = CpuBuffer;
    type Runner = CpuExecutor;

    fn runtime_name(&self) -> &'static str {
        "cpu"
    }

    fn description(&self) -> String {
        self.description.to_string()
    }

    fn max_buffer_bytes(&self) -> u64 {
        // One allocation; the address space, not a binding limit, bounds it, unless the
        // options stand in for a device's limit.
        self.options.max_buffer_bytes.unwrap_or(isize::MAX as u64)
    }

    fn with_max_buffer_bytes(mut self, bytes: u64) -> Self {
        self.options.max_buffer_bytes = Some(bytes);
        self
    }

    fn plan_options(&self) -> PlanOptions {
        PlanOptions::default()
    }

    fn upload_f32(&self, values: &[f32]) -> CpuBuffer {
        CpuBuffer::from_f32(values)
    }

    fn upload_u32(&self, values: &[u32]) -> CpuBuffer {
        CpuBuffer::from_u32(values)
    }

    fn read_f32(&self, buffer: &CpuBuffer) -> Result<Vec<f32>, ReadError> {
        Ok(buffer.to_f32())
    }

    fn read_u32(&self, buffer: &CpuBuffer) -> Result<Vec<u32>, ReadError> {
        Ok(buffer.to_u32())
    }

    fn read_flags(&self, buffer: &CpuBuffer) -> Result<Vec<bool>, ReadError> {
        // Straight from the words: no intermediate `u32` copy.
        Ok(buffer.lock()[..buffer.len()]
            .iter()
            .map(|&f| f != 0)
            .collect())
    }

    fn buffer_len(&self, buffer: &CpuBuffer) -> usize {
        buffer.len()
    }

    fn copy_range(
        &self,
        from: &CpuBuffer,
        start: usize,
        into: &CpuBuffer,
        ledger: &LaunchLedger,
    ) -> Result<(), ExecError> {
        let len = into.len();
        super::check_range(from.len(), start, len)?;
        if from.same(into) {
            return Err(ExecError::Unsupported(
                "copying a range of a buffer into itself".into(),
            ));
        }
        ledger.launch(copy_range_record(len), || {
            let source = from.lock();
            into.with_words(|words| words.copy_from_slice(&source[start..start + len]));
        });
        Ok(())
    }

    fn sync(&self) -> Result<(), ReadError> {
        // Every run has finished when it returns.
        Ok(())
    }

    fn runner(
        &self,
        graph: Graph,
        plan: Plan,
        lanes: usize,
        ledger: Arc<LaunchLedger>,
    ) -> Result<CpuExecutor, ExecError> {
        Ok(CpuExecutor::new(graph, plan, lanes, self.options.clone())?.with_ledger(ledger))
    }
}

impl PlanRunner<Cpu> for CpuExecutor {
    fn graph(&self) -> &Graph {
        CpuExecutor::graph(self)
    }

    fn plan(&self) -> &Plan {
        CpuExecutor::plan(self)
    }

    fn lanes(&self) -> usize {
        CpuExecutor::lanes(self)
    }

    fn set_ledger(&mut self, ledger: Arc<LaunchLedger>) {
        CpuExecutor::set_ledger(self, ledger);
    }

    fn set_input(&mut self, name: &str, values: &HostArray) -> Result<(), ExecError> {
        CpuExecutor::set_input(self, name, values)
    }

    fn bind_input(&mut self, name: &str, buffer: &CpuBuffer) -> Result<(), ExecError> {
        CpuExecutor::bind_input(self, name, buffer)
    }

    fn set_param(&mut self, name: &str, value: Scalar) -> Result<(), ExecError> {
        CpuExecutor::set_param(self, name, value)
    }

    fn set_params(&mut self, values: &[(&str, Scalar)]) -> Result<(), ExecError> {
        CpuExecutor::set_params(self, values)
    }

    fn output(&self, name: &str) -> Result<&CpuBuffer, ExecError> {
        CpuExecutor::output(self, name)
    }

    fn swap_output(&mut self, name: &str, buffer: &mut CpuBuffer) -> Result<(), ExecError> {
        CpuExecutor::swap_output(self, name, buffer)
    }

    fn input(&self, name: &str) -> Result<&CpuBuffer, ExecError> {
        CpuExecutor::input(self, name)
    }

    fn read_output(&self, name: &str) -> Result<HostArray, ExecError> {
        CpuExecutor::read_output(self, name)
    }

    fn read_input(&self, name: &str) -> Result<HostArray, ExecError> {
        CpuExecutor::read_input(self, name)
    }

    fn poison_outputs(&mut self) {
        self.poison_written();
    }

    fn run(&mut self) -> Result<(), ExecError> {
        CpuExecutor::run(self)
    }
}
