//! Every CubeCL runtime as a [`Backend`]: buffers are device handles, launches are
//! prepared as [`CubeLaunches`].

use std::sync::Arc;

use cubecl::prelude::*;
use cubecl::server::Handle;

use cubecl::device::{Device, DeviceId};

use super::buffers::{alloc_arena, download, read_arena, upload, write_into, write_into_unstaged};
use super::device::OpenedDevice;
use super::kernel::{copy_range, elementwise_launch_shape};
use super::launches::{CubeLaunches, RowReduction};
use super::staging::UploadStaging;
use crate::exec::transfers::{Transfer, TransferCounter};
use crate::exec::{
    Arena, Backend, BoundPlan, ExecError, Executor, FloatAgreement, LaunchLedger, Lowered,
    ReadError, RunArgs, StagingStats, Target, TransferCounts, check_range, check_write,
    copy_range_record,
};
use crate::lir::loop_budget::LAVAPIPE_LOOP_ITERATIONS;
use crate::plan::PlanOptions;

/// The most bytes of one buffer that a kernel's `u32` element index addresses.
const MAX_INDEXED_BYTES: u64 = 4 * u32::MAX as u64;

/// A CubeCL runtime `R` with an open client and the adapter's description.
#[derive(Clone)]
pub struct Cube<R: Runtime> {
    client: ComputeClient<R>,
    /// The device the client runs on (writes into existing buffers go through its server).
    device: DeviceId,
    description: Arc<str>,
    /// What crosses between host and device, shared by every clone.
    transfers: TransferCounter,
    /// The host memory writes go out from, shared by every clone.
    staging: Arc<UploadStaging>,
    /// A lower largest buffer than the device's ([`Backend::with_max_buffer_bytes`]).
    max_buffer_bytes: Option<u64>,
    /// The most loop iterations a thread may run (lavapipe's; see
    /// [`crate::lir::loop_budget`]).
    loop_limit: Option<u64>,
    /// How rows-domain launches reduce a row: a cube per row on a GPU, a thread per row on
    /// a CPU-emulated device.
    row_reduction: RowReduction,
    /// Bit for bit the CPU's on lavapipe and CUDA, within a bound on other drivers.
    float_agreement: FloatAgreement,
}

/// Whether the adapter `description` names is a CPU emulating a GPU (Mesa's llvmpipe,
/// under lavapipe): its threads are the CPU's, so what pays on a GPU may not pay there.
pub fn is_cpu_emulated(description: &str) -> bool {
    description.to_lowercase().contains("llvmpipe")
}

impl<R: Runtime> Cube<R> {
    /// The backend of an opened device, named by its description in reports.
    pub fn new(opened: &OpenedDevice<R>) -> Self {
        Self::with_client(
            opened.client.clone(),
            &opened.device,
            opened.description.as_str(),
        )
    }

    /// Wraps `client`, open on `device`; `description` names the adapter in reports. An
    /// llvmpipe adapter (lavapipe) gets its loop limit checked before any plan runs.
    pub fn with_client(
        client: ComputeClient<R>,
        device: &R::Device,
        description: impl Into<Arc<str>>,
    ) -> Self {
        let description: Arc<str> = description.into();
        let llvmpipe = is_cpu_emulated(&description);
        let loop_limit = llvmpipe.then_some(LAVAPIPE_LOOP_ITERATIONS);
        let row_reduction = match llvmpipe {
            true => RowReduction::ThreadPerRow,
            false => RowReduction::CubePerRow,
        };
        // Mesa's llvmpipe honours naga's `NoContraction` and evaluates IEEE operations as a
        // CPU does; NVRTC compiles with `--fmad=false` (vendor/README.md). Other Vulkan
        // drivers may divide approximately.
        let float_agreement = match llvmpipe || R::name(&client) == "cuda" {
            true => FloatAgreement::Bitwise,
            false => FloatAgreement::Bounded,
        };
        Self {
            client,
            device: device.to_id(),
            description,
            transfers: TransferCounter::default(),
            staging: Arc::default(),
            max_buffer_bytes: None,
            loop_limit,
            row_reduction,
            float_agreement,
        }
    }

    /// The compute client every launch goes to.
    pub fn client(&self) -> &ComputeClient<R> {
        &self.client
    }

    /// The runtime's device this backend runs on (for a library that opens the same
    /// device, such as burn's `CubeBackend`).
    pub fn runtime_device(&self) -> R::Device {
        R::Device::from_id(self.device)
    }

    /// How this backend's rows-domain launches reduce a row.
    pub fn row_reduction(&self) -> RowReduction {
        self.row_reduction
    }

    /// This backend reducing rows as `mode` says (by default a cube per row, a thread per
    /// row on lavapipe).
    pub fn with_row_reduction(mut self, mode: RowReduction) -> Self {
        self.row_reduction = mode;
        self
    }

    /// [`Backend::write_u32`] from a new `Vec` (pageable memory) instead of the staging, as
    /// every write went before it: the reference `examples/host_step.rs` times it against.
    pub fn write_u32_unstaged(&self, buffer: &Handle, values: &[u32]) -> Result<(), ExecError> {
        check_write(self.buffer_len(buffer), values.len())?;
        self.transfers.count(Transfer::Write);
        write_into_unstaged::<R, u32>(self.device, buffer, values);
        Ok(())
    }

    /// This backend refusing plans whose threads would run more than `limit` loop
    /// iterations (see [`crate::lir::loop_budget`]); `None` checks nothing.
    pub fn with_loop_limit(mut self, limit: Option<u64>) -> Self {
        self.loop_limit = limit;
        self
    }
}

impl<R: Runtime> std::fmt::Debug for Cube<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cube<{}>({})", R::name(&self.client), self.description)
    }
}

impl<R: Runtime> Backend for Cube<R> {
    type Buffer = Handle;
    type Launches = CubeLaunches<R>;

    fn runtime_name(&self) -> &'static str {
        R::name(&self.client)
    }

    fn float_agreement(&self) -> FloatAgreement {
        self.float_agreement
    }

    fn binds_f32_params(&self) -> bool {
        true
    }

    fn description(&self) -> String {
        self.description.to_string()
    }

    /// The device's largest allocation, and never more words than a kernel's `u32` index
    /// reaches (on wgpu the binding limit is far lower; on CUDA a page can be a quarter of
    /// the device's memory, 35 GiB on an H200, where a `u32` index would wrap at 16 GiB).
    fn max_buffer_bytes(&self) -> u64 {
        let device = self
            .client
            .properties()
            .memory
            .max_page_size
            .min(MAX_INDEXED_BYTES);
        self.max_buffer_bytes
            .map_or(device, |limit| limit.min(device))
    }

    fn with_max_buffer_bytes(mut self, bytes: u64) -> Self {
        self.max_buffer_bytes = Some(bytes);
        self
    }

    fn plan_options(&self) -> PlanOptions {
        plan_options(&self.client)
    }

    fn alloc(&self, words: usize) -> Handle {
        self.transfers.count(Transfer::Created);
        self.client.empty(words * 4)
    }

    fn upload_u32(&self, values: &[u32]) -> Handle {
        self.transfers.count(Transfer::Created);
        upload(&self.client, values)
    }

    fn read_u32(&self, buffer: &Handle) -> Result<Vec<u32>, ReadError> {
        self.transfers.count(Transfer::Read { copies: 1 });
        download::<R, u32>(&self.client, buffer)
    }

    fn write_u32(&self, buffer: &Handle, values: &[u32]) -> Result<(), ExecError> {
        check_write(self.buffer_len(buffer), values.len())?;
        self.transfers.count(Transfer::Write);
        write_into::<R, u32>(self.device, buffer, values, &self.staging);
        Ok(())
    }

    /// One allocation whose parts start on the device's storage offset alignment (at
    /// least 256 bytes, what every wgpu device accepts), unless it would exceed the largest
    /// buffer: then the parts are apart, and still read in one round trip.
    fn alloc_arena(&self, words: &[usize]) -> Arena<Handle> {
        let align = (self.client.properties().memory.alignment as usize).max(256);
        let bytes: u64 = (words.iter())
            .map(|w| (4 * w.max(&1)).next_multiple_of(align) as u64)
            .sum();
        if bytes > self.max_buffer_bytes() {
            return Arena {
                parts: words.iter().map(|&w| self.alloc(w)).collect(),
                whole: None,
            };
        }
        self.transfers.count(Transfer::Created);
        alloc_arena(&self.client, words, align)
    }

    fn read_arena(
        &self,
        arena: &Arena<Handle>,
        sink: &mut dyn FnMut(usize, &[u32]),
    ) -> Result<(), ReadError> {
        let copies = read_arena(&self.client, arena, sink)?;
        self.transfers.count(Transfer::Read { copies });
        Ok(())
    }

    fn transfers(&self) -> TransferCounts {
        self.transfers.totals()
    }

    fn staging(&self) -> StagingStats {
        self.staging.stats()
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
        check_range(self.buffer_len(from), start, len)?;
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
        self.transfers.count(Transfer::Sync);
        cubecl::future::block_on(self.client.sync())
            .map_err(|error| ReadError(format!("{error:?}")))
    }

    fn target(&self) -> Target {
        CubeLaunches::target(&self.client, self.loop_limit)
    }

    fn prepare(&self, bound: &BoundPlan, lowered: &Lowered) -> Result<CubeLaunches<R>, ExecError> {
        Ok(CubeLaunches::prepare(
            &self.client,
            bound,
            lowered,
            (self.row_reduction, &self.transfers),
        ))
    }

    fn run(
        &self,
        launches: &mut CubeLaunches<R>,
        args: RunArgs<'_, Self>,
    ) -> Result<(), ExecError> {
        launches.run(args);
        Ok(())
    }
}

impl<R: Runtime> Executor<Cube<R>> {
    /// Storage buffers each kernel launch binds, the two params buffers included and
    /// cubecl's metadata buffer not (a carry updated in place is bound once).
    pub fn storage_bindings(&self) -> Vec<usize> {
        self.launches.storage_bindings()
    }

    /// Allows (the default) or forbids vectorised launches.
    pub fn set_vectorize(&mut self, vectorize: bool) {
        self.launches.vectorize = vectorize;
    }

    /// Lanes per thread of lowered launch `index` under the current settings and size.
    pub fn vector_width(&self, index: usize) -> usize {
        (self.launches).vector_width(index, self.lanes(), self.bound.bank_lanes())
    }

    /// The compute client every launch goes to.
    pub fn client(&self) -> &ComputeClient<R> {
        self.backend.client()
    }
}

/// Default planner options with the binding limit of `client`'s device.
pub fn plan_options<R: Runtime>(client: &ComputeClient<R>) -> PlanOptions {
    PlanOptions::for_device(client.properties().hardware.max_bindings as usize)
}
