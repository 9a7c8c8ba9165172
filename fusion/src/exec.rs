//! Running a plan on a device: buffers, params, launches and loop-carried state.
//!
//! [`PlanExecutor`] owns every buffer a plan needs besides its inputs: materialized
//! intermediates, outputs, and a second buffer per carried input (state is double-buffered:
//! a step reads one and writes the other, then they swap, except for the carries
//! `xla-default` copies back as XLA's while loop does). Every launch goes through the
//! [`LaunchLedger`].
//!
//! A carry that one launch reads before it writes it is updated in place instead (see
//! [`crate::codegen::in_place`]): the kernel writes the next state over the state's own
//! buffer, bound once as the carry's output and read from there
//! ([`crate::codegen::state_reads`]). A carry read otherwise (packed columns) would be
//! bound twice, as input and output: wgpu allows bindings that alias (it binds every
//! storage buffer read-write, and cubecl's slices of one page already share a buffer),
//! while CUDA declares the buffers a kernel only reads `const __restrict__`, so there such
//! a carry stays double-buffered.

use std::collections::HashMap;
use std::sync::Arc;

use cubecl::prelude::*;
use cubecl::server::Handle;

use crate::buffers::{download, upload};
mod error;

pub use error::ExecError;

use crate::codegen::compact::compact;
use crate::codegen::in_place::{PartOrder, carries_in_place};
use crate::codegen::kernel::{copy_array, fused_array};
use crate::codegen::loop_budget::{launch_iterations, steps_within};
use crate::codegen::lower::{LoweredLaunch, ParamLayout, lower_plan};
use crate::codegen::program::LaunchProgram;
use crate::codegen::state_reads::{binds_once, read_state_from_outputs};
use crate::codegen::vector::VECTOR_WIDTH;
use crate::graph::{DType, Graph, NodeId, Shape};
use crate::interpret::{BindError, HostArray, Scalar};
use crate::launch::{
    ELEMENTWISE_CUBE_DIM, LaunchLedger, copy_state_record, elementwise_launch_shape, kernels_record,
};
use crate::plan::{Plan, PlannedKernel, PlannedLaunch, Slot};

/// Runs one plan of one graph over `n` lanes.
pub struct PlanExecutor<R: Runtime> {
    client: ComputeClient<R>,
    ledger: Arc<LaunchLedger>,
    graph: Graph,
    plan: Plan,
    lowered: Vec<LoweredLaunch>,
    /// The launches as bound: `lowered`, with carries updated in place read from the
    /// binding of their next value (see [`crate::codegen::state_reads`]).
    bound: Vec<LoweredLaunch>,
    n: usize,
    buffers: HashMap<Slot, Handle>,
    /// Each param's type and index in its params buffer, by name.
    param_slots: HashMap<String, (DType, usize)>,
    param_f: Vec<f32>,
    param_u: Vec<u32>,
    params_f_handle: Handle,
    params_u_handle: Handle,
    vectorize: bool,
    /// Carried inputs updated in place: their next value is their own buffer, never swapped.
    in_place: Vec<NodeId>,
}

fn width(graph: &Graph, node: NodeId) -> usize {
    match graph.node(node).shape {
        Shape::Lanes => 1,
        Shape::Packed(k) => k as usize,
    }
}

/// Storage buffers `launch` binds, the params buffers included (cubecl's `max_bindings`
/// already leaves room for its metadata buffer).
fn binding_count(launch: &LoweredLaunch) -> usize {
    let b = &launch.bindings;
    b.in_f.len()
        + b.in_u.len()
        + b.out_f.len()
        + b.out_u.len()
        + crate::plan::PlanOptions::RESERVED_BINDINGS
}

impl<R: Runtime> PlanExecutor<R> {
    /// Prepares `plan` of `graph` for `n` lanes: allocates every buffer the plan writes.
    pub fn new(
        client: ComputeClient<R>,
        graph: Graph,
        plan: Plan,
        n: usize,
    ) -> Result<Self, ExecError> {
        if n == 0 {
            return Err(BindError::Empty.into());
        }
        crate::interpret::check_rows(&graph, n)?;
        let max = client.properties().memory.max_page_size;
        let steps = plan.steps_per_launch as usize;
        let largest = graph
            .ids()
            .map(|id| (n * width(&graph, id) * steps * 4) as u64)
            .max()
            .unwrap_or(0);
        if largest > max {
            return Err(ExecError::TooLarge {
                bytes: largest,
                max,
            });
        }
        // Dense layers run as loops over the params buffer (see `codegen::compact`).
        let lowered: Vec<LoweredLaunch> = lower_plan(&graph, &plan)
            .into_iter()
            .map(|mut launch| {
                let parts = launch.program.parts.iter().map(compact).collect();
                launch.program = LaunchProgram::new(parts);
                launch
            })
            .collect();
        let in_place = Self::carries_in_place(&client, &graph, &plan, &lowered);
        let bound: Vec<LoweredLaunch> = (lowered.iter())
            .map(|launch| read_state_from_outputs(launch, &in_place))
            .collect();
        // Past the limit, wgpu fails the pipeline on its device thread, not here.
        let limit = client.properties().hardware.max_bindings as usize;
        for launch in &bound {
            let bindings = binding_count(launch);
            if bindings > limit {
                return Err(ExecError::TooManyBindings {
                    launch: launch.name.clone(),
                    bindings,
                    limit,
                });
            }
        }
        let params = ParamLayout::of(&graph);
        let param_name = |id: &NodeId| match &graph.node(*id).op {
            crate::graph::Op::Param { name } => name.clone(),
            _ => unreachable!("the param layout lists params"),
        };
        let param_slots: HashMap<String, (DType, usize)> = (params.f32_params.iter().enumerate())
            .map(|(i, id)| (param_name(id), (DType::F32, i)))
            .chain(
                params
                    .u32_params
                    .iter()
                    .enumerate()
                    .map(|(i, id)| (param_name(id), (DType::U32, i))),
            )
            .collect();
        let mut executor = Self {
            params_f_handle: upload(&client, &[0f32]),
            params_u_handle: upload(&client, &[0u32]),
            param_f: vec![0.0; params.f32_params.len()],
            param_u: vec![0; params.u32_params.len()],
            param_slots,
            vectorize: crate::switches::enabled(crate::switches::VECTORIZE),
            in_place,
            ledger: Arc::new(LaunchLedger::new()),
            buffers: HashMap::new(),
            client,
            graph,
            plan,
            lowered,
            bound,
            n,
        };
        executor.allocate_outputs(false);
        Ok(executor)
    }

    /// The carried inputs `plan` may update in place on this runtime (see the module docs).
    fn carries_in_place(
        client: &ComputeClient<R>,
        graph: &Graph,
        plan: &Plan,
        lowered: &[LoweredLaunch],
    ) -> Vec<NodeId> {
        if !crate::switches::enabled(crate::switches::IN_PLACE) {
            return Vec::new();
        }
        let copied = plan.copied_carries();
        let aliasing = R::name(client).starts_with("wgpu");
        // A rows kernel's thread reads a whole row of lanes: keep those double-buffered.
        let by_lane = |p: usize| lowered[p].rows_of.is_none();
        let steps = plan.steps_per_launch;
        carries_in_place(graph, lowered, steps, PartOrder::Concurrent, by_lane)
            .into_iter()
            .map(|(input, _)| input.node())
            .filter(|input| !copied.contains(input))
            .filter(|&input| aliasing || lowered.iter().all(|l| binds_once(l, input)))
            .collect()
    }

    /// Carried inputs updated in place (one buffer for the state and its next value), in
    /// input order.
    pub fn in_place_inputs(&self) -> Vec<&str> {
        (self.graph.inputs().into_iter())
            .filter(|(id, _)| self.in_place.contains(id))
            .map(|(_, name)| name)
            .collect()
    }

    /// Storage buffers each kernel launch binds, the two params buffers included and
    /// cubecl's metadata buffer not (a carry updated in place is bound once).
    pub fn storage_bindings(&self) -> Vec<usize> {
        self.bound.iter().map(binding_count).collect()
    }

    /// Keeps every carry double-buffered from now on (to measure or test what updating the
    /// state in place changes).
    pub fn double_buffer(&mut self) {
        self.bound = self.lowered.clone();
        for input in std::mem::take(&mut self.in_place) {
            let slot = Slot::Next(input);
            let next = self.client.empty(self.slot_len(slot) * 4);
            self.buffers.insert(slot, next);
        }
    }

    /// Records launches in `ledger` from now on.
    pub fn with_ledger(mut self, ledger: Arc<LaunchLedger>) -> Self {
        self.ledger = ledger;
        self
    }

    /// Refuses the plan if a thread of one of its kernels would run more than `limit` loop
    /// iterations (see [`crate::codegen::loop_budget`]); `None` checks nothing.
    pub fn with_loop_limit(self, limit: Option<u64>) -> Result<Self, ExecError> {
        let Some(limit) = limit else {
            return Ok(self);
        };
        for launch in &self.lowered {
            let iterations = launch_iterations(&launch.program);
            if iterations > limit {
                return Err(ExecError::TooManyLoopIterations {
                    kernel: launch.name.clone(),
                    iterations,
                    limit,
                    most_steps: steps_within(&launch.program, limit),
                });
            }
        }
        Ok(self)
    }

    /// Allows (the default) or forbids vectorised launches.
    pub fn set_vectorize(&mut self, vectorize: bool) {
        self.vectorize = vectorize;
    }

    /// Lanes per thread of lowered launch `index` under the current settings and size.
    pub fn vector_width(&self, index: usize) -> usize {
        let launch = &self.lowered[index];
        if self.vectorize && launch.vectorizable && self.n.is_multiple_of(VECTOR_WIDTH) {
            VECTOR_WIDTH
        } else {
            1
        }
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

    /// The compute client.
    pub fn client(&self) -> &ComputeClient<R> {
        &self.client
    }

    fn slot_len(&self, slot: Slot) -> usize {
        let per_step = PlannedKernel::is_per_step(&self.graph, slot);
        let steps = if per_step {
            self.plan.steps_per_launch as usize
        } else {
            1
        };
        self.n * width(&self.graph, slot.node()) * steps
    }

    /// (Re)allocates every buffer the plan writes; `poison` fills them with NaN (f32) or
    /// `0xFFFF_FFFF` (u32) so tests can tell written elements from stale ones.
    pub fn allocate_outputs(&mut self, poison: bool) {
        let mut slots: Vec<Slot> = self
            .plan
            .kernels
            .iter()
            .flat_map(|k| k.writes.iter().map(|(slot, _)| *slot))
            .collect();
        slots.extend(
            (self.graph.carries().iter())
                .filter(|c| !self.in_place.contains(&c.input))
                .map(|c| Slot::Next(c.input)),
        );
        for slot in slots {
            let len = self.slot_len(slot);
            let handle = match (self.graph.node(slot.node()).dtype, poison) {
                (DType::F32, true) => upload(&self.client, &vec![f32::NAN; len]),
                (_, true) => upload(&self.client, &vec![u32::MAX; len]),
                (_, false) => self.client.empty(len * 4),
            };
            self.buffers.insert(slot, handle);
        }
    }

    fn input_node(&self, name: &str) -> Result<NodeId, ExecError> {
        self.graph
            .input_id(name)
            .ok_or_else(|| ExecError::UnknownName {
                kind: "input",
                name: name.into(),
            })
    }

    /// Uploads a host array into input `name` (per-step inputs of a `K`-step plan hold
    /// `K * n` lanes, step-major).
    pub fn set_input(&mut self, name: &str, values: &HostArray) -> Result<(), ExecError> {
        let id = self.input_node(name)?;
        let node = self.graph.node(id);
        let expected = self.slot_len(Slot::Input(id));
        let type_ok = matches!(
            (node.dtype, values),
            (DType::F32, HostArray::F32(_)) | (DType::U32 | DType::Bool, HostArray::U32(_))
        );
        if !type_ok || values.len() != expected {
            return Err(BindError::BadInput {
                name: name.into(),
                expected: format!("{expected} x {}", node.dtype),
                found: format!("{} elements", values.len()),
            }
            .into());
        }
        let handle = match values {
            HostArray::F32(v) => upload(&self.client, v),
            HostArray::U32(v) => upload(&self.client, v),
        };
        self.buffers.insert(Slot::Input(id), handle);
        Ok(())
    }

    /// Binds a device buffer to input `name`. Its length is checked against the input's
    /// (per-step inputs of a `K`-step plan hold `K * n` lanes): a launch never reads past it.
    pub fn bind_input(&mut self, name: &str, handle: Handle) -> Result<(), ExecError> {
        let id = self.input_node(name)?;
        self.check_len(name, Slot::Input(id), &handle)?;
        self.buffers.insert(Slot::Input(id), handle);
        Ok(())
    }

    /// The buffer currently bound to input `name` (for carried inputs: the current state).
    pub fn input_handle(&self, name: &str) -> Result<&Handle, ExecError> {
        let id = self.input_node(name)?;
        self.buffers
            .get(&Slot::Input(id))
            .ok_or_else(|| BindError::MissingInput(name.into()).into())
    }

    /// Sets a runtime scalar (no recompilation: params live in a buffer).
    pub fn set_param(&mut self, name: &str, value: Scalar) -> Result<(), ExecError> {
        self.set_params(&[(name, value)])
    }

    /// Sets several runtime scalars at once (a policy's weights) with one upload per
    /// params buffer.
    pub fn set_params(&mut self, values: &[(&str, Scalar)]) -> Result<(), ExecError> {
        for (name, value) in values {
            match (self.param_slots.get(*name), value) {
                (None, _) => {
                    return Err(ExecError::UnknownName {
                        kind: "param",
                        name: (*name).into(),
                    });
                }
                (Some((DType::F32, i)), Scalar::F32(v)) => self.param_f[*i] = *v,
                (Some((DType::U32, i)), Scalar::U32(v)) => self.param_u[*i] = *v,
                (Some((expected, _)), _) => {
                    return Err(BindError::BadParam {
                        name: (*name).into(),
                        expected: *expected,
                    }
                    .into());
                }
            }
        }
        if !self.param_f.is_empty() {
            self.params_f_handle = upload(&self.client, &self.param_f);
        }
        if !self.param_u.is_empty() {
            self.params_u_handle = upload(&self.client, &self.param_u);
        }
        Ok(())
    }

    /// The buffer holding output `name` after the last run.
    pub fn output_handle(&self, name: &str) -> Result<&Handle, ExecError> {
        Ok(&self.buffers[&Slot::Value(self.output_node(name)?)])
    }

    /// Exchanges output `name`'s buffer with `handle`, which must hold as many elements:
    /// the next run writes into it, and `handle` keeps what the last run wrote.
    pub fn swap_output(&mut self, name: &str, handle: &mut Handle) -> Result<(), ExecError> {
        let node = self.output_node(name)?;
        self.check_len(name, Slot::Value(node), handle)?;
        let slot = self
            .buffers
            .get_mut(&Slot::Value(node))
            .expect("outputs are allocated");
        std::mem::swap(slot, handle);
        Ok(())
    }

    /// Checks that `handle` holds as many elements as `slot`, named `name`.
    fn check_len(&self, name: &str, slot: Slot, handle: &Handle) -> Result<(), ExecError> {
        let expected = self.slot_len(slot);
        let found = (handle.size_in_used() / 4) as usize;
        if found != expected {
            return Err(BindError::BadInput {
                name: name.into(),
                expected: format!("{expected} x {}", self.graph.node(slot.node()).dtype),
                found: format!("a buffer of {found} elements"),
            }
            .into());
        }
        Ok(())
    }

    fn output_node(&self, name: &str) -> Result<NodeId, ExecError> {
        self.graph
            .outputs()
            .iter()
            .find(|o| o.name == name)
            .map(|o| o.node)
            .ok_or_else(|| ExecError::UnknownName {
                kind: "output",
                name: name.into(),
            })
    }

    /// Copies output `name` to the host.
    pub fn read_output(&self, name: &str) -> Result<HostArray, ExecError> {
        let node = self.output_node(name)?;
        self.read(
            &self.buffers[&Slot::Value(node)],
            self.graph.node(node).dtype,
        )
    }

    /// Copies the current value of input `name` (the state, for carried inputs) to the host.
    pub fn read_input(&self, name: &str) -> Result<HostArray, ExecError> {
        let id = self.input_node(name)?;
        self.read(self.input_handle(name)?, self.graph.node(id).dtype)
    }

    fn read(&self, handle: &Handle, dtype: DType) -> Result<HostArray, ExecError> {
        Ok(match dtype {
            DType::F32 => HostArray::F32(download::<R, f32>(&self.client, handle)?),
            _ => HostArray::U32(download::<R, u32>(&self.client, handle)?),
        })
    }

    /// Enqueues one run of the plan (`steps_per_launch` graph steps), then advances the
    /// loop-carried state. Does not wait for the device.
    pub fn run(&mut self) -> Result<(), ExecError> {
        for (id, name) in self.graph.inputs() {
            if !self.buffers.contains_key(&Slot::Input(id)) {
                return Err(BindError::MissingInput(name.into()).into());
            }
        }
        // The state's own buffer is its next value (rebound each run: the input may be).
        for &input in &self.in_place {
            let state = self.buffers[&Slot::Input(input)].clone();
            self.buffers.insert(Slot::Next(input), state);
        }
        let mut lowered = 0;
        for launch in self.plan.launches.clone() {
            match launch {
                PlannedLaunch::Kernels(_) => {
                    self.launch_kernels(lowered);
                    lowered += 1;
                }
                PlannedLaunch::CopyState { input } => self.launch_copy(input),
            }
        }
        let copied = self.plan.copied_carries();
        let swapped = (self.graph.carries().iter())
            .filter(|c| !self.in_place.contains(&c.input) && !copied.contains(&c.input));
        for carry in swapped {
            let input = self
                .buffers
                .remove(&Slot::Input(carry.input))
                .expect("bound");
            let next = self
                .buffers
                .remove(&Slot::Next(carry.input))
                .expect("allocated");
            self.buffers.insert(Slot::Input(carry.input), next);
            self.buffers.insert(Slot::Next(carry.input), input);
        }
        Ok(())
    }

    fn launch_kernels(&self, index: usize) {
        let launch = &self.bound[index];
        let width = self.vector_width(index);
        let threads = match launch.rows_of {
            Some(cols) => self.n / cols as usize,
            None => self.n / width,
        };
        let cubes_per_part = threads.div_ceil(ELEMENTWISE_CUBE_DIM as usize);
        let parts = launch.program.parts.len();
        let (cube_count, cube_dim) = elementwise_launch_shape(
            &self.client,
            parts * cubes_per_part * ELEMENTWISE_CUBE_DIM as usize,
        );
        let record = kernels_record(
            &self.graph,
            &self.plan,
            &launch.kernels,
            &launch.name,
            self.n,
        );
        self.ledger.launch(record, || unsafe {
            // SAFETY: see `arrays`; parts guard `local < threads`, and vectorised launches
            // only bind buffers of a multiple of `width` lanes.
            fused_array::launch_unchecked::<R>(
                &self.client,
                cube_count,
                cube_dim,
                width,
                self.arrays(&launch.bindings.in_f),
                self.arrays(&launch.bindings.in_u),
                self.arrays(&launch.bindings.out_f),
                self.arrays(&launch.bindings.out_u),
                ArrayArg::from_raw_parts(self.params_f_handle.clone(), self.param_f.len().max(1)),
                ArrayArg::from_raw_parts(self.params_u_handle.clone(), self.param_u.len().max(1)),
                threads,
                cubes_per_part,
                launch.program.clone(),
            )
        });
    }

    fn arrays<T: CubePrimitive>(&self, slots: &[Slot]) -> SequenceArg<R, Array<T>> {
        let mut sequence = SequenceArg::new();
        for slot in slots {
            // SAFETY: each buffer holds exactly `slot_len` elements (allocated, or checked
            // when bound) and the kernel indexes within them.
            sequence.push(unsafe {
                ArrayArg::from_raw_parts(self.buffers[slot].clone(), self.slot_len(*slot))
            });
        }
        sequence
    }

    fn launch_copy(&self, input: NodeId) {
        let len = self.slot_len(Slot::Input(input));
        let (cube_count, cube_dim) = elementwise_launch_shape(&self.client, len);
        let record = copy_state_record(&self.graph, input, self.n);
        self.ledger.launch(record, || unsafe {
            // SAFETY: both buffers hold `len` words.
            copy_array::launch_unchecked::<R>(
                &self.client,
                cube_count,
                cube_dim,
                ArrayArg::from_raw_parts(self.buffers[&Slot::Next(input)].clone(), len),
                ArrayArg::from_raw_parts(self.buffers[&Slot::Input(input)].clone(), len),
            )
        });
    }
}
