//! The state XLA's passes rewrite: fusion instructions over the graph's nodes.
//!
//! Every placed node starts as an unfused instruction of its own. A fusion is a set of
//! nodes; a node fused into several fusions (duplication) is computed by each, and its
//! value reaches memory only from its *home*, the fusion it was first placed in, when a
//! fusion that does not compute it reads it or when it is a graph root. A fusion with no
//! value left to write is dead code and is dropped.

use std::collections::BTreeSet;

use super::reaches;
use crate::graph::{Graph, NodeId, Op};
use crate::plan::PlanOptions;
use crate::plan::cost::is_expensive;
use crate::plan::kernels::slot_width_bytes;

/// One fusion instruction (or an unfused op: a fusion of one node).
#[derive(Debug, Clone)]
pub(super) struct Fusion {
    /// Nodes computed here.
    pub nodes: BTreeSet<NodeId>,
    /// Why it is a kernel of its own (filled in as decisions refuse merges).
    pub why: Vec<String>,
}

/// The graph and its fusions, with the queries every pass asks.
pub(super) struct Computation<'g> {
    pub graph: &'g Graph,
    pub options: &'g PlanOptions,
    users: Vec<Vec<NodeId>>,
    pub fusions: Vec<Fusion>,
    /// For each node, the fusions that compute it.
    member_of: Vec<BTreeSet<usize>>,
    /// For each placed node, the fusion its value is written from.
    home: Vec<usize>,
}

impl<'g> Computation<'g> {
    /// One unfused instruction per placed node; opaque random ops sharing a key, none
    /// depending on another, become one custom call (JAX draws a whole array in one call).
    pub fn new(graph: &'g Graph, options: &'g PlanOptions) -> Self {
        let mut computation = Self {
            graph,
            options,
            users: graph.users(),
            fusions: Vec::new(),
            member_of: vec![BTreeSet::new(); graph.nodes().len()],
            home: vec![usize::MAX; graph.nodes().len()],
        };
        for id in graph.ids().filter(|id| graph.is_placed(*id)) {
            let call = computation.is_custom_call(id);
            let joined = call.then(|| {
                (computation.fusions.iter())
                    .position(|f| f.nodes.iter().all(|n| computation.same_call(*n, id)))
            });
            let fusion = joined.flatten().unwrap_or_else(|| {
                let why =
                    call.then(|| "a custom call (XLA's threefry): opaque, fuses nothing".into());
                computation.fusions.push(Fusion {
                    nodes: BTreeSet::new(),
                    why: why.into_iter().collect(),
                });
                computation.fusions.len() - 1
            });
            computation.add(fusion, id);
            computation.home[id.index()] = fusion;
        }
        computation
    }

    fn same_call(&self, a: NodeId, b: NodeId) -> bool {
        let key = |n: NodeId| match self.graph.node(n).op {
            Op::RandomUniform { key, .. } => Some(key),
            _ => None,
        };
        self.is_custom_call(a)
            && key(a) == key(b)
            && !depends_on(self.graph, a, b)
            && !depends_on(self.graph, b, a)
    }

    fn add(&mut self, fusion: usize, node: NodeId) {
        self.fusions[fusion].nodes.insert(node);
        self.member_of[node.index()].insert(fusion);
    }

    /// Whether `node` is an opaque random op (a custom call under these options).
    pub fn is_custom_call(&self, node: NodeId) -> bool {
        self.options.opaque_random && matches!(self.graph.node(node).op, Op::RandomUniform { .. })
    }

    /// Whether some node of fusion `f` passes `test`.
    pub fn any(&self, f: usize, test: impl Fn(NodeId) -> bool) -> bool {
        self.fusions[f].nodes.iter().any(|n| test(*n))
    }

    /// Whether fusion `f` is a custom call.
    pub fn is_call(&self, f: usize) -> bool {
        self.any(f, |n| self.is_custom_call(n))
    }

    /// Whether fusion `f` reduces rows (an input fusion in XLA's terms: a consumer only).
    pub fn is_reduction(&self, f: usize) -> bool {
        self.any(f, |n| matches!(self.graph.node(n).op, Op::RowReduce(..)))
    }

    /// Whether fusion `f` holds an op too expensive to duplicate ([`is_expensive`]).
    pub fn is_expensive(&self, f: usize) -> bool {
        self.any(f, |n| is_expensive(self.graph, n))
    }

    /// Live fusions.
    pub fn live(&self) -> Vec<usize> {
        (0..self.fusions.len())
            .filter(|f| !self.fusions[*f].nodes.is_empty())
            .collect()
    }

    /// Fusions that read `node`'s value from memory.
    pub fn readers(&self, node: NodeId) -> BTreeSet<usize> {
        self.users[node.index()]
            .iter()
            .flat_map(|u| self.member_of[u.index()].iter().copied())
            .filter(|f| !self.fusions[*f].nodes.contains(&node))
            .collect()
    }

    /// Values fusion `f` writes: its home nodes that are roots or read elsewhere.
    pub fn exposed(&self, f: usize) -> Vec<NodeId> {
        self.fusions[f]
            .nodes
            .iter()
            .copied()
            .filter(|n| self.home[n.index()] == f)
            .filter(|n| self.graph.is_root(*n) || !self.readers(*n).is_empty())
            .collect()
    }

    /// Whether `f` writes a graph root (an output or a carried value).
    pub fn writes_root(&self, f: usize) -> bool {
        self.exposed(f).iter().any(|n| self.graph.is_root(*n))
    }

    /// Fusions whose values `f` reads.
    pub fn producers(&self, f: usize) -> BTreeSet<usize> {
        self.operands_of(&self.fusions[f].nodes)
            .into_iter()
            .filter(|n| self.graph.is_placed(*n))
            .map(|n| self.home[n.index()])
            .collect()
    }

    /// Fusions that read a value `f` writes.
    pub fn consumers(&self, f: usize) -> BTreeSet<usize> {
        self.exposed(f)
            .into_iter()
            .flat_map(|n| self.readers(n))
            .collect()
    }

    /// Nodes read by `nodes` and not computed by them.
    pub fn operands_of(&self, nodes: &BTreeSet<NodeId>) -> BTreeSet<NodeId> {
        nodes
            .iter()
            .flat_map(|n| self.graph.node(*n).op.operands())
            .filter(|o| !nodes.contains(o))
            .collect()
    }

    /// The nodes of fusions `a` and `b` together.
    pub fn merged(&self, a: usize, b: usize) -> BTreeSet<NodeId> {
        (self.fusions[a].nodes.union(&self.fusions[b].nodes))
            .copied()
            .collect()
    }

    /// Operands plus outputs of a fusion computing `nodes` whose home is in `homes`
    /// (constants and the lane index are fused in, as XLA fuses constants and iotas).
    pub fn operands_and_outputs(&self, nodes: &BTreeSet<NodeId>, homes: &[usize]) -> usize {
        let operands = self
            .operands_of(nodes)
            .into_iter()
            .filter(|o| !matches!(self.graph.node(*o).op, Op::Constant(_) | Op::LaneIndex))
            .count();
        let outputs = nodes
            .iter()
            .filter(|n| homes.contains(&self.home[n.index()]))
            .filter(|n| {
                self.graph.is_root(**n)
                    || self.users[n.index()]
                        .iter()
                        .any(|u| self.member_of[u.index()].iter().any(|f| !homes.contains(f)))
            })
            .count();
        operands + outputs
    }

    /// Bytes a fusion computing `nodes` reads per lane (XLA sizes broadcast scalars as
    /// full arrays).
    pub fn bytes_read(&self, nodes: &BTreeSet<NodeId>) -> u64 {
        self.operands_of(nodes)
            .into_iter()
            .map(|o| slot_width_bytes(self.graph, o))
            .sum()
    }

    /// Whether a path of fusions leads from `from` to `to` through some other fusion.
    pub fn indirect_path(&self, from: usize, to: usize) -> bool {
        let start = self.consumers(from).into_iter().filter(|c| *c != to);
        reaches(start, to, |f| self.consumers(f))
    }

    /// Whether either of `a`, `b` reaches the other.
    pub fn connected(&self, a: usize, b: usize) -> bool {
        self.consumers(a).contains(&b)
            || self.consumers(b).contains(&a)
            || self.indirect_path(a, b)
            || self.indirect_path(b, a)
    }

    /// Computes `nodes` in `into` as well (instruction fusion; the nodes stay where they
    /// are). Fusions left with nothing to write are dropped.
    pub fn fuse_into(&mut self, nodes: &BTreeSet<NodeId>, into: usize) {
        for node in nodes {
            self.add(into, *node);
        }
        self.drop_dead(self.homes_around(nodes));
    }

    /// Moves every node of `from` into `into` (merging; `into` writes what `from` wrote).
    pub fn merge(&mut self, from: usize, into: usize) {
        let nodes = std::mem::take(&mut self.fusions[from].nodes);
        for node in nodes {
            self.member_of[node.index()].remove(&from);
            self.add(into, node);
            if self.home[node.index()] == from {
                self.home[node.index()] = into;
            }
        }
        let why = std::mem::take(&mut self.fusions[from].why);
        self.fusions[into].why.extend(why);
        self.drop_dead(self.homes_around(&self.fusions[into].nodes));
    }

    /// The fusions whose exposure a change to where `nodes` are computed can alter: the
    /// homes of the nodes and of the values they read.
    fn homes_around(&self, nodes: &BTreeSet<NodeId>) -> BTreeSet<usize> {
        (nodes.iter().copied())
            .flat_map(|n| {
                let operands = self.graph.node(n).op.operands();
                std::iter::once(n).chain(operands)
            })
            .filter(|n| self.graph.is_placed(*n))
            .map(|n| self.home[n.index()])
            .collect()
    }

    /// DCE: drops fusions with nothing to write; their nodes live on in the fusions that
    /// compute them, one of which becomes their home. Only `touched` fusions (and, as
    /// fusions die, the homes of what they read) can have lost their last exposed value,
    /// so only those are checked: a whole-graph scan after every fusion made planning a
    /// 27k-node policy rollout take minutes.
    fn drop_dead(&mut self, mut touched: BTreeSet<usize>) {
        while let Some(f) = touched.pop_first() {
            if self.fusions[f].nodes.is_empty() || !self.exposed(f).is_empty() {
                continue;
            }
            let nodes = std::mem::take(&mut self.fusions[f].nodes);
            for node in &nodes {
                self.member_of[node.index()].remove(&f);
                if self.home[node.index()] == f
                    && let Some(other) = self.member_of[node.index()].first()
                {
                    self.home[node.index()] = *other;
                }
            }
            touched.extend(self.homes_around(&nodes));
        }
    }

    /// With XLA's concatenate rule on, no fusion may hold a concatenate read by several of
    /// its ops (XLA would emit it once per reader): the first such concatenate of
    /// `merged`, with its readers there.
    pub fn concat_read_by_several(&self, merged: &BTreeSet<NodeId>) -> Option<(NodeId, usize)> {
        if !self.options.concat_rule {
            return None;
        }
        merged.iter().find_map(|node| {
            let readers = self
                .users(*node)
                .iter()
                .filter(|u| merged.contains(u))
                .count();
            (invalidates_cache(self.graph, *node) && readers > 1).then_some((*node, readers))
        })
    }

    /// The fusion `node`'s value is written from.
    pub fn home(&self, node: NodeId) -> usize {
        self.home[node.index()]
    }

    /// Graph users of `node`.
    pub fn users(&self, node: NodeId) -> &[NodeId] {
        &self.users[node.index()]
    }
}

/// Whether `node` reads `ancestor`'s value, directly or not.
fn depends_on(graph: &Graph, node: NodeId, ancestor: NodeId) -> bool {
    // Operands precede their users: no path to `ancestor` leads through a node before it.
    reaches([node], ancestor, |n| {
        if n > ancestor {
            graph.node(n).op.operands()
        } else {
            Vec::new()
        }
    })
}

/// Ops whose emitter cannot reuse a computed element across users (XLA's
/// `ElementalIrEmitter::OpInvalidatesCache`): here the concatenate (`Pack`).
pub fn invalidates_cache(graph: &Graph, node: NodeId) -> bool {
    matches!(graph.node(node).op, Op::Pack(_))
}

/// Whether `user` reads `operand` at its own index (XLA: same shape, not a reshaping op),
/// so the operand's element is emitted once per index of the user.
pub fn reuses_index(graph: &Graph, operand: NodeId, user: NodeId) -> bool {
    let same_shape = graph.node(operand).shape == graph.node(user).shape;
    same_shape
        && !matches!(
            graph.node(user).op,
            Op::Pack(_) | Op::Unpack(..) | Op::RowReduce(..)
        )
}
