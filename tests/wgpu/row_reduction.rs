//! Row reductions with one cube per row (its units read adjacent columns and reduce in
//! shared memory, the mode GPUs run) against one thread per row and the interpreter, on
//! rows narrower than, as wide as and wider than a cube, under every strategy.

use std::collections::HashMap;

use cartfuse::fusion::cube::RowReduction;
use cartfuse::fusion::exec::Executor;
use cartfuse::fusion::graph::{DType, Graph, GraphBuilder, HostArray, ReduceOp};
use cartfuse::fusion::interpret::interpret;
use cartfuse::fusion::plan::{Plan, PlanOptions, Strategy};

use super::backend;
use super::plans::assert_close;

/// LayerNorm over rows of `cols`, and each row's maximum and sum.
fn layer_norm(cols: u32) -> Graph {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let mean = x.row_reduce(ReduceOp::Mean, cols);
    let centered = x - mean;
    let var = centered.square().row_reduce(ReduceOp::Mean, cols);
    g.output("y", centered / (var + 1e-5).sqrt());
    g.output("max", x.row_reduce(ReduceOp::Max, cols));
    g.output("sum", (x * 0.25).row_reduce(ReduceOp::Sum, cols));
    g.build().unwrap()
}

fn run(
    graph: &Graph,
    strategy: Strategy,
    mode: RowReduction,
    n: usize,
    x: &HostArray,
) -> HashMap<String, HostArray> {
    let plan = Plan::build(graph, strategy, &PlanOptions::default()).unwrap();
    let backend = backend().with_row_reduction(mode);
    let mut exec = Executor::new(backend, graph.clone(), plan, n).unwrap();
    exec.poison_outputs();
    exec.set_input("x", x).unwrap();
    exec.run().unwrap();
    (graph.outputs().iter())
        .map(|o| (o.name.clone(), exec.read_output(&o.name).unwrap()))
        .collect()
}

#[test]
fn a_cube_per_row_matches_a_thread_per_row_and_the_interpreter() {
    for (cols, rows) in [(5u32, 33usize), (256, 7), (1000, 9)] {
        let graph = layer_norm(cols);
        let n = cols as usize * rows;
        let x = HostArray::F32(
            (0..n)
                .map(|i| ((i * 37) % 101) as f32 * 0.1 - 4.0)
                .collect(),
        );
        let inputs = HashMap::from([("x".to_string(), x.clone())]);
        let want = interpret::<f32>(&graph, n, &inputs, &HashMap::new()).unwrap();
        for strategy in [
            Strategy::Eager,
            Strategy::Vertical,
            Strategy::Horizontal,
            Strategy::Fused,
        ] {
            let by_cube = run(&graph, strategy, RowReduction::CubePerRow, n, &x);
            let by_thread = run(&graph, strategy, RowReduction::ThreadPerRow, n, &x);
            for output in graph.outputs() {
                let what = format!("cols {cols} {strategy} {}", output.name);
                assert_close(
                    &format!("{what} (cube per row)"),
                    &by_cube[&output.name],
                    &want[&output.name],
                    4,
                    2e-5,
                );
                assert_close(
                    &format!("{what} (thread per row)"),
                    &by_thread[&output.name],
                    &want[&output.name],
                    4,
                    2e-5,
                );
            }
        }
    }
}
