//! Partitioning the computing nodes of a graph into fusion groups.
//!
//! Vertical fusion walks the graph from its roots (outputs and carried values) towards its
//! inputs, as XLA's instruction fusion does: a producer joins its consumer's group when all
//! its users are in that group; a cheap producer used by several groups is duplicated into
//! each while the duplication budget lasts; otherwise it becomes a group of its own, whose
//! value goes through memory. A merge pass (XLA's fusion merger) then folds small cheap
//! groups into all their consumers.

use std::collections::BTreeSet;

use super::cost::is_expensive;
use super::options::PlanOptions;
use super::spec::FusionRules;
use crate::graph::{Graph, NodeId, Op};

/// A set of nodes computed by one kernel, and why it is a kernel of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// Computing nodes, in ascending (topological) order.
    pub nodes: BTreeSet<NodeId>,
    /// Why the group's root is not fused into something else.
    pub why: Vec<String>,
    /// Nodes whose value this group writes when others read it (empty: the first group
    /// computing a node writes it).
    pub roots: BTreeSet<NodeId>,
    /// Whether the fusion merger may fold the group into its consumers.
    mergeable: bool,
}

impl Group {
    /// A group given by the caller.
    pub fn explicit(nodes: BTreeSet<NodeId>, why: String) -> Self {
        Self {
            nodes,
            why: vec![why],
            roots: BTreeSet::new(),
            mergeable: false,
        }
    }

    /// A group that writes the values of `roots` others read.
    pub fn with_roots(nodes: BTreeSet<NodeId>, roots: BTreeSet<NodeId>, why: Vec<String>) -> Self {
        Self {
            nodes,
            why,
            roots,
            mergeable: false,
        }
    }
}

/// The fusion decisions a strategy allows, with the options' budget applied.
#[derive(Debug, Clone)]
pub struct PartitionRules {
    name: &'static str,
    fuse: bool,
    everything: bool,
    random_opaque: bool,
    multi_user_pack_boundary: bool,
    duplication_budget: usize,
}

impl PartitionRules {
    /// `rules` of the strategy called `name` under `options`.
    pub fn new(name: &'static str, rules: FusionRules, options: &PlanOptions) -> Self {
        Self {
            name,
            fuse: rules.fuse,
            everything: rules.everything,
            random_opaque: rules.random_opaque && options.opaque_random,
            multi_user_pack_boundary: rules.multi_user_pack_boundary,
            duplication_budget: if rules.fuse {
                options.duplication_budget
            } else {
                0
            },
        }
    }
}

/// Partitions a graph under a set of rules.
pub struct Partitioner<'a> {
    graph: &'a Graph,
    rules: PartitionRules,
    users: Vec<Vec<NodeId>>,
    groups: Vec<Group>,
    group_of: Vec<Vec<usize>>,
    budget: usize,
}

impl<'a> Partitioner<'a> {
    /// A partitioner for `graph`.
    pub fn new(graph: &'a Graph, rules: PartitionRules) -> Self {
        let budget = rules.duplication_budget;
        Self {
            users: graph.users(),
            group_of: vec![Vec::new(); graph.nodes().len()],
            graph,
            rules,
            groups: Vec::new(),
            budget,
        }
    }

    /// The groups, in no particular order.
    pub fn partition(mut self) -> Vec<Group> {
        if self.rules.everything
            && let Some(group) = self.single_group()
        {
            return vec![group];
        }
        let computing: Vec<NodeId> = self
            .graph
            .ids()
            .filter(|id| self.graph.is_placed(*id))
            .collect();
        for &node in computing.iter().rev() {
            self.place(node);
        }
        if self.rules.fuse {
            self.merge_small_groups();
        }
        self.groups.retain(|g| !g.nodes.is_empty());
        self.groups
    }

    /// Everything in one group, unless row reductions of different widths forbid it.
    fn single_group(&self) -> Option<Group> {
        let widths: BTreeSet<u32> = self
            .graph
            .nodes()
            .iter()
            .filter_map(|n| match n.op {
                Op::RowReduce(_, _, cols) => Some(cols),
                _ => None,
            })
            .collect();
        if widths.len() > 1 {
            return None;
        }
        Some(Group {
            nodes: self
                .graph
                .ids()
                .filter(|id| self.graph.is_placed(*id))
                .collect(),
            why: vec![
                "fused: every op of the graph in one kernel (vertical + sibling fusion)".into(),
            ],
            roots: BTreeSet::new(),
            mergeable: false,
        })
    }

    fn new_group(&mut self, node: NodeId, why: String, mergeable: bool) {
        self.groups.push(Group {
            nodes: BTreeSet::from([node]),
            why: vec![why],
            roots: BTreeSet::new(),
            mergeable,
        });
        self.group_of[node.index()].push(self.groups.len() - 1);
    }

    fn join(&mut self, node: NodeId, group: usize) {
        self.groups[group].nodes.insert(node);
        self.group_of[node.index()].push(group);
    }

    fn place(&mut self, node: NodeId) {
        let op = &self.graph.node(node).op;
        let name = op.name();
        if !self.rules.fuse {
            return self.new_group(
                node,
                format!("{}: one kernel per op", self.rules.name),
                false,
            );
        }
        if let Some(output) = self.graph.outputs().iter().find(|o| o.node == node) {
            return self.new_group(
                node,
                format!(
                    "{node} ({name}) is output `{}`: written to memory",
                    output.name
                ),
                false,
            );
        }
        if let Some(carry) = self.graph.carries().iter().find(|c| c.next == node) {
            let input = self.graph.carry_name(carry.input);
            return self.new_group(
                node,
                format!("{node} ({name}) is loop-carried state `{input}`: written to memory"),
                false,
            );
        }
        if self.rules.random_opaque && matches!(op, Op::RandomUniform { .. }) {
            return self.new_group(
                node,
                format!("{node} ({name}) is opaque: random numbers are not fused"),
                false,
            );
        }
        if matches!(op, Op::RowReduce(..)) {
            return self.new_group(
                node,
                format!("{node} ({name}) is a row reduction: it changes the iteration domain"),
                false,
            );
        }
        let user_count = self.users[node.index()].len();
        if self.rules.multi_user_pack_boundary && matches!(op, Op::Pack(_)) && user_count > 1 {
            return self.new_group(
                node,
                format!("{node} ({name}) is a pack with {user_count} users: not fused into them"),
                false,
            );
        }
        let consumers: BTreeSet<usize> = self.users[node.index()]
            .iter()
            .flat_map(|u| self.group_of[u.index()].iter().copied())
            .collect();
        let fusible: Vec<usize> = consumers
            .iter()
            .copied()
            .filter(|g| self.accepts(*g))
            .collect();
        if fusible.len() < consumers.len() {
            return self.new_group(
                node,
                format!("{node} ({name}) feeds an opaque op, which fuses nothing"),
                false,
            );
        }
        match consumers.len() {
            0 => unreachable!("validated graph: every computing node reaches a root"),
            1 => self.join(node, fusible[0]),
            count => {
                let extra = count - 1;
                if !is_expensive(self.graph, node) && extra <= self.budget {
                    self.budget -= extra;
                    for group in fusible {
                        self.join(node, group);
                    }
                } else {
                    let reason = if is_expensive(self.graph, node) {
                        format!(
                            "{node} ({name}) is used by {count} kernels and too expensive to duplicate"
                        )
                    } else {
                        format!(
                            "{node} ({name}) is used by {count} kernels and the duplication budget is spent"
                        )
                    };
                    self.new_group(node, reason, true);
                }
            }
        }
    }

    /// Whether a producer may be fused into `group` (opaque groups take no producers).
    fn accepts(&self, group: usize) -> bool {
        !(self.rules.random_opaque
            && self.groups[group]
                .nodes
                .iter()
                .any(|n| matches!(self.graph.node(*n).op, Op::RandomUniform { .. })))
    }

    /// XLA's fusion merger: fold a cheap materialized group into every group that reads it,
    /// when that costs less than the duplication budget left.
    fn merge_small_groups(&mut self) {
        loop {
            let candidate = (0..self.groups.len()).find(|g| {
                let group = &self.groups[*g];
                group.mergeable
                    && !group.nodes.is_empty()
                    && group.nodes.iter().all(|n| !is_expensive(self.graph, *n))
                    && self.consumer_groups(*g).len() * group.nodes.len() <= self.budget
                    && self.consumer_groups(*g).iter().all(|c| self.accepts(*c))
            });
            let Some(g) = candidate else { break };
            let consumers = self.consumer_groups(g);
            self.budget -= consumers.len() * self.groups[g].nodes.len();
            let nodes: Vec<NodeId> = std::mem::take(&mut self.groups[g].nodes)
                .into_iter()
                .collect();
            for node in nodes {
                self.group_of[node.index()].retain(|x| *x != g);
                for &c in &consumers {
                    self.join(node, c);
                }
            }
        }
    }

    /// Groups that read a value computed in `g` without computing it themselves.
    fn consumer_groups(&self, g: usize) -> Vec<usize> {
        let nodes = &self.groups[g].nodes;
        let mut consumers = BTreeSet::new();
        for node in nodes {
            for user in &self.users[node.index()] {
                for &h in &self.group_of[user.index()] {
                    if h != g && !self.groups[h].nodes.contains(node) {
                        consumers.insert(h);
                    }
                }
            }
        }
        consumers.into_iter().collect()
    }
}
