//! The chunk program's vocabulary: [`Op`]s over value locations ([`L`] into a [`Loc`]
//! table), and [`ChunkProgram`], a compiled launch. [`super::program`] translates lowered
//! launches into it, `alloc` places its values, `kernel` runs it.

use crate::graph::{
    BinaryOp, CompareOp, FloatBinary, FloatUnary, LogicBinary, LogicUnary, ReduceOp,
};

/// Index into a program's location table.
pub type L = u32;

/// Where a value lives while a chunk runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Loc {
    /// Scratch slot `n` of the running thread (after the pinned slots).
    Scratch(u32),
    /// Pinned slot `n`: a constant or param broadcast over the chunk.
    Pinned(u32),
    /// Executor buffer `buffer` at lane `step * n + chunk start`.
    Input {
        /// Executor buffer index.
        buffer: u32,
        /// Step offset (in units of `n`).
        step: u32,
    },
}

/// One chunk operation. Operands and destinations are [`L`] locations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// `f32` unary op.
    UnaryF(FloatUnary, L, L),
    /// Boolean unary op.
    LogicUnary(LogicUnary, L, L),
    /// Boolean binary op.
    LogicBinary(LogicBinary, L, L, L),
    /// `f32`-only binary op.
    FloatBinary(FloatBinary, L, L, L),
    /// `f32` binary op.
    BinaryF(BinaryOp, L, L, L),
    /// `u32`/bool binary op.
    BinaryU(BinaryOp, L, L, L),
    /// `f32` comparison.
    CompareF(CompareOp, L, L, L),
    /// `u32` comparison.
    CompareU(CompareOp, L, L, L),
    /// `dst = cond ? a : b` (bitwise, any type).
    Select(L, L, L, L),
    /// `u32 -> f32`.
    U32ToF32(L, L),
    /// `f32 -> u32`.
    F32ToU32(L, L),
    /// `f32 -> bool`.
    F32ToBool(L, L),
    /// `u32 -> bool`.
    U32ToBool(L, L),
    /// Threefry uniform: `dst, key0, key1, counter0, counter1, word`.
    Random(L, [L; 4], u8),
    /// `dst = chunk start + lane`.
    Lane(L),
    /// Gathers column `column` of a packed `[n, k]` buffer.
    LoadPacked {
        /// Destination.
        dst: L,
        /// Executor buffer.
        buffer: u32,
        /// Row width.
        k: u32,
        /// Column.
        column: u32,
        /// Step offset.
        step: u32,
    },
    /// Writes exactly the chunk's lanes of `src` to a buffer (a packed column when `k > 0`).
    Store {
        /// Source.
        src: L,
        /// Executor buffer.
        buffer: u32,
        /// Step offset.
        step: u32,
        /// Row width (0 for a plain lane buffer).
        k: u32,
        /// Column in the row.
        column: u32,
    },
    /// Reduces each row of `cols` lanes of `src` and broadcasts it into `dst`.
    RowReduce(ReduceOp, L, L, u32),
    /// `dst = acc + w0 x0 + w1 x1 + ..` (`w0 x0 + ..` without `acc`), left to right with
    /// each product and sum rounded: the next `len` ops are its [`Op::Term`]s. One pass over
    /// the chunk keeps the running sum in registers (a chain of binary ops would store and
    /// reload it at every term).
    Affine {
        /// Destination.
        dst: L,
        /// The running sum it continues, if any.
        acc: Option<L>,
        /// Terms that follow.
        len: u32,
        /// Whether every weight is pinned (one value for the whole chunk).
        pinned_weights: bool,
    },
    /// One `weight * input` term of the [`Op::Affine`] before it; never run on its own.
    Term(L, L),
    /// Runs the next `len` ops only on vectors where some lane has `cond == when`.
    Guard {
        /// Bool condition.
        cond: L,
        /// Which value of the condition the guarded branch serves.
        when: bool,
        /// Ops guarded.
        len: u32,
    },
}

/// A compiled launch.
#[derive(Debug, Clone)]
pub struct ChunkProgram {
    /// Ops in order.
    pub ops: Vec<Op>,
    /// Location table.
    pub locs: Vec<Loc>,
    /// Scratch slots needed (besides the pinned ones).
    pub scratch_slots: u32,
    /// `Some(cols)`: chunks hold whole rows of `cols` lanes.
    pub rows_of: Option<u32>,
    /// Ledger name.
    pub name: String,
}

/// The destination and operands of an op (as `L`s), for passes over the list.
pub(crate) fn dst_and_operands(op: &Op) -> (Option<L>, Vec<L>) {
    let mut all = Vec::new();
    remap(op, &mut |l| {
        all.push(l);
        l
    });
    match op {
        Op::Term(..) | Op::Store { .. } | Op::Guard { .. } => (None, all),
        _ => (Some(all.remove(0)), all),
    }
}

/// Rewrites every `L` of `op` through `map` (destination first, then operands in order).
pub(super) fn remap(op: &Op, map: &mut dyn FnMut(L) -> L) -> Op {
    let mut op = *op;
    let ls: Vec<&mut L> = match &mut op {
        Op::UnaryF(_, d, a)
        | Op::LogicUnary(_, d, a)
        | Op::U32ToF32(d, a)
        | Op::F32ToU32(d, a)
        | Op::F32ToBool(d, a)
        | Op::U32ToBool(d, a)
        | Op::RowReduce(_, a, d, _)
        | Op::Term(d, a) => vec![d, a],
        Op::BinaryF(_, d, a, b)
        | Op::BinaryU(_, d, a, b)
        | Op::LogicBinary(_, d, a, b)
        | Op::FloatBinary(_, d, a, b)
        | Op::CompareF(_, d, a, b)
        | Op::CompareU(_, d, a, b) => vec![d, a, b],
        Op::Select(d, c, a, b) => vec![d, c, a, b],
        Op::Random(d, args, _) => std::iter::once(d).chain(args).collect(),
        Op::Affine { dst, acc, .. } => std::iter::once(dst).chain(acc).collect(),
        Op::Lane(l) | Op::LoadPacked { dst: l, .. } | Op::Store { src: l, .. } => vec![l],
        Op::Guard { cond, .. } => vec![cond],
    };
    for l in ls {
        *l = map(*l);
    }
    op
}
