//! Graph validation: references, cycles, types, shapes, names, carries and dead nodes.

use std::collections::HashSet;

use super::{Carry, Graph, GraphError, Node, Output};
use super::{CompareOp, DType, NodeId, Op, Shape};

/// The type and shape of `op`'s value given its operands' nodes, or why it is ill-typed.
/// `own` is the node's declared type, used for inputs and params.
pub fn infer_type(
    id: NodeId,
    op: &Op,
    own: (DType, Shape),
    nodes: &[Node],
) -> Result<(DType, Shape), GraphError> {
    let type_error = |detail: String| GraphError::TypeMismatch {
        node: id,
        op: op.name(),
        detail,
    };
    let shape_error = |detail: String| GraphError::ShapeMismatch {
        node: id,
        op: op.name(),
        detail,
    };
    let node = |operand: &NodeId| &nodes[operand.index()];
    let lanes = |operand: &NodeId| -> Result<DType, GraphError> {
        match node(operand).shape {
            Shape::Lanes => Ok(node(operand).dtype),
            Shape::Packed(k) => Err(shape_error(format!(
                "operand {operand} is packed [n, {k}]; unpack a column first"
            ))),
        }
    };
    let expect = |operand: &NodeId, allowed: &[DType]| -> Result<DType, GraphError> {
        let dtype = lanes(operand)?;
        if allowed.contains(&dtype) {
            Ok(dtype)
        } else {
            Err(type_error(format!(
                "operand {operand} is {dtype}, expected one of {allowed:?}"
            )))
        }
    };
    let same = |a: &NodeId, b: &NodeId, allowed: &[DType]| -> Result<DType, GraphError> {
        let (ta, tb) = (expect(a, allowed)?, expect(b, allowed)?);
        if ta == tb {
            Ok(ta)
        } else {
            Err(type_error(format!(
                "operands {a} ({ta}) and {b} ({tb}) differ"
            )))
        }
    };
    let lane = |dtype| Ok((dtype, Shape::Lanes));
    match op {
        Op::Input { .. } => Ok(own),
        Op::Param { .. } => match own {
            (DType::F32 | DType::U32, Shape::Lanes) => Ok(own),
            _ => Err(type_error("params are f32 or u32 scalars".into())),
        },
        Op::Constant(c) => lane(c.dtype()),
        Op::LaneIndex => lane(DType::U32),
        Op::Unary(_, a) => lane(expect(a, &[DType::F32])?),
        Op::Binary(_, a, b) => lane(same(a, b, &[DType::F32, DType::U32])?),
        Op::FloatBinary(_, a, b) => lane(same(a, b, &[DType::F32])?),
        Op::LogicUnary(_, a) => lane(expect(a, &[DType::Bool])?),
        Op::LogicBinary(_, a, b) => lane(same(a, b, &[DType::Bool])?),
        Op::Compare(CompareOp::Eq | CompareOp::Ne, a, b) => {
            same(a, b, &[DType::F32, DType::U32, DType::Bool])?;
            lane(DType::Bool)
        }
        Op::Compare(_, a, b) => {
            same(a, b, &[DType::F32, DType::U32])?;
            lane(DType::Bool)
        }
        Op::Select {
            cond,
            on_true,
            on_false,
        } => {
            expect(cond, &[DType::Bool])?;
            lane(same(
                on_true,
                on_false,
                &[DType::F32, DType::U32, DType::Bool],
            )?)
        }
        Op::Cast(a, to) => {
            lanes(a)?;
            lane(*to)
        }
        Op::RandomUniform { key, counter, word } => {
            for operand in key.iter().chain(counter) {
                expect(operand, &[DType::U32])?;
            }
            if *word > 1 {
                return Err(type_error(format!("word {word} of a 2-word generator")));
            }
            lane(DType::F32)
        }
        Op::Pack(items) => {
            if items.is_empty() {
                return Err(shape_error("pack of nothing".into()));
            }
            for item in items {
                expect(item, &[DType::F32])?;
            }
            Ok((DType::F32, Shape::Packed(items.len() as u32)))
        }
        Op::Unpack(a, index) => match node(a).shape {
            Shape::Packed(k) if *index < k => Ok((node(a).dtype, Shape::Lanes)),
            Shape::Packed(k) => Err(shape_error(format!("column {index} of [n, {k}]"))),
            Shape::Lanes => Err(shape_error(format!("unpack of {a}, which is not packed"))),
        },
        Op::RowReduce(_, a, cols) => {
            if *cols == 0 {
                return Err(shape_error("rows of 0 columns".into()));
            }
            lane(expect(a, &[DType::F32])?)
        }
        Op::Affine {
            acc,
            weights,
            inputs,
        } => {
            if inputs.is_empty() || weights.len() != inputs.len() {
                return Err(shape_error(format!(
                    "{} weights for {} inputs (needs as many, at least one)",
                    weights.len(),
                    inputs.len()
                )));
            }
            for operand in acc.iter().chain(weights).chain(inputs) {
                expect(operand, &[DType::F32])?;
            }
            lane(DType::F32)
        }
    }
}

pub(super) fn validate(graph: &Graph) -> Result<(), GraphError> {
    let nodes = graph.nodes();
    let len = nodes.len();
    // Operands must exist and come before their users (which rules out cycles), so each
    // node's type is inferred from nodes already checked.
    for (index, node) in nodes.iter().enumerate() {
        let id = NodeId(index as u32);
        for operand in node.op.operands() {
            if operand.index() >= len {
                return Err(GraphError::UnknownNode {
                    node: id,
                    operand,
                    len,
                });
            }
            if operand.index() >= index {
                return Err(GraphError::NotTopological { node: id, operand });
            }
        }
        let inferred = infer_type(id, &node.op, (node.dtype, node.shape), nodes)?;
        if inferred != (node.dtype, node.shape) {
            return Err(GraphError::TypeMismatch {
                node: id,
                op: node.op.name(),
                detail: format!(
                    "declared {:?} but computes {inferred:?}",
                    (node.dtype, node.shape)
                ),
            });
        }
    }
    let mut names = HashSet::new();
    for node in nodes {
        if let Op::Input { name } | Op::Param { name } = &node.op
            && !names.insert(name.clone())
        {
            return Err(GraphError::DuplicateName(name.clone()));
        }
    }
    let mut output_names = HashSet::new();
    for output in graph.outputs() {
        if output.node.index() >= len {
            return Err(GraphError::UnknownNode {
                node: output.node,
                operand: output.node,
                len,
            });
        }
        if !output_names.insert(output.name.clone()) {
            return Err(GraphError::DuplicateName(output.name.clone()));
        }
        if matches!(graph.node(output.node).op, Op::Input { .. }) {
            return Err(GraphError::NotComputed(output.name.clone()));
        }
    }
    if graph.outputs().is_empty() && graph.carries().is_empty() {
        return Err(GraphError::NoOutputs);
    }
    validate_carries(graph)?;
    find_unused(graph)
}

fn validate_carries(graph: &Graph) -> Result<(), GraphError> {
    let mut carried = HashSet::new();
    for carry in graph.carries() {
        let bad = |detail: &str| GraphError::BadCarry {
            input: carry.input,
            next: carry.next,
            detail: detail.into(),
        };
        let len = graph.nodes().len();
        if carry.input.index() >= len || carry.next.index() >= len {
            return Err(bad("refers to a node that does not exist"));
        }
        let (input, next) = (graph.node(carry.input), graph.node(carry.next));
        if !matches!(input.op, Op::Input { .. }) {
            return Err(bad("only inputs can be carried"));
        }
        if (input.dtype, input.shape) != (next.dtype, next.shape) {
            return Err(bad(
                "the next value's type or shape differs from the input's",
            ));
        }
        if !next.op.computes() {
            return Err(bad(
                "the next value must be computed by an op, not be an input, param or constant",
            ));
        }
        if !carried.insert(carry.input) {
            return Err(bad("the input is carried twice"));
        }
    }
    Ok(())
}

/// Which of `nodes` an output or a carry (its input or next value) depends on.
pub(super) fn live(nodes: &[Node], outputs: &[Output], carries: &[Carry]) -> Vec<bool> {
    let mut live = vec![false; nodes.len()];
    let mut stack: Vec<NodeId> = outputs
        .iter()
        .map(|o| o.node)
        .chain(carries.iter().flat_map(|c| [c.input, c.next]))
        .collect();
    while let Some(id) = stack.pop() {
        if !std::mem::replace(&mut live[id.index()], true) {
            stack.extend(nodes[id.index()].op.operands());
        }
    }
    live
}

fn find_unused(graph: &Graph) -> Result<(), GraphError> {
    let live = live(graph.nodes(), graph.outputs(), graph.carries());
    match live.iter().position(|l| !l) {
        Some(index) => Err(GraphError::Unused {
            node: NodeId(index as u32),
            op: graph.nodes()[index].op.name(),
        }),
        None => Ok(()),
    }
}
