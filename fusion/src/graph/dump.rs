//! Text and Graphviz DOT dumps of a graph.

use std::fmt;

use super::{Graph, Node};
use super::{Op, Shape};

fn type_label(node: &Node) -> String {
    match (&node.op, node.shape) {
        (Op::Param { .. } | Op::Constant(_), _) => node.dtype.to_string(),
        (_, Shape::Lanes) => format!("{}[n]", node.dtype),
        (_, Shape::Packed(k)) => format!("{}[n, {k}]", node.dtype),
    }
}

fn op_label(op: &Op) -> String {
    let operands = op.operands();
    let args = operands
        .iter()
        .map(|o| o.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    match op {
        Op::Input { .. } | Op::Param { .. } | Op::Constant(_) | Op::LaneIndex => op.name(),
        Op::RandomUniform { word, .. } => format!("random_uniform[word {word}] {args}"),
        Op::RowReduce(_, _, cols) => format!("{} {args} (cols {cols})", op.name()),
        _ => format!("{} {args}", op.name()),
    }
}

impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for id in self.ids() {
            let node = self.node(id);
            writeln!(f, "{id} = {} : {}", op_label(&node.op), type_label(node))?;
        }
        for output in self.outputs() {
            writeln!(f, "output {} = {}", output.name, output.node)?;
        }
        for carry in self.carries() {
            writeln!(f, "carry {} <- {}", carry.input, carry.next)?;
        }
        Ok(())
    }
}

impl Graph {
    /// The graph in Graphviz DOT: one box per node, edges from operands to users,
    /// outputs as double octagons and carries as dashed back edges.
    pub fn to_dot(&self) -> String {
        let mut dot = String::from(
            "digraph cartfuse {\n  rankdir=TB;\n  node [shape=box, fontname=monospace];\n",
        );
        for id in self.ids() {
            let node = self.node(id);
            let style = match node.op {
                Op::Input { .. } => ", style=filled, fillcolor=lightblue",
                Op::Param { .. } | Op::Constant(_) => ", style=filled, fillcolor=lightgrey",
                _ => "",
            };
            let label = format!("{id} {}\\n{}", node.op.name(), type_label(node)).replace('"', "'");
            dot.push_str(&format!("  n{} [label=\"{label}\"{style}];\n", id.0));
            for operand in node.op.operands() {
                dot.push_str(&format!("  n{} -> n{};\n", operand.0, id.0));
            }
        }
        for (index, output) in self.outputs().iter().enumerate() {
            dot.push_str(&format!(
                "  out{index} [label=\"{}\", shape=doubleoctagon];\n  n{} -> out{index};\n",
                output.name, output.node.0
            ));
        }
        for carry in self.carries() {
            dot.push_str(&format!(
                "  n{} -> n{} [style=dashed, label=\"next step\"];\n",
                carry.next.0, carry.input.0
            ));
        }
        dot.push_str("}\n");
        dot
    }
}
