//! A plan explaining itself: kernels, ops, buffers, bytes and the reason for each boundary.

use super::kernels::{PlannedLaunch, Slot, slot_width_bytes};
use super::planned::Plan;
use crate::graph::{Graph, Op};

fn slot_label(graph: &Graph, slot: Slot) -> String {
    let node = graph.node(slot.node());
    let shape = match node.shape {
        crate::graph::Shape::Lanes => format!("{}[n]", node.dtype),
        crate::graph::Shape::Packed(k) => format!("{}[n, {k}]", node.dtype),
    };
    match slot {
        Slot::Input(id) => match &node.op {
            Op::Input { name } => format!("input `{name}` {shape}"),
            _ => format!("{id} {shape}"),
        },
        Slot::Value(id) => match graph.outputs().iter().find(|o| o.node == id) {
            Some(output) => format!("output `{}` {shape}", output.name),
            None => format!("intermediate {id} ({}) {shape}", node.op.name()),
        },
        Slot::Next(_) => format!("{} {shape}", graph.carry_name(slot.node())),
    }
}

impl Plan {
    /// A human-readable account of the plan: every kernel, the ops it computes, the
    /// buffers it binds with bytes per lane, and why it is a kernel of its own.
    pub fn explain(&self, graph: &Graph) -> String {
        let mut text = format!(
            "plan {}: {} kernels in {} launches per {} step(s) -> {:.2} launches per step, {:.1} bytes per lane-step\n",
            self.strategy,
            self.kernels.len(),
            self.launches.len(),
            self.steps_per_launch,
            self.launches_per_step(),
            self.bytes_per_lane_step(graph),
        );
        for (index, launch) in self.launches.iter().enumerate() {
            let names: Vec<&str> = (launch.kernels().iter())
                .map(|k| self.kernels[*k].name.as_str())
                .collect();
            text += &match launch {
                PlannedLaunch::CopyState { input } => format!(
                    "\nlaunch {index}: copy {} into its input buffer ({} bytes per lane): XLA's copy removal keeps this loop copy: the old value is still live where the new one is written (carries not copied share the loop buffer)\n",
                    graph.carry_name(*input),
                    2 * slot_width_bytes(graph, *input)
                ),
                PlannedLaunch::Kernels(parts) if parts.len() > 1 => format!(
                    "\nlaunch {index}: {} kernels side by side (horizontal fusion: independent, each on its own cubes): {}\n",
                    parts.len(),
                    names.join(", ")
                ),
                PlannedLaunch::Kernels(_) => format!("\nlaunch {index}: kernel {}\n", names[0]),
            };
            for &k in launch.kernels() {
                let kernel = &self.kernels[k];
                let (read, written) = kernel.bytes_per_lane(graph, self.steps_per_launch);
                let ops: Vec<String> = kernel
                    .computes
                    .iter()
                    .map(|id| format!("{id} {}", graph.node(*id).op.name()))
                    .collect();
                let rows = (kernel
                    .rows_of
                    .map(|cols| format!(" (one thread per row of {cols})")))
                .unwrap_or_default();
                text += &format!(
                    "  kernel {}{rows}: {} ops, {} buffers, {read} B read + {written} B written per lane\n",
                    kernel.name,
                    ops.len(),
                    kernel.bindings()
                );
                text += &format!("    ops: {}\n", ops.join(", "));
                let reads = kernel.reads.iter().map(|slot| ("reads ", slot));
                let writes = kernel.writes.iter().map(|(slot, _)| ("writes", slot));
                for (verb, slot) in reads.chain(writes) {
                    text += &format!("    {verb} {}\n", slot_label(graph, *slot));
                }
                for why in &kernel.why {
                    text += &format!("    boundary: {why}\n");
                }
            }
        }
        text
    }
}
