//! [`CubeLaunches`]: a plan's launches prepared for a CubeCL device, and one run of them.
//!
//! Each lowered launch runs as the one generated kernel ([`super::kernel`]) specialised to
//! its program at the first launch (cubecl caches the compiled kernel by program). Dense
//! layers run as loops over the params buffer ([`crate::lir::compact`]). Params live in two
//! buffers (`f32` and `u32`), uploaded when they change, so new params never recompile;
//! the `f32` buffer may instead be one made on the device
//! ([`crate::exec::Executor::set_f32_params_buffer`]), bound as it is.
//!
//! A carry that one launch reads before it writes is updated in place
//! ([`crate::lir::in_place`]): the kernel writes the next state over the state's own
//! buffer, bound once as the carry's output and read from there
//! ([`crate::lir::state_reads`]). A carry read otherwise (packed columns) would be bound
//! twice, as input and output: wgpu allows bindings that alias (it binds every storage
//! buffer read-write), while CUDA declares the buffers a kernel only reads
//! `const __restrict__`, so there such a carry stays double-buffered.

use cubecl::prelude::*;
use cubecl::server::Handle;

use super::buffers::upload;
use super::instr::BuffersLaunch;
use super::kernel::{ELEMENTWISE_CUBE_DIM, copy_range, elementwise_launch_shape, fused_array};
use std::sync::Arc;

use crate::exec::lowering::binding_count;
use crate::exec::transfers::{Transfer, TransferCounter};
use crate::exec::{BoundPlan, Lowered, RunArgs, Target, copy_state_record, kernels_record};
use crate::graph::NodeId;
use crate::lir::in_place::PartOrder;
use crate::lir::program::{LoweredLaunch, ParamLayout};
use crate::lir::vector::VECTOR_WIDTH;
use crate::plan::{PlannedLaunch, Slot};

/// A plan's launches on CubeCL runtime `R`. See the [module docs](self).
pub struct CubeLaunches<R: Runtime> {
    client: ComputeClient<R>,
    /// The launches as bound: lowered, dense layers compacted, carries updated in place
    /// read from the binding of their next value.
    bound: Vec<LoweredLaunch>,
    /// Whether each launch may run vectorised (decided before state reads were rewritten).
    vectorizable: Vec<bool>,
    /// Params per bank in the `f32` and the `u32` params buffer.
    per_bank: (usize, usize),
    params_f: Handle,
    params_u: Handle,
    /// Where params uploads are counted (the backend's counter).
    transfers: TransferCounter,
    /// Whether launches that allow it run four lanes per thread.
    pub vectorize: bool,
    /// How rows-domain launches reduce a row.
    pub row_reduction: RowReduction,
}

/// How a rows-domain launch (row reductions: LayerNorm's mean and variance) spreads a row
/// over threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::Display, strum::EnumIter)]
pub enum RowReduction {
    /// One thread per row loops over its columns: adjacent threads read addresses a row
    /// apart. On a CPU-emulated device (lavapipe) each thread streams its own row.
    #[strum(serialize = "a thread per row")]
    ThreadPerRow,
    /// One cube per row: its units read adjacent columns (coalesced on a GPU) and reduce
    /// their partial results in shared memory, a tree of barriers.
    #[strum(serialize = "a cube per row")]
    CubePerRow,
}

impl RowReduction {
    /// The kernel's `row_units` for this mode.
    fn units(self) -> u32 {
        match self {
            RowReduction::ThreadPerRow => 0,
            RowReduction::CubePerRow => ELEMENTWISE_CUBE_DIM,
        }
    }
}

impl<R: Runtime> CubeLaunches<R> {
    /// The target a CubeCL device lowers plans for: parts in different threads, dense
    /// layers as loops, `loop_limit` iterations a thread (lavapipe), the device's storage
    /// bindings, aliasing bindings on wgpu only (see the module docs), carries updated in
    /// place read from their output's binding, and never by a rows kernel, whose thread
    /// reads a whole row of lanes.
    pub(super) fn target(client: &ComputeClient<R>, loop_limit: Option<u64>) -> Target {
        Target {
            part_order: PartOrder::Concurrent,
            compact: true,
            loop_limit,
            // Past the limit, wgpu fails the pipeline on its device thread, not here.
            max_bindings: Some(client.properties().hardware.max_bindings as usize),
            aliasing: R::name(client).starts_with("wgpu"),
            state_from_outputs: true,
            in_place_launch: Arc::new(|launch: &LoweredLaunch| launch.rows_of.is_none()),
        }
    }

    /// The launches of `bound`, lowered for [`Self::target`], ready to run on `client`'s
    /// device (each kernel compiled at its first launch).
    pub(super) fn prepare(
        client: &ComputeClient<R>,
        bound: &BoundPlan,
        lowered: &Lowered,
        (row_reduction, transfers): (RowReduction, &TransferCounter),
    ) -> Self {
        let graph = bound.graph();
        let layout = ParamLayout::of(graph);
        Self {
            vectorizable: lowered.vectorizable.clone(),
            per_bank: (layout.f32_params.len(), layout.u32_params.len()),
            params_f: upload(client, &[0f32]),
            params_u: upload(client, &[0u32]),
            vectorize: crate::switches::enabled(crate::switches::VECTORIZE),
            row_reduction,
            transfers: transfers.clone(),
            client: client.clone(),
            bound: lowered.launches.clone(),
        }
    }

    /// Storage buffers each kernel launch binds, the two params buffers included and
    /// cubecl's metadata buffer not (a carry updated in place is bound once).
    pub fn storage_bindings(&self) -> Vec<usize> {
        self.bound.iter().map(binding_count).collect()
    }

    /// Lanes per thread of lowered launch `index` over `n` lanes (`bank_lanes` a bank)
    /// under the current settings: a thread's lanes never straddle two banks.
    pub fn vector_width(&self, index: usize, n: usize, bank_lanes: usize) -> usize {
        if self.vectorize
            && self.vectorizable[index]
            && n.is_multiple_of(VECTOR_WIDTH)
            && bank_lanes.is_multiple_of(VECTOR_WIDTH)
        {
            VECTOR_WIDTH
        } else {
            1
        }
    }

    /// Enqueues every launch once (see [`crate::exec::Backend::run`]).
    pub(super) fn run(&mut self, args: RunArgs<'_, super::Cube<R>>) {
        if let Some(buffer) = args.f32_params {
            self.params_f = buffer.clone();
        }
        // Each changed table is built and uploaded alone (a key change leaves a
        // population's weights alone), and the `f32` one not at all while a buffer made
        // elsewhere stands in for it.
        let (changed, params) = (args.params_changed, &args.bound.params);
        let (per_f, per_u) = self.per_bank;
        if changed.f32 && args.f32_params.is_none() && per_f > 0 {
            self.transfers.count(Transfer::Created);
            self.params_f = upload(&self.client, &params.f32_table());
        }
        if changed.u32 && per_u > 0 {
            self.transfers.count(Transfer::Created);
            self.params_u = upload(&self.client, &params.u32_table());
        }
        let mut lowered = 0;
        for launch in &args.bound.plan().launches {
            match launch {
                PlannedLaunch::Kernels(_) => {
                    self.launch_kernels(lowered, &args);
                    lowered += 1;
                }
                PlannedLaunch::CopyState { input } => self.launch_copy(*input, &args),
            }
        }
    }

    fn launch_kernels(&self, index: usize, args: &RunArgs<'_, super::Cube<R>>) {
        let (bound, n) = (args.bound, args.bound.lanes());
        let launch = &self.bound[index];
        let width = self.vector_width(index, n, bound.bank_lanes());
        // Rows kernels hand the kernel lane indices, the others thread indices; a cube per
        // row gives each row all the cube's units.
        let row_units = match launch.rows_of {
            Some(_) => self.row_reduction.units(),
            None => 0,
        };
        let (threads, bank_threads) = match launch.rows_of {
            Some(cols) => (
                n / cols as usize * row_units.max(1) as usize,
                bound.bank_lanes(),
            ),
            None => (n / width, bound.bank_lanes() / width),
        };
        let cubes_per_part = threads.div_ceil(ELEMENTWISE_CUBE_DIM as usize);
        let (banks, (per_f, per_u)) = (bound.banks(), self.per_bank);
        let parts = launch.program.parts.len();
        let (cube_count, cube_dim) = elementwise_launch_shape(
            &self.client,
            parts * cubes_per_part * ELEMENTWISE_CUBE_DIM as usize,
        );
        let record = kernels_record(
            bound.graph(),
            bound.plan(),
            &launch.kernels,
            &launch.name,
            n,
        );
        args.ledger.launch(record, || unsafe {
            // SAFETY: see `arrays`; parts guard `local < threads`, and vectorised launches
            // only bind buffers of a multiple of `width` lanes.
            fused_array::launch_unchecked::<R>(
                &self.client,
                cube_count,
                cube_dim,
                width,
                BuffersLaunch::new(
                    arrays(args, &launch.bindings.in_f),
                    arrays(args, &launch.bindings.in_u),
                    arrays(args, &launch.bindings.out_f),
                    arrays(args, &launch.bindings.out_u),
                    ArrayArg::from_raw_parts(self.params_f.clone(), (banks * per_f).max(1)),
                    ArrayArg::from_raw_parts(self.params_u.clone(), (banks * per_u).max(1)),
                    banks > 1,
                    bank_threads,
                    per_f,
                    per_u,
                ),
                threads,
                cubes_per_part,
                launch.program.clone(),
                row_units,
            )
        });
    }

    fn launch_copy(&self, input: NodeId, args: &RunArgs<'_, super::Cube<R>>) {
        let bound = args.bound;
        let (from, to) = (
            bound.buffer(Slot::Next(input)),
            bound.buffer(Slot::Input(input)),
        );
        let len = bound.len(to);
        let (cube_count, cube_dim) = elementwise_launch_shape(&self.client, len);
        let record = copy_state_record(bound.graph(), input, bound.lanes());
        args.ledger.launch(record, || unsafe {
            // SAFETY: both buffers hold `len` words.
            copy_range::launch_unchecked::<R>(
                &self.client,
                cube_count,
                cube_dim,
                ArrayArg::from_raw_parts(args.buffers[from].clone(), len),
                ArrayArg::from_raw_parts(args.buffers[to].clone(), len),
                0,
            )
        });
    }
}

/// The buffers of `slots` as one kernel argument.
fn arrays<R: Runtime, T: CubePrimitive>(
    args: &RunArgs<'_, super::Cube<R>>,
    slots: &[Slot],
) -> SequenceArg<R, Array<T>> {
    let mut sequence = SequenceArg::new();
    for slot in slots {
        let b = args.bound.buffer(*slot);
        // SAFETY: each buffer holds exactly `len(b)` elements (allocated, or checked when
        // bound) and the kernel indexes within them.
        sequence
            .push(unsafe { ArrayArg::from_raw_parts(args.buffers[b].clone(), args.bound.len(b)) });
    }
    sequence
}
