//! The native CPU runtime as a [`Backend`]: buffers are shared host memory
//! ([`CpuBuffer`]), launches are prepared as [`CpuLaunches`] and run on the calling thread
//! and the spinning pool, finished when `run` returns.

use std::sync::Arc;

use super::launches::CpuLaunches;
use super::{CpuBuffer, CpuOptions, SimdLevel};
use crate::exec::{
    Backend, BoundPlan, ExecError, FloatAgreement, LaunchLedger, Lowered, ReadError, RunArgs,
    Target, check_range, check_write, copy_range_record,
};
use crate::plan::PlanOptions;

/// The CPU cannot run the SIMD level asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("this CPU does not support the {0} SIMD level")]
pub struct SimdUnsupported(pub SimdLevel);

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
            return Err(ExecError::backend(SimdUnsupported(options.simd)));
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
    type Launches = CpuLaunches;

    fn runtime_name(&self) -> &'static str {
        "cpu"
    }

    fn float_agreement(&self) -> FloatAgreement {
        FloatAgreement::Bitwise
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

    fn alloc(&self, words: usize) -> CpuBuffer {
        CpuBuffer::zeroed(words)
    }

    fn upload_u32(&self, values: &[u32]) -> CpuBuffer {
        CpuBuffer::from_u32(values)
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

    fn same_buffer(&self, a: &CpuBuffer, b: &CpuBuffer) -> bool {
        a.same(b)
    }

    fn write_u32(&self, buffer: &CpuBuffer, values: &[u32]) -> Result<(), ExecError> {
        check_write(buffer.len(), values.len())?;
        buffer.lock()[..values.len()].copy_from_slice(values);
        Ok(())
    }

    fn copy_range(
        &self,
        from: &CpuBuffer,
        start: usize,
        into: &CpuBuffer,
        ledger: &LaunchLedger,
    ) -> Result<(), ExecError> {
        let len = into.len();
        check_range(from.len(), start, len)?;
        if from.same(into) {
            return Err(ExecError::Unsupported(
                "copying a range of a buffer into itself".into(),
            ));
        }
        ledger.launch(copy_range_record(len), || {
            let source = from.lock();
            into.lock()[..len].copy_from_slice(&source[start..start + len]);
        });
        Ok(())
    }

    fn sync(&self) -> Result<(), ReadError> {
        // Every run has finished when it returns.
        Ok(())
    }

    fn target(&self) -> Target {
        CpuLaunches::target(&self.options)
    }

    fn prepare(&self, bound: &BoundPlan, lowered: &Lowered) -> Result<CpuLaunches, ExecError> {
        CpuLaunches::prepare(bound, lowered, &self.options)
    }

    fn run(&self, launches: &mut CpuLaunches, args: RunArgs<'_, Self>) -> Result<(), ExecError> {
        launches.run(args);
        Ok(())
    }
}
