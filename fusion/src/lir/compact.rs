//! Dense layers as loops: an affine's chain of [`Instr::MulAdd`] whose weights are
//! consecutive params becomes one [`Instr::DotParams`], a run-time loop over the params
//! buffer and a per-thread array of its inputs ([`Instr::Stash`]).
//!
//! Straight-line code grows with every weight: the 4 -> 64 -> 64 -> 2 actor and critic are
//! 9,000 multiply-adds and 9,000 param loads, and a kernel that size took lavapipe's LLVM
//! minutes to compile. As loops, each output of a layer is a handful of instructions, and
//! the inputs a layer's outputs share are stashed once: every output after the first finds
//! them in place. Products and sums keep their order (left to right), so results do not
//! change. The CPU runtime does not use this pass: it runs the chains as its own affine op.
//!
//! Each layer's rows then become one loop ([`super::reroll`]).

use std::collections::HashMap;

use super::program::{Instr, KernelProgram, Reg, affine_chain};
use super::reroll::{reroll, stash_slots};

/// Stash slots a program may use before slots are reused (a few layers' inputs).
pub const MAX_STASH: u32 = 512;

/// Chains shorter than this stay straight-line (the loop would not pay).
const MIN_TERMS: usize = 4;

/// `program` with every eligible affine chain as a loop, and the param loads only those
/// chains read removed.
pub fn compact(program: &KernelProgram) -> KernelProgram {
    let param_of: HashMap<Reg, u32> = program
        .instrs()
        .filter_map(|instr| match *instr {
            Instr::ParamF { dst, index } => Some((dst, index)),
            _ => None,
        })
        .collect();
    let mut out = program.clone();
    for (list, old) in out.lists_mut().into_iter().zip(program.lists()) {
        *list = compact_list(old, &param_of);
    }
    if out == *program {
        return out;
    }
    drop_dead_params(&mut out);
    let first_free = stash_len(&out);
    reroll(&out, first_free)
}

/// Stash slots `program` uses (the local array its kernel declares).
pub fn stash_len(program: &KernelProgram) -> u32 {
    program
        .instrs()
        .flat_map(|instr| {
            let (read, write) = stash_slots(instr);
            read.into_iter().chain(write)
        })
        .map(|(first, len)| first + len)
        .max()
        .unwrap_or(0)
}

/// One list, chains found where consecutive `MulAdd`s each continue the last.
fn compact_list(list: &[Instr], param_of: &HashMap<Reg, u32>) -> Vec<Instr> {
    let mut out = Vec::with_capacity(list.len());
    let mut stash = Vec::new();
    let mut i = 0;
    while i < list.len() {
        let end = affine_chain(list, i);
        match end.and_then(|end| loop_of(&list[i..end], param_of)) {
            Some((first_param, acc, dst, inputs)) => {
                let slot = place(&mut stash, &inputs, &mut out);
                out.push(Instr::DotParams {
                    dst,
                    acc,
                    first_param,
                    slot,
                    len: inputs.len() as u32,
                });
                i = end.expect("a chain");
            }
            None => {
                out.push(list[i]);
                i += 1;
            }
        }
    }
    out
}

/// `(first param, acc, dst, inputs)` of a chain whose weights are consecutive params.
fn loop_of(
    chain: &[Instr],
    param_of: &HashMap<Reg, u32>,
) -> Option<(u32, Option<Reg>, Reg, Vec<Reg>)> {
    if chain.len() < MIN_TERMS {
        return None;
    }
    let mut first_param = None;
    let mut inputs = Vec::with_capacity(chain.len());
    for (k, instr) in chain.iter().enumerate() {
        let Instr::MulAdd { a, b, .. } = *instr else {
            return None;
        };
        let param = *param_of.get(&a)?;
        let first = *first_param.get_or_insert(param);
        if param != first + k as u32 {
            return None;
        }
        inputs.push(b);
    }
    let (Instr::MulAdd { acc, .. }, Instr::MulAdd { dst, .. }) = (chain[0], chain[chain.len() - 1])
    else {
        return None;
    };
    Some((first_param?, acc, dst, inputs))
}

/// The first slot of `inputs` in the stash, stashing them first unless they are there;
/// `stash` holds the register in each slot in the list emitted so far.
fn place(stash: &mut Vec<Reg>, inputs: &[Reg], out: &mut Vec<Instr>) -> u32 {
    if let Some(slot) = stash.windows(inputs.len()).position(|w| w == inputs) {
        return slot as u32;
    }
    if stash.len() + inputs.len() > MAX_STASH as usize {
        stash.clear();
    }
    let slot = stash.len() as u32;
    out.extend(
        (slot..)
            .zip(inputs)
            .map(|(slot, &src)| Instr::Stash { slot, src }),
    );
    stash.extend_from_slice(inputs);
    slot
}

/// Removes param loads no instruction, carry or guard output reads any more.
fn drop_dead_params(program: &mut KernelProgram) {
    let read: std::collections::HashSet<Reg> = program.reads().collect();
    let live = |instr: &Instr| match *instr {
        Instr::ParamF { dst, .. } => read.contains(&dst),
        _ => true,
    };
    for list in program.lists_mut() {
        list.retain(live);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(body: Vec<Instr>) -> KernelProgram {
        KernelProgram::of_body(body)
    }

    /// `dst = x_0 w_0 + ..` over inputs `x`, weights from param `first` (registers 100+).
    fn chain(dst: Reg, first: u32, x: &[Reg], fresh: &mut Reg) -> Vec<Instr> {
        let mut out = Vec::new();
        let mut acc = None;
        for (k, &b) in x.iter().enumerate() {
            let w = 100 + first + k as u32;
            out.push(Instr::ParamF {
                dst: w,
                index: first + k as u32,
            });
            let d = if k + 1 == x.len() { dst } else { *fresh };
            *fresh += 1;
            out.push(Instr::MulAdd {
                dst: d,
                acc,
                a: w,
                b,
            });
            acc = Some(d);
        }
        out
    }

    #[test]
    fn chains_over_consecutive_params_become_loops_sharing_one_stash() {
        let x = [1, 2, 3, 4, 5];
        let mut fresh = 1000;
        let mut body = vec![Instr::LoadF {
            dst: 1,
            buffer: 0,
            per_step: false,
        }];
        // The loads of a chain's weights come first, then its multiply-adds.
        let (mut loads, mut terms) = (Vec::new(), Vec::new());
        for (row, dst) in [(0u32, 50), (5, 51)] {
            for instr in chain(dst, row, &x, &mut fresh) {
                match instr {
                    Instr::ParamF { .. } => loads.push(instr),
                    _ => terms.push(instr),
                }
            }
        }
        body.extend(loads);
        body.extend(terms);
        body.push(Instr::StoreF {
            buffer: 0,
            src: 51,
            per_step: false,
        });
        body.push(Instr::StoreF {
            buffer: 1,
            src: 50,
            per_step: false,
        });
        let compacted = compact(&program(body));
        let stashes = x.iter().enumerate().map(|(k, &src)| Instr::Stash {
            slot: k as u32,
            src,
        });
        let expected: Vec<Instr> = [Instr::LoadF {
            dst: 1,
            buffer: 0,
            per_step: false,
        }]
        .into_iter()
        .chain(stashes)
        .chain([
            Instr::DotParams {
                dst: 50,
                acc: None,
                first_param: 0,
                slot: 0,
                len: 5,
            },
            Instr::DotParams {
                dst: 51,
                acc: None,
                first_param: 5,
                slot: 0,
                len: 5,
            },
            Instr::StoreF {
                buffer: 0,
                src: 51,
                per_step: false,
            },
            Instr::StoreF {
                buffer: 1,
                src: 50,
                per_step: false,
            },
        ])
        .collect();
        assert_eq!(compacted.body, expected);
        assert_eq!(stash_len(&compacted), 5);
    }

    #[test]
    fn short_chains_and_scattered_weights_stay_straight_line() {
        let mut fresh = 1000;
        let short = program(chain(50, 0, &[1, 2, 3], &mut fresh));
        assert_eq!(compact(&short), short);
        let mut scattered = chain(50, 0, &[1, 2, 3, 4], &mut fresh);
        if let Instr::ParamF { index, .. } = &mut scattered[2] {
            *index = 9;
        }
        let scattered = program(scattered);
        assert_eq!(compact(&scattered), scattered);
    }
}
