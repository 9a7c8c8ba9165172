//! [`BoundPlan`]: one plan of one graph laid out over `n` lanes, the same on every backend.
//!
//! Every buffer the plan touches gets an index: the graph's inputs first (in input order),
//! then a next-value buffer per carried input, then every slot a kernel writes. The bound
//! plan knows each buffer's length and type, which carries swap, which are copied back
//! (`xla-default`) and which are updated in place, and the params' current values; it
//! checks every name and length a caller gives. Backends only allocate, launch and copy.
//!
//! The lanes may be cut into equal **banks** (a population: one bank per agent): each bank
//! has its own values of every param, and a lane reads its own bank's params and sees its
//! index within the bank as [`crate::graph::Op::LaneIndex`]. A run over `banks` banks of
//! `m` lanes is then, lane for lane, `banks` runs over `m` lanes (bit for bit), in one
//! launch per planned launch.

use std::collections::HashMap;

use super::ExecError;
pub use super::params::{Params, ParamsChanged};
use crate::graph::{BindError, DType, Graph, HostArray, NodeId, Op, Scalar, Shape, check_rows};
use crate::plan::{Plan, PlannedKernel, Slot};

/// A plan's buffers, carries and params over `n` lanes. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct BoundPlan {
    graph: Graph,
    plan: Plan,
    n: usize,
    banks: usize,
    slots: Vec<Slot>,
    index: HashMap<Slot, usize>,
    lens: Vec<usize>,
    input_names: Vec<String>,
    /// The params and their values.
    pub params: Params,
    /// Whether carries may be updated in place (off: every carry is double-buffered).
    pub(super) in_place_allowed: bool,
    pub(super) in_place: Vec<(usize, usize)>,
    pub(super) swaps: Vec<(usize, usize)>,
}

impl BoundPlan {
    /// Lays `plan` of `graph` out over `n` lanes in `banks` equal banks (see the
    /// [module docs](self)), refusing what no backend can run.
    pub fn new(graph: Graph, plan: Plan, n: usize, banks: usize) -> Result<Self, ExecError> {
        if n == 0 {
            return Err(BindError::Empty.into());
        }
        if banks == 0 || !n.is_multiple_of(banks) {
            return Err(ExecError::Unsupported(format!(
                "{n} lanes in {banks} banks: the lanes must split into equal, non-empty banks"
            )));
        }
        // A row never straddles two banks.
        check_rows(&graph, n / banks)?;
        let steps = plan.steps_per_launch as usize;
        if steps > 1 && (graph.carries().iter()).any(|c| graph.node(c.input).shape != Shape::Lanes)
        {
            // The lowering keeps packed values out of registers, so a packed carry has no
            // register to hand from one step to the next.
            return Err(ExecError::Unsupported(format!(
                "{} with a packed carried input",
                plan.strategy
            )));
        }
        let inputs = graph.inputs();
        let mut slots: Vec<Slot> = inputs.iter().map(|(id, _)| Slot::Input(*id)).collect();
        slots.extend(graph.carries().iter().map(|c| Slot::Next(c.input)));
        for kernel in &plan.kernels {
            for (slot, _) in &kernel.writes {
                if !slots.contains(slot) {
                    slots.push(*slot);
                }
            }
        }
        let lens = (slots.iter())
            .map(|slot| {
                let per_step = PlannedKernel::is_per_step(&graph, *slot);
                n * graph.node(slot.node()).shape.width() * if per_step { steps } else { 1 }
            })
            .collect();
        Ok(Self {
            index: slots.iter().enumerate().map(|(i, s)| (*s, i)).collect(),
            input_names: inputs.iter().map(|(_, name)| (*name).to_owned()).collect(),
            params: Params::of(&graph, banks),
            in_place_allowed: crate::switches::enabled(crate::switches::IN_PLACE),
            in_place: Vec::new(),
            swaps: Vec::new(),
            slots,
            lens,
            graph,
            plan,
            n,
            banks,
        })
    }

    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Lanes.
    pub fn lanes(&self) -> usize {
        self.n
    }

    /// Banks the lanes are cut into (1 unless a population asked for more).
    pub fn banks(&self) -> usize {
        self.banks
    }

    /// Lanes per bank.
    pub fn bank_lanes(&self) -> usize {
        self.n / self.banks
    }

    /// Every buffer's slot, by buffer index.
    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }

    /// The buffer index of `slot`.
    pub fn buffer(&self, slot: Slot) -> usize {
        self.index[&slot]
    }

    /// Elements (32-bit words) of buffer `b`.
    pub fn len(&self, b: usize) -> usize {
        self.lens[b]
    }

    /// The element type of buffer `b`.
    pub fn dtype(&self, b: usize) -> DType {
        self.graph.node(self.slots[b].node()).dtype
    }

    /// Whether carried input `input` may be updated in place: in-place updates are on and
    /// the plan does not copy its state back (`xla-default`'s loop copies).
    pub fn may_update_in_place(&self, input: NodeId) -> bool {
        self.in_place_allowed && !self.plan.copied_carries().contains(&input)
    }

    /// The carries (input and next buffer) updated in place.
    pub fn in_place(&self) -> &[(usize, usize)] {
        &self.in_place
    }

    /// Settles the carries once the backend has said which it updates in place: those
    /// share one buffer, the ones `xla-default` copies back keep theirs, the rest swap.
    pub(super) fn settle_carries(&mut self, in_place: &[NodeId]) {
        let copied = self.plan.copied_carries();
        let pair = |input: NodeId| {
            (
                self.index[&Slot::Input(input)],
                self.index[&Slot::Next(input)],
            )
        };
        self.in_place = (in_place.iter())
            .filter(|input| !copied.contains(input))
            .map(|input| pair(*input))
            .collect();
        // Input order (inputs hold the first buffers, in order).
        self.in_place.sort_unstable();
        self.swaps = (self.graph.carries().iter())
            .map(|c| pair(c.input))
            .filter(|p| !self.in_place.contains(p) && !copied.contains(&self.slots[p.0].node()))
            .collect();
    }

    /// The buffer of input `name` (inputs hold the first buffers, in input order).
    pub fn input(&self, name: &str) -> Result<usize, ExecError> {
        (self.input_names.iter())
            .position(|input| input == name)
            .ok_or_else(|| ExecError::UnknownName {
                kind: "input",
                name: name.into(),
            })
    }

    /// The buffer of output `name`.
    pub fn output(&self, name: &str) -> Result<usize, ExecError> {
        let output = self.graph.outputs().iter().find(|o| o.name == name);
        let output = output.ok_or_else(|| ExecError::UnknownName {
            kind: "output",
            name: name.into(),
        })?;
        Ok(self.index[&Slot::Value(output.node)])
    }

    /// Input names, in input order.
    pub fn input_names(&self) -> &[String] {
        &self.input_names
    }

    /// The buffers a run writes (outputs, intermediates, carried next values).
    pub fn written(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.slots.len()).filter(|b| !matches!(self.slots[*b], Slot::Input(_)))
    }

    /// The next-value buffer input buffer `b` shares when updated in place.
    pub fn in_place_next(&self, b: usize) -> Option<usize> {
        (self.in_place.iter())
            .find(|(input, _)| *input == b)
            .map(|(_, next)| *next)
    }

    /// Checks that a buffer of `found` elements fits buffer `b`, named `name`.
    pub fn check_len(&self, name: &str, b: usize, found: usize) -> Result<(), ExecError> {
        if found != self.lens[b] {
            return Err(BindError::BadInput {
                name: name.into(),
                expected: format!("{} x {}", self.lens[b], self.dtype(b)),
                found: format!("a buffer of {found} elements"),
            }
            .into());
        }
        Ok(())
    }

    /// Checks that `values` fit buffer `b` (type and length), named `name`.
    pub fn check_values(&self, name: &str, b: usize, values: &HostArray) -> Result<(), ExecError> {
        let dtype = self.dtype(b);
        let type_ok = matches!(
            (dtype, values),
            (DType::F32, HostArray::F32(_)) | (DType::U32 | DType::Bool, HostArray::U32(_))
        );
        if !type_ok || values.len() != self.lens[b] {
            return Err(BindError::BadInput {
                name: name.into(),
                expected: format!("{} x {dtype}", self.lens[b]),
                found: format!("{} elements", values.len()),
            }
            .into());
        }
        Ok(())
    }

    /// Sets params by name (checked) in every bank (`bank: None`) or in one, without
    /// telling the backend; returns which params buffers that changed.
    pub(super) fn set_params(
        &mut self,
        values: &[(&str, Scalar)],
        bank: Option<usize>,
    ) -> Result<ParamsChanged, ExecError> {
        let range = match bank {
            Some(b) if b >= self.banks => {
                return Err(ExecError::Unsupported(format!(
                    "params of bank {b}: the lanes are cut into {} banks",
                    self.banks
                )));
            }
            Some(b) => b..b + 1,
            None => 0..self.banks,
        };
        let count = self.params.nodes.len();
        let params = &mut self.params;
        let mut changed = ParamsChanged::default();
        for (name, value) in values {
            let Some(&i) = params.by_name.get(*name) else {
                return Err(ExecError::UnknownName {
                    kind: "param",
                    name: (*name).into(),
                });
            };
            let bits = match (params.dtypes[i], value) {
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
            for b in range.clone() {
                params.bits[b * count + i] = bits;
            }
            changed.mark(params.dtypes[i]);
        }
        Ok(changed)
    }

    /// The value of constant or param `node` as bits in bank `bank` (params: their current
    /// value there).
    pub fn pinned_bits(&self, node: NodeId, bank: usize) -> u32 {
        match &self.graph.node(node).op {
            Op::Param { .. } => self
                .params
                .index_of(node)
                .map_or(0, |i| self.params.bank(bank)[i]),
            Op::Constant(constant) => constant.bits(),
            _ => 0,
        }
    }
}
