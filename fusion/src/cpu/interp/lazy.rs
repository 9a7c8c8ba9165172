//! Select laziness: a select branch's exclusive ops run only where the branch is taken.
//!
//! In `select(done, reset, stepped)` the reset branch (random draws, scaling) is needed only
//! for lanes that are done. An op is *exclusive* to a branch when every reader of its value
//! is exclusive too, or is the select reading it as that branch. Exclusive ops are moved
//! (in order) to just before their select behind an [`Op::Guard`]; at run time the guard
//! scans the condition one vector at a time and runs the guarded ops only over runs of
//! vectors in which at least one lane takes the branch. Lanes that do not take it hold stale
//! values the select never picks, so results equal eager evaluation bit for bit (the random
//! op is counter-based: drawing for fewer lanes changes no lane's draw).

use std::collections::{BinaryHeap, HashMap, HashSet};

use super::program::{L, Op, Val, dst_and_operands};

/// Whether guarding `ops` pays for the scan of the condition.
fn worth_guarding(ops: &[&Op]) -> bool {
    ops.iter().any(|op| match op {
        Op::Random(..) => true,
        Op::UnaryF(u, ..) => u.is_transcendental(),
        _ => false,
    }) || ops.len() >= 3
}

/// Moves the exclusive ops of every select branch behind a guard.
///
/// Linear in the op count plus the size of each branch's cone: an op's readers come after
/// it, so visiting candidates from the last to the first decides every reader before the
/// op, and an op that is not exclusive stops the walk (its operands have it as a reader).
pub(super) fn guard_selects(ops: Vec<Op>, vals: &[Val]) -> Vec<Op> {
    let n = ops.len();
    let shapes: Vec<(Option<L>, Vec<L>)> = ops.iter().map(dst_and_operands).collect();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); vals.len()];
    let mut def: Vec<Option<usize>> = vec![None; vals.len()];
    for (i, (dst, operands)) in shapes.iter().enumerate() {
        if let Some(d) = dst {
            def[*d as usize] = Some(i);
        }
        for &a in operands {
            let readers = &mut users[a as usize];
            if readers.last() != Some(&i) {
                readers.push(i);
            }
        }
    }
    // guarded[i] = Some((select, when)): op i runs behind the guard of that select branch.
    let mut guarded: Vec<Option<(usize, bool)>> = vec![None; n];
    let mut blocks: HashMap<(usize, bool), Vec<usize>> = HashMap::new();
    let mut member: HashSet<usize> = HashSet::new();
    for s in (0..n).rev() {
        let Op::Select(_, cond, on_true, on_false) = ops[s] else {
            continue;
        };
        if guarded[s].is_some() {
            continue;
        }
        for (branch, other, when) in [(on_true, on_false, true), (on_false, on_true, false)] {
            if branch == cond || branch == other || vals[branch as usize] != Val::Temp {
                continue;
            }
            member.clear();
            let mut candidates: BinaryHeap<usize> = def[branch as usize].into_iter().collect();
            while let Some(i) = candidates.pop() {
                // An affine stays with its terms (which define nothing, so never move).
                if member.contains(&i)
                    || guarded[i].is_some()
                    || matches!(ops[i], Op::RowReduce(..) | Op::Affine { .. })
                {
                    continue;
                }
                let Some(d) = shapes[i].0 else {
                    continue;
                };
                let readers = &users[d as usize];
                let exclusive = !readers.is_empty()
                    && readers
                        .iter()
                        .all(|&u| member.contains(&u) || (u == s && d == branch));
                if exclusive {
                    member.insert(i);
                    candidates.extend(shapes[i].1.iter().filter_map(|a| def[*a as usize]));
                }
            }
            let mut members: Vec<usize> = member.iter().copied().collect();
            members.sort_unstable();
            let ops_in: Vec<&Op> = members.iter().map(|&i| &ops[i]).collect();
            if !members.is_empty() && worth_guarding(&ops_in) {
                for &m in &members {
                    guarded[m] = Some((s, when));
                }
                blocks.insert((s, when), members);
            }
        }
    }
    let mut out = Vec::with_capacity(n + 4);
    for (i, op) in ops.iter().enumerate() {
        if guarded[i].is_some() {
            continue;
        }
        if let Op::Select(_, cond, ..) = *op {
            for when in [true, false] {
                if let Some(block) = blocks.get(&(i, when)) {
                    out.push(Op::Guard {
                        cond,
                        when,
                        len: block.len() as u32,
                    });
                    out.extend(block.iter().map(|&j| ops[j]));
                }
            }
        }
        out.push(*op);
    }
    out
}

/// Number of guards in a compiled op list (for tests and explain output).
pub fn guards(ops: &[Op]) -> usize {
    ops.iter()
        .filter(|op| matches!(op, Op::Guard { .. }))
        .count()
}
