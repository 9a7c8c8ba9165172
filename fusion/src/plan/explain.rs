//! A plan explaining itself: kernels, ops, buffers, bytes and the reason for each boundary.

use super::kernels::PlannedLaunch;
use super::kernels::{Slot, slot_width_bytes};
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
            match launch {
                PlannedLaunch::Kernels(parts) if parts.len() > 1 => {
                    let names: Vec<&str> = parts
                        .iter()
                        .map(|k| self.kernels[*k].name.as_str())
                        .collect();
                    text.push_str(&format!(
                        "\nlaunch {index}: {} kernels side by side (horizontal fusion: independent, each on its own cubes): {}\n",
                        parts.len(),
                        names.join(", ")
                    ));
                }
                PlannedLaunch::Kernels(parts) => {
                    text.push_str(&format!(
                        "\nlaunch {index}: kernel {}\n",
                        self.kernels[parts[0]].name
                    ));
                }
                PlannedLaunch::CopyState { input } => {
                    text.push_str(&format!(
                        "\nlaunch {index}: copy {} into its input buffer ({} bytes per lane): XLA's copy removal keeps this loop copy: the old value is still live where the new one is written (carries not copied share the loop buffer)\n",
                        graph.carry_name(*input),
                        2 * slot_width_bytes(graph, *input)
                    ));
                    continue;
                }
            }
            for &k in launch.kernels() {
                let kernel = &self.kernels[k];
                let (read, written) = kernel.bytes_per_lane(graph, self.steps_per_launch);
                let ops: Vec<String> = kernel
                    .computes
                    .iter()
                    .map(|id| format!("{id} {}", graph.node(*id).op.name()))
                    .collect();
                text.push_str(&format!("  kernel {}", kernel.name));
                if let Some(cols) = kernel.rows_of {
                    text.push_str(&format!(" (one thread per row of {cols})"));
                }
                text.push_str(&format!(
                    ": {} ops, {} buffers, {read} B read + {written} B written per lane\n",
                    ops.len(),
                    kernel.bindings()
                ));
                text.push_str(&format!("    ops: {}\n", ops.join(", ")));
                for slot in &kernel.reads {
                    text.push_str(&format!("    reads  {}\n", slot_label(graph, *slot)));
                }
                for (slot, _) in &kernel.writes {
                    text.push_str(&format!("    writes {}\n", slot_label(graph, *slot)));
                }
                for why in &kernel.why {
                    text.push_str(&format!("    boundary: {why}\n"));
                }
            }
        }
        text
    }
}
