//! The elementwise roofline workloads and the transformer tail, written as graphs.
//!
//! - light: `y = x * 0.5 + 1` (2 FLOPs per 8 bytes: memory-bound under any plan);
//! - medium: `y = tanh(x) * 0.5 + sin(x) * x` (a transcendental mix);
//! - heavy: `loops` rounds of `v = v * 0.9 + sin(v) * 0.1` (compute-bound once fused);
//! - transformer tail: `y = residual + dropout(gelu(layernorm(x)))` over rows of `cols`.

use std::collections::HashMap;

use cartfuse_fusion::graph::{DType, Graph, GraphBuilder, NodeId, ReduceOp, Var};
use cartfuse_fusion::graph::{HostArray, Scalar};
use cartfuse_fusion::plan::Partition;
use cartfuse_fusion::rng;

/// The three classic elementwise workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Elementwise {
    /// `x * 0.5 + 1`.
    Light,
    /// `tanh(x) * 0.5 + sin(x) * x`.
    Medium,
    /// `loops` rounds of `v = v * 0.9 + sin(v) * 0.1`.
    Heavy {
        /// Rounds of the per-element loop.
        loops: u32,
    },
}

impl Elementwise {
    /// Short name.
    pub fn name(self) -> String {
        match self {
            Elementwise::Light => "light".into(),
            Elementwise::Medium => "medium".into(),
            Elementwise::Heavy { loops } => format!("heavy (x{loops})"),
        }
    }

    /// The workload's graph: one `f32` input `x`, one output `y`.
    pub fn graph(self) -> Graph {
        let g = GraphBuilder::new();
        let x = g.input("x", DType::F32);
        let y = match self {
            Elementwise::Light => x * 0.5 + 1.0,
            Elementwise::Medium => x.tanh() * 0.5 + x.sin() * x,
            Elementwise::Heavy { loops } => (0..loops).fold(x, |v, _| v * 0.9 + v.sin() * 0.1),
        };
        g.output("y", y);
        g.build().expect("workload graphs are well-typed")
    }
}

/// Inputs in `[-2, 2)` for `lanes` lanes.
pub fn elementwise_inputs(lanes: usize) -> HashMap<String, HostArray> {
    HashMap::from([(
        "x".to_string(),
        HostArray::F32(
            (0..lanes)
                .map(|i| ((i % 4001) as f32) * 0.001 - 2.0)
                .collect(),
        ),
    )])
}

/// Dropout probability of the transformer tail.
pub const DROPOUT: f32 = 0.1;

/// The transformer tail and which nodes belong to each of its four stages.
pub struct TransformerTail {
    /// The graph: inputs `x`, `residual`; output `y`.
    pub graph: Graph,
    /// Row width (the hidden size).
    pub cols: u32,
    /// `(stage name, nodes)` for LayerNorm, GELU, Dropout, residual add.
    pub stages: Vec<(String, Vec<NodeId>)>,
}

impl TransformerTail {
    /// `y = residual + dropout(gelu(layernorm(x)))` over rows of `cols`.
    pub fn new(cols: u32) -> Self {
        let g = GraphBuilder::new();
        let x = g.input("x", DType::F32);
        let residual = g.input("residual", DType::F32);
        let mut marks = vec![g.len()];
        let mut mark = |g: &GraphBuilder| marks.push(g.len());
        // LayerNorm with a scalar affine transform.
        let mean = x.row_reduce(ReduceOp::Mean, cols);
        let centered = x - mean;
        let var = centered.square().row_reduce(ReduceOp::Mean, cols);
        let ln = centered / (var + 1e-5).sqrt() * g.param("gamma", DType::F32)
            + g.param("beta", DType::F32);
        mark(&g);
        // GELU, exact form.
        let gelu = ln * 0.5 * ((ln * std::f32::consts::FRAC_1_SQRT_2).erf() + 1.0);
        mark(&g);
        // Dropout: keep with probability 1 - p, scale by 1 / (1 - p).
        let dropped = dropout(&g, gelu);
        mark(&g);
        let y = dropped + residual;
        mark(&g);
        g.output("y", y);
        let graph = g.build().expect("the transformer tail is well-typed");
        let names = ["LayerNorm", "GELU", "Dropout", "residual add"];
        let stages = names
            .iter()
            .zip(marks.windows(2))
            .map(|(name, range)| (name.to_string(), (range[0]..range[1]).map(NodeId).collect()))
            .collect();
        Self {
            graph,
            cols,
            stages,
        }
    }

    /// The three partitions of the report: 4 kernels (one per stage), 2 kernels
    /// (LayerNorm | the rest) and 1 kernel.
    pub fn partitions(&self) -> Vec<(String, Partition)> {
        let stage = |i: usize| self.stages[i].clone();
        let merged = |label: &str, range: std::ops::Range<usize>| {
            (
                label.to_string(),
                range
                    .flat_map(|i| self.stages[i].1.clone())
                    .collect::<Vec<_>>(),
            )
        };
        vec![
            ("4 kernels".into(), (0..4).map(stage).collect()),
            (
                "2 kernels".into(),
                vec![stage(0), merged("GELU+Dropout+add", 1..4)],
            ),
            ("1 kernel".into(), vec![merged("whole tail", 0..4)]),
        ]
    }

    /// Bytes of one `f32` tensor of `lanes` lanes.
    pub fn tensor_bytes(lanes: usize) -> u64 {
        4 * lanes as u64
    }

    /// Inputs and params for `lanes` lanes.
    pub fn bindings(lanes: usize) -> (HashMap<String, HostArray>, HashMap<String, Scalar>) {
        let wave = |phase: f32| {
            (0..lanes)
                .map(|i| ((i % 977) as f32 * 0.01 + phase).sin())
                .collect()
        };
        let [key0, key1] = rng::seed_key(2023);
        (
            HashMap::from([
                ("x".to_string(), HostArray::F32(wave(0.0))),
                ("residual".to_string(), HostArray::F32(wave(1.0))),
            ]),
            HashMap::from([
                ("gamma".to_string(), Scalar::F32(1.0)),
                ("beta".to_string(), Scalar::F32(0.0)),
                (
                    "dropout_keep_above".to_string(),
                    Scalar::F32(2.0 * DROPOUT - 1.0),
                ),
                (
                    "dropout_scale".to_string(),
                    Scalar::F32(1.0 / (1.0 - DROPOUT)),
                ),
                ("key0".to_string(), Scalar::U32(key0)),
                ("key1".to_string(), Scalar::U32(key1)),
                ("step".to_string(), Scalar::U32(0)),
            ]),
        )
    }
}

fn dropout<'g>(g: &'g GraphBuilder, value: Var<'g>) -> Var<'g> {
    let key = [g.param("key0", DType::U32), g.param("key1", DType::U32)];
    let uniform = g.random_uniform(key, [g.lane_index(), g.param("step", DType::U32)], 0);
    let keep = uniform.ge(g.param("dropout_keep_above", DType::F32));
    g.select(
        keep,
        value * g.param("dropout_scale", DType::F32),
        g.f32(0.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use cartfuse_fusion::plan::Plan;

    #[test]
    fn tail_partitions_cover_the_graph_with_4_2_and_1_kernels() {
        let tail = TransformerTail::new(64);
        let counts: Vec<usize> = tail
            .partitions()
            .iter()
            .map(|(_, groups)| {
                Plan::from_partition(&tail.graph, groups)
                    .unwrap()
                    .kernels
                    .len()
            })
            .collect();
        assert_eq!(counts, vec![4, 2, 1]);
        for (_, groups) in tail.partitions() {
            let plan = Plan::from_partition(&tail.graph, &groups).unwrap();
            assert!(plan.kernels.iter().all(|k| k.writes.len() == 1));
        }
    }

    #[test]
    fn workload_graphs_count_their_flops() {
        use crate::work::{TRANSCENDENTAL_FLOPS, flops_per_lane};
        assert_eq!(flops_per_lane(&Elementwise::Light.graph()), 2.0);
        assert_eq!(
            flops_per_lane(&Elementwise::Medium.graph()),
            3.0 + 2.0 * TRANSCENDENTAL_FLOPS
        );
        assert_eq!(
            flops_per_lane(&Elementwise::Heavy { loops: 4 }.graph()),
            4.0 * (3.0 + TRANSCENDENTAL_FLOPS)
        );
    }
}
