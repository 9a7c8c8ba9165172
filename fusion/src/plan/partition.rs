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
    /// A group that writes the values of `roots` others read, which the fusion merger
    /// leaves alone.
    pub fn new(nodes: BTreeSet<NodeId>, roots: BTreeSet<NodeId>, why: Vec<String>) -> Self {
        Self {
            nodes,
            why,
            roots,
            mergeable: false,
        }
    }
}

/// Partitions a graph under the [`FusionRules`] of a strategy (other than
/// [`FusionRules::Xla`]).
pub struct Partitioner<'a> {
    graph: &'a Graph,
    /// The strategy's name, for its boundaries' reasons.
    name: &'static str,
    rules: FusionRules,
    users: Vec<Vec<NodeId>>,
    groups: Vec<Group>,
    group_of: Vec<Vec<usize>>,
    /// How many op instances fusion may still duplicate.
    budget: usize,
}

impl<'a> Partitioner<'a> {
    /// A partitioner for `graph` under the `rules` of the strategy called `name`, which may
    /// duplicate `budget` op instances.
    pub fn new(graph: &'a Graph, name: &'static str, rules: FusionRules, budget: usize) -> Self {
        Self {
            users: graph.users(),
            group_of: vec![Vec::new(); graph.nodes().len()],
            graph,
            name,
            rules,
            groups: Vec::new(),
            budget,
        }
    }

    /// The groups, in no particular order.
    pub fn partition(mut self) -> Vec<Group> {
        if self.rules == FusionRules::Fused
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
        self.merge_small_groups();
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
        let nodes = (self.graph.ids()).filter(|id| self.graph.is_placed(*id));
        Some(Group::new(
            nodes.collect(),
            BTreeSet::new(),
            vec!["fused: every op of the graph in one kernel (vertical + sibling fusion)".into()],
        ))
    }

    fn new_group(&mut self, node: NodeId, why: String, mergeable: bool) {
        self.groups.push(Group {
            mergeable,
            ..Group::new(BTreeSet::from([node]), BTreeSet::new(), vec![why])
        });
        self.group_of[node.index()].push(self.groups.len() - 1);
    }

    fn join(&mut self, node: NodeId, group: usize) {
        self.groups[group].nodes.insert(node);
        self.group_of[node.index()].push(group);
    }

    /// Puts `node` in a group of its own where it must start one, else fuses it.
    fn place(&mut self, node: NodeId) {
        let op = &self.graph.node(node).op;
        let name = op.name();
        let users = self.users[node.index()].len();
        let why = if self.rules == FusionRules::Eager {
            format!("{}: one kernel per op", self.name)
        } else if let Some(output) = self.graph.outputs().iter().find(|o| o.node == node) {
            let output = &output.name;
            format!("{node} ({name}) is output `{output}`: written to memory")
        } else if let Some(carry) = self.graph.carries().iter().find(|c| c.next == node) {
            let input = self.graph.carry_name(carry.input);
            format!("{node} ({name}) is loop-carried state `{input}`: written to memory")
        } else if matches!(op, Op::RowReduce(..)) {
            format!("{node} ({name}) is a row reduction: it changes the iteration domain")
        } else if matches!(op, Op::Pack(_)) && users > 1 {
            format!("{node} ({name}) is a pack with {users} users: not fused into them")
        } else {
            return self.fuse(node, &name);
        };
        self.new_group(node, why, false);
    }

    /// Fuses `node` into the groups of its users: into its one consumer, or duplicated into
    /// each while it is cheap and the budget lasts; else it starts a mergeable group.
    fn fuse(&mut self, node: NodeId, name: &str) {
        let consumers: BTreeSet<usize> = self.users[node.index()]
            .iter()
            .flat_map(|u| self.group_of[u.index()].iter().copied())
            .collect();
        let count = consumers.len();
        let expensive = is_expensive(self.graph, node);
        match count {
            0 => unreachable!("validated graph: every computing node reaches a root"),
            _ if count == 1 || (!expensive && count - 1 <= self.budget) => {
                self.budget -= count - 1;
                for group in consumers {
                    self.join(node, group);
                }
            }
            _ => {
                let why = if expensive {
                    "too expensive to duplicate"
                } else {
                    "the duplication budget is spent"
                };
                let why = format!("{node} ({name}) is used by {count} kernels and {why}");
                self.new_group(node, why, true);
            }
        }
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
            });
            let Some(g) = candidate else { break };
            let consumers = self.consumer_groups(g);
            self.budget -= consumers.len() * self.groups[g].nodes.len();
            for node in std::mem::take(&mut self.groups[g].nodes) {
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
        let readers = nodes.iter().flat_map(|node| {
            (self.users[node.index()].iter())
                .flat_map(|u| &self.group_of[u.index()])
                .filter(move |h| **h != g && !self.groups[**h].nodes.contains(node))
        });
        let consumers: BTreeSet<usize> = readers.copied().collect();
        consumers.into_iter().collect()
    }
}
