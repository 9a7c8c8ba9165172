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
        .map(|k| {
            Lowerer::new(
                graph,
                &plan.kernels[*k],
                &bindings,
                params,
                plan.steps_per_launch,
            )
            .program()
        })
        .collect();
    let names: Vec<&str> = parts
        .iter()
        .map(|k| plan.kernels[*k].name.as_str())
        .collect();
    let vectorizable = bindings.in_u.is_empty()
        && bindings.out_u.is_empty()
        && programs.iter().all(super::vector::vectorizable);
    LoweredLaunch {
        vectorizable,
        program: LaunchProgram::new(programs),
        name: if names.len() == 1 {
            names[0].to_string()
        } else {
            format!("horizontal[{}]", names.join("+"))
        },
        rows_of: if parts.len() == 1 {
            plan.kernels[parts[0]].rows_of
        } else {
            None
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

impl<'a> Lowerer<'a> {
    fn new(
        graph: &'a Graph,
        kernel: &'a PlannedKernel,
        bindings: &'a LaunchBindings,
        params: &'a ParamLayout,
        steps: u32,
    ) -> Self {
        let mut lowerer = Self {
            graph,
            kernel,
            bindings,
            params,
            steps,
            computes: kernel.computes.iter().copied().collect(),
            alias: BTreeMap::new(),
            fresh: Cell::new(graph.nodes().len() as Reg),
        };
        for &node in &kernel.computes {
            if let Some(target) = lowerer.aliased(node) {
                lowerer.alias.insert(node, target);
            }
        }
        lowerer
    }

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

    fn buffer(&self, list: &[Slot], slot: Slot) -> u32 {
        list.iter()
            .position(|s| *s == slot)
            .expect("slot bound by the launch") as u32
    }

    /// Whether `slot` is a per-step (`[steps, n]`) buffer of this launch.
    fn per_step(&self, slot: Slot) -> bool {
        self.steps > 1 && PlannedKernel::is_per_step(self.graph, slot)
    }

    fn program(&self) -> KernelProgram {
        let mut carries_f = Vec::new();
        let mut carries_u = Vec::new();
        if self.steps > 1 {
            for carry in self.graph.carries() {
                let pair = (carry.input.0, self.reg(carry.next));
                match self.graph.node(carry.input).dtype {
                    DType::F32 => carries_f.push(pair),
                    _ => carries_u.push(pair),
                }
            }
        }
        let reduces: Vec<NodeId> = self
            .kernel
            .computes
            .iter()
            .copied()
            .filter(|n| matches!(self.graph.node(*n).op, Op::RowReduce(..)))
            .collect();
        let phases = reduces
            .iter()
            .map(|&r| {
                let Op::RowReduce(op, operand, _) = self.graph.node(r).op else {
                    unreachable!()
                };
                ReducePhase {
                    body: self.emit(&[operand], &[]),
                    value: self.reg(operand),
                    op,
                    result: r.0,
                }
            })
            .collect();
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
        let scheduled = if self.kernel.rows_of.is_none() {
            guards::schedule(body, &live_out, &mut fresh)
        } else {
            guards::Scheduled {
                body,
                guards: Vec::new(),
            }
        };
        KernelProgram {
            rows_of: self.kernel.rows_of,
            phases,
            prologue,
            body: scheduled.body,
            epilogue,
            guards: scheduled.guards,
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
            .flat_map(|node| match &self.graph.node(node).op {
                Op::Affine {
                    acc,
                    weights,
                    inputs,
                } if self.computes.contains(&node) => self.affine(node, *acc, weights, inputs),
                _ => self.instr(node).into_iter().collect(),
            })
            .collect()
    }

    /// An affine as one chain of [`Instr::MulAdd`], each term's sum in a fresh register and
    /// the last in the node's own.
    fn affine(
        &self,
        node: NodeId,
        acc: Option<NodeId>,
        weights: &[NodeId],
        inputs: &[NodeId],
    ) -> Vec<Instr> {
        let mut sum = acc.map(|a| self.reg(a));
        let last = inputs.len() - 1;
        weights
            .iter()
            .zip(inputs)
            .enumerate()
            .map(|(k, (w, x))| {
                let dst = if k == last {
                    node.0
                } else {
                    let fresh = self.fresh.get();
                    self.fresh.set(fresh + 1);
                    fresh
                };
                let instr = Instr::MulAdd {
                    dst,
                    acc: sum,
                    a: self.reg(*w),
                    b: self.reg(*x),
                };
                sum = Some(dst);
                instr
            })
            .collect()
    }

    /// The instruction producing `node`'s register, if it needs one.
    fn instr(&self, node: NodeId) -> Option<Instr> {
        let graph = self.graph;
        let op = &graph.node(node).op;
        let dst = node.0;
        if self.alias.contains_key(&node) {
            return None;
        }
        // Params, constants and the lane index are produced in place, whether they are
        // operands or roots written by this kernel.
        match op {
            Op::Param { .. } => {
                return Some(match self.params.index(node) {
                    (true, index) => Instr::ParamF { dst, index },
                    (false, index) => Instr::ParamU { dst, index },
                });
            }
            Op::Constant(Constant::F32(bits)) => return Some(Instr::ConstF { dst, bits: *bits }),
            Op::Constant(Constant::U32(value)) => {
                return Some(Instr::ConstU { dst, value: *value });
            }
            Op::Constant(Constant::Bool(value)) => {
                return Some(Instr::ConstU {
                    dst,
                    value: u32::from(*value),
                });
            }
            Op::LaneIndex => return Some(Instr::Lane { dst }),
            _ => {}
        }
        if !self.computes.contains(&node) {
            return match op {
                _ if graph.node(node).shape != Shape::Lanes => None,
                Op::Input { .. } => Some(self.load(Slot::Input(node), dst)),
                _ => Some(self.load(Slot::Value(node), dst)),
            };
        }
        let float = |id: NodeId| graph.node(id).dtype == DType::F32;
        Some(match *op {
            Op::LogicUnary(op, a) => Instr::LogicUnary {
                op,
                dst,
                a: self.reg(a),
            },
            Op::LogicBinary(op, a, b) => Instr::LogicBinary {
                op,
                dst,
                a: self.reg(a),
                b: self.reg(b),
            },
            Op::FloatBinary(op, a, b) => Instr::FloatBinary {
                op,
                dst,
                a: self.reg(a),
                b: self.reg(b),
            },
            Op::Unary(op, a) => Instr::UnaryF {
                op,
                dst,
                a: self.reg(a),
            },
            Op::Binary(op, a, b) if float(a) => Instr::BinaryF {
                op,
                dst,
                a: self.reg(a),
                b: self.reg(b),
            },
            Op::Binary(op, a, b) => Instr::BinaryU {
                op,
                dst,
                a: self.reg(a),
                b: self.reg(b),
            },
            Op::Compare(op, a, b) if float(a) => Instr::CompareF {
                op,
                dst,
                a: self.reg(a),
                b: self.reg(b),
            },
            Op::Compare(op, a, b) => Instr::CompareU {
                op,
                dst,
                a: self.reg(a),
                b: self.reg(b),
            },
            Op::Select {
                cond,
                on_true,
                on_false,
            } => {
                let (cond, a, b) = (self.reg(cond), self.reg(on_true), self.reg(on_false));
                if float(node) {
                    Instr::SelectF { dst, cond, a, b }
                } else {
                    Instr::SelectU { dst, cond, a, b }
                }
            }
            Op::Cast(a, to) => {
                let from = graph.node(a).dtype;
                let a = self.reg(a);
                match (from, to) {
                    (DType::F32, DType::U32) => Instr::F32ToU32 { dst, a },
                    (DType::F32, DType::Bool) => Instr::F32ToBool { dst, a },
                    (_, DType::F32) => Instr::U32ToF32 { dst, a },
                    (DType::U32, DType::Bool) => Instr::U32ToBool { dst, a },
                    _ => unreachable!("same-file casts are aliases"),
                }
            }
            Op::RandomUniform { key, counter, word } => {
                let mut words = [None, None];
                words[usize::from(word)] = Some(dst);
                Instr::Random {
                    dst: words,
                    key: key.map(|k| self.reg(k)),
                    counter: counter.map(|c| self.reg(c)),
                }
            }
            // A pack is only stored (column by column); a reduction is a phase result.
            Op::Pack(_) | Op::RowReduce(..) => return None,
            Op::Unpack(packed, column) => {
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
                    buffer: self.buffer(&self.bindings.in_f, slot),
                    k,
                    column,
                    per_step: self.per_step(slot),
                }
            }
            Op::Input { .. } | Op::Param { .. } | Op::Constant(_) | Op::LaneIndex => {
                unreachable!("leaf {node} {op:?} in computes {:?}", self.kernel.name)
            }
            Op::Affine { .. } => unreachable!("affines lower to a chain: see `affine`"),
        })
    }

    fn load(&self, slot: Slot, dst: Reg) -> Instr {
        let per_step = self.per_step(slot);
        if is_float(self.graph, slot) {
            Instr::LoadF {
                dst,
                buffer: self.buffer(&self.bindings.in_f, slot),
                per_step,
            }
        } else {
            Instr::LoadU {
                dst,
                buffer: self.buffer(&self.bindings.in_u, slot),
                per_step,
            }
        }
    }

    fn store(&self, slot: Slot, node: NodeId) -> Vec<Instr> {
        let per_step = self.per_step(slot);
        match (&self.graph.node(node).op, self.graph.node(node).shape) {
            (Op::Pack(items), Shape::Packed(k)) => {
                let buffer = self.buffer(&self.bindings.out_f, slot);
                items
                    .iter()
                    .enumerate()
                    .map(|(column, item)| Instr::StorePackedF {
                        buffer,
                        src: self.reg(*item),
                        k,
                        column: column as u32,
                        per_step,
                    })
                    .collect()
            }
            _ if is_float(self.graph, slot) => vec![Instr::StoreF {
                buffer: self.buffer(&self.bindings.out_f, slot),
                src: self.reg(node),
                per_step,
            }],
            _ => vec![Instr::StoreU {
                buffer: self.buffer(&self.bindings.out_u, slot),
                src: self.reg(node),
                per_step,
            }],
        }
    }
}
