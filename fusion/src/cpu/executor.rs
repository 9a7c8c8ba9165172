//! [`CpuExecutor`]: runs one plan of one graph over `n` lanes on the host.
//!
//! It mirrors [`crate::exec::PlanExecutor`]: the same buffers per plan slot (inputs,
//! materialized intermediates, outputs, a second buffer per carried input, swapped after
//! each run, or copied back for the carries `xla-default` copies), the same launches in
//! the same order, each recorded in the [`LaunchLedger`] by the shared
//! [`kernels_record`]/[`copy_state_record`] functions, so launch and byte counts equal the
//! device's for the same plan.
//!
//! Buffers are [`CpuBuffer`]s, shared by handle: [`bind_input`](CpuExecutor::bind_input)
//! makes another runner's buffer this one's input without a copy. Every buffer, slot and
//! pointer table is allocated in [`CpuExecutor::new`]; [`run`] only locks the buffers it
//! binds.
//!
//! [`run`]: CpuExecutor::run

use std::collections::HashMap;
use std::sync::Arc;

use smallvec::SmallVec;

use super::buffer::{CpuBuffer, PAD};
use super::cache::last_level_cache_bytes;
use super::holders::Holders;
use super::launch::{Bases, Scratch, run_native, run_program};
use super::native::emit;
use super::native::{Binder, CpuEngine, NativeKernels, compile_launches};
use super::program::{ChunkProgram, Loc, Op as ChunkOp, compile, dst_and_operands};
use super::threads::CpuOptions;
use crate::codegen::in_place::{PartOrder, carries_in_place};
use crate::codegen::lower::lower_plan;
use crate::exec::ExecError;
use crate::graph::{Constant, DType, Graph, NodeId, Op, Shape};
use crate::interpret::{BindError, HostArray, Scalar};
use crate::launch::{KernelLaunch, LaunchLedger, copy_state_record, kernels_record};
use crate::plan::{Plan, PlannedKernel, PlannedLaunch, Slot};

/// One launch of a run, with its ledger record computed once in `new` (a run at n = 1
/// lasts tens of nanoseconds, as long as recomputing the bytes from the plan did).
enum Launch {
    /// Program `program`; the record's kernel name is the program's.
    Program {
        program: usize,
        record: KernelLaunch<'static>,
    },
    Copy {
        from: usize,
        to: usize,
        record: KernelLaunch<'static>,
    },
}

/// Runs a plan natively on the CPU. See the [module docs](self).
pub struct CpuExecutor {
    graph: Graph,
    plan: Plan,
    n: usize,
    options: CpuOptions,
    threads: usize,
    ledger: Arc<LaunchLedger>,
    buffers: Vec<CpuBuffer>,
    lens: Vec<usize>,
    dtypes: Vec<DType>,
    bases: Vec<*mut u32>,
    slots: HashMap<Slot, usize>,
    /// Input names; input `i` holds buffer `i`.
    input_names: Vec<String>,
    /// Which buffers share memory, so a run locks each distinct one once.
    holders: Holders,
    programs: Vec<ChunkProgram>,
    /// The compiled engine's functions (one per program, `None` where it runs
    /// interpreted); `None` under the interpreter.
    native: Option<NativeKernels>,
    launches: Vec<Launch>,
    pins: Vec<NodeId>,
    /// Each param's index in `pins`, by name.
    param_pins: HashMap<String, usize>,
    pin_bits: Vec<u32>,
    /// Pins some op reads as a vector (the rest are only affine weights, read as scalars).
    broadcast_pins: Vec<bool>,
    pins_dirty: bool,
    scratch: Vec<Scratch>,
    stride: usize,
    swaps: Vec<(usize, usize)>,
    /// Carried (input, next) buffers one compiled launch updates in place: the same buffer,
    /// never swapped (see [`crate::codegen::in_place`]).
    in_place: Vec<(usize, usize)>,
    /// Buffer indices a run writes (outputs, intermediates, carried next values).
    written: Vec<usize>,
}

// SAFETY: `bases` only caches pointers into `buffers`, refreshed under their locks at
// every run and not used outside it.
unsafe impl Send for CpuExecutor {}

/// Which of `pins` pinned slots some op of `programs` reads as a vector: all but those only
/// ever read as the weight of an affine with pinned weights.
fn broadcast_pins(programs: &[ChunkProgram], pins: usize) -> Vec<bool> {
    let mut broadcast = vec![false; pins];
    for program in programs {
        let mut scalar_weights = 0;
        for op in &program.ops {
            let (dst, operands) = dst_and_operands(op);
            let read_as_vectors = match *op {
                ChunkOp::Affine {
                    pinned_weights,
                    len,
                    ..
                } => {
                    scalar_weights = if pinned_weights { len } else { 0 };
                    operands
                }
                ChunkOp::Term(_, x) if scalar_weights > 0 => {
                    scalar_weights -= 1;
                    vec![x]
                }
                _ => operands,
            };
            for l in dst.into_iter().chain(read_as_vectors) {
                if let Loc::Pinned(slot) = program.locs[l as usize] {
                    broadcast[slot as usize] = true;
                }
            }
        }
    }
    broadcast
}

fn width(graph: &Graph, node: NodeId) -> usize {
    match graph.node(node).shape {
        Shape::Lanes => 1,
        Shape::Packed(k) => k as usize,
    }
}

impl CpuExecutor {
    /// Prepares `plan` of `graph` for `n` lanes: compiles every launch and allocates every
    /// buffer (inputs start at zero, params at zero).
    pub fn new(graph: Graph, plan: Plan, n: usize, options: CpuOptions) -> Result<Self, ExecError> {
        if n == 0 {
            return Err(BindError::Empty.into());
        }
        crate::interpret::check_rows(&graph, n)?;
        if !options.simd.is_supported() {
            return Err(ExecError::SimdUnsupported(options.simd));
        }
        let steps = plan.steps_per_launch as usize;
        if steps > 1
            && graph
                .carries()
                .iter()
                .any(|c| graph.node(c.input).shape != Shape::Lanes)
        {
            // The lowering keeps packed values out of registers, so a packed carry has no
            // register to hand from one step to the next (the device lowering shares this).
            return Err(ExecError::Unsupported(format!(
                "{} with a packed carried input",
                plan.strategy
            )));
        }
        let mut slot_list: Vec<Slot> = graph
            .inputs()
            .iter()
            .map(|(id, _)| Slot::Input(*id))
            .collect();
        slot_list.extend(graph.carries().iter().map(|c| Slot::Next(c.input)));
        for kernel in &plan.kernels {
            for (slot, _) in &kernel.writes {
                if !slot_list.contains(slot) {
                    slot_list.push(*slot);
                }
            }
        }
        let slots: HashMap<Slot, usize> =
            slot_list.iter().enumerate().map(|(i, s)| (*s, i)).collect();
        let lens: Vec<usize> = slot_list
            .iter()
            .map(|slot| {
                let per_step = PlannedKernel::is_per_step(&graph, *slot);
                n * width(&graph, slot.node()) * if per_step { steps } else { 1 }
            })
            .collect();
        let buffers: Vec<CpuBuffer> = lens.iter().map(|len| CpuBuffer::zeroed(*len)).collect();
        let dtypes = slot_list
            .iter()
            .map(|s| graph.node(s.node()).dtype)
            .collect();
        let pins: Vec<NodeId> = graph
            .ids()
            .filter(|id| matches!(graph.node(*id).op, Op::Param { .. } | Op::Constant(_)))
            .collect();
        let pin_bits = pins
            .iter()
            .map(|id| match graph.node(*id).op {
                Op::Constant(Constant::F32(bits)) => bits,
                Op::Constant(Constant::U32(v)) => v,
                Op::Constant(Constant::Bool(b)) => u32::from(b),
                _ => 0,
            })
            .collect();
        let lowered = lower_plan(&graph, &plan);
        let buffer_of = |slot: Slot| slots[&slot] as u32;
        let pin_index: HashMap<NodeId, u32> = pins
            .iter()
            .enumerate()
            .map(|(i, p)| (*p, i as u32))
            .collect();
        let pin_of = |node: NodeId| pin_index[&node];
        let param_pins: HashMap<String, usize> = pins
            .iter()
            .enumerate()
            .filter_map(|(i, p)| match &graph.node(*p).op {
                Op::Param { name } => Some((name.clone(), i)),
                _ => None,
            })
            .collect();
        let programs: Vec<ChunkProgram> = lowered
            .iter()
            .map(|l| {
                compile(
                    l,
                    plan.steps_per_launch,
                    &buffer_of,
                    &pin_of,
                    options.lazy_selects,
                )
            })
            .collect();
        let native = match options.engine {
            CpuEngine::Compiled => Some(compile_launches(
                &lowered,
                plan.steps_per_launch,
                &Binder {
                    buffer: &buffer_of,
                    pin: &pin_of,
                },
                options.simd,
                options.lazy_selects,
                emit::masked_from(last_level_cache_bytes(), plan.bytes_per_lane_step(&graph)),
            )?),
            CpuEngine::Interpreted => None,
        };
        let mut next_program = 0;
        let launches = plan
            .launches
            .iter()
            .map(|launch| match launch {
                PlannedLaunch::Kernels(kernels) => {
                    next_program += 1;
                    Launch::Program {
                        program: next_program - 1,
                        record: kernels_record(&graph, &plan, kernels, "", n),
                    }
                }
                PlannedLaunch::CopyState { input } => Launch::Copy {
                    from: slots[&Slot::Next(*input)],
                    to: slots[&Slot::Input(*input)],
                    record: copy_state_record(&graph, *input, n),
                },
            })
            .collect();
        let copied: Vec<(usize, usize)> = (plan.copied_carries().into_iter())
            .map(|input| (slots[&Slot::Input(input)], slots[&Slot::Next(input)]))
            .collect();
        let in_place = match &native {
            Some(native) if crate::switches::enabled(crate::switches::IN_PLACE) => {
                let compiled = |p: usize| native.kernels[p].is_some();
                carries_in_place(
                    &graph,
                    &lowered,
                    plan.steps_per_launch,
                    PartOrder::Sequential,
                    compiled,
                )
                .into_iter()
                .map(|(input, next)| (slots[&input], slots[&next]))
                .filter(|pair| !copied.contains(pair))
                .collect()
            }
            _ => Vec::new(),
        };
        let mut buffers = buffers;
        for &(input, next) in &in_place {
            buffers[next] = buffers[input].clone();
        }
        let swaps = (graph.carries().iter())
            .map(|c| (slots[&Slot::Input(c.input)], slots[&Slot::Next(c.input)]))
            .filter(|pair| !in_place.contains(pair) && !copied.contains(pair))
            .collect();
        let written = slot_list
            .iter()
            .enumerate()
            .filter(|(_, slot)| !matches!(slot, Slot::Input(_)))
            .map(|(i, _)| i)
            .collect();
        let threads = options.resolved_threads();
        // One vector past the chunk: slots a multiple of 4 KiB apart would share L1 sets, and
        // an op reading many slots at once (an affine) would evict its own inputs.
        let stride = programs
            .iter()
            .map(|p| options.chunk_lanes(p.rows_of).min(n).next_multiple_of(PAD) + PAD)
            .max()
            .unwrap_or(PAD);
        let broadcast_pins = broadcast_pins(&programs, pins.len());
        let temps = programs
            .iter()
            .map(|p| p.scratch_slots as usize)
            .max()
            .unwrap_or(0);
        let locs = programs.iter().map(|p| p.locs.len()).max().unwrap_or(0);
        let scratch = (0..threads)
            .map(|_| Scratch {
                words: vec![0; (pins.len() + temps) * stride],
                ptrs: vec![std::ptr::null_mut(); locs],
            })
            .collect();
        let input_names = graph
            .inputs()
            .iter()
            .map(|(_, n)| (*n).to_owned())
            .collect();
        Ok(Self {
            bases: vec![std::ptr::null_mut(); buffers.len()],
            graph,
            plan,
            n,
            options,
            threads,
            ledger: Arc::new(LaunchLedger::new()),
            buffers,
            lens,
            dtypes,
            slots,
            input_names,
            holders: Holders::new(),
            programs,
            native,
            launches,
            pins,
            param_pins,
            pin_bits,
            broadcast_pins,
            pins_dirty: true,
            scratch,
            stride,
            swaps,
            in_place,
            written,
        })
    }

    /// Records launches in `ledger` from now on.
    pub fn with_ledger(mut self, ledger: Arc<LaunchLedger>) -> Self {
        self.ledger = ledger;
        self
    }

    /// Records launches in `ledger` from now on.
    pub fn set_ledger(&mut self, ledger: Arc<LaunchLedger>) {
        self.ledger = ledger;
    }

    /// The ledger launches are recorded in.
    pub fn ledger(&self) -> &Arc<LaunchLedger> {
        &self.ledger
    }

    /// The plan being run.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The graph being run.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Lanes.
    pub fn lanes(&self) -> usize {
        self.n
    }

    /// The options it runs with.
    pub fn options(&self) -> &CpuOptions {
        &self.options
    }

    /// The compiled chunk programs, one per kernel launch (for inspection and tests).
    pub fn programs(&self) -> &[ChunkProgram] {
        &self.programs
    }

    /// The engine each launch program runs on, in program order (launches the compiled
    /// engine cannot write run interpreted).
    pub fn engines(&self) -> Vec<CpuEngine> {
        (0..self.programs.len())
            .map(|p| match &self.native {
                Some(native) if native.kernels[p].is_some() => CpuEngine::Compiled,
                _ => CpuEngine::Interpreted,
            })
            .collect()
    }

    /// Wall time spent in [`new`](Self::new) generating, compiling (or loading from the
    /// cache) and loading the compiled kernels; zero under the interpreter.
    pub fn build_time(&self) -> std::time::Duration {
        self.native
            .as_ref()
            .map_or(std::time::Duration::ZERO, |n| n.build_time)
    }

    fn input_buffer(&self, name: &str) -> Result<usize, ExecError> {
        // Inputs hold the first buffers, in the graph's input order.
        self.input_names
            .iter()
            .position(|input| input == name)
            .ok_or_else(|| ExecError::UnknownName {
                kind: "input",
                name: name.into(),
            })
    }

    fn output_buffer(&self, name: &str) -> Result<usize, ExecError> {
        let output = self.graph.outputs().iter().find(|o| o.name == name);
        let output = output.ok_or_else(|| ExecError::UnknownName {
            kind: "output",
            name: name.into(),
        })?;
        Ok(self.slots[&Slot::Value(output.node)])
    }

    /// The buffer input `name` holds now (for carried inputs: the state).
    pub fn input(&self, name: &str) -> Result<&CpuBuffer, ExecError> {
        Ok(&self.buffers[self.input_buffer(name)?])
    }

    /// The buffer of output `name`, written by the last run.
    pub fn output(&self, name: &str) -> Result<&CpuBuffer, ExecError> {
        Ok(&self.buffers[self.output_buffer(name)?])
    }

    /// Exchanges output `name`'s buffer with `buffer`, which must hold as many elements and
    /// be no buffer this executor binds: the next run writes into it, and `buffer` keeps
    /// what the last run wrote.
    pub fn swap_output(&mut self, name: &str, buffer: &mut CpuBuffer) -> Result<(), ExecError> {
        let b = self.output_buffer(name)?;
        self.check_len(name, b, buffer)?;
        if self.buffers.iter().any(|bound| bound.same(buffer)) {
            return Err(ExecError::Unsupported(format!(
                "swapping output {name} with a buffer this plan already binds"
            )));
        }
        std::mem::swap(&mut self.buffers[b], buffer);
        self.holders.rebound(&self.buffers, b);
        Ok(())
    }

    /// Checks that `buffer` holds as many elements as buffer `b`, named `name`.
    fn check_len(&self, name: &str, b: usize, buffer: &CpuBuffer) -> Result<(), ExecError> {
        if buffer.len() != self.lens[b] {
            return Err(BindError::BadInput {
                name: name.into(),
                expected: format!("{} x {}", self.lens[b], self.dtypes[b]),
                found: format!("a buffer of {} elements", buffer.len()),
            }
            .into());
        }
        Ok(())
    }

    /// Makes `buffer` input `name` without copying. Its length must be the input's; a
    /// buffer the executor writes (an output or a carried input's next value) cannot be
    /// bound, since a run would then read what it writes.
    pub fn bind_input(&mut self, name: &str, buffer: &CpuBuffer) -> Result<(), ExecError> {
        let b = self.input_buffer(name)?;
        self.check_len(name, b, buffer)?;
        // An input updated in place is its own next value: that write is the one expected.
        let partner = self.in_place_next(b);
        let written = self
            .written
            .iter()
            .filter(|w| Some(**w) != partner)
            .any(|w| self.buffers[*w].same(buffer));
        if written {
            return Err(ExecError::Unsupported(format!(
                "binding input {name} to a buffer this plan writes"
            )));
        }
        self.buffers[b] = buffer.clone();
        self.rebound(b, partner);
        Ok(())
    }

    /// Carried inputs the compiled engine updates in place (one buffer for the state and
    /// its next value), in input order.
    pub fn in_place_inputs(&self) -> Vec<&str> {
        self.in_place
            .iter()
            .map(|(input, _)| self.input_names[*input].as_str())
            .collect()
    }

    /// The next-value buffer input buffer `b` shares when updated in place.
    fn in_place_next(&self, b: usize) -> Option<usize> {
        self.in_place
            .iter()
            .find(|(input, _)| *input == b)
            .map(|(_, next)| *next)
    }

    /// Input buffer `b` was replaced: its in-place next value, if any, becomes the same
    /// buffer (the holders then recompute, the pair sharing memory), else the holders
    /// follow the one change.
    fn rebound(&mut self, b: usize, in_place_next: Option<usize>) {
        match in_place_next {
            Some(next) => {
                self.buffers[next] = self.buffers[b].clone();
                self.holders.invalidate();
            }
            None => self.holders.rebound(&self.buffers, b),
        }
    }

    /// Copies a host array into input `name`.
    pub fn set_input(&mut self, name: &str, values: &HostArray) -> Result<(), ExecError> {
        let b = self.input_buffer(name)?;
        let dtype = self.dtypes[b];
        let ok = matches!(
            (dtype, values),
            (DType::F32, HostArray::F32(_)) | (DType::U32 | DType::Bool, HostArray::U32(_))
        );
        if !ok || values.len() != self.lens[b] {
            return Err(BindError::BadInput {
                name: name.into(),
                expected: format!("{} x {dtype}", self.lens[b]),
                found: format!("{} elements", values.len()),
            }
            .into());
        }
        // Write into a buffer of our own: the bound one may be shared with another runner.
        let fresh = match values {
            HostArray::F32(v) => CpuBuffer::from_f32(v),
            HostArray::U32(v) => CpuBuffer::from_u32(v),
        };
        self.buffers[b] = fresh;
        self.rebound(b, self.in_place_next(b));
        Ok(())
    }

    fn host(&self, b: usize) -> HostArray {
        match self.dtypes[b] {
            DType::F32 => HostArray::F32(self.buffers[b].to_f32()),
            _ => HostArray::U32(self.buffers[b].to_u32()),
        }
    }

    /// Copies the current value of input `name` (the state, for carried inputs).
    pub fn read_input(&self, name: &str) -> Result<HostArray, ExecError> {
        Ok(self.host(self.input_buffer(name)?))
    }

    /// Copies output `name` after the last run.
    pub fn read_output(&self, name: &str) -> Result<HostArray, ExecError> {
        Ok(self.host(self.output_buffer(name)?))
    }

    /// Sets a runtime scalar.
    pub fn set_param(&mut self, name: &str, value: Scalar) -> Result<(), ExecError> {
        self.set_params(&[(name, value)])
    }

    /// Sets several runtime scalars at once (a policy's weights), each looked up by name.
    pub fn set_params(&mut self, values: &[(&str, Scalar)]) -> Result<(), ExecError> {
        for (name, value) in values {
            let Some(&pin) = self.param_pins.get(*name) else {
                return Err(ExecError::UnknownName {
                    kind: "param",
                    name: (*name).into(),
                });
            };
            let bits = match (self.graph.node(self.pins[pin]).dtype, value) {
                (DType::F32, Scalar::F32(v)) => v.to_bits(),
                (DType::U32, Scalar::U32(v)) => *v,
                (expected, _) => {
                    return Err(BindError::BadParam {
                        name: (*name).into(),
                        expected,
                    }
                    .into());
                }
            };
            self.pin_bits[pin] = bits;
        }
        self.pins_dirty = true;
        Ok(())
    }

    /// Replaces every buffer the plan writes by one of NaN (`f32`) or `0xFFFF_FFFF` (`u32`),
    /// so tests can tell written elements from stale ones.
    pub(crate) fn poison_written(&mut self) {
        // A state updated in place is read before it is written: it keeps its values.
        let in_place: Vec<usize> = self.in_place.iter().map(|(_, next)| *next).collect();
        for &b in self.written.iter().filter(|b| !in_place.contains(b)) {
            let poisoned = match self.dtypes[b] {
                DType::F32 => CpuBuffer::from_f32(&vec![f32::NAN; self.lens[b]]),
                _ => CpuBuffer::from_u32(&vec![u32::MAX; self.lens[b]]),
            };
            self.buffers[b] = poisoned;
        }
        self.holders.invalidate();
    }

    /// Runs the plan once (`steps_per_launch` graph steps), then advances the carried state.
    pub fn run(&mut self) -> Result<(), ExecError> {
        if self.pins_dirty {
            for scratch in &mut self.scratch {
                for (p, bits) in self.pin_bits.iter().enumerate() {
                    if self.broadcast_pins[p] {
                        scratch.words[p * self.stride..(p + 1) * self.stride].fill(*bits);
                    }
                }
            }
            self.pins_dirty = false;
        }
        self.holders.refresh(&self.buffers);
        // Lock each distinct buffer once (an input may be bound to the same buffer twice).
        let mut guards = SmallVec::<[_; 32]>::new();
        for (i, buffer) in self.buffers.iter().enumerate() {
            let first = self.holders.first(i);
            if first == i {
                let mut guard = buffer.lock();
                self.bases[i] = guard.as_mut_ptr();
                guards.push(guard);
            } else {
                self.bases[i] = self.bases[first];
            }
        }
        for launch in &self.launches {
            match *launch {
                Launch::Program { program: p, record } => {
                    let program = &self.programs[p];
                    let record = KernelLaunch {
                        kernel: &program.name,
                        ..record
                    };
                    let kernel = self.native.as_ref().and_then(|native| native.kernels[p]);
                    self.ledger.launch(record, || match kernel {
                        Some(kernel) => run_native(
                            kernel,
                            &self.options,
                            self.threads,
                            &mut self.scratch,
                            Bases(&self.bases),
                            self.n,
                            &self.pin_bits,
                        ),
                        None => run_program(
                            program,
                            &self.options,
                            self.threads,
                            &mut self.scratch,
                            Bases(&self.bases),
                            self.n,
                            self.stride,
                            &self.pin_bits,
                        ),
                    });
                }
                Launch::Copy { from, to, record } => {
                    let len = self.lens[to];
                    self.ledger.launch(record, || {
                        // SAFETY: distinct buffers of `len` words (a carry's two buffers).
                        unsafe {
                            std::ptr::copy_nonoverlapping(self.bases[from], self.bases[to], len)
                        }
                    });
                }
            }
        }
        drop(guards);
        for &(input, next) in &self.swaps {
            self.buffers.swap(input, next);
        }
        if !self.swaps.is_empty() {
            self.holders.swapped();
        }
        Ok(())
    }
}
