//! Lowering: a planned launch becomes a [`LaunchProgram`] plus the buffers it binds.
//!
//! Registers are numbered by node id. Pack, unpack-of-pack and same-file casts generate no
//! instruction: they alias registers. Packed values never live in a register; a packed
//! buffer is read column by column where it is unpacked and written column by column.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};

use super::guards;
use super::program::{
    Instr, KernelProgram, LaunchBindings, LaunchProgram, LoweredLaunch, ParamLayout, ReducePhase,
    Reg,
};
use super::steps;
use crate::graph::{Constant, DType, Graph, NodeId, Op, Shape};
use crate::plan::{Plan, PlannedKernel, PlannedLaunch, Slot};

fn is_float(graph: &Graph, slot: Slot) -> bool {
    graph.node(slot.node()).dtype == DType::F32
}

/// Lowers every kernel launch of `plan` (state copies are not kernels of the graph).
pub fn lower_plan(graph: &Graph, plan: &Plan) -> Vec<LoweredLaunch> {
    let params = ParamLayout::of(graph);
    plan.launches
        .iter()
        .filter_map(|launch| match launch {
            PlannedLaunch::Kernels(parts) => Some(lower_launch(graph, plan, parts, &params)),
            PlannedLaunch::CopyState { .. } => None,
        })
        .collect()
}

fn lower_launch(
    graph: &Graph,
    plan: &Plan,
    parts: &[usize],
    params: &ParamLayout,
) -> LoweredLaunch {
    let mut bindings = LaunchBindings::default();
    for &k in parts {
        let kernel = &plan.kernels[k];
        let reads = kernel.reads.iter().map(|slot| (*slot, false));
        let writes = kernel.writes.iter().map(|(slot, _)| (*slot, true));
        for (slot, written) in reads.chain(writes) {
            let list = match (written, is_float(graph, slot)) {
                (false, true) => &mut bindings.in_f,
                (false, false) => &mut bindings.in_u,
                (true, true) => &mut bindings.out_f,
                (true, false) => &mut bindings.out_u,
            };
            if !list.contains(&slot) {
                list.push(slot);
            }
        }
    }
    let programs: Vec<KernelProgram> = parts
        .iter()
        .map(|&k| {
            let kernel = &plan.kernels[k];
            let mut lowerer = Lowerer {
                graph,
                kernel,
                bindings: &bindings,
                params,
                steps: plan.steps_per_launch,
                computes: kernel.computes.iter().copied().collect(),
                alias: BTreeMap::new(),
                fresh: Cell::new(graph.nodes().len() as Reg),
            };
            for &node in &kernel.computes {
                if let Some(target) = lowerer.aliased(node) {
                    lowerer.alias.insert(node, target);
                }
            }
            lowerer.program()
        })
        .collect();
    let names: Vec<&str> = (parts.iter())
        .map(|k| plan.kernels[*k].name.as_str())
        .collect();
    let vectorizable = bindings.in_u.is_empty()
        && bindings.out_u.is_empty()
        && programs.iter().all(super::vector::vectorizable);
    LoweredLaunch {
        vectorizable,
        program: LaunchProgram::new(programs),
        name: match names[..] {
            [name] => name.to_string(),
            _ => format!("horizontal[{}]", names.join("+")),
        },
        rows_of: match parts {
            [k] => plan.kernels[*k].rows_of,
            _ => None,
        },
        bindings,
        kernels: parts.to_vec(),
    }
}

struct Lowerer<'a> {
    graph: &'a Graph,
    kernel: &'a PlannedKernel,
    bindings: &'a LaunchBindings,
    params: &'a ParamLayout,
    steps: u32,
    computes: BTreeSet<NodeId>,
    alias: BTreeMap<NodeId, Reg>,
    /// The next register no node owns (an affine's partial sums, lazy's merged draws).
    fresh: Cell<Reg>,
}

impl Lowerer<'_> {
    /// The register a node's value lives in.
    fn reg(&self, node: NodeId) -> Reg {
        self.alias.get(&node).copied().unwrap_or(node.0)
    }

    /// Nodes that need no instruction, only another node's register.
    fn aliased(&self, node: NodeId) -> Option<Reg> {
        match self.graph.node(node).op {
            Op::Unpack(packed, column) if self.computes.contains(&packed) => {
                match &self.graph.node(packed).op {
                    Op::Pack(items) => Some(self.reg(items[column as usize])),
                    _ => None,
                }
            }
            Op::Cast(a, to) => {
                let from = self.graph.node(a).dtype;
                let same_file = (from == DType::F32) == (to == DType::F32);
                let exact = from == to || (from == DType::Bool && to == DType::U32);
                (same_file && exact).then(|| self.reg(a))
            }
            _ => None,
        }
    }

    /// Where `slot` is bound among the launch's outputs (`output`) or inputs of its kind.
    fn buffer(&self, output: bool, slot: Slot) -> u32 {
        let list = self.bindings.list(output, is_float(self.graph, slot));
        list.iter()
            .position(|s| *s == slot)
            .expect("slot bound by the launch") as u32
    }

    /// Whether `slot` is a per-step (`[steps, n]`) buffer of this launch.
    fn per_step(&self, slot: Slot) -> bool {
        self.steps > 1 && PlannedKernel::is_per_step(self.graph, slot)
    }

    fn program(&self) -> KernelProgram {
        let carries = |float: bool| -> Vec<(Reg, Reg)> {
            (self.graph.carries().iter())
                .filter(|c| self.steps > 1 && is_float(self.graph, Slot::Input(c.input)) == float)
                .map(|c| (c.input.0, self.reg(c.next)))
                .collect()
        };
        let (carries_f, carries_u) = (carries(true), carries(false));
        let (mut reduces, mut phases) = (Vec::new(), Vec::new());
        for &r in &self.kernel.computes {
            if let Op::RowReduce(op, operand, _) = self.graph.node(r).op {
                reduces.push(r);
                phases.push(ReducePhase {
                    body: self.emit(&[operand], &[]),
                    value: self.reg(operand),
                    op,
                    result: r.0,
                });
            }
        }
        let written: Vec<NodeId> = self.kernel.writes.iter().map(|(_, n)| *n).collect();
        let mut body = self.emit(&written, &reduces);
        for (slot, node) in &self.kernel.writes {
            body.extend(self.store(*slot, *node));
        }
        let (prologue, body, epilogue) = if self.steps > 1 {
            steps::split(self.graph, self.bindings, body)
        } else {
            (Vec::new(), body, Vec::new())
        };
        let live_out: Vec<Reg> = carries_f.iter().chain(&carries_u).map(|c| c.1).collect();
        let mut fresh = self.fresh.get();
        let (body, guards) = if self.kernel.rows_of.is_none() {
            guards::schedule(body, &live_out, &mut fresh)
        } else {
            (body, Vec::new())
        };
        KernelProgram {
            rows_of: self.kernel.rows_of,
            phases,
            prologue,
            body,
            epilogue,
            guards,
            steps: self.steps,
            carries_f,
            carries_u,
        }
    }

    /// Instructions computing `targets` from memory, params and constants, treating
    /// `available` (earlier reductions) as registers already set.
    fn emit(&self, targets: &[NodeId], available: &[NodeId]) -> Vec<Instr> {
        let mut needed = BTreeSet::new();
        let mut stack: Vec<NodeId> = targets.to_vec();
        while let Some(node) = stack.pop() {
            if available.contains(&node) || !needed.insert(node) {
                continue;
            }
            if self.computes.contains(&node) {
                stack.extend(self.graph.node(node).op.operands());
            }
        }
        needed
            .into_iter()
            .flat_map(|node| self.instrs(node))
            .collect()
    }

    /// An affine (over operand registers) as one chain of [`Instr::MulAdd`], each term's sum
    /// in a fresh register and the last in the node's own.
    fn affine(
        &self,
        node: NodeId,
        acc: Option<NodeId>,
        weights: &[NodeId],
        inputs: &[NodeId],
    ) -> Vec<Instr> {
        let mut sum = acc.map(|a| a.0);
        let last = inputs.len() - 1;
        (weights.iter().zip(inputs).enumerate())
            .map(|(k, (w, x))| {
                let dst = if k == last {
                    node.0
                } else {
                    self.fresh.replace(self.fresh.get() + 1)
                };
                let (acc, a, b) = (sum.replace(dst), w.0, x.0);
                Instr::MulAdd { dst, acc, a, b }
            })
            .collect()
    }

    /// The instructions producing `node`'s register (none for aliases, packs and reductions).
    fn instrs(&self, node: NodeId) -> Vec<Instr> {
        let graph = self.graph;
        let op = &graph.node(node).op;
        let dst = node.0;
        if self.alias.contains_key(&node) {
            return Vec::new();
        }
        // Params, constants and the lane index are produced in place, whether they are
        // operands or roots written by this kernel; other values computed elsewhere are loaded.
        let leaf = matches!(op, Op::Param { .. } | Op::Constant(_) | Op::LaneIndex);
        if !leaf && !self.computes.contains(&node) {
            return match op {
                _ if graph.node(node).shape != Shape::Lanes => Vec::new(),
                Op::Input { .. } => vec![self.load(Slot::Input(node), dst)],
                _ => vec![self.load(Slot::Value(node), dst)],
            };
        }
        // Operands as registers; `from` is the first operand's type.
        let from = op.operands().first().map(|a| graph.node(*a).dtype);
        let float = from == Some(DType::F32);
        vec![match op.map_operands(|a| NodeId(self.reg(*a))) {
            Op::Param { .. } => match self.params.index(node) {
                (true, index) => Instr::ParamF { dst, index },
                (false, index) => Instr::ParamU { dst, index },
            },
            Op::Constant(Constant::F32(bits)) => Instr::ConstF { dst, bits },
            Op::Constant(c) => Instr::ConstU {
                dst,
                value: c.bits(),
            },
            Op::LaneIndex => Instr::Lane { dst },
            Op::LogicUnary(op, NodeId(a)) => Instr::LogicUnary { op, dst, a },
            Op::LogicBinary(op, NodeId(a), NodeId(b)) => Instr::LogicBinary { op, dst, a, b },
            Op::FloatBinary(op, NodeId(a), NodeId(b)) => Instr::FloatBinary { op, dst, a, b },
            Op::Unary(op, NodeId(a)) => Instr::UnaryF { op, dst, a },
            Op::Binary(op, NodeId(a), NodeId(b)) if float => Instr::BinaryF { op, dst, a, b },
            Op::Binary(op, NodeId(a), NodeId(b)) => Instr::BinaryU { op, dst, a, b },
            Op::Compare(op, NodeId(a), NodeId(b)) if float => Instr::CompareF { op, dst, a, b },
            Op::Compare(op, NodeId(a), NodeId(b)) => Instr::CompareU { op, dst, a, b },
            Op::Select {
                cond,
                on_true,
                on_false,
            } => {
                let (cond, a, b) = (cond.0, on_true.0, on_false.0);
                if graph.node(node).dtype == DType::F32 {
                    Instr::SelectF { dst, cond, a, b }
                } else {
                    Instr::SelectU { dst, cond, a, b }
                }
            }
            Op::Cast(NodeId(a), to) => match (from, to) {
                (Some(DType::F32), DType::U32) => Instr::F32ToU32 { dst, a },
                (Some(DType::F32), DType::Bool) => Instr::F32ToBool { dst, a },
                (_, DType::F32) => Instr::U32ToF32 { dst, a },
                (Some(DType::U32), DType::Bool) => Instr::U32ToBool { dst, a },
                _ => unreachable!("same-file casts are aliases"),
            },
            Op::RandomUniform { key, counter, word } => {
                let mut words = [None, None];
                words[usize::from(word)] = Some(dst);
                Instr::Random {
                    dst: words,
                    key: key.map(|k| k.0),
                    counter: counter.map(|c| c.0),
                }
            }
            // A pack is only stored (column by column); a reduction is a phase result.
            Op::Pack(_) | Op::RowReduce(..) => return Vec::new(),
            Op::Unpack(_, column) => {
                let Op::Unpack(packed, _) = *op else {
                    unreachable!()
                };
                let slot = if matches!(graph.node(packed).op, Op::Input { .. }) {
                    Slot::Input(packed)
                } else {
                    Slot::Value(packed)
                };
                let Shape::Packed(k) = graph.node(packed).shape else {
                    unreachable!()
                };
                Instr::LoadPackedF {
                    dst,
                    buffer: self.buffer(false, slot),
                    k,
                    column,
                    per_step: self.per_step(slot),
                }
            }
            Op::Input { .. } => {
                unreachable!("leaf {node} {op:?} in computes {:?}", self.kernel.name)
            }
            Op::Affine {
                acc,
                weights,
                inputs,
            } => return self.affine(node, acc, &weights, &inputs),
        }]
    }

    fn load(&self, slot: Slot, dst: Reg) -> Instr {
        let (buffer, per_step) = (self.buffer(false, slot), self.per_step(slot));
        if is_float(self.graph, slot) {
            Instr::LoadF {
                dst,
                buffer,
                per_step,
            }
        } else {
            Instr::LoadU {
                dst,
                buffer,
                per_step,
            }
        }
    }

    fn store(&self, slot: Slot, node: NodeId) -> Vec<Instr> {
        let (buffer, per_step) = (self.buffer(true, slot), self.per_step(slot));
        let src = self.reg(node);
        match (&self.graph.node(node).op, self.graph.node(node).shape) {
            (Op::Pack(items), Shape::Packed(k)) => (items.iter().enumerate())
                .map(|(column, item)| Instr::StorePackedF {
                    buffer,
                    src: self.reg(*item),
                    k,
                    column: column as u32,
                    per_step,
                })
                .collect(),
            _ if is_float(self.graph, slot) => vec![Instr::StoreF {
                buffer,
                src,
                per_step,
            }],
            _ => vec![Instr::StoreU {
                buffer,
                src,
                per_step,
            }],
        }
    }
}
