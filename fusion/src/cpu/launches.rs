//! [`CpuLaunches`]: a plan's launches prepared for the host, and one run of them.
//!
//! Every launch is compiled once, when the executor is built: to C by the native engine
//! where it can write the launch, else to a chunk program for the interpreter. Constants
//! and params are "pins", broadcast once per thread into its scratch (only those an op
//! reads as a vector). A run locks each distinct buffer once, caches its base pointer, and
//! runs the launches in plan order, each recorded in the ledger by the shared
//! [`kernels_record`]/[`copy_state_record`] functions, so launch and byte counts equal the
//! device's for the same plan.

use smallvec::SmallVec;

use super::binder::Binder;
use super::buffer::PAD;
use super::cache::last_level_cache_bytes;
use super::interp::ops::{ChunkProgram, Loc, Op as ChunkOp, dst_and_operands};
use super::interp::program::compile;
use super::launch::{Bases, Body, Pins, Scratch, run};
use super::native::{CpuEngine, NativeKernels, compile_launches, emit};
use super::threads::CpuOptions;
use std::sync::Arc;

use crate::exec::{
    BoundPlan, ExecError, KernelLaunch, Lowered, RunArgs, Target, copy_state_record, kernels_record,
};
use crate::graph::{NodeId, Op};
use crate::lir::in_place::PartOrder;
use crate::lir::program::LoweredLaunch;
use crate::plan::{PlannedLaunch, Slot};

/// One launch of a run, with its ledger record computed once (a run at n = 1 lasts tens of
/// nanoseconds, as long as recomputing the bytes from the plan did).
pub(super) enum Launch {
    /// A lowered launch, run by `body`; the record's kernel name is `name`.
    Kernels {
        name: String,
        body: Body,
        record: KernelLaunch<'static>,
    },
    Copy {
        from: usize,
        to: usize,
        record: KernelLaunch<'static>,
    },
}

/// A plan's launches on the host. See the [module docs](self).
pub struct CpuLaunches {
    options: CpuOptions,
    threads: usize,
    /// Keeps the compiled engine's functions loaded; `None` under the interpreter.
    _native: Option<NativeKernels>,
    pub(super) launches: Vec<Launch>,
    /// Constant and param nodes, in node order, and their bits in each bank (bank-major).
    pins: Vec<NodeId>,
    pin_bits: Vec<u32>,
    /// Pins some op reads as a vector (the rest are only affine weights, read as scalars).
    broadcast_pins: Vec<bool>,
    scratch: Vec<Scratch>,
    bases: Vec<*mut u32>,
}

// SAFETY: `bases` only caches pointers into the executor's buffers, refreshed under their
// locks at every run and not used outside it.
unsafe impl Send for CpuLaunches {}

/// Which of `pins` pinned slots some op of `programs` reads as a vector: all but those only
/// ever read as the weight of an affine with pinned weights.
fn broadcast_pins<'a>(programs: impl Iterator<Item = &'a ChunkProgram>, pins: usize) -> Vec<bool> {
    let mut broadcast = vec![false; pins];
    for program in programs {
        let mut scalar_weights = 0;
        for op in &program.ops {
            let (dst, mut operands) = dst_and_operands(op);
            match *op {
                ChunkOp::Affine {
                    pinned_weights,
                    len,
                    ..
                } => scalar_weights = if pinned_weights { len } else { 0 },
                ChunkOp::Term(..) if scalar_weights > 0 => {
                    // The weight, read as a scalar.
                    scalar_weights -= 1;
                    operands.remove(0);
                }
                _ => {}
            }
            for l in dst.into_iter().chain(operands) {
                if let Loc::Pinned(slot) = program.locs[l as usize] {
                    broadcast[slot as usize] = true;
                }
            }
        }
    }
    broadcast
}

/// Every bank's value of each of `pins`, bank-major.
fn pinned_bits(bound: &BoundPlan, pins: &[NodeId]) -> Vec<u32> {
    (0..bound.banks())
        .flat_map(|bank| pins.iter().map(move |p| bound.pinned_bits(*p, bank)))
        .collect()
}

impl CpuLaunches {
    /// The target the host lowers plans for: parts one after another over a chunk, no
    /// compaction, loop or binding limit, and carries updated in place only by launches the
    /// compiled engine writes as C (the interpreter's chunk programs keep them
    /// double-buffered).
    pub(super) fn target(options: &CpuOptions) -> Target {
        let compiled = options.engine == CpuEngine::Compiled;
        Target {
            part_order: PartOrder::Sequential,
            compact: false,
            loop_limit: None,
            max_bindings: None,
            aliasing: true,
            state_from_outputs: false,
            in_place_launch: Arc::new(move |launch: &LoweredLaunch| {
                compiled && emit::emittable(launch).is_ok()
            }),
        }
    }

    /// Compiles every launch of `lowered` (the plan of `bound`, lowered for
    /// [`Self::target`]) under `options`.
    pub(super) fn prepare(
        bound: &BoundPlan,
        lowered: &Lowered,
        options: &CpuOptions,
    ) -> Result<Self, ExecError> {
        let (graph, plan, n) = (bound.graph(), bound.plan(), bound.lanes());
        let pins: Vec<NodeId> = (graph.ids())
            .filter(|id| matches!(graph.node(*id).op, Op::Param { .. } | Op::Constant(_)))
            .collect();
        let lowered = lowered.launches.clone();
        let buffer_of = |slot: Slot| bound.buffer(slot) as u32;
        let binder = Binder {
            buffer: &buffer_of,
            // `pins` is in node order.
            pin: &|node| pins.binary_search(&node).expect("a pinned node") as u32,
        };
        let steps = plan.steps_per_launch;
        let native = match options.engine {
            CpuEngine::Compiled => Some(compile_launches(
                &lowered,
                steps,
                &binder,
                options.simd,
                options.lazy_selects,
                emit::masked_from(last_level_cache_bytes(), plan.bytes_per_lane_step(graph)),
            )?),
            CpuEngine::Interpreted => None,
        };
        let kernel = |p: usize| native.as_ref().and_then(|k| k.kernels[p]);
        let bodies: Vec<Body> = (lowered.iter().enumerate())
            .map(|(p, launch)| match kernel(p) {
                Some(kernel) => Body::Native(kernel),
                None => Body::Program(compile(launch, steps, &binder, options.lazy_selects)),
            })
            .collect();
        let threads = options.resolved_threads();
        let interpreted = || {
            bodies.iter().filter_map(|body| match body {
                Body::Program(program) => Some(program),
                Body::Native(_) => None,
            })
        };
        // One vector past the chunk: slots a multiple of 4 KiB apart would share L1 sets, and
        // an op reading many slots at once (an affine) would evict its own inputs.
        let stride = (interpreted())
            .map(|p| options.chunk_lanes(p.rows_of).min(n).next_multiple_of(PAD) + PAD)
            .max()
            .unwrap_or(PAD);
        let temps = interpreted().map(|p| p.scratch_slots as usize).max();
        let locs = interpreted().map(|p| p.locs.len()).max().unwrap_or(0);
        let scratch_words = temps.map_or(0, |temps| (pins.len() + temps) * stride);
        let scratch = (0..threads)
            .map(|_| Scratch {
                words: vec![0; scratch_words],
                stride,
                ptrs: vec![std::ptr::null_mut(); locs],
                bank: None,
            })
            .collect();
        let broadcast_pins = broadcast_pins(interpreted(), pins.len());
        let mut lowered = lowered.into_iter().zip(bodies);
        let launches = (plan.launches.iter())
            .map(|launch| match launch {
                PlannedLaunch::Kernels(kernels) => {
                    let (lowered, body) = lowered.next().expect("a lowered launch per launch");
                    Launch::Kernels {
                        name: lowered.name,
                        body,
                        record: kernels_record(graph, plan, kernels, "", n),
                    }
                }
                PlannedLaunch::CopyState { input } => Launch::Copy {
                    from: bound.buffer(Slot::Next(*input)),
                    to: bound.buffer(Slot::Input(*input)),
                    record: copy_state_record(graph, *input, n),
                },
            })
            .collect();
        Ok(Self {
            broadcast_pins,
            pin_bits: pinned_bits(bound, &pins),
            bases: vec![std::ptr::null_mut(); bound.slots().len()],
            options: options.clone(),
            threads,
            _native: native,
            launches,
            pins,
            scratch,
        })
    }

    /// Runs every launch once (see [`crate::exec::Backend::run`]).
    pub(super) fn run(&mut self, args: RunArgs<'_, super::Cpu>) {
        let (bound, buffers, holders) = (args.bound, args.buffers, args.holders);
        if args.params_changed.any() {
            self.pin_bits = pinned_bits(bound, &self.pins);
            for scratch in &mut self.scratch {
                scratch.bank = None;
            }
        }
        // Lock each distinct buffer once (an input may be bound to the same buffer twice).
        let mut guards = SmallVec::<[_; 32]>::new();
        for (i, buffer) in buffers.iter().enumerate() {
            let first = holders.first(i);
            if first == i {
                let mut guard = buffer.lock();
                self.bases[i] = guard.as_mut_ptr();
                guards.push(guard);
            } else {
                self.bases[i] = self.bases[first];
            }
        }
        let lanes = (bound.lanes(), bound.banks());
        let pins = Pins {
            bits: &self.pin_bits,
            count: self.pins.len(),
            broadcast: &self.broadcast_pins,
        };
        for launch in &self.launches {
            match *launch {
                Launch::Kernels {
                    ref name,
                    ref body,
                    record,
                } => {
                    let record = KernelLaunch {
                        kernel: name,
                        ..record
                    };
                    args.ledger.launch(record, || {
                        run(
                            body,
                            &self.options,
                            self.threads,
                            &mut self.scratch,
                            Bases(&self.bases),
                            lanes,
                            pins,
                        )
                    });
                }
                Launch::Copy { from, to, record } => {
                    let len = bound.len(to);
                    args.ledger.launch(record, || {
                        // SAFETY: distinct buffers of `len` words (a carry's two buffers).
                        unsafe {
                            std::ptr::copy_nonoverlapping(self.bases[from], self.bases[to], len)
                        }
                    });
                }
            }
        }
        drop(guards);
    }
}
