//! `cartfuse plan`: how a strategy partitions the CartPole step.

use cartfuse::AutoresetMode;
use cartfuse::env::cartpole::cartpole_step_graph;
use cartfuse::env::engine::layout_for;
use cartfuse::env::graph::StateLayout;
use cartfuse::fusion::plan::{Plan, PlanOptions};

use super::args::{GraphArg, LayoutArg, PlanArgs};

/// Prints the plan's kernels, or the graph in DOT.
pub fn run(args: PlanArgs) -> anyhow::Result<()> {
    let GraphArg::Cartpole = args.graph;
    let layout = match args.layout {
        Some(LayoutArg::Soa) => StateLayout::StructOfArrays,
        Some(LayoutArg::Packed) => StateLayout::Packed,
        None => layout_for(args.strategy),
    };
    let graph = cartpole_step_graph(args.autoreset.into(), layout);
    if args.dot {
        print!("{}", graph.to_dot());
        return Ok(());
    }
    let plan = Plan::build(&graph, args.strategy, &PlanOptions::default())?;
    println!(
        "graph: CartPole-v1 step ({:?} autoreset, {layout:?} state), {} nodes, {} ops",
        AutoresetMode::from(args.autoreset),
        graph.nodes().len(),
        graph.computing_ops()
    );
    print!("{}", plan.explain(&graph));
    Ok(())
}
