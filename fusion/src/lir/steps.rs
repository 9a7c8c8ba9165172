//! Multi-step (`fused-xK`) programs: loop-carried state is loaded once before the loop
//! over the steps, carried in registers, and stored once after it.

use super::program::Instr;
use super::program::LaunchBindings;
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
            prologue.push(match graph.node(carry.input).dtype {
                DType::F32 => Instr::ConstF {
                    dst: carry.input.0,
                    bits: 0,
                },
                _ => Instr::ConstU {
                    dst: carry.input.0,
                    value: 0,
                },
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
    let slot = match *instr {
        Instr::LoadF { buffer, .. } | Instr::LoadPackedF { buffer, .. } => {
            bindings.in_f[buffer as usize]
        }
        Instr::LoadU { buffer, .. } => bindings.in_u[buffer as usize],
        _ => return false,
    };
    matches!(slot, Slot::Input(input) if graph.carry_of(input).is_some())
}

/// The carried input `instr` stores the final value of, if any.
fn stores_state(bindings: &LaunchBindings, instr: &Instr) -> Option<NodeId> {
    let slot = match *instr {
        Instr::StoreF { buffer, .. } | Instr::StorePackedF { buffer, .. } => {
            bindings.out_f[buffer as usize]
        }
        Instr::StoreU { buffer, .. } => bindings.out_u[buffer as usize],
        _ => return None,
    };
    match slot {
        Slot::Next(input) => Some(input),
        _ => None,
    }
}
