//! [`GraphBuilder`]: write a graph the way the math reads.
//!
//! ```
//! use cartfuse_fusion::graph::{DType, GraphBuilder};
//!
//! let g = GraphBuilder::new();
//! let x = g.input("x", DType::F32);
//! let scale = g.param("scale", DType::F32);
//! let y = x * scale + 1.0;
//! g.output("y", y.sin());
//! let graph = g.build().unwrap();
//! assert_eq!(graph.computing_ops(), 3);
//! ```
//!
//! Type errors do not panic: the first one is kept and returned by [`GraphBuilder::build`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::{Add, Div, Mul, Neg, Not, Sub};

use super::validate::infer_type;
use super::{
    BinaryOp, CompareOp, Constant, DType, FloatBinary, FloatUnary, LogicBinary, LogicUnary, NodeId,
    Op, ReduceOp, Shape,
};
use super::{Carry, Graph, GraphError, Node, Output};

#[derive(Default)]
struct State {
    nodes: Vec<Node>,
    outputs: Vec<Output>,
    carries: Vec<Carry>,
    per_launch: Vec<NodeId>,
    first_error: Option<GraphError>,
    /// Params declared so far, by name and dtype (a policy's thousands of weights are
    /// params, so a lookup must not scan the nodes).
    params: HashMap<(String, DType), NodeId>,
}

/// Builds a [`Graph`] node by node; values are [`Var`]s with arithmetic operators.
#[derive(Default)]
pub struct GraphBuilder {
    state: RefCell<State>,
}

/// A value in a graph under construction.
#[derive(Clone, Copy)]
pub struct Var<'g> {
    builder: &'g GraphBuilder,
    id: NodeId,
}

/// The named methods of [`Var`]: `name(args) = method(op), "doc"` for
/// `pub fn name(self, args) -> Var { self.method(op, args) }`.
macro_rules! named_ops {
    ($($name:ident($($arg:ident)?) = $method:ident($op:expr), $doc:literal;)*) => {
        $(
            #[doc = $doc]
            pub fn $name(self $(, $arg: Var<'g>)?) -> Var<'g> {
                self.$method($op $(, $arg)?)
            }
        )*
    };
}

impl<'g> Var<'g> {
    /// The node behind this value.
    pub fn id(self) -> NodeId {
        self.id
    }

    /// The value's element type.
    pub fn dtype(self) -> DType {
        self.builder.state.borrow().nodes[self.id.index()].dtype
    }

    /// `op` of this value (the named methods, `sin` and the rest, call this).
    pub fn unary(self, op: FloatUnary) -> Var<'g> {
        self.builder.push(Op::Unary(op, self.id))
    }

    /// `self op rhs` (the operators and `min`/`max` call this).
    pub fn binary(self, op: BinaryOp, rhs: Var<'g>) -> Var<'g> {
        self.builder.push(Op::Binary(op, self.id, rhs.id))
    }

    fn pair(self, op: impl FnOnce(NodeId, NodeId) -> Op, rhs: Var<'g>) -> Var<'g> {
        self.builder.push(op(self.id, rhs.id))
    }

    named_ops! {
        sin() = unary(FloatUnary::Sin), "Sine.";
        cos() = unary(FloatUnary::Cos), "Cosine.";
        abs() = unary(FloatUnary::Abs), "Absolute value.";
        sqrt() = unary(FloatUnary::Sqrt), "Square root.";
        exp() = unary(FloatUnary::Exp), "Exponential.";
        log() = unary(FloatUnary::Log), "Natural logarithm.";
        tanh() = unary(FloatUnary::Tanh), "Hyperbolic tangent.";
        erf() = unary(FloatUnary::Erf), "Error function.";
        square() = unary(FloatUnary::Square), "`self * self`.";
        recip() = unary(FloatUnary::Recip), "`1 / self`.";
        floor() = unary(FloatUnary::Floor), "The largest integer not above `self`.";
        lt(rhs) = pair(|a, b| Op::Compare(CompareOp::Lt, a, b)), "`self < rhs`.";
        le(rhs) = pair(|a, b| Op::Compare(CompareOp::Le, a, b)), "`self <= rhs`.";
        gt(rhs) = pair(|a, b| Op::Compare(CompareOp::Gt, a, b)), "`self > rhs`.";
        ge(rhs) = pair(|a, b| Op::Compare(CompareOp::Ge, a, b)), "`self >= rhs`.";
        eq(rhs) = pair(|a, b| Op::Compare(CompareOp::Eq, a, b)), "`self == rhs`.";
        ne(rhs) = pair(|a, b| Op::Compare(CompareOp::Ne, a, b)), "`self != rhs`.";
        min(rhs) = binary(BinaryOp::Min), "Minimum.";
        max(rhs) = binary(BinaryOp::Max), "Maximum.";
        pow(rhs) = pair(|a, b| Op::FloatBinary(FloatBinary::Pow, a, b)), "`self ^ rhs`.";
        and(rhs) = pair(|a, b| Op::LogicBinary(LogicBinary::And, a, b)), "Logical and.";
        or(rhs) = pair(|a, b| Op::LogicBinary(LogicBinary::Or, a, b)), "Logical or.";
    }

    /// Converts to `dtype`.
    pub fn cast(self, dtype: DType) -> Var<'g> {
        self.builder.push(Op::Cast(self.id, dtype))
    }
    /// Column `index` of a packed value.
    pub fn unpack(self, index: u32) -> Var<'g> {
        self.builder.push(Op::Unpack(self.id, index))
    }
    /// Reduction over rows of `cols` elements, broadcast back.
    pub fn row_reduce(self, op: ReduceOp, cols: u32) -> Var<'g> {
        self.builder.push(Op::RowReduce(op, self.id, cols))
    }
}

macro_rules! arithmetic {
    ($trait:ident, $method:ident, $op:expr) => {
        impl<'g> $trait<Var<'g>> for Var<'g> {
            type Output = Var<'g>;
            fn $method(self, rhs: Var<'g>) -> Var<'g> {
                self.binary($op, rhs)
            }
        }
        impl<'g> $trait<f32> for Var<'g> {
            type Output = Var<'g>;
            fn $method(self, rhs: f32) -> Var<'g> {
                let rhs = self.builder.f32(rhs);
                self.binary($op, rhs)
            }
        }
        impl<'g> $trait<Var<'g>> for f32 {
            type Output = Var<'g>;
            fn $method(self, rhs: Var<'g>) -> Var<'g> {
                let lhs = rhs.builder.f32(self);
                lhs.binary($op, rhs)
            }
        }
    };
}

arithmetic!(Add, add, BinaryOp::Add);
arithmetic!(Sub, sub, BinaryOp::Sub);
arithmetic!(Mul, mul, BinaryOp::Mul);
arithmetic!(Div, div, BinaryOp::Div);

impl<'g> Not for Var<'g> {
    type Output = Var<'g>;
    /// Logical not.
    fn not(self) -> Var<'g> {
        self.builder.push(Op::LogicUnary(LogicUnary::Not, self.id))
    }
}

impl<'g> Neg for Var<'g> {
    type Output = Var<'g>;
    fn neg(self) -> Var<'g> {
        self.unary(FloatUnary::Neg)
    }
}

impl GraphBuilder {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Nodes created so far (the id the next node gets).
    pub fn len(&self) -> u32 {
        self.state.borrow().nodes.len() as u32
    }

    /// Whether no node was created yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn push_typed(&self, op: Op, own: (DType, Shape)) -> Var<'_> {
        let mut state = self.state.borrow_mut();
        let id = NodeId(state.nodes.len() as u32);
        let (dtype, shape) = match infer_type(id, &op, own, &state.nodes) {
            Ok(typed) => typed,
            Err(error) => {
                state.first_error.get_or_insert(error);
                own
            }
        };
        state.nodes.push(Node { op, dtype, shape });
        Var { builder: self, id }
    }

    fn push(&self, op: Op) -> Var<'_> {
        self.push_typed(op, (DType::F32, Shape::Lanes))
    }

    /// A device array input of one `dtype` element per lane.
    pub fn input(&self, name: &str, dtype: DType) -> Var<'_> {
        self.push_typed(Op::Input { name: name.into() }, (dtype, Shape::Lanes))
    }

    /// A device array input read once a launch however many steps it runs (a per-lane
    /// constant, such as a reset key): see [`Graph::is_per_launch`].
    pub fn input_per_launch(&self, name: &str, dtype: DType) -> Var<'_> {
        let input = self.input(name, dtype);
        self.state.borrow_mut().per_launch.push(input.id);
        input
    }

    /// A device array input of `k` packed `f32` per lane (`[n, k]`).
    pub fn input_packed(&self, name: &str, k: u32) -> Var<'_> {
        self.push_typed(
            Op::Input { name: name.into() },
            (DType::F32, Shape::Packed(k)),
        )
    }

    /// A runtime scalar. Asking again for a name already declared with the same dtype
    /// returns that node, so helpers can read params without threading them through.
    pub fn param(&self, name: &str, dtype: DType) -> Var<'_> {
        let key = (name.to_owned(), dtype);
        let existing = self.state.borrow().params.get(&key).copied();
        if let Some(id) = existing {
            return Var { builder: self, id };
        }
        let var = self.push_typed(Op::Param { name: name.into() }, (dtype, Shape::Lanes));
        self.state.borrow_mut().params.insert(key, var.id);
        var
    }

    /// An `f32` constant.
    pub fn f32(&self, value: f32) -> Var<'_> {
        self.push(Op::Constant(Constant::f32(value)))
    }

    /// A `u32` constant.
    pub fn u32(&self, value: u32) -> Var<'_> {
        self.push(Op::Constant(Constant::U32(value)))
    }

    /// A boolean constant.
    pub fn bool(&self, value: bool) -> Var<'_> {
        self.push(Op::Constant(Constant::Bool(value)))
    }

    /// The lane index `0..n` (u32).
    pub fn lane_index(&self) -> Var<'_> {
        self.push(Op::LaneIndex)
    }

    /// `cond ? on_true : on_false`.
    pub fn select<'g>(&'g self, cond: Var<'g>, on_true: Var<'g>, on_false: Var<'g>) -> Var<'g> {
        self.push(Op::Select {
            cond: cond.id,
            on_true: on_true.id,
            on_false: on_false.id,
        })
    }

    /// Counter-based uniform in `[-1, 1)`; see [`Op::RandomUniform`].
    pub fn random_uniform<'g>(
        &'g self,
        key: [Var<'g>; 2],
        counter: [Var<'g>; 2],
        word: u8,
    ) -> Var<'g> {
        self.push(Op::RandomUniform {
            key: key.map(|v| v.id),
            counter: counter.map(|v| v.id),
            word,
        })
    }

    /// Packs lane values into `[n, k]` rows.
    pub fn pack<'g>(&'g self, items: &[Var<'g>]) -> Var<'g> {
        self.push(Op::Pack(items.iter().map(|v| v.id).collect()))
    }

    /// `acc + w0 x0 + w1 x1 + ..` (one output of a dense layer, or a slice of one); see
    /// [`Op::Affine`].
    pub fn affine<'g>(
        &'g self,
        acc: Option<Var<'g>>,
        weights: &[Var<'g>],
        inputs: &[Var<'g>],
    ) -> Var<'g> {
        self.push(Op::Affine {
            acc: acc.map(|v| v.id),
            weights: weights.iter().map(|v| v.id).collect(),
            inputs: inputs.iter().map(|v| v.id).collect(),
        })
    }

    /// Names `value` as an output.
    pub fn output(&self, name: &str, value: Var<'_>) {
        self.state.borrow_mut().outputs.push(Output {
            name: name.into(),
            node: value.id,
        });
    }

    /// Declares that the next step's `input` takes `next`.
    pub fn carry(&self, input: Var<'_>, next: Var<'_>) {
        self.state.borrow_mut().carries.push(Carry {
            input: input.id,
            next: next.id,
        });
    }

    /// Validates and returns the graph, or the first error met while building.
    pub fn build(self) -> Result<Graph, GraphError> {
        let state = self.state.into_inner();
        if let Some(error) = state.first_error {
            return Err(error);
        }
        let graph = Graph::new(state.nodes, state.outputs, state.carries)?;
        Ok(graph.with_per_launch(state.per_launch))
    }
}
