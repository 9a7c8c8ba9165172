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

use super::program::{Op, Val, dst_and_operands};

/// Whether guarding `ops` pays for the scan of the condition.
fn worth_guarding(ops: &[&Op]) -> bool {
    ops.iter().any(|op| match op {
        Op::Random(..) => true,
        Op::UnaryF(u, ..) => u.is_transcendental(),
        _ => false,
    }) || ops.len() >= 3
}

/// Moves the exclusive ops of every select branch behind a guard.
pub(super) fn guard_selects(ops: Vec<Op>, vals: &[Val]) -> Vec<Op> {
    let n = ops.len();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); vals.len()];
    for (i, op) in ops.iter().enumerate() {
        for a in dst_and_operands(op).1 {
            if !users[a as usize].contains(&i) {
                users[a as usize].push(i);
            }
        }
    }
    // guarded[i] = Some((select, when)): op i runs behind the guard of that select branch.
    let mut guarded: Vec<Option<(usize, bool)>> = vec![None; n];
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
            let mut member = vec![false; n];
            for i in (0..s).rev() {
                let (Some(d), _) = dst_and_operands(&ops[i]) else {
                    continue;
                };
                if guarded[i].is_some() || matches!(ops[i], Op::RowReduce(..)) {
                    continue;
                }
                let readers = &users[d as usize];
                let exclusive = !readers.is_empty()
                    && readers
                        .iter()
                        .all(|&u| member[u] || (u == s && d == branch));
                member[i] = exclusive;
            }
            let members: Vec<&Op> = (0..n).filter(|i| member[*i]).map(|i| &ops[i]).collect();
            if !members.is_empty() && worth_guarding(&members) {
                for (i, m) in member.iter().enumerate() {
                    if *m {
                        guarded[i] = Some((s, when));
                    }
                }
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
                let block: Vec<Op> = (0..i)
                    .filter(|j| guarded[*j] == Some((i, when)))
                    .map(|j| ops[j])
                    .collect();
                if !block.is_empty() {
                    out.push(Op::Guard {
                        cond,
                        when,
                        len: block.len() as u32,
                    });
                    out.extend(block);
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
