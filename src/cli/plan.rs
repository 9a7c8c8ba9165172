//! `cartfuse plan`: how a strategy partitions an environment's step.

use cartfuse::AutoresetMode;
use cartfuse::env::engine::layout_for;
use cartfuse::env::graph::{StateLayout, step_graph};
use cartfuse::env::registry::unknown_env;
use cartfuse::env::with_env;
use cartfuse::fusion::plan::{Plan, PlanOptions};

use super::args::{LayoutArg, PlanArgs};

/// Prints the plan's kernels, or the graph in DOT.
pub fn run(args: PlanArgs) -> anyhow::Result<()> {
    let layout = match args.layout {
        Some(LayoutArg::Soa) => StateLayout::StructOfArrays,
        Some(LayoutArg::Packed) => StateLayout::Packed,
        None => layout_for(args.strategy),
    };
    let autoreset = AutoresetMode::from(args.autoreset);
    let graph = with_env!(
        args.env.id.as_str(),
        |E| step_graph(&E::default(), autoreset, layout),
        anyhow::bail!(unknown_env(&args.env.id))
    );
    if args.dot {
        print!("{}", graph.to_dot());
        return Ok(());
    }
    let plan = Plan::build(&graph, args.strategy, &PlanOptions::default())?;
    println!(
        "graph: {} step ({autoreset:?} autoreset, {layout:?} state), {} nodes, {} ops",
        args.env.id,
        graph.nodes().len(),
        graph.computing_ops()
    );
    print!("{}", plan.explain(&graph));
    Ok(())
}
