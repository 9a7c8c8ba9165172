//! The operations of an elementwise graph and their types.

use super::types::{Constant, DType, NodeId};

/// One-input float operations (`f32 -> f32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum FloatUnary {
    /// `-a`.
    Neg,
    /// `|a|`.
    Abs,
    /// Square root.
    Sqrt,
    /// `e^a`.
    Exp,
    /// Natural logarithm.
    Log,
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// Hyperbolic tangent.
    Tanh,
    /// Error function.
    Erf,
    /// `a * a`.
    Square,
    /// `1 / a`.
    Recip,
    /// The largest integer not above `a` (rounds toward negative infinity).
    Floor,
}

impl FloatUnary {
    /// Whether the op is a transcendental function (weighted more in FLOP counts).
    pub fn is_transcendental(self) -> bool {
        matches!(
            self,
            FloatUnary::Exp
                | FloatUnary::Log
                | FloatUnary::Sin
                | FloatUnary::Cos
                | FloatUnary::Tanh
                | FloatUnary::Erf
                | FloatUnary::Sqrt
        )
    }
}

/// Two-input arithmetic on `f32` or `u32` (both operands of one type; `u32` wraps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum BinaryOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b`.
    Div,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
}

/// Two-input float-only operations (`f32, f32 -> f32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum FloatBinary {
    /// `a ^ b`.
    Pow,
}

/// One-input logic operations (`bool -> bool`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum LogicUnary {
    /// Logical not.
    Not,
}

/// Two-input logic operations (`bool, bool -> bool`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum LogicBinary {
    /// Logical and.
    And,
    /// Logical or.
    Or,
}

/// Comparisons; the result is a bool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum CompareOp {
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    Ge,
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
}

/// Reductions over the last axis of `[rows, cols]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum ReduceOp {
    /// Sum of the row.
    Sum,
    /// Mean of the row.
    Mean,
    /// Maximum of the row.
    Max,
}

/// `name()`, the lower-case (strum) name, of every op enum.
macro_rules! op_names {
    ($($op:ty),*) => {$(
        impl $op {
            /// Lower-case name.
            pub fn name(self) -> &'static str {
                self.into()
            }
        }
    )*};
}

op_names!(
    FloatUnary,
    BinaryOp,
    FloatBinary,
    LogicUnary,
    LogicBinary,
    CompareOp,
    ReduceOp
);

/// One node of a graph.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// A device array input of `n` elements (or `[n, k]` when packed).
    Input {
        /// Name the caller binds a buffer to.
        name: String,
    },
    /// A runtime scalar: changing it never recompiles a kernel.
    Param {
        /// Name the caller binds a value to.
        name: String,
    },
    /// A compile-time constant.
    Constant(Constant),
    /// The lane's own index `0..n` (u32).
    LaneIndex,
    /// `op(a)`, f32.
    Unary(FloatUnary, NodeId),
    /// `op(a, b)`, f32 or u32.
    Binary(BinaryOp, NodeId, NodeId),
    /// `op(a, b)`, f32 only.
    FloatBinary(FloatBinary, NodeId, NodeId),
    /// `op(a)`, bool.
    LogicUnary(LogicUnary, NodeId),
    /// `op(a, b)`, bool.
    LogicBinary(LogicBinary, NodeId, NodeId),
    /// `a op b`, a bool.
    Compare(CompareOp, NodeId, NodeId),
    /// `cond ? on_true : on_false`.
    Select {
        /// Bool condition.
        cond: NodeId,
        /// Value where `cond` holds.
        on_true: NodeId,
        /// Value elsewhere.
        on_false: NodeId,
    },
    /// Type conversion (bool -> 0/1, f32 -> u32 truncates).
    Cast(NodeId, DType),
    /// Counter-based uniform `f32` in `[-1, 1)`: word `word` (0 or 1) of
    /// Threefry-2x32-20 of counter `counter` under key `key`, mapped by
    /// [`crate::rng::symmetric_uniform`] with half-width 1. All four inputs are u32.
    RandomUniform {
        /// The key's two words (low and high 32 bits of the seed).
        key: [NodeId; 2],
        /// The counter's two words (typically the lane index and a per-lane draw counter).
        counter: [NodeId; 2],
        /// Which of the two output words.
        word: u8,
    },
    /// `k` lane values packed into one `[n, k]` row-major f32 array.
    Pack(Vec<NodeId>),
    /// Column `index` of a packed `[n, k]` array.
    Unpack(NodeId, u32),
    /// Reduction of each row of `[n / cols, cols]`, broadcast back to every element.
    RowReduce(ReduceOp, NodeId, u32),
    /// One output of a per-lane dense layer, or a slice of one: `acc + w0 x0 + w1 x1 + ..`,
    /// each product and sum rounded on its own (no fused multiply-add), left to right; with
    /// no `acc` the sum starts at `w0 x0`. All `f32`. The weights are typically params, so
    /// they are read from the kernel's bound params buffer and change without a recompile.
    Affine {
        /// The partial sum this slice continues, if any.
        acc: Option<NodeId>,
        /// One weight per input.
        weights: Vec<NodeId>,
        /// The inputs, as many as weights (at least one).
        inputs: Vec<NodeId>,
    },
}

impl Op {
    /// The op with its operands renamed by `map`, called on each operand in order.
    pub fn map_operands(&self, mut map: impl FnMut(&NodeId) -> NodeId) -> Op {
        match self {
            Op::Input { .. } | Op::Param { .. } | Op::Constant(_) | Op::LaneIndex => self.clone(),
            Op::Unary(u, a) => Op::Unary(*u, map(a)),
            Op::Binary(b, x, y) => Op::Binary(*b, map(x), map(y)),
            Op::FloatBinary(b, x, y) => Op::FloatBinary(*b, map(x), map(y)),
            Op::LogicUnary(u, a) => Op::LogicUnary(*u, map(a)),
            Op::LogicBinary(b, x, y) => Op::LogicBinary(*b, map(x), map(y)),
            Op::Compare(c, x, y) => Op::Compare(*c, map(x), map(y)),
            Op::Select {
                cond,
                on_true,
                on_false,
            } => Op::Select {
                cond: map(cond),
                on_true: map(on_true),
                on_false: map(on_false),
            },
            Op::Cast(a, to) => Op::Cast(map(a), *to),
            Op::RandomUniform { key, counter, word } => Op::RandomUniform {
                key: key.each_ref().map(&mut map),
                counter: counter.each_ref().map(&mut map),
                word: *word,
            },
            Op::Pack(items) => Op::Pack(items.iter().map(&mut map).collect()),
            Op::Unpack(a, index) => Op::Unpack(map(a), *index),
            Op::RowReduce(r, a, cols) => Op::RowReduce(*r, map(a), *cols),
            Op::Affine {
                acc,
                weights,
                inputs,
            } => Op::Affine {
                acc: acc.as_ref().map(&mut map),
                weights: weights.iter().map(&mut map).collect(),
                inputs: inputs.iter().map(&mut map).collect(),
            },
        }
    }

    /// The nodes this op reads, in order.
    pub fn operands(&self) -> Vec<NodeId> {
        let mut operands = Vec::new();
        if self.computes() {
            self.map_operands(|&a| {
                operands.push(a);
                a
            });
        }
        operands
    }

    /// Whether the op computes something per element (and so needs a kernel of its own in
    /// the eager plan). Inputs, params, constants and the lane index do not.
    pub fn computes(&self) -> bool {
        !matches!(
            self,
            Op::Input { .. } | Op::Param { .. } | Op::Constant(_) | Op::LaneIndex
        )
    }

    /// Short name for kernel names and dumps.
    pub fn name(&self) -> String {
        match self {
            Op::Input { name } => format!("input {name}"),
            Op::Param { name } => format!("param {name}"),
            Op::Constant(c) => format!("const {c}"),
            Op::LaneIndex => "lane_index".into(),
            Op::Unary(op, _) => op.name().into(),
            Op::Binary(op, _, _) => op.name().into(),
            Op::FloatBinary(op, _, _) => op.name().into(),
            Op::LogicUnary(op, _) => op.name().into(),
            Op::LogicBinary(op, _, _) => op.name().into(),
            Op::Compare(op, _, _) => op.name().into(),
            Op::Select { .. } => "select".into(),
            Op::Cast(_, to) => format!("cast_{to}"),
            Op::RandomUniform { .. } => "random_uniform".into(),
            Op::Pack(items) => format!("pack{}", items.len()),
            Op::Unpack(_, index) => format!("unpack{index}"),
            Op::RowReduce(op, _, _) => format!("row_{}", op.name()),
            Op::Affine { inputs, .. } => format!("affine{}", inputs.len()),
        }
    }
}
