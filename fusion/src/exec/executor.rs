//! [`Executor`]: one plan of one graph run over `n` lanes on any [`Backend`].
//!
//! The executor owns the plan's buffers (laid out by [`BoundPlan`]: inputs, next values of
//! carries, everything a kernel writes) and the backend's prepared launches. Every name and
//! length a caller gives is checked here, once for all backends; a run hands the buffers to
//! the backend, which launches the plan (each launch recorded in the [`LaunchLedger`]), and
//! then advances the carried state: swapped, updated in place, or copied back by the plan
//! itself (`xla-default`).
//!
//! Buffers are shared by handle: [`Executor::bind_input`] makes another executor's buffer
//! this one's input without a copy. Inputs start at zero, params at zero.
//!
//! Params live in the bound plan's host table, except that the `f32` params may come from
//! a buffer instead ([`Executor::set_f32_params_buffer`]: a learner's weights made on the
//! device go to the step without crossing the bus). Whichever was written last holds:
//! a host write of an `f32` param after a buffer first reads the buffer into the table.

use std::sync::Arc;

use super::bound::BoundPlan;
use super::holders::Holders;
use super::lowering::Lowered;
use super::{Arena, Backend, ExecError, LaunchLedger, ParamsChanged, RunArgs};
use crate::graph::{BindError, DType, Graph, HostArray, Scalar};
use crate::plan::Plan;

/// Runs one plan of one graph on backend `B`. See the [module docs](self).
pub struct Executor<B: Backend> {
    pub(crate) backend: B,
    pub(crate) bound: BoundPlan,
    pub(crate) buffers: Vec<B::Buffer>,
    pub(crate) launches: B::Launches,
    holders: Holders,
    ledger: Arc<LaunchLedger>,
    params_changed: ParamsChanged,
    /// The `f32` params when a buffer holds them instead of the table.
    f32_params: Option<B::Buffer>,
}

impl<B: Backend> Executor<B> {
    /// Prepares `plan` of `graph` for `n` lanes on `backend`: lays out and allocates every
    /// buffer and prepares every launch (the CPU compiles them here; CubeCL at the first run).
    pub fn new(backend: B, graph: Graph, plan: Plan, n: usize) -> Result<Self, ExecError> {
        Self::banked(backend, graph, plan, n, 1)
    }

    /// As [`Self::new`], the `n` lanes cut into `banks` equal banks, each with its own
    /// params and lane indices (see [`BoundPlan`]): one launch runs what `banks` executors
    /// of `n / banks` lanes would, bit for bit.
    pub fn banked(
        backend: B,
        graph: Graph,
        plan: Plan,
        n: usize,
        banks: usize,
    ) -> Result<Self, ExecError> {
        let bound = BoundPlan::new(graph, plan, n, banks)?;
        let largest = (0..bound.slots().len()).map(|b| bound.len(b)).max();
        let (bytes, max) = (4 * largest.unwrap_or(0) as u64, backend.max_buffer_bytes());
        if bytes > max {
            return Err(ExecError::TooLarge { bytes, max });
        }
        let inputs = bound.input_names().len();
        let buffers = (0..bound.slots().len())
            .map(|b| match b < inputs {
                true => backend.upload_u32(&vec![0; bound.len(b)]),
                false => backend.alloc(bound.len(b)),
            })
            .collect();
        let lowered = Lowered::for_target(&bound, &backend.target())?;
        let launches = backend.prepare(&bound, &lowered)?;
        let mut executor = Self {
            launches,
            backend,
            bound,
            buffers,
            holders: Holders::new(),
            ledger: Arc::new(LaunchLedger::new()),
            params_changed: ParamsChanged::BOTH,
            f32_params: None,
        };
        executor.settle_carries(&lowered.in_place);
        Ok(executor)
    }

    /// The carries: those updated in place share one buffer from now on.
    fn settle_carries(&mut self, in_place: &[crate::graph::NodeId]) {
        self.bound.settle_carries(in_place);
        for &(input, next) in self.bound.in_place() {
            self.buffers[next] = self.buffers[input].clone();
        }
        self.holders.invalidate();
    }

    /// Keeps every carry double-buffered from now on (to measure or test what updating the
    /// state in place changes): the launches are prepared again without it.
    pub fn double_buffer(&mut self) -> Result<(), ExecError> {
        self.bound.in_place_allowed = false;
        let lowered = Lowered::for_target(&self.bound, &self.backend.target())?;
        self.launches = self.backend.prepare(&self.bound, &lowered)?;
        for &(_, next) in self.bound.in_place() {
            self.buffers[next] = self.backend.alloc(self.bound.len(next));
        }
        self.settle_carries(&lowered.in_place);
        self.params_changed = ParamsChanged::BOTH;
        Ok(())
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

    /// The backend it runs on.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The graph being run.
    pub fn graph(&self) -> &Graph {
        self.bound.graph()
    }

    /// The plan being run.
    pub fn plan(&self) -> &Plan {
        self.bound.plan()
    }

    /// Lanes per step.
    pub fn lanes(&self) -> usize {
        self.bound.lanes()
    }

    /// The plan's layout, carries and params.
    pub fn bound(&self) -> &BoundPlan {
        &self.bound
    }

    /// Whether the graph has an input called `name`.
    pub fn has_input(&self, name: &str) -> bool {
        self.bound.input(name).is_ok()
    }

    /// Whether the graph has a runtime param called `name`.
    pub fn has_param(&self, name: &str) -> bool {
        self.graph().params().iter().any(|(_, p)| *p == name)
    }

    /// Carried inputs updated in place (one buffer for the state and its next value), in
    /// input order.
    pub fn in_place_inputs(&self) -> Vec<&str> {
        (self.bound.in_place().iter())
            .map(|(input, _)| self.bound.input_names()[*input].as_str())
            .collect()
    }

    /// The buffer input `name` holds now (for a carried input: the current state).
    pub fn input(&self, name: &str) -> Result<&B::Buffer, ExecError> {
        Ok(&self.buffers[self.bound.input(name)?])
    }

    /// The buffer of output `name`, written by the last run and valid until the next.
    pub fn output(&self, name: &str) -> Result<&B::Buffer, ExecError> {
        Ok(&self.buffers[self.bound.output(name)?])
    }

    /// Input `name` (for a carried input: the current state) copied to the host.
    pub fn read_input(&self, name: &str) -> Result<HostArray, ExecError> {
        self.read(self.bound.input(name)?)
    }

    /// Output `name` copied to the host.
    pub fn read_output(&self, name: &str) -> Result<HostArray, ExecError> {
        self.read(self.bound.output(name)?)
    }

    fn read(&self, b: usize) -> Result<HostArray, ExecError> {
        Ok(match self.bound.dtype(b) {
            DType::F32 => HostArray::F32(self.backend.read_f32(&self.buffers[b])?),
            _ => HostArray::U32(self.backend.read_u32(&self.buffers[b])?),
        })
    }

    /// Copies `values` into input `name` (a buffer of its own: the one bound before may be
    /// shared with another executor).
    pub fn set_input(&mut self, name: &str, values: &HostArray) -> Result<(), ExecError> {
        let b = self.bound.input(name)?;
        self.bound.check_values(name, b, values)?;
        self.buffers[b] = match values {
            HostArray::F32(v) => self.backend.upload_f32(v),
            HostArray::U32(v) => self.backend.upload_u32(v),
        };
        self.rebound(b);
        Ok(())
    }

    /// Makes `buffer` input `name` without copying. Its length must be the input's (a launch
    /// never reads past it); a buffer this executor writes cannot be bound, since a run
    /// would then read what it writes.
    pub fn bind_input(&mut self, name: &str, buffer: &B::Buffer) -> Result<(), ExecError> {
        let b = self.bound.input(name)?;
        self.bound
            .check_len(name, b, self.backend.buffer_len(buffer))?;
        // An input updated in place is its own next value: that write is the one expected.
        let next = self.bound.in_place_next(b);
        let writes = (self.bound.written())
            .filter(|w| Some(*w) != next)
            .any(|w| self.backend.same_buffer(&self.buffers[w], buffer));
        if writes {
            return Err(ExecError::Unsupported(format!(
                "binding input {name} to a buffer this plan writes"
            )));
        }
        self.buffers[b] = buffer.clone();
        self.rebound(b);
        Ok(())
    }

    /// Buffer `b` was replaced: an input's in-place next value, if any, becomes the same
    /// buffer.
    fn rebound(&mut self, b: usize) {
        match self.bound.in_place_next(b) {
            Some(next) => {
                self.buffers[next] = self.buffers[b].clone();
                self.holders.invalidate();
            }
            None => {
                let backend = &self.backend;
                (self.holders).rebound(&self.buffers, b, |x, y| backend.same_buffer(x, y));
            }
        }
    }

    /// Exchanges output `name`'s buffer with `buffer`, which must hold as many elements and
    /// be no buffer this executor binds: the next run writes into it, and `buffer` keeps
    /// what the last run wrote.
    pub fn swap_output(&mut self, name: &str, buffer: &mut B::Buffer) -> Result<(), ExecError> {
        let b = self.bound.output(name)?;
        self.bound
            .check_len(name, b, self.backend.buffer_len(buffer))?;
        if (self.buffers.iter()).any(|bound| self.backend.same_buffer(bound, buffer)) {
            return Err(ExecError::Unsupported(format!(
                "swapping output {name} with a buffer this plan already binds"
            )));
        }
        std::mem::swap(&mut self.buffers[b], buffer);
        self.rebound(b);
        Ok(())
    }

    /// Allocates outputs `names` (in that order), then `extra` buffers of the given word
    /// counts, as one [`Arena`], so that the host reads them back in one transfer: the next
    /// run writes the outputs into the arena's parts.
    pub fn gather_outputs(
        &mut self,
        names: &[&str],
        extra: &[usize],
    ) -> Result<Arena<B::Buffer>, ExecError> {
        let outputs = (names.iter())
            .map(|name| self.bound.output(name))
            .collect::<Result<Vec<_>, _>>()?;
        if (1..outputs.len()).any(|i| outputs[..i].contains(&outputs[i])) {
            return Err(ExecError::Unsupported(format!(
                "gathering outputs {names:?}: two of them are one value"
            )));
        }
        let words: Vec<usize> = (outputs.iter().map(|&b| self.bound.len(b)))
            .chain(extra.iter().copied())
            .collect();
        let arena = self.backend.alloc_arena(&words);
        for (&b, part) in outputs.iter().zip(&arena.parts) {
            self.buffers[b] = part.clone();
        }
        self.holders.invalidate();
        Ok(arena)
    }

    /// Sets runtime param `name` (no recompilation: params are read at run time).
    pub fn set_param(&mut self, name: &str, value: Scalar) -> Result<(), ExecError> {
        self.set_params(&[(name, value)])
    }

    /// Sets several runtime params at once (a policy's thousands of weights: one lookup
    /// each by name, one transfer to the backend in all).
    pub fn set_params(&mut self, values: &[(&str, Scalar)]) -> Result<(), ExecError> {
        self.set_params_in(values, None)
    }

    /// Sets runtime params of bank `bank` only (one agent's weights in a population).
    pub fn set_bank_params(
        &mut self,
        bank: usize,
        values: &[(&str, Scalar)],
    ) -> Result<(), ExecError> {
        self.set_params_in(values, Some(bank))
    }

    fn set_params_in(
        &mut self,
        values: &[(&str, Scalar)],
        bank: Option<usize>,
    ) -> Result<(), ExecError> {
        let writes_f32 = (values.iter()).any(|(_, value)| matches!(value, Scalar::F32(_)));
        if writes_f32 && self.f32_params.is_some() {
            self.fold_f32_params()?;
        }
        let changed = self.bound.set_params(values, bank)?;
        self.params_changed.f32 |= changed.f32;
        self.params_changed.u32 |= changed.u32;
        Ok(())
    }

    /// `f32` params a bank has: the width of a bank's row of [`Self::f32_params`].
    pub fn f32_param_count(&self) -> usize {
        self.bound.params.f32_count()
    }

    /// The place of `f32` param `name` in a bank's row of [`Self::f32_params`].
    pub fn f32_param_slot(&self, name: &str) -> Result<usize, ExecError> {
        (self.bound.params.f32_slot(name)).ok_or_else(|| ExecError::UnknownName {
            kind: "f32 param",
            name: name.into(),
        })
    }

    /// Every bank's `f32` params as the next run reads them, bank-major (`[banks,
    /// f32_param_count]`): the table, or the buffer read back when one holds them.
    pub fn f32_params(&self) -> Result<Vec<f32>, ExecError> {
        match &self.f32_params {
            Some(buffer) => Ok(self.backend.read_f32(buffer)?),
            None => Ok(self.bound.params.f32_table()),
        }
    }

    /// Makes `buffer` every bank's `f32` params from the next run on, laid out as
    /// [`Self::f32_params`] (`banks * f32_param_count` values, bank-major): on a device
    /// the launches bind it as it is, so params made there (a learner's new weights) never
    /// cross the bus, and stay in step with work enqueued before. Where the backend's
    /// buffers are host memory it is read into the table. The `u32` params are untouched.
    pub fn set_f32_params_buffer(&mut self, buffer: B::Buffer) -> Result<(), ExecError> {
        let (banks, count) = (self.banks(), self.f32_param_count());
        let found = self.backend.buffer_len(&buffer);
        if count == 0 || found != banks * count {
            return Err(BindError::BadInput {
                name: "f32 params buffer".into(),
                expected: format!(
                    "{} values ({banks} banks x {count} f32 params)",
                    banks * count
                ),
                found: format!("{found} values"),
            }
            .into());
        }
        match self.backend.binds_f32_params() {
            true => self.f32_params = Some(buffer),
            false => {
                let values = self.backend.read_f32(&buffer)?;
                self.bound.params.set_f32_table(&values);
                self.f32_params = None;
            }
        }
        self.params_changed.f32 = true;
        Ok(())
    }

    /// Reads the `f32` params buffer, if one holds them, into the table (before a host
    /// write: the params not written keep the buffer's values).
    fn fold_f32_params(&mut self) -> Result<(), ExecError> {
        if let Some(buffer) = self.f32_params.take() {
            let values = self.backend.read_f32(&buffer)?;
            self.bound.params.set_f32_table(&values);
        }
        Ok(())
    }

    /// Banks the lanes are cut into.
    pub fn banks(&self) -> usize {
        self.bound.banks()
    }

    /// Replaces every buffer the plan writes by one of NaN (`f32`) or `0xFFFF_FFFF` (`u32`),
    /// so a test can tell elements a run wrote from stale ones. A state updated in place is
    /// read before it is written: it keeps its values.
    pub fn poison_outputs(&mut self) {
        let in_place: Vec<usize> = self.bound.in_place().iter().map(|(_, n)| *n).collect();
        let written: Vec<usize> = self.bound.written().collect();
        for b in written.into_iter().filter(|b| !in_place.contains(b)) {
            let len = self.bound.len(b);
            self.buffers[b] = match self.bound.dtype(b) {
                DType::F32 => self.backend.upload_f32(&vec![f32::NAN; len]),
                _ => self.backend.upload_u32(&vec![u32::MAX; len]),
            };
        }
        self.holders.invalidate();
    }

    /// Runs one call of the plan (`plan().steps_per_launch` graph steps), then advances the
    /// carried state. Device backends return once the launches are enqueued.
    pub fn run(&mut self) -> Result<(), ExecError> {
        let backend = &self.backend;
        (self.holders).refresh(&self.buffers, |x, y| backend.same_buffer(x, y));
        backend.run(
            &mut self.launches,
            RunArgs {
                bound: &self.bound,
                buffers: &self.buffers,
                holders: &self.holders,
                ledger: &self.ledger,
                params_changed: std::mem::take(&mut self.params_changed),
                f32_params: self.f32_params.as_ref(),
            },
        )?;
        for &(input, next) in &self.bound.swaps {
            self.buffers.swap(input, next);
        }
        if !self.bound.swaps.is_empty() {
            self.holders.swapped();
        }
        Ok(())
    }
}
