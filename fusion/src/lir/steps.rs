//! Multi-step (`fused-xK`) programs: loop-carried state is loaded once before the loop
//! over the steps, carried in registers, and stored once after it.

use super::program::{Instr, LaunchBindings};
use crate::graph::{DType, Graph, NodeId};
use crate::plan::Slot;

/// Splits a lowered step body into the prologue (loads of carried inputs), the step body,
/// and the epilogue (stores of the final state, read from the carried registers, which hold
/// the last step's next values after the loop).
pub(super) fn split(
    graph: &Graph,
    bindings: &LaunchBindings,
    body: Vec<Instr>,
) -> (Vec<Instr>, Vec<Instr>, Vec<Instr>) {
    let (mut prologue, step): (Vec<Instr>, Vec<Instr>) = body
        .into_iter()
        .partition(|i| loads_state(graph, bindings, i));
    let (state_stores, step): (Vec<Instr>, Vec<Instr>) = step
        .into_iter()
        .partition(|i| stores_state(bindings, i).is_some());
    for carry in graph.carries() {
        let loaded = prologue
            .iter()
            .any(|i| i.def().map(|d| d.0) == Some(carry.input.0));
        if !loaded {
            // A carried input no step reads: its register still holds the state.
            let dst = carry.input.0;
            prologue.push(match graph.node(carry.input).dtype {
                DType::F32 => Instr::ConstF { dst, bits: 0 },
                _ => Instr::ConstU { dst, value: 0 },
            });
        }
    }
    let epilogue = state_stores
        .into_iter()
        .map(|mut store| {
            let input = stores_state(bindings, &store).expect("a state store");
            match &mut store {
                Instr::StoreF { src, .. } | Instr::StoreU { src, .. } => *src = input.0,
                _ => unreachable!("carried state is stored by lanes, not packed"),
            }
            store
        })
        .collect();
    (prologue, step, epilogue)
}

/// Whether `instr` loads loop-carried state.
fn loads_state(graph: &Graph, bindings: &LaunchBindings, instr: &Instr) -> bool {
    matches!(bindings.slot(instr), Some((false, Slot::Input(input))) if graph.carry_of(input).is_some())
}

/// The carried input `instr` stores the final value of, if any.
fn stores_state(bindings: &LaunchBindings, instr: &Instr) -> Option<NodeId> {
    match bindings.slot(instr) {
        Some((true, Slot::Next(input))) => Some(input),
        _ => None,
    }
}
