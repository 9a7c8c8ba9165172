//! Program changes the study's ablation makes to a graph before compiling it.

use std::collections::BTreeMap;

use super::{Carry, DType, Graph, GraphError, Node, NodeId, Op, Output, Shape};

/// `graph` with every random op replaced by an `f32` input named `{prefix}{i}` (the `i`-th
/// random op in node order), and what only fed the random ops removed: the random numbers
/// are drawn ahead, as the study's "random numbers precomputed" program does.
pub fn random_as_inputs(graph: &Graph, prefix: &str) -> Result<Graph, GraphError> {
    let mut draws = 0;
    let nodes: Vec<Node> = graph
        .nodes()
        .iter()
        .map(|node| match node.op {
            Op::RandomUniform { .. } => {
                draws += 1;
                Node {
                    op: Op::Input {
                        name: format!("{prefix}{}", draws - 1),
                    },
                    dtype: DType::F32,
                    shape: Shape::Lanes,
                }
            }
            _ => node.clone(),
        })
        .collect();
    let kept = without_dead_nodes(nodes, graph.outputs(), graph.carries())?;
    // Per-launch inputs keep their place among the inputs: find them again by name.
    let per_launch = (graph.per_launch().iter())
        .filter_map(|id| match &graph.node(*id).op {
            Op::Input { name } => kept.input_id(name),
            _ => None,
        })
        .collect();
    Ok(kept.with_per_launch(per_launch))
}

/// Keeps the nodes that reach an output or a carried value, renumbered in order.
fn without_dead_nodes(
    nodes: Vec<Node>,
    outputs: &[Output],
    carries: &[Carry],
) -> Result<Graph, GraphError> {
    let live = super::validate::live(&nodes, outputs, carries);
    let mut renumbered: BTreeMap<NodeId, NodeId> = BTreeMap::new();
    let mut kept = Vec::new();
    for (index, node) in nodes.into_iter().enumerate() {
        if live[index] {
            renumbered.insert(NodeId(index as u32), NodeId(kept.len() as u32));
            kept.push(node);
        }
    }
    let map = |id: &NodeId| renumbered[id];
    for node in &mut kept {
        node.op = node.op.map_operands(map);
    }
    let outputs = outputs
        .iter()
        .map(|o| Output {
            name: o.name.clone(),
            node: map(&o.node),
        })
        .collect();
    let carries = carries
        .iter()
        .map(|c| Carry {
            input: map(&c.input),
            next: map(&c.next),
        })
        .collect();
    Graph::new(kept, outputs, carries)
}
