//! Validation, dumps and builder behaviour.

use super::*;

fn node(op: Op, dtype: DType) -> Node {
    Node {
        op,
        dtype,
        shape: Shape::Lanes,
    }
}

fn output(name: &str, id: u32) -> Output {
    Output {
        name: name.into(),
        node: NodeId(id),
    }
}

#[test]
fn type_mismatch_is_reported_with_the_node() {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let k = g.input("k", DType::U32);
    g.output("y", x + k);
    let error = g.build().unwrap_err();
    assert!(
        matches!(
            error,
            GraphError::TypeMismatch {
                node: NodeId(2),
                ..
            }
        ),
        "{error}"
    );
    assert!(
        error.to_string().contains("%2 (add): type mismatch"),
        "{error}"
    );
}

#[test]
fn shape_mismatch_is_reported() {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let packed = g.pack(&[x, x]);
    g.output("y", packed.sin());
    assert!(matches!(
        g.build().unwrap_err(),
        GraphError::ShapeMismatch { .. }
    ));
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    g.output("y", g.pack(&[x, x]).unpack(2));
    assert!(
        g.build()
            .unwrap_err()
            .to_string()
            .contains("column 2 of [n, 2]")
    );
}

#[test]
fn cycles_unknown_nodes_and_dangling_nodes_are_errors() {
    let x = node(Op::Input { name: "x".into() }, DType::F32);
    let cyclic = vec![
        x.clone(),
        node(Op::Binary(BinaryOp::Add, NodeId(0), NodeId(2)), DType::F32),
        node(Op::Unary(FloatUnary::Sin, NodeId(1)), DType::F32),
    ];
    assert_eq!(
        Graph::new(cyclic, vec![output("y", 2)], vec![]).unwrap_err(),
        GraphError::NotTopological {
            node: NodeId(1),
            operand: NodeId(2)
        }
    );
    let unknown = vec![
        x.clone(),
        node(Op::Unary(FloatUnary::Sin, NodeId(7)), DType::F32),
    ];
    assert!(matches!(
        Graph::new(unknown, vec![output("y", 1)], vec![]).unwrap_err(),
        GraphError::UnknownNode {
            operand: NodeId(7),
            ..
        }
    ));
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let _unused = x.cos();
    g.output("y", x.sin());
    let error = g.build().unwrap_err();
    assert_eq!(
        error.to_string(),
        "%1 (cos) is dangling: no output or carry depends on it"
    );
}

#[test]
fn names_outputs_and_carries_are_checked() {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let _ = g.input("x", DType::F32);
    g.output("y", x.sin());
    assert_eq!(
        g.build().unwrap_err(),
        GraphError::DuplicateName("x".into())
    );

    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    g.output("y", x);
    assert_eq!(g.build().unwrap_err(), GraphError::NotComputed("y".into()));

    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    g.carry(x, x.lt(x));
    assert!(matches!(
        g.build().unwrap_err(),
        GraphError::BadCarry { .. }
    ));

    assert_eq!(
        GraphBuilder::new().build().unwrap_err(),
        GraphError::NoOutputs
    );
}

#[test]
fn text_and_dot_dumps_name_every_node() {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let s = g.param("s", DType::F32);
    g.output("y", (x * s).sin());
    g.carry(x, x + 1.0);
    let graph = g.build().unwrap();
    let text = graph.to_string();
    assert!(text.contains("%0 = input x : f32[n]"), "{text}");
    assert!(text.contains("%2 = mul %0, %1 : f32[n]"), "{text}");
    assert!(text.contains("output y = %3"), "{text}");
    assert!(text.contains("carry %0 <- %5"), "{text}");
    let dot = graph.to_dot();
    assert!(dot.starts_with("digraph cartfuse {"));
    assert!(
        dot.contains("n0 -> n2;") && dot.contains("n5 -> n0 [style=dashed"),
        "{dot}"
    );
}

#[test]
fn a_param_asked_for_twice_is_one_node_but_a_retyped_one_is_an_error() {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let (a, b) = (g.param("s", DType::F32), g.param("s", DType::F32));
    assert_eq!(a.id(), b.id());
    g.output("y", x * a + b);
    assert_eq!(g.build().unwrap().params().len(), 1);

    let g = GraphBuilder::new();
    let x = g.input("x", DType::U32);
    g.output("y", x + g.param("s", DType::U32));
    g.output("z", g.param("s", DType::F32));
    assert!(matches!(g.build(), Err(GraphError::DuplicateName(name)) if name == "s"));
}

#[test]
fn affines_need_one_f32_weight_per_f32_input() {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let w = g.param("w", DType::F32);
    g.output("y", g.affine(None, &[w, w], &[x]));
    let error = g.build().unwrap_err();
    assert!(matches!(error, GraphError::ShapeMismatch { .. }), "{error}");
    assert!(
        error.to_string().contains("2 weights for 1 inputs"),
        "{error}"
    );

    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let k = g.input("k", DType::U32);
    g.output("y", g.affine(Some(k), &[x], &[x]));
    let error = g.build().unwrap_err();
    assert!(matches!(error, GraphError::TypeMismatch { .. }), "{error}");

    let g = GraphBuilder::new();
    g.output("y", g.affine(None, &[], &[]));
    assert!(matches!(
        g.build().unwrap_err(),
        GraphError::ShapeMismatch { .. }
    ));

    // A valid one dumps with its arity and every operand, the running sum first.
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let w = g.param("w", DType::F32);
    let acc = x * 2.0;
    g.output("y", g.affine(Some(acc), &[w, w], &[x, acc]));
    let graph = g.build().unwrap();
    let text = graph.to_string();
    assert!(text.contains("affine2 %3, %1, %1, %0, %3"), "{text}");
}
