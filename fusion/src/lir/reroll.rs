//! Dense layers as loops over their rows: after [`super::compact`] has made each output of
//! a layer one [`Instr::DotParams`] loop, the layer's rows become one
//! [`Instr::DenseParams`], whose outputs go to the stash where the next layer reads them.
//!
//! A row is the triple lowering emits for one output of a dense layer (`cartfuse_env::nn`): the
//! dot product, its bias param, the add. Consecutive rows over the same inputs whose
//! weights and biases step by one stride through the params buffer (the `[out][in]` rows
//! with their biases, in `MlpShape::param_names` order) are one layer. The
//! pass then absorbs what follows each row when nothing else reads it:
//! - an activation: every row's sum read only by the same `UnaryF` (the hidden layers'
//!   `tanh`) is applied inside the loop;
//! - the next layer's [`Instr::Stash`]es: outputs read only by stashes into consecutive
//!   slots are written to those slots directly, when no instruction between the layer and
//!   those stashes touches the slots.
//!
//! Outputs read otherwise (the logits, the value) come back to registers through
//! [`Instr::Unstash`] from slots of their own. Each row keeps its rounding (same products,
//! sums, add and op, in the same order), so kernels return the same bits.
//!
//! Why: [`super::compact`]'s loops left the 4 -> 64 -> 64 actor and critic as 259 loops
//! and 1,417 instructions, and lavapipe, which compiles a compute shader as a coroutine,
//! spent over ten minutes in LLVM on them. As six layer loops the step is a few dozen
//! instructions.

use std::collections::HashMap;

use super::program::{Instr, KernelProgram, Reg};
use crate::graph::{BinaryOp, FloatUnary};

/// The stash slots a rerolled program may use; a layer whose outputs would need more
/// stays as it is.
pub const MAX_SLOTS: u32 = 2048;

/// `program` with every dense layer of its prologue, body and epilogue as one loop.
/// `first_free` is the first stash slot the program does not use.
pub fn reroll(program: &KernelProgram, first_free: u32) -> KernelProgram {
    // How many times each register is read anywhere in `program`.
    let mut uses: HashMap<Reg, usize> = HashMap::new();
    for reg in program.reads() {
        *uses.entry(reg).or_default() += 1;
    }
    let mut next_free = first_free;
    let mut out = program.clone();
    for list in out.lists_mut() {
        *list = reroll_list(list, &uses, &mut next_free);
    }
    out
}

/// One row: `dst = dot + bias`.
#[derive(Debug, Clone, Copy)]
struct Row {
    first_param: u32,
    bias_param: u32,
    slot: u32,
    len: u32,
    dst: Reg,
}

/// The row starting at `list[i]`, if one does and its dot and bias feed only its add.
fn row_at(list: &[Instr], i: usize, uses: &HashMap<Reg, usize>) -> Option<Row> {
    let [
        Instr::DotParams {
            dst: d,
            acc: None,
            first_param,
            slot,
            len,
        },
        Instr::ParamF { dst: b, index },
        Instr::BinaryF {
            op: BinaryOp::Add,
            dst,
            a,
            b: b2,
        },
    ] = *list.get(i..i + 3)?
    else {
        return None;
    };
    let only_here = |r: Reg| uses.get(&r) == Some(&1);
    (a == d && b2 == b && only_here(d) && only_here(b)).then_some(Row {
        first_param,
        bias_param: index,
        slot,
        len,
        dst,
    })
}

/// The rows of the layer starting at `list[i]`, each continuing the first by one stride,
/// and that stride (params from one row to the next; `len + 1` for a single row).
fn layer_at(list: &[Instr], i: usize, uses: &HashMap<Reg, usize>) -> (Vec<Row>, u32) {
    let Some(first) = row_at(list, i, uses) else {
        return (Vec::new(), 0);
    };
    let mut rows = vec![first];
    let mut stride = first.len + 1;
    while let Some(next) = row_at(list, i + 3 * rows.len(), uses) {
        let j = rows.len() as u32;
        if j == 1 {
            stride = next.first_param.wrapping_sub(first.first_param);
        }
        let continues = next.slot == first.slot
            && next.len == first.len
            && stride >= first.len
            && Some(next.first_param) == first.first_param.checked_add(j * stride)
            && Some(next.bias_param) == first.bias_param.checked_add(j * stride);
        if !continues {
            break;
        }
        rows.push(next);
    }
    if rows.len() == 1 {
        stride = first.len + 1;
    }
    (rows, stride)
}

/// Stash slots `first..first + count`, as `(first, count)`.
pub type SlotRange = (u32, u32);

/// The stash slots `instr` reads and writes.
pub fn stash_slots(instr: &Instr) -> (Option<SlotRange>, Option<SlotRange>) {
    match *instr {
        Instr::DotParams { slot, len, .. } => (Some((slot, len)), None),
        Instr::DenseParams {
            out_slot,
            in_slot,
            rows,
            len,
            ..
        } => (Some((in_slot, len)), Some((out_slot, rows))),
        Instr::Stash { slot, .. } => (None, Some((slot, 1))),
        Instr::Unstash { slot, .. } => (Some((slot, 1)), None),
        _ => (None, None),
    }
}

fn overlaps(a: SlotRange, b: SlotRange) -> bool {
    a.0 < b.0 + b.1 && b.0 < a.0 + a.1
}

/// One list, layers found at each row start.
fn reroll_list(list: &[Instr], uses: &HashMap<Reg, usize>, next_free: &mut u32) -> Vec<Instr> {
    // The activations and stashes layers absorbed (they follow their layer).
    let mut removed = vec![false; list.len()];
    let mut out = Vec::with_capacity(list.len());
    let mut i = 0;
    while i < list.len() {
        let (rows, stride) = layer_at(list, i, uses);
        if rows.is_empty() {
            if !removed[i] {
                out.push(list[i]);
            }
            i += 1;
            continue;
        }
        let end = i + 3 * rows.len();
        match layer(list, i, (&rows, stride), uses, &mut removed, next_free) {
            Some(replacement) => out.extend(replacement),
            None => out.extend_from_slice(&list[i..end]),
        }
        i = end;
    }
    out
}

/// The `DenseParams` (and `Unstash`es) for `rows` (with their stride) starting at
/// `list[start]`, marking the activations and stashes it absorbs as removed; `None` when
/// the outputs need more stash than [`MAX_SLOTS`].
fn layer(
    list: &[Instr],
    start: usize,
    (rows, stride): (&[Row], u32),
    uses: &HashMap<Reg, usize>,
    removed: &mut [bool],
    next_free: &mut u32,
) -> Option<Vec<Instr>> {
    let first = rows[0];
    let end = start + 3 * rows.len();
    // The first reader of a value after the layer, and its index, if nothing else reads it.
    let reader = |value: Reg| {
        let at = (end..list.len()).find(|&k| list[k].operands().contains(&value))?;
        (uses.get(&value) == Some(&1)).then_some((list[at], at))
    };
    // An activation every row's sum feeds, and nothing else.
    let activation = rows
        .iter()
        .map(|row| match reader(row.dst)? {
            (Instr::UnaryF { op, dst, a }, at) if a == row.dst => Some((op, dst, at)),
            _ => None,
        })
        .collect::<Option<Vec<(FloatUnary, Reg, usize)>>>()
        .filter(|found| found.iter().all(|f| f.0 == found[0].0));
    let values: Vec<Reg> = match &activation {
        Some(found) => found.iter().map(|f| f.1).collect(),
        None => rows.iter().map(|r| r.dst).collect(),
    };
    // Stashes into consecutive slots that are each value's only reader.
    let stashes = values
        .iter()
        .map(|&value| match reader(value)? {
            (Instr::Stash { slot, src }, at) if src == value => Some((slot, at)),
            _ => None,
        })
        .collect::<Option<Vec<(u32, usize)>>>()
        .filter(|found| {
            let base = found[0].0;
            let outputs = (base, rows.len() as u32);
            let last = found.iter().map(|f| f.1).max().unwrap_or(end);
            let ours: Vec<usize> = found.iter().map(|f| f.1).collect();
            (base..).zip(found).all(|(slot, f)| f.0 == slot)
                && !overlaps(outputs, (first.slot, first.len))
                && (end..=last).filter(|k| !ours.contains(k)).all(|k| {
                    let (read, write) = stash_slots(&list[k]);
                    !read.is_some_and(|r| overlaps(r, outputs))
                        && !write.is_some_and(|w| overlaps(w, outputs))
                })
        });
    let out_slot = match &stashes {
        Some(found) => found[0].0,
        None => {
            let slot = *next_free;
            if slot + rows.len() as u32 > MAX_SLOTS {
                return None;
            }
            *next_free += rows.len() as u32;
            slot
        }
    };
    for f in activation.iter().flatten() {
        removed[f.2] = true;
    }
    let mut out = vec![Instr::DenseParams {
        out_slot,
        in_slot: first.slot,
        rows: rows.len() as u32,
        len: first.len,
        first_param: first.first_param,
        bias_param: first.bias_param,
        stride,
        activation: activation.as_ref().map(|found| found[0].0),
    }];
    match &stashes {
        Some(found) => {
            for f in found {
                removed[f.1] = true;
            }
        }
        None => out.extend(values.iter().enumerate().map(|(j, &dst)| Instr::Unstash {
            dst,
            slot: out_slot + j as u32,
        })),
    }
    Some(out)
}

#[cfg(test)]
mod tests;
