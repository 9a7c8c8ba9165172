//! From fusion groups to kernels: the buffers each binds and their order.

use std::collections::{BTreeMap, BTreeSet};

use super::partition::Group;
use crate::graph::{Graph, NodeId, Op, Shape};

/// A device buffer a kernel binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    /// The buffer bound to a graph input.
    Input(NodeId),
    /// The buffer holding a node's value (outputs and materialized intermediates).
    Value(NodeId),
    /// The buffer receiving the next value of a carried input.
    Next(NodeId),
}

/// One kernel of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedKernel {
    /// Name, unique within the plan.
    pub name: String,
    /// Nodes computed here, topologically ordered (duplicated nodes appear in several kernels).
    pub computes: Vec<NodeId>,
    /// Buffers read.
    pub reads: Vec<Slot>,
    /// Buffers written, with the node whose value each receives.
    pub writes: Vec<(Slot, NodeId)>,
    /// `Some(cols)`: one thread per row of `cols` lanes (the kernel reduces rows).
    pub rows_of: Option<u32>,
    /// Why this is a kernel of its own.
    pub why: Vec<String>,
}

/// Bytes per lane of one element of `node`'s value (`4 k` for packed values).
pub fn slot_width_bytes(graph: &Graph, node: NodeId) -> u64 {
    let node = graph.node(node);
    let width = match node.shape {
        Shape::Lanes => 1,
        Shape::Packed(k) => u64::from(k),
    };
    width * node.dtype.size_bytes()
}

/// `Some(cols)` where `nodes` reduce rows of `cols` lanes (the first reduction's width).
pub fn rows_of<'a>(graph: &Graph, nodes: impl IntoIterator<Item = &'a NodeId>) -> Option<u32> {
    nodes.into_iter().find_map(|n| match graph.node(*n).op {
        Op::RowReduce(_, _, cols) => Some(cols),
        _ => None,
    })
}

/// For each of `slots` some kernel writes, the first of `kernels` that writes it.
pub fn writers<'a>(
    kernels: &'a [PlannedKernel],
    slots: &'a [Slot],
) -> impl Iterator<Item = usize> + 'a {
    (slots.iter()).filter_map(|slot| {
        kernels
            .iter()
            .position(|k| k.writes.iter().any(|(s, _)| s == slot))
    })
}

impl Slot {
    /// The node whose type and shape the buffer has.
    pub fn node(self) -> NodeId {
        match self {
            Slot::Input(n) | Slot::Value(n) | Slot::Next(n) => n,
        }
    }
}

impl PlannedKernel {
    /// Buffers bound (reads plus writes).
    pub fn bindings(&self) -> usize {
        self.reads.len() + self.writes.len()
    }

    /// Whether a slot is read or written once per step of a `steps`-step launch (rather
    /// than once per launch, as carried state is).
    pub fn is_per_step(graph: &Graph, slot: Slot) -> bool {
        match slot {
            Slot::Input(input) => graph.carry_of(input).is_none() && !graph.is_per_launch(input),
            Slot::Value(_) => true,
            Slot::Next(_) => false,
        }
    }

    /// Compulsory bytes read and written per lane by one launch of `steps` steps.
    pub fn bytes_per_lane(&self, graph: &Graph, steps: u32) -> (u64, u64) {
        let bytes = |slot: Slot| {
            let times = if Self::is_per_step(graph, slot) {
                u64::from(steps)
            } else {
                1
            };
            times * slot_width_bytes(graph, slot.node())
        };
        (
            self.reads.iter().map(|s| bytes(*s)).sum(),
            self.writes.iter().map(|(s, _)| bytes(*s)).sum(),
        )
    }
}

/// Turns groups into kernels in dependency order.
pub fn build_kernels(graph: &Graph, groups: Vec<Group>) -> Vec<PlannedKernel> {
    // A value is written by the (last) group naming it a root, else by the first computing it.
    let computed = (groups.iter().enumerate().rev())
        .flat_map(|(g, group)| group.nodes.iter().map(move |n| (*n, g)));
    let rooted =
        (groups.iter().enumerate()).flat_map(|(g, group)| group.roots.iter().map(move |n| (*n, g)));
    let owner: BTreeMap<NodeId, usize> = computed.chain(rooted).collect();
    let reads: Vec<BTreeSet<Slot>> = (groups.iter())
        .map(|group| {
            let operands = group
                .nodes
                .iter()
                .flat_map(|n| graph.node(*n).op.operands());
            (operands.filter(|o| !group.nodes.contains(o)))
                .filter_map(|o| match graph.node(o).op {
                    Op::Input { .. } => Some(Slot::Input(o)),
                    Op::Param { .. } | Op::Constant(_) | Op::LaneIndex => None,
                    _ => Some(Slot::Value(o)),
                })
                .collect()
        })
        .collect();
    let mut writes: Vec<BTreeSet<(Slot, NodeId)>> = vec![BTreeSet::new(); groups.len()];
    for output in graph.outputs() {
        writes[owner[&output.node]].insert((Slot::Value(output.node), output.node));
    }
    for carry in graph.carries() {
        writes[owner[&carry.next]].insert((Slot::Next(carry.input), carry.next));
    }
    for slot in reads.iter().flatten() {
        if let Slot::Value(node) = slot {
            writes[owner[node]].insert((*slot, *node));
        }
    }
    // Order: a kernel runs after every kernel whose values it reads.
    let writer_of: BTreeMap<Slot, usize> = writes
        .iter()
        .enumerate()
        .flat_map(|(g, w)| w.iter().map(move |(slot, _)| (*slot, g)))
        .collect();
    let mut order = Vec::with_capacity(groups.len());
    let mut placed = vec![false; groups.len()];
    while order.len() < groups.len() {
        let ready = (0..groups.len()).find(|g| {
            !placed[*g]
                && reads[*g]
                    .iter()
                    .all(|s| writer_of.get(s).is_none_or(|w| placed[*w] || *w == *g))
        });
        let g = ready.expect("fusion groups never read each other's values in a cycle");
        placed[g] = true;
        order.push(g);
    }
    (order.into_iter())
        .enumerate()
        .map(|(index, g)| {
            let group = &groups[g];
            let computes: Vec<NodeId> = group.nodes.iter().copied().collect();
            let root = *computes.last().expect("groups are not empty");
            PlannedKernel {
                name: format!("k{index}_{}", graph.node(root).op.name().replace(' ', "_")),
                computes,
                reads: reads[g].iter().copied().collect(),
                writes: writes[g].iter().copied().collect(),
                rows_of: rows_of(graph, &group.nodes),
                why: group.why.clone(),
            }
        })
        .collect()
}

/// One launch: one kernel, or several kernels on disjoint cube ranges (horizontal fusion),
/// or a copy of loop-carried state (the `xla-default` while-loop copy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannedLaunch {
    /// Kernels issued together, by index into [`Plan::kernels`](super::Plan::kernels).
    Kernels(Vec<usize>),
    /// Copies the next value of carried `input` into the input's own buffer.
    CopyState {
        /// The carried input node.
        input: NodeId,
    },
}

impl PlannedLaunch {
    /// The kernels this launch runs, by index into [`Plan::kernels`](super::Plan::kernels)
    /// (none for a state copy).
    pub fn kernels(&self) -> &[usize] {
        match self {
            PlannedLaunch::Kernels(kernels) => kernels,
            PlannedLaunch::CopyState { .. } => &[],
        }
    }
}
