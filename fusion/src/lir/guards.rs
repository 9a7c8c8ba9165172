//! Scheduling a kernel body: select branches evaluated only where they are taken, and one
//! Threefry evaluation for both words of a counter.
//!
//! In `select(done, reset, stepped)` the reset branch (random draws, scaling) is needed only
//! in lanes that are done. An instruction is *exclusive* to the `when` side of the selects
//! on one condition when every reader of its register is exclusive too, or is one of those
//! selects reading it as that side. When such a set holds a random draw, it moves into a
//! [`GuardBlock`] placed before the first of those selects: the kernel runs it inside
//! `if cond`, so a lane that does not reset computes no Threefry at all. Lanes that skip
//! the block hold zeros the selects never pick, so results equal eager evaluation bit for
//! bit (the generator is counter-based: drawing in fewer lanes changes no lane's draw).
//! All selects on one condition share one block, as a hand-written kernel shares one
//! `if done`; the native CPU runtime does the same per select ([`crate::cpu`]'s `lazy`).
//!
//! Then every instruction list (the body and each block) shares Threefry evaluations: two
//! draws with the same key and counter registers become one [`Instr::Random`] defining
//! both words (CartPole's reset draws four words from two counters).

use std::collections::HashMap;

use super::program::{GuardBlock, Instr, Reg};
use crate::graph::LogicUnary;

/// A select side: the selects on `cond` reading the guarded values as `when`'s operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Side {
    cond: Reg,
    when: bool,
}

/// Schedules `body`: the body, with [`Instr::Guard`] where a block runs, and the blocks.
/// `live_out` registers are read after the body (loop carries) and so never move into a
/// block; `fresh` is the next unused register number (for negated conditions).
pub fn schedule(
    body: Vec<Instr>,
    live_out: &[Reg],
    fresh: &mut Reg,
) -> (Vec<Instr>, Vec<GuardBlock>) {
    let n = body.len();
    let mut users: HashMap<Reg, Vec<usize>> = HashMap::new();
    let mut def_at: HashMap<Reg, usize> = HashMap::new();
    for (i, instr) in body.iter().enumerate() {
        for r in instr.operands() {
            users.entry(r).or_default().push(i);
        }
        for (r, _) in instr.defs() {
            def_at.insert(r, i);
        }
    }
    for r in live_out {
        users.entry(*r).or_default().push(usize::MAX);
    }
    // The selects of each side, in order of first appearance.
    let mut sides: Vec<(Side, Vec<usize>)> = Vec::new();
    for (i, instr) in body.iter().enumerate() {
        for (side, _) in [true, false]
            .into_iter()
            .filter_map(|when| branch(instr, when))
        {
            match sides.iter_mut().find(|(s, _)| *s == side) {
                Some((_, selects)) => selects.push(i),
                None => sides.push((side, vec![i])),
            }
        }
    }
    let mut guarded: Vec<Option<usize>> = vec![None; n];
    let mut blocks: Vec<(Side, Vec<usize>, usize)> = Vec::new();
    for (side, selects) in &sides {
        let last = *selects.iter().max().expect("a side has a select");
        let mut member = vec![false; n];
        for i in (0..last).rev() {
            let defs = body[i].defs();
            if defs.is_empty() || guarded[i].is_some() || is_leaf(&body[i]) {
                continue;
            }
            member[i] = defs.iter().all(|&(reg, _)| {
                let readers = users.get(&reg).map(Vec::as_slice).unwrap_or(&[]);
                !readers.is_empty()
                    && readers.iter().all(|&u| {
                        u != usize::MAX
                            && (member[u] || branch(&body[u], side.when) == Some((*side, reg)))
                    })
            });
        }
        let members: Vec<usize> = (0..n).filter(|i| member[*i]).collect();
        let draws = members
            .iter()
            .any(|i| matches!(body[*i], Instr::Random { .. }));
        let first = *selects.iter().min().expect("a side has a select");
        // Members move to just before the first select: what they read from outside the
        // block must be defined by then.
        // (Leaves, which read nothing, move up with the block.)
        let placeable = members.iter().all(|&m| {
            body[m].operands().iter().all(|r| match def_at.get(r) {
                Some(&d) => member[d] || d < first || is_leaf(&body[d]),
                None => true,
            })
        });
        if draws && placeable {
            for &m in &members {
                guarded[m] = Some(blocks.len());
            }
            blocks.push((*side, members, first));
        }
    }
    let mut out = Vec::with_capacity(n + 2 * blocks.len());
    let mut guards = Vec::with_capacity(blocks.len());
    let mut hoisted = vec![false; n];
    for (i, instr) in body.iter().enumerate() {
        if guarded[i].is_some() || hoisted[i] {
            continue;
        }
        for (side, members, _) in blocks.iter().filter(|(_, _, first)| *first == i) {
            for &m in members {
                for r in body[m].operands() {
                    if let Some(&d) = def_at.get(&r)
                        && d > i
                        && !hoisted[d]
                        && guarded[d].is_none()
                    {
                        hoisted[d] = true;
                        out.push(body[d]);
                    }
                }
            }
            let cond = if side.when {
                side.cond
            } else {
                let negated = std::mem::replace(fresh, *fresh + 1);
                out.push(Instr::LogicUnary {
                    op: LogicUnary::Not,
                    dst: negated,
                    a: side.cond,
                });
                negated
            };
            let read_after = |reg: Reg| {
                users
                    .get(&reg)
                    .is_some_and(|us| us.iter().any(|&u| u != usize::MAX && guarded[u].is_none()))
            };
            let outputs = |file: bool| {
                (members.iter().flat_map(|&m| body[m].defs()))
                    .filter(|&(reg, float)| float == file && read_after(reg))
                    .map(|(reg, _)| reg)
                    .collect()
            };
            out.push(Instr::Guard {
                index: guards.len() as u32,
            });
            guards.push(GuardBlock {
                cond,
                body: share_threefry(members.iter().map(|&m| body[m]).collect()),
                outputs_f: outputs(true),
                outputs_u: outputs(false),
            });
        }
        out.push(*instr);
    }
    (share_threefry(out), guards)
}

/// The side a select reads as its `when` operand, and that operand, unless the operand is
/// the condition or the other operand too.
fn branch(instr: &Instr, when: bool) -> Option<(Side, Reg)> {
    let (Instr::SelectF { cond, a, b, .. } | Instr::SelectU { cond, a, b, .. }) = *instr else {
        return None;
    };
    let (branch, other) = if when { (a, b) } else { (b, a) };
    (branch != cond && branch != other).then_some((Side { cond, when }, branch))
}

/// An instruction that reads no register (a load, param, constant or lane index): it can
/// move anywhere, and is cheaper to compute than to carry out of a block.
fn is_leaf(instr: &Instr) -> bool {
    instr.operands().is_empty() && instr.def().is_some()
}

/// Merges draws with the same key and counter registers into the first of them.
fn share_threefry(body: Vec<Instr>) -> Vec<Instr> {
    let mut out: Vec<Instr> = Vec::with_capacity(body.len());
    for instr in body {
        if let Instr::Random { dst, key, counter } = instr {
            let twin = out.iter_mut().find_map(|earlier| match earlier {
                Instr::Random {
                    dst: words,
                    key: k,
                    counter: c,
                } if (*k, *c) == (key, counter)
                    && (0..2).all(|w| dst[w].is_none() || words[w].is_none()) =>
                {
                    Some(words)
                }
                _ => None,
            });
            if let Some(words) = twin {
                for (word, d) in words.iter_mut().zip(dst) {
                    *word = d.or(*word);
                }
                continue;
            }
        }
        out.push(instr);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(dst: Reg, counter: Reg, word: usize) -> Instr {
        let mut words = [None, None];
        words[word] = Some(dst);
        Instr::Random {
            dst: words,
            key: [0, 1],
            counter: [2, counter],
        }
    }

    /// Registers: 0, 1 key; 2 lane; 3, 4 counters; 5 cond; 6 stepped; 7.. draws.
    fn reset_body() -> Vec<Instr> {
        vec![
            Instr::Lane { dst: 2 },
            draw(7, 3, 0),
            draw(8, 3, 1),
            draw(9, 4, 0),
            Instr::SelectF {
                dst: 10,
                cond: 5,
                a: 7,
                b: 6,
            },
            Instr::SelectF {
                dst: 11,
                cond: 5,
                a: 8,
                b: 6,
            },
            Instr::BinaryF {
                op: crate::graph::BinaryOp::Add,
                dst: 12,
                a: 9,
                b: 6,
            },
            Instr::StoreF {
                buffer: 0,
                src: 10,
                per_step: false,
            },
            Instr::StoreF {
                buffer: 1,
                src: 11,
                per_step: false,
            },
            Instr::StoreF {
                buffer: 2,
                src: 12,
                per_step: false,
            },
        ]
    }

    #[test]
    fn exclusive_draws_move_into_one_block_before_the_first_select() {
        let mut fresh = 100;
        let (s_body, s_guards) = schedule(reset_body(), &[], &mut fresh);
        assert_eq!(s_guards.len(), 1);
        let block = &s_guards[0];
        assert_eq!(block.cond, 5);
        // Draws 7 and 8 share a counter: one Threefry defines both words.
        assert_eq!(
            block.body,
            vec![Instr::Random {
                dst: [Some(7), Some(8)],
                key: [0, 1],
                counter: [2, 3],
            }]
        );
        assert_eq!(block.outputs_f, vec![7, 8]);
        assert!(block.outputs_u.is_empty());
        // Draw 9 is read by an add, not a select: it stays, unguarded.
        assert_eq!(s_body[1], draw(9, 4, 0));
        assert_eq!(s_body[2], Instr::Guard { index: 0 });
        assert!(matches!(s_body[3], Instr::SelectF { dst: 10, .. }));
        assert_eq!(fresh, 100);
    }

    #[test]
    fn a_false_side_is_guarded_by_the_negated_condition() {
        let mut body = reset_body();
        body[4] = Instr::SelectF {
            dst: 10,
            cond: 5,
            a: 6,
            b: 7,
        };
        body[5] = Instr::SelectF {
            dst: 11,
            cond: 5,
            a: 6,
            b: 8,
        };
        let mut fresh = 100;
        let (s_body, s_guards) = schedule(body, &[], &mut fresh);
        assert_eq!(fresh, 101);
        assert_eq!(s_guards[0].cond, 100);
        assert!(s_body.contains(&Instr::LogicUnary {
            op: LogicUnary::Not,
            dst: 100,
            a: 5,
        }));
    }

    #[test]
    fn live_out_and_stored_values_are_not_guarded() {
        let mut fresh = 100;
        let (_, s_guards) = schedule(reset_body(), &[7, 8], &mut fresh);
        assert!(s_guards.is_empty());
        let mut body = reset_body();
        body.push(Instr::StoreF {
            buffer: 3,
            src: 8,
            per_step: false,
        });
        let (s_body, s_guards) = schedule(body, &[], &mut fresh);
        assert_eq!(s_guards[0].body.len(), 1);
        assert_eq!(s_guards[0].outputs_f, vec![7]);
        // Word 1 of counter 3 is stored: it stays outside, in its own draw.
        assert!(s_body.contains(&draw(8, 3, 1)));
    }

    #[test]
    fn a_block_whose_inputs_come_after_the_first_select_is_not_formed() {
        // Draw 8's counter (register 13) is computed from the first select's value.
        let select = |dst, a| Instr::SelectF {
            dst,
            cond: 5,
            a,
            b: 6,
        };
        let store = |buffer, src| Instr::StoreF {
            buffer,
            src,
            per_step: false,
        };
        let body = vec![
            Instr::Lane { dst: 2 },
            draw(7, 3, 0),
            select(10, 7),
            Instr::F32ToU32 { dst: 13, a: 10 },
            draw(8, 13, 1),
            select(11, 8),
            store(0, 10),
            store(1, 11),
        ];
        let mut fresh = 100;
        let (s_body, s_guards) = schedule(body.clone(), &[], &mut fresh);
        assert!(s_guards.is_empty());
        assert_eq!(s_body, body);
    }
}
