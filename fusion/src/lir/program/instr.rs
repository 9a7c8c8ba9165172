//! One instruction of a kernel program ([`Instr`]): its meaning, the registers it defines
//! and reads, and the binding it addresses.

use super::Reg;
use crate::graph::{BinaryOp, CompareOp, FloatBinary, FloatUnary, LogicBinary, LogicUnary};

/// One instruction. Each variant's doc is its meaning over its fields: `f[r]` and `u[r]`
/// are register `r` of the `f32` and `u32` files (bools are `u32` 0/1); `buffer` indexes the
/// launch's bindings of the kind named (`in_f`, `out_u`, ...); a `per_step` buffer holds
/// `[steps, n]` lanes and is addressed at `lane + step * n`; `k` and `column` address a
/// packed `[n, k]` row.
#[allow(missing_docs)] // every field is named in its variant's formula
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Instr {
    /// `f[dst] = in_f[buffer][lane]` (`per_step`: plus `step * n`).
    LoadF {
        dst: Reg,
        buffer: u32,
        per_step: bool,
    },
    /// `u[dst] = in_u[buffer][lane]` (`per_step`: plus `step * n`).
    LoadU {
        dst: Reg,
        buffer: u32,
        per_step: bool,
    },
    /// `f[dst] = in_f[buffer][lane * k + column]`: a column of a packed input.
    LoadPackedF {
        dst: Reg,
        buffer: u32,
        k: u32,
        column: u32,
        per_step: bool,
    },
    /// `f[dst] = out_f[buffer][lane]`: a carried input updated in place, read from the
    /// output binding that also receives its next value (see
    /// [`state_reads`](crate::lir::state_reads)).
    LoadStateF { dst: Reg, buffer: u32 },
    /// `u[dst] = out_u[buffer][lane]` (see [`Instr::LoadStateF`]).
    LoadStateU { dst: Reg, buffer: u32 },
    /// `f[dst] = params_f[index]`.
    ParamF { dst: Reg, index: u32 },
    /// `u[dst] = params_u[index]`.
    ParamU { dst: Reg, index: u32 },
    /// `f[dst] = f32::from_bits(bits)`.
    ConstF { dst: Reg, bits: u32 },
    /// `u[dst] = value`.
    ConstU { dst: Reg, value: u32 },
    /// `u[dst] = lane`.
    Lane { dst: Reg },
    /// `f[dst] = op(f[a])`.
    UnaryF { op: FloatUnary, dst: Reg, a: Reg },
    /// `u[dst] = op(u[a])` (bool).
    LogicUnary { op: LogicUnary, dst: Reg, a: Reg },
    /// `u[dst] = op(u[a], u[b])` (bool).
    LogicBinary {
        op: LogicBinary,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `f[dst] = op(f[a], f[b])` (float-only ops).
    FloatBinary {
        op: FloatBinary,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `f[dst] = op(f[a], f[b])`.
    BinaryF {
        op: BinaryOp,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `u[dst] = op(u[a], u[b])` (integer).
    BinaryU {
        op: BinaryOp,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `f[dst] = f[acc] + f[a] * f[b]`, or `f[a] * f[b]` without `acc`: one term of an
    /// [`Op::Affine`](crate::graph::Op::Affine), rounded twice (never a fused multiply-add).
    /// Lowering emits an affine's terms as one unbroken chain, each reading the last.
    MulAdd {
        dst: Reg,
        acc: Option<Reg>,
        a: Reg,
        b: Reg,
    },
    /// `stash[slot] = f[src]`: an input of [`Instr::DotParams`] in the thread's local array
    /// (see [`compact`](crate::lir::compact)).
    Stash { slot: u32, src: Reg },
    /// `f[dst] = f[acc] + sum_k params_f[first_param + k] * stash[slot + k]` over
    /// `k < len`, left to right, each product and sum rounded (without `acc` the sum starts
    /// at the first product): an affine chain as a run-time loop (see
    /// [`compact`](crate::lir::compact)).
    DotParams {
        dst: Reg,
        acc: Option<Reg>,
        first_param: u32,
        slot: u32,
        len: u32,
    },
    /// A dense layer as a run-time loop over its rows (see [`reroll`](crate::lir::reroll)):
    /// for every `j < rows`, `stash[out_slot + j] = activation(dot_j + params_f[bias_param +
    /// j stride])`, where `dot_j` is [`Instr::DotParams`]'s sum over `len` weights from
    /// `params_f[first_param + j stride]` and the inputs from `stash[in_slot]`, with the
    /// same rounding as the row's `DotParams`, `BinaryF` add and `UnaryF`.
    DenseParams {
        out_slot: u32,
        in_slot: u32,
        rows: u32,
        len: u32,
        first_param: u32,
        bias_param: u32,
        stride: u32,
        activation: Option<FloatUnary>,
    },
    /// `f[dst] = stash[slot]`: an output of [`Instr::DenseParams`] back in a register.
    Unstash { dst: Reg, slot: u32 },
    /// `u[dst] = f[a] op f[b]`.
    CompareF {
        op: CompareOp,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `u[dst] = u[a] op u[b]`.
    CompareU {
        op: CompareOp,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `f[dst] = u[cond] != 0 ? f[a] : f[b]`.
    SelectF { dst: Reg, cond: Reg, a: Reg, b: Reg },
    /// `u[dst] = u[cond] != 0 ? u[a] : u[b]`.
    SelectU { dst: Reg, cond: Reg, a: Reg, b: Reg },
    /// `f[dst] = f32(u[a])`.
    U32ToF32 { dst: Reg, a: Reg },
    /// `u[dst] = u32(f[a])` (truncating).
    F32ToU32 { dst: Reg, a: Reg },
    /// `u[dst] = f[a] != 0`.
    F32ToBool { dst: Reg, a: Reg },
    /// `u[dst] = u[a] != 0`.
    U32ToBool { dst: Reg, a: Reg },
    /// `f[dst[w]] = uniform(threefry(u[key[0]], u[key[1]]; u[counter[0]], u[counter[1]])[w])`
    /// for each word `w` with a destination: one Threefry evaluation serves both words.
    Random {
        dst: [Option<Reg>; 2],
        key: [Reg; 2],
        counter: [Reg; 2],
    },
    /// Runs [`KernelProgram::guards`](super::KernelProgram::guards)`[index]` here: its
    /// instructions execute only in lanes whose condition register is non-zero.
    Guard { index: u32 },
    /// `out_f[buffer][lane] = f[src]` (`per_step`: plus `step * n`).
    StoreF {
        buffer: u32,
        src: Reg,
        per_step: bool,
    },
    /// `out_u[buffer][lane] = u[src]` (`per_step`: plus `step * n`).
    StoreU {
        buffer: u32,
        src: Reg,
        per_step: bool,
    },
    /// `out_f[buffer][lane * k + column] = f[src]`: one column of a packed output.
    StorePackedF {
        buffer: u32,
        src: Reg,
        k: u32,
        column: u32,
        per_step: bool,
    },
}

impl Instr {
    /// The register the instruction defines, and whether it is an `f32` register.
    pub fn def(&self) -> Option<(Reg, bool)> {
        match *self {
            Instr::LoadF { dst, .. }
            | Instr::LoadPackedF { dst, .. }
            | Instr::LoadStateF { dst, .. }
            | Instr::ParamF { dst, .. }
            | Instr::ConstF { dst, .. }
            | Instr::UnaryF { dst, .. }
            | Instr::FloatBinary { dst, .. }
            | Instr::BinaryF { dst, .. }
            | Instr::SelectF { dst, .. }
            | Instr::MulAdd { dst, .. }
            | Instr::DotParams { dst, .. }
            | Instr::Unstash { dst, .. }
            | Instr::U32ToF32 { dst, .. } => Some((dst, true)),
            Instr::LoadU { dst, .. }
            | Instr::LoadStateU { dst, .. }
            | Instr::ParamU { dst, .. }
            | Instr::ConstU { dst, .. }
            | Instr::Lane { dst }
            | Instr::LogicUnary { dst, .. }
            | Instr::LogicBinary { dst, .. }
            | Instr::BinaryU { dst, .. }
            | Instr::CompareF { dst, .. }
            | Instr::CompareU { dst, .. }
            | Instr::SelectU { dst, .. }
            | Instr::F32ToU32 { dst, .. }
            | Instr::F32ToBool { dst, .. }
            | Instr::U32ToBool { dst, .. } => Some((dst, false)),
            // Random defines up to two registers: see [`Instr::defs`].
            Instr::Random { .. }
            | Instr::Guard { .. }
            | Instr::StoreF { .. }
            | Instr::StoreU { .. }
            | Instr::StorePackedF { .. }
            | Instr::Stash { .. }
            | Instr::DenseParams { .. } => None,
        }
    }

    /// Every register the instruction defines, with its file (`true`: `f32`).
    pub fn defs(&self) -> Vec<(Reg, bool)> {
        match *self {
            Instr::Random { dst, .. } => dst.iter().flatten().map(|r| (*r, true)).collect(),
            _ => self.def().into_iter().collect(),
        }
    }

    /// The registers the instruction reads (guards: none; their blocks list their own).
    pub fn operands(&self) -> Vec<Reg> {
        match *self {
            Instr::LoadF { .. }
            | Instr::LoadU { .. }
            | Instr::LoadPackedF { .. }
            | Instr::LoadStateF { .. }
            | Instr::LoadStateU { .. }
            | Instr::ParamF { .. }
            | Instr::ParamU { .. }
            | Instr::ConstF { .. }
            | Instr::ConstU { .. }
            | Instr::Lane { .. }
            | Instr::Guard { .. }
            | Instr::DenseParams { .. }
            | Instr::Unstash { .. } => vec![],
            Instr::UnaryF { a, .. }
            | Instr::LogicUnary { a, .. }
            | Instr::U32ToF32 { a, .. }
            | Instr::F32ToU32 { a, .. }
            | Instr::F32ToBool { a, .. }
            | Instr::U32ToBool { a, .. } => vec![a],
            Instr::LogicBinary { a, b, .. }
            | Instr::FloatBinary { a, b, .. }
            | Instr::BinaryF { a, b, .. }
            | Instr::BinaryU { a, b, .. }
            | Instr::CompareF { a, b, .. }
            | Instr::CompareU { a, b, .. } => vec![a, b],
            Instr::SelectF { cond, a, b, .. } | Instr::SelectU { cond, a, b, .. } => {
                vec![cond, a, b]
            }
            Instr::MulAdd { acc, a, b, .. } => acc.into_iter().chain([a, b]).collect(),
            Instr::DotParams { acc, .. } => acc.into_iter().collect(),
            Instr::Random { key, counter, .. } => vec![key[0], key[1], counter[0], counter[1]],
            Instr::Stash { src, .. }
            | Instr::StoreF { src, .. }
            | Instr::StoreU { src, .. }
            | Instr::StorePackedF { src, .. } => vec![src],
        }
    }

    /// The binding a load or store addresses, as (whether it is an output, whether it is
    /// `f32`, its index): `in_f`, `in_u`, `out_f` or `out_u`. State loads
    /// ([`Instr::LoadStateF`]) are not counted: only
    /// [`state_reads`](crate::lir::state_reads) makes them.
    pub fn binding(&self) -> Option<(bool, bool, u32)> {
        match *self {
            Instr::LoadF { buffer, .. } | Instr::LoadPackedF { buffer, .. } => {
                Some((false, true, buffer))
            }
            Instr::LoadU { buffer, .. } => Some((false, false, buffer)),
            Instr::StoreF { buffer, .. } | Instr::StorePackedF { buffer, .. } => {
                Some((true, true, buffer))
            }
            Instr::StoreU { buffer, .. } => Some((true, false, buffer)),
            _ => None,
        }
    }
}
