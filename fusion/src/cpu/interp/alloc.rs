//! Placing values: scratch slots by liveness, so a chunk's working set stays small.
//!
//! Walking the op list once, a temp's slot returns to the free list after its last reader
//! (before the reader's destination is chosen, so an op may write in place: every op reads
//! a lane's operands before writing that lane). Input slices and pinned values need no slot.

use std::collections::HashMap;

use super::ops::{L, Loc, Op, dst_and_operands, remap};

/// Assigns scratch slots to the temps (`Loc::Scratch`) of `ops`, whose `L`s index `vals`:
/// the op list over final locations, the location table and the scratch slots used.
pub(super) fn place(ops: &[Op], vals: &[Loc]) -> (Vec<Op>, Vec<Loc>, u32) {
    let mut last: Vec<Option<usize>> = vec![None; vals.len()];
    for (i, op) in ops.iter().enumerate() {
        for a in dst_and_operands(op).1 {
            last[a as usize] = Some(i);
        }
    }
    let mut slot_of = vec![u32::MAX; vals.len()];
    let mut free: Vec<u32> = Vec::new();
    let mut slots = 0u32;
    for (i, op) in ops.iter().enumerate() {
        let (dst, mut operands) = dst_and_operands(op);
        operands.sort_unstable();
        operands.dedup();
        for a in operands {
            if matches!(vals[a as usize], Loc::Scratch(_)) && last[a as usize] == Some(i) {
                free.push(slot_of[a as usize]);
            }
        }
        if let Some(d) = dst {
            let slot = free.pop().unwrap_or_else(|| {
                slots += 1;
                slots - 1
            });
            slot_of[d as usize] = slot;
            if last[d as usize].is_none() {
                free.push(slot);
            }
        }
    }
    let mut locs = Vec::new();
    let mut index: HashMap<Loc, L> = HashMap::new();
    let mut loc_of = |l: L| -> L {
        let loc = match vals[l as usize] {
            Loc::Scratch(_) => Loc::Scratch(slot_of[l as usize]),
            other => other,
        };
        *index.entry(loc).or_insert_with(|| {
            locs.push(loc);
            (locs.len() - 1) as L
        })
    };
    let ops = ops.iter().map(|op| remap(op, &mut loc_of)).collect();
    (ops, locs, slots)
}
