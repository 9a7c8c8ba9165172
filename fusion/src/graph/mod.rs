//! The IR: a [`Graph`] of typed elementwise ops over arrays of `n` lanes.
//!
//! A graph has inputs (device arrays), params (runtime scalars), constants, computing ops,
//! named outputs and loop carries (`input <- next value`, the state a step hands to the
//! next). Graphs are built with [`GraphBuilder`], which reads like the math, and validated
//! on construction: types, shapes, dangling references, cycles and unused nodes.

mod builder;
mod dump;
mod op;
pub mod transform;
mod types;
mod validate;
mod value;

pub use builder::{GraphBuilder, Var};
pub use op::{BinaryOp, CompareOp, FloatBinary, FloatUnary, LogicBinary, LogicUnary, Op, ReduceOp};
pub use types::{Constant, DType, NodeId, Shape};
pub use validate::infer_type;
pub use value::{BindError, HostArray, Scalar, check_bindings, check_rows};

/// One node: its op and the type and shape of its value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Node {
    /// What the node computes.
    pub op: Op,
    /// Element type.
    pub dtype: DType,
    /// Lanes or packed rows.
    pub shape: Shape,
}

/// A named graph output.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Output {
    /// Name the caller reads the result by.
    pub name: String,
    /// The node whose value is written.
    pub node: NodeId,
}

/// A loop carry: the next step's `input` takes this step's `next`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Carry {
    /// An `Input` node.
    pub input: NodeId,
    /// The value it takes at the next step.
    pub next: NodeId,
}

/// Why a graph is invalid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GraphError {
    /// An op's operand types do not fit it.
    #[error("{node} ({op}): type mismatch: {detail}")]
    TypeMismatch {
        /// The offending node.
        node: NodeId,
        /// Its op name.
        op: String,
        /// What was expected and found.
        detail: String,
    },
    /// An op's operand shapes do not fit it.
    #[error("{node} ({op}): shape mismatch: {detail}")]
    ShapeMismatch {
        /// The offending node.
        node: NodeId,
        /// Its op name.
        op: String,
        /// What was expected and found.
        detail: String,
    },
    /// A node reads a node that does not exist.
    #[error("{node} reads {operand}, which does not exist (the graph has {len} nodes)")]
    UnknownNode {
        /// The reading node.
        node: NodeId,
        /// The missing operand.
        operand: NodeId,
        /// Number of nodes.
        len: usize,
    },
    /// A node reads one that does not come before it (nodes are in topological order, so
    /// this is also what a cycle gives).
    #[error(
        "{node} reads {operand}, which does not come before it (nodes must be in topological order; a cycle cannot be)"
    )]
    NotTopological {
        /// The reading node.
        node: NodeId,
        /// The operand at or after it.
        operand: NodeId,
    },
    /// A node feeds no output or carry.
    #[error("{node} ({op}) is dangling: no output or carry depends on it")]
    Unused {
        /// The unused node.
        node: NodeId,
        /// Its op name.
        op: String,
    },
    /// Two inputs, params or outputs share a name.
    #[error("the name `{0}` is used twice")]
    DuplicateName(String),
    /// A carry is malformed.
    #[error("carry {input} <- {next}: {detail}")]
    BadCarry {
        /// The carried input.
        input: NodeId,
        /// Its next value.
        next: NodeId,
        /// What is wrong.
        detail: String,
    },
    /// An output that is an input (already in memory).
    #[error("output `{0}` is an input: outputs must be computed (the input is already in memory)")]
    NotComputed(String),
    /// A graph with nothing to compute.
    #[error("the graph has no outputs")]
    NoOutputs,
}

/// A validated graph, nodes in topological order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Graph {
    nodes: Vec<Node>,
    outputs: Vec<Output>,
    carries: Vec<Carry>,
    /// Inputs read once a launch, not once a step ([`Graph::is_per_launch`]).
    per_launch: Vec<NodeId>,
}

impl Graph {
    /// Validates and builds a graph from raw parts (the builder is the friendly way).
    ///
    /// Node types and shapes are recomputed from the ops; the `dtype`/`shape` given for
    /// inputs and params are kept.
    pub fn new(
        nodes: Vec<Node>,
        outputs: Vec<Output>,
        carries: Vec<Carry>,
    ) -> Result<Self, GraphError> {
        let graph = Graph {
            nodes,
            outputs,
            carries,
            per_launch: Vec::new(),
        };
        validate::validate(&graph)?;
        Ok(graph)
    }

    /// This graph with `inputs` read once a launch (those that are inputs; a `fused-xK`
    /// launch binds them as `[n]`, not `[steps, n]`).
    pub fn with_per_launch(mut self, inputs: Vec<NodeId>) -> Self {
        self.per_launch = (inputs.into_iter())
            .filter(|id| matches!(self.node(*id).op, Op::Input { .. }))
            .collect();
        self
    }

    /// Whether input `input` is read once a launch however many steps it runs (a per-lane
    /// constant); other inputs that are not carried are read once a step.
    pub fn is_per_launch(&self, input: NodeId) -> bool {
        self.per_launch.contains(&input)
    }

    /// The inputs read once a launch.
    pub fn per_launch(&self) -> &[NodeId] {
        &self.per_launch
    }

    /// All nodes, topologically ordered (operands before users).
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// One node.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// Named outputs.
    pub fn outputs(&self) -> &[Output] {
        &self.outputs
    }

    /// Loop carries.
    pub fn carries(&self) -> &[Carry] {
        &self.carries
    }

    /// Node ids in order.
    pub fn ids(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.nodes.len() as u32).map(NodeId)
    }

    /// Input nodes with their names, in node order.
    pub fn inputs(&self) -> Vec<(NodeId, &str)> {
        self.ids()
            .filter_map(|id| match &self.node(id).op {
                Op::Input { name } => Some((id, name.as_str())),
                _ => None,
            })
            .collect()
    }

    /// Param nodes with their names, in node order.
    pub fn params(&self) -> Vec<(NodeId, &str)> {
        self.ids()
            .filter_map(|id| match &self.node(id).op {
                Op::Param { name } => Some((id, name.as_str())),
                _ => None,
            })
            .collect()
    }

    /// The input node called `name`.
    pub fn input_id(&self, name: &str) -> Option<NodeId> {
        self.ids()
            .find(|&id| matches!(&self.node(id).op, Op::Input { name: n } if n == name))
    }

    /// The carry whose input is `input`, if any.
    pub fn carry_of(&self, input: NodeId) -> Option<&Carry> {
        self.carries.iter().find(|c| c.input == input)
    }

    /// For each node, the nodes that read it (each reader once).
    pub fn users(&self) -> Vec<Vec<NodeId>> {
        let mut users = vec![Vec::new(); self.nodes.len()];
        for id in self.ids() {
            for operand in self.node(id).op.operands() {
                if !users[operand.index()].contains(&id) {
                    users[operand.index()].push(id);
                }
            }
        }
        users
    }

    /// Whether `id` is an output or a carried next value (must reach memory).
    pub fn is_root(&self, id: NodeId) -> bool {
        self.outputs.iter().any(|o| o.node == id) || self.carries.iter().any(|c| c.next == id)
    }

    /// Number of nodes that compute something.
    pub fn computing_ops(&self) -> usize {
        self.nodes.iter().filter(|n| n.op.computes()).count()
    }

    /// The name under which the next value of carried input `input` is returned:
    /// `next:<input>`.
    pub fn carry_name(&self, input: NodeId) -> String {
        match &self.node(input).op {
            Op::Input { name } => format!("next:{name}"),
            _ => unreachable!("validated graph: carries start at inputs"),
        }
    }

    /// Whether a kernel must produce `id`: it computes, or it is a root (a constant, param
    /// or lane index written as an output or carried value).
    pub fn is_placed(&self, id: NodeId) -> bool {
        self.node(id).op.computes() || self.is_root(id)
    }
}

#[cfg(test)]
mod tests;
