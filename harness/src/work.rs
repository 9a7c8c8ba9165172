//! Work counted from a graph: FLOPs per lane, with the weights documented here.
//!
//! - `+ - * /`, min, max, neg, abs, square, reciprocal, float comparisons: 1 FLOP each.
//! - Transcendentals (`exp log sin cos tanh erf sqrt pow`): [`TRANSCENDENTAL_FLOPS`] each,
//!   the usual cost of a polynomial evaluation on hardware without special-function units.
//! - Row reductions: 1 FLOP per element reduced.
//! - An affine (a dense layer's output): 2 FLOPs per term (a multiply and an add; the first
//!   term of one without a running sum has no add, but is charged 2 all the same).
//! - Integer arithmetic, selects, casts, packs and the Threefry random op: 0 FLOPs (they
//!   are not floating-point work; the random op's integer rounds are not counted).
//!
//! Each node of the graph counts once, whatever plan computes it (duplicated producers in a
//! vertical plan do more work than the graph says; the report counts useful work).

use cartfuse_fusion::graph::{DType, Graph, Op};

/// FLOPs charged for one transcendental function evaluation.
pub const TRANSCENDENTAL_FLOPS: f64 = 8.0;

/// FLOPs per lane of one graph step.
pub fn flops_per_lane(graph: &Graph) -> f64 {
    graph
        .nodes()
        .iter()
        .map(|node| match &node.op {
            Op::Unary(op, _) if op.is_transcendental() => TRANSCENDENTAL_FLOPS,
            Op::Unary(..) => 1.0,
            Op::FloatBinary(..) => TRANSCENDENTAL_FLOPS,
            Op::Binary(_, a, _) if graph.node(*a).dtype == DType::F32 => 1.0,
            Op::Compare(_, a, _) if graph.node(*a).dtype == DType::F32 => 1.0,
            Op::RowReduce(..) => 1.0,
            Op::Affine { inputs, .. } => 2.0 * inputs.len() as f64,
            _ => 0.0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cartfuse_fusion::graph::GraphBuilder;

    #[test]
    fn counts_follow_the_documented_weights() {
        let g = GraphBuilder::new();
        let x = g.input("x", DType::F32);
        let k = g.input("k", DType::U32);
        let y = (x * 0.5 + 1.0).sin() + (k + g.u32(1)).cast(DType::F32);
        g.output("y", y);
        let graph = g.build().unwrap();
        // mul, add, sin (8), add (f32); the u32 add and the cast are free.
        assert_eq!(
            flops_per_lane(&graph),
            1.0 + 1.0 + TRANSCENDENTAL_FLOPS + 1.0
        );
    }
}
