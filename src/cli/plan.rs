//! `cartfuse plan`: how a strategy partitions an environment's step.

use cartfuse::env::engine::{layout_for, step_reading_draws};
use cartfuse::env::graph::{StateLayout, step_graph};
use cartfuse::env::registry::unknown_env;
use cartfuse::env::with_env;
use cartfuse::fusion::plan::{Plan, PlanOptions};

use super::args::{ConcatRuleArg, LayoutArg, PlanArgs, RandomArg};

/// Prints the plan's kernels, or the graph in DOT.
pub fn run(args: PlanArgs) -> anyhow::Result<()> {
    let layout = match args.layout {
        Some(LayoutArg::Soa) => StateLayout::StructOfArrays,
        Some(LayoutArg::Packed) => StateLayout::Packed,
        None => layout_for(args.strategy),
    };
    let autoreset = args.autoreset;
    let graph = with_env!(
        args.env.id.as_str(),
        |E| step_graph(&E::default(), autoreset, layout),
        anyhow::bail!(unknown_env(&args.env.id))
    );
    let graph = match args.random {
        RandomArg::DrawnAhead => step_reading_draws(&graph),
        RandomArg::Opaque | RandomArg::Fused => graph,
    };
    if args.dot {
        print!("{}", graph.to_dot());
        return Ok(());
    }
    let options = PlanOptions {
        opaque_random: args.random == RandomArg::Opaque,
        concat_rule: args.concat_rule == ConcatRuleArg::Xla,
        ..PlanOptions::default()
    };
    let plan = Plan::build(&graph, args.strategy, &options)?;
    println!(
        "graph: {} step ({autoreset:?} autoreset, {layout:?} state, random {:?}, concat rule {:?}), {} nodes, {} ops",
        args.env.id,
        args.random,
        args.concat_rule,
        graph.nodes().len(),
        graph.computing_ops()
    );
    print!("{}", plan.explain(&graph));
    Ok(())
}
