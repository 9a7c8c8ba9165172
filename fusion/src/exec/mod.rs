//! Running plans: one executor core over a small backend trait, so environments, vector envs
//! and test suites are written once and run on every runtime.
//!
//! - [`Backend`]: what a runtime provides: buffers (allocate, upload, read, copy), the
//!   [`Target`] its device lowers plans for, and a plan's lowered launches (compile them,
//!   run them).
//! - [`lowering`]: [`Lowered`], a plan lowered once for a backend's [`Target`]; backends
//!   decide nothing about lowering themselves.
//! - [`bound`]: [`BoundPlan`], a plan laid out over `n` lanes: buffers, carries, params and
//!   every name and length check.
//! - [`params`]: [`Params`], the params' values a bank each, and the `f32` buffer's layout.
//! - [`executor`]: [`Executor`], a bound plan with its buffers on one backend.
//! - [`holders`]: which buffers share memory, kept across runs.
//! - [`ledger`]: [`LaunchLedger`], which counts launches, elements and bytes moved.
//! - [`transfers`]: [`Arena`]s of buffers read back in one transfer, and
//!   [`TransferCounts`], what crosses between host and device.
//! - [`agreement`]: [`FloatAgreement`], how a backend's float results follow the CPU's.
//! - `error`: [`ExecError`], [`ReadError`] and [`DeviceError`].

pub mod agreement;
pub mod bound;
mod error;
pub mod executor;
pub mod holders;
pub mod ledger;
pub mod lowering;
pub mod params;
pub mod transfers;

pub use agreement::FloatAgreement;
pub use bound::BoundPlan;
pub use error::{DeviceError, ExecError, ReadError};
pub use executor::Executor;
pub use holders::Holders;
pub use ledger::{
    COPY_RANGE_KERNEL, KernelLaunch, LaunchLedger, LaunchTotals, copy_range_record,
    copy_state_record, kernels_record,
};
pub use lowering::{Lowered, Target};
pub use params::{Params, ParamsChanged};
pub use transfers::{Arena, StagingStats, TransferCounts};

use crate::plan::PlanOptions;

/// A runtime: buffers of 32-bit words and the launches of plans over them.
pub trait Backend: Clone + Send + 'static {
    /// A buffer of 32-bit elements on this backend.
    type Buffer: Clone + Send;
    /// A plan's launches, prepared to run here (generated kernels, compiled code).
    type Launches: Send;

    /// Short runtime name (`wgpu`, `cuda`, `cpu`).
    fn runtime_name(&self) -> &'static str;
    /// How this backend's float results follow the CPU runtime's.
    fn float_agreement(&self) -> FloatAgreement;
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

    /// A new buffer of `words` elements whose contents a run will write.
    fn alloc(&self, words: usize) -> Self::Buffer;
    /// A new buffer holding `values`.
    fn upload_f32(&self, values: &[f32]) -> Self::Buffer {
        self.upload_u32(bytemuck::cast_slice(values))
    }
    /// A new buffer holding `values`.
    fn upload_u32(&self, values: &[u32]) -> Self::Buffer;
    /// Copies a whole buffer of `f32` to the host (waits for pending work).
    fn read_f32(&self, buffer: &Self::Buffer) -> Result<Vec<f32>, ReadError> {
        Ok(self
            .read_u32(buffer)?
            .into_iter()
            .map(f32::from_bits)
            .collect())
    }
    /// Copies a whole buffer of `u32` to the host (waits for pending work).
    fn read_u32(&self, buffer: &Self::Buffer) -> Result<Vec<u32>, ReadError>;
    /// A whole buffer of `u32` flags as `bool`s (non-zero is `true`), copied to the host.
    fn read_flags(&self, buffer: &Self::Buffer) -> Result<Vec<bool>, ReadError> {
        Ok(self.read_u32(buffer)?.iter().map(|&f| f != 0).collect())
    }
    /// Elements (32-bit) in `buffer`.
    fn buffer_len(&self, buffer: &Self::Buffer) -> usize;
    /// Whether two handles are the same memory (`false` where the backend cannot tell).
    fn same_buffer(&self, _a: &Self::Buffer, _b: &Self::Buffer) -> bool {
        false
    }
    /// Enqueues a copy of `into`'s length in words of `from`, from word `start` on, into
    /// `into`: one launch, recorded in `ledger` ([`copy_range_record`]).
    fn copy_range(
        &self,
        from: &Self::Buffer,
        start: usize,
        into: &Self::Buffer,
        ledger: &LaunchLedger,
    ) -> Result<(), ExecError>;
    /// Waits until every enqueued launch has finished.
    fn sync(&self) -> Result<(), ReadError>;
    /// Copies `values` into `buffer`, which holds exactly as many words, without allocating:
    /// after every launch enqueued before, before every launch enqueued after.
    fn write_u32(&self, buffer: &Self::Buffer, values: &[u32]) -> Result<(), ExecError>;
    /// Buffers of `words[i]` words laid out so that [`Self::read_arena`] brings them all
    /// back in one transfer (apart, by default).
    fn alloc_arena(&self, words: &[usize]) -> Arena<Self::Buffer> {
        Arena {
            parts: words.iter().map(|&w| self.alloc(w)).collect(),
            whole: None,
        }
    }
    /// Reads every part of `arena` to the host in one round trip, handing part `i`'s words
    /// to `sink(i, words)` (by default one read a part).
    fn read_arena(
        &self,
        arena: &Arena<Self::Buffer>,
        sink: &mut dyn FnMut(usize, &[u32]),
    ) -> Result<(), ReadError> {
        for (i, part) in arena.parts.iter().enumerate() {
            sink(i, &self.read_u32(part)?);
        }
        Ok(())
    }
    /// What has crossed between host and device since the backend was opened (all zero on a
    /// backend whose buffers are host memory).
    fn transfers(&self) -> TransferCounts {
        TransferCounts::default()
    }

    /// The host memory this backend's writes into device buffers go out from (all zero on a
    /// backend whose buffers are host memory).
    fn staging(&self) -> StagingStats {
        StagingStats::default()
    }

    /// Whether launches bind the `f32` params as a buffer (a device), so one made on the
    /// device can take the host table's place without a transfer
    /// ([`Executor::set_f32_params_buffer`]); where not, such a buffer is read into the
    /// table.
    fn binds_f32_params(&self) -> bool {
        false
    }

    /// What this backend's device asks of a plan's lowering; the executor lowers every
    /// plan once for it ([`Lowered::for_target`]).
    fn target(&self) -> Target;
    /// Compiles `lowered`, the launches of `bound` lowered for [`Self::target`], into
    /// launches that run here (generated kernels, compiled code).
    fn prepare(&self, bound: &BoundPlan, lowered: &Lowered) -> Result<Self::Launches, ExecError>;
    /// Runs every launch of the plan once over `args.buffers`, in plan order, each recorded
    /// in `args.ledger`.
    fn run(&self, launches: &mut Self::Launches, args: RunArgs<'_, Self>) -> Result<(), ExecError>;
}

/// What one run hands a backend.
pub struct RunArgs<'a, B: Backend> {
    /// The plan's layout and params.
    pub bound: &'a BoundPlan,
    /// Every buffer, by [`BoundPlan`] index.
    pub buffers: &'a [B::Buffer],
    /// Which buffers share memory (as of this run).
    pub holders: &'a Holders,
    /// Where launches are recorded.
    pub ledger: &'a LaunchLedger,
    /// Which params were set since the last run.
    pub params_changed: ParamsChanged,
    /// The `f32` params, when a buffer holds them instead of [`BoundPlan::params`] (only
    /// on a backend that [binds them](Backend::binds_f32_params)).
    pub f32_params: Option<&'a B::Buffer>,
}

/// Checks that a [`Backend::write_u32`] of `values` words fills its buffer of `len` exactly.
pub(crate) fn check_write(len: usize, values: usize) -> Result<(), ExecError> {
    if len != values {
        return Err(crate::graph::BindError::BadInput {
            name: "written values".into(),
            expected: format!("{len} values (the buffer's length)"),
            found: format!("{values} values"),
        }
        .into());
    }
    Ok(())
}

/// Checks that `from[start..start + len]` exists before a [`Backend::copy_range`].
pub(crate) fn check_range(from_len: usize, start: usize, len: usize) -> Result<(), ExecError> {
    if start.checked_add(len).is_none_or(|end| end > from_len) {
        return Err(crate::graph::BindError::BadInput {
            name: "copy_range source".into(),
            expected: format!("at least {} elements", start.saturating_add(len)),
            found: format!("a buffer of {from_len} elements"),
        }
        .into());
    }
    Ok(())
}
