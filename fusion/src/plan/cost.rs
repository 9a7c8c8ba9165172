//! XLA's cost rule: which ops fusion must not duplicate into several consumers.
//!
//! One definition, used by `vertical` ([`super::partition`]) and by XLA's pipeline
//! ([`super::xla`]). It is XLA's `InstructionFusion::IsExpensive` as the GPU compiler
//! overrides it (`GpuInstructionFusion::IsExpensive`), read from XLA's source of the
//! study's time (2023):
//!
//! - cheap for real numbers: `sin`, `cos`, `abs`, arithmetic, compares, selects,
//!   conversions and concatenates;
//! - cheap on a GPU in `f32`: division (and so reciprocal), `sqrt`, `rsqrt`, `exp`;
//! - expensive: `log`, `tanh`, `pow` (and `log1p`, `expm1`, `atan2`, `cbrt`), reductions,
//!   random number generation, and integer division unless by a constant.
//!
//! `erf` has no HLO op of its own: JAX lowers it to a polynomial of cheap ops, so it is
//! cheap here. A random draw is one node here (XLA sees Threefry expanded into dozens of
//! cheap integer ops); like XLA's `rng`, it is never duplicated.

use crate::graph::{BinaryOp, DType, FloatBinary, FloatUnary, Graph, NodeId, Op};

/// Whether fusion must not duplicate `node` of `graph` into several consumers.
pub fn is_expensive(graph: &Graph, node: NodeId) -> bool {
    let node = graph.node(node);
    match &node.op {
        Op::Unary(u, _) => matches!(u, FloatUnary::Log | FloatUnary::Tanh),
        Op::FloatBinary(FloatBinary::Pow, _, _) => true,
        Op::Binary(BinaryOp::Div, _, divisor) => {
            node.dtype != DType::F32 && !matches!(graph.node(*divisor).op, Op::Constant(_))
        }
        Op::RandomUniform { .. } | Op::RowReduce(..) => true,
        _ => false,
    }
}
