//! One instruction of a [`KernelProgram`](crate::lir::program::KernelProgram) in CubeCL: the
//! body of the interpreter [`super::kernel`] unrolls at JIT time, over a thread's
//! [`Buffers`] and [`Regs`]. Loads and stores address lane `lane` (plus `step * n` for
//! per-step buffers); the math lives in [`super::ops`].
#![allow(missing_docs)] // `#[cube]` expands into undocumented items.

use cubecl::prelude::*;

use super::math;
use super::ops::{
    binary, binary_f, compare, float_binary, float_unary, logic_binary, logic_unary, to_bool,
};
use crate::cube::rng::{symmetric_uniform_cube, threefry2x32_cube};
use crate::lir::loop_budget::{DOT_CHUNK, dot_iterations};
use crate::lir::program::{Instr, Reg};

/// The buffers every instruction reads and writes, one kernel argument.
#[derive(CubeLaunch, CubeType)]
pub struct Buffers<N: Size> {
    /// Input buffers (`f32`, and `u32` for integers and booleans).
    pub(super) in_f: Sequence<Array<Vector<f32, N>>>,
    pub(super) in_u: Sequence<Array<Vector<u32, N>>>,
    /// Output buffers.
    pub(super) out_f: Sequence<Array<Vector<f32, N>>>,
    pub(super) out_u: Sequence<Array<Vector<u32, N>>>,
    /// Runtime scalars, one set per bank (bank-major).
    pub(super) params_f: Array<f32>,
    pub(super) params_u: Array<u32>,
    /// Whether the lanes are cut into banks ([`crate::exec::BoundPlan`]); off, the three
    /// fields below are never read, and the kernel is the one it always was.
    #[cube(comptime)]
    pub(super) banked: bool,
    /// Threads per bank (lanes / `N`).
    pub(super) bank_threads: usize,
    /// Params per bank in each params buffer.
    pub(super) bank_params_f: usize,
    pub(super) bank_params_u: usize,
}

/// A thread's registers: the `f32` and `u32` files, and the stash of dense-layer inputs
/// (see [`crate::lir::compact`]).
#[derive(CubeType)]
pub struct Regs<N: Size> {
    pub(super) f: Registry<Reg, Vector<f32, N>>,
    pub(super) u: Registry<Reg, Vector<u32, N>>,
    pub(super) stash: Array<Vector<f32, N>>,
}

/// Element offset of a per-step buffer at `step`.
#[cube]
fn step_offset(n: usize, #[comptime] per_step: bool, step: u32) -> usize {
    let mut offset = 0usize;
    if comptime!(per_step) {
        offset = n * step as usize;
    }
    offset
}

/// The bank of the thread at `lane` (0 unless the lanes are banked).
#[cube]
fn bank_of<N: Size>(bufs: &Buffers<N>, lane: usize) -> usize {
    let mut bank = 0usize;
    if comptime!(bufs.banked) {
        bank = lane / bufs.bank_threads;
    }
    bank
}

/// `sum` plus `params_f[first + k] * stash[base + k]` for `k` in `start..len`, added one at
/// a time in order: a run-time loop over chunks of [`DOT_CHUNK`] unrolled terms, then the
/// remainder unrolled (one copy of the body whatever the width; few iterations, which
/// lavapipe counts against [`crate::lir::loop_budget::LAVAPIPE_LOOP_ITERATIONS`]).
#[cube]
fn add_terms<N: Size>(
    params_f: &Array<f32>,
    stash: &Array<Vector<f32, N>>,
    sum: Vector<f32, N>,
    first: usize,
    base: usize,
    #[comptime] start: u32,
    #[comptime] len: u32,
) -> Vector<f32, N> {
    let mut sum = sum;
    let chunks = comptime!(dot_iterations(start, len) as u32);
    for chunk in 0..chunks as usize {
        let k = start as usize + chunk * DOT_CHUNK as usize;
        #[unroll]
        for t in 0..DOT_CHUNK as usize {
            sum += Vector::<f32, N>::new(params_f[first + k + t]) * stash[base + k + t];
        }
    }
    let tail = comptime!(start + chunks * DOT_CHUNK);
    #[unroll]
    for k in tail as usize..len as usize {
        sum += Vector::<f32, N>::new(params_f[first + k]) * stash[base + k];
    }
    sum
}

/// Runs `instr` for `lane` at `step`.
#[cube]
pub(super) fn exec<N: Size>(
    bufs: &mut Buffers<N>,
    regs: &mut Regs<N>,
    lane: usize,
    n: usize,
    step: u32,
    #[comptime] instr: Instr,
) {
    match instr {
        Instr::LoadF {
            dst,
            buffer,
            per_step,
        } => {
            let value = bufs.in_f.index(buffer as usize)[lane + step_offset(n, per_step, step)];
            regs.f.insert(dst, value);
        }
        Instr::LoadU {
            dst,
            buffer,
            per_step,
        } => {
            let value = bufs.in_u.index(buffer as usize)[lane + step_offset(n, per_step, step)];
            regs.u.insert(dst, value);
        }
        Instr::LoadStateF { dst, buffer } => {
            regs.f.insert(dst, bufs.out_f.index(buffer as usize)[lane]);
        }
        Instr::LoadStateU { dst, buffer } => {
            regs.u.insert(dst, bufs.out_u.index(buffer as usize)[lane]);
        }
        Instr::LoadPackedF {
            dst,
            buffer,
            k,
            column,
            per_step,
        } => {
            let index = (lane + step_offset(n, per_step, step)) * k as usize + column as usize;
            regs.f.insert(dst, bufs.in_f.index(buffer as usize)[index]);
        }
        Instr::ParamF { dst, index } => {
            let at = index as usize + bank_of::<N>(bufs, lane) * bufs.bank_params_f;
            regs.f.insert(dst, Vector::new(bufs.params_f[at]));
        }
        Instr::ParamU { dst, index } => {
            let at = index as usize + bank_of::<N>(bufs, lane) * bufs.bank_params_u;
            regs.u.insert(dst, Vector::new(bufs.params_u[at]));
        }
        Instr::ConstF { dst, bits } => {
            // Through `from_bits`: infinities and NaN have no decimal constant in cubecl.
            regs.f.insert(
                dst,
                math::from_bits::<N>(Vector::new(u32::new(comptime!(bits as i64)))),
            );
        }
        Instr::ConstU { dst, value } => {
            regs.u
                .insert(dst, Vector::new(u32::new(comptime!(value as i64))));
        }
        Instr::Lane { dst } => {
            // Lane indices count from the bank's first lane (`N` is 1 where lanes are read).
            let first = bank_of::<N>(bufs, lane) * bufs.bank_threads;
            regs.u
                .insert(dst, Vector::new(u32::cast_from(lane - first)));
        }
        Instr::UnaryF { op, dst, a } => {
            regs.f.insert(dst, float_unary::<N>(regs.f.find(a), op));
        }
        Instr::LogicUnary { op, dst, a } => {
            regs.u.insert(dst, logic_unary::<N>(regs.u.find(a), op));
        }
        Instr::LogicBinary { op, dst, a, b } => {
            regs.u
                .insert(dst, logic_binary::<N>(regs.u.find(a), regs.u.find(b), op));
        }
        Instr::BinaryF { op, dst, a, b } => {
            regs.f
                .insert(dst, binary_f::<N>(regs.f.find(a), regs.f.find(b), op));
        }
        Instr::MulAdd { dst, acc, a, b } => {
            let product = regs.f.find(a) * regs.f.find(b);
            match acc {
                Some(acc) => {
                    let sum = regs.f.find(acc) + product;
                    regs.f.insert(dst, sum);
                }
                None => regs.f.insert(dst, product),
            }
        }
        Instr::Stash { slot, src } => {
            regs.stash[slot as usize] = regs.f.find(src);
        }
        Instr::DotParams {
            dst,
            acc,
            first_param,
            slot,
            len,
        } => {
            let first = first_param as usize + bank_of::<N>(bufs, lane) * bufs.bank_params_f;
            let base = slot as usize;
            let sum = match acc {
                Some(acc) => regs.f.find(acc),
                None => Vector::<f32, N>::new(bufs.params_f[first]) * regs.stash[base],
            };
            let start = comptime!(if acc.is_some() { 0u32 } else { 1u32 });
            let sum = add_terms::<N>(&bufs.params_f, &regs.stash, sum, first, base, start, len);
            regs.f.insert(dst, sum);
        }
        Instr::DenseParams {
            out_slot,
            in_slot,
            rows,
            len,
            first_param,
            bias_param,
            stride,
            activation,
        } => {
            let inputs = in_slot as usize;
            let bank = bank_of::<N>(bufs, lane) * bufs.bank_params_f;
            // A run-time loop over rows: one copy of the body per layer.
            for j in 0..rows as usize {
                let row = bank + first_param as usize + j * stride as usize;
                let first_term = Vector::<f32, N>::new(bufs.params_f[row]) * regs.stash[inputs];
                let sum = add_terms::<N>(
                    &bufs.params_f,
                    &regs.stash,
                    first_term,
                    row,
                    inputs,
                    1u32,
                    len,
                );
                let bias = Vector::<f32, N>::new(
                    bufs.params_f[bank + bias_param as usize + j * stride as usize],
                );
                // `ops::binary`'s add, as the row's `BinaryF` ran it.
                let mut out = sum + bias;
                if let Some(op) = activation {
                    out = float_unary::<N>(out, op);
                }
                regs.stash[out_slot as usize + j] = out;
            }
        }
        Instr::Unstash { dst, slot } => {
            regs.f.insert(dst, regs.stash[slot as usize]);
        }
        Instr::FloatBinary { op, dst, a, b } => {
            regs.f
                .insert(dst, float_binary::<N>(regs.f.find(a), regs.f.find(b), op));
        }
        Instr::BinaryU { op, dst, a, b } => {
            regs.u
                .insert(dst, binary::<u32, N>(regs.u.find(a), regs.u.find(b), op));
        }
        Instr::CompareF { op, dst, a, b } => {
            regs.u
                .insert(dst, compare::<f32, N>(regs.f.find(a), regs.f.find(b), op));
        }
        Instr::CompareU { op, dst, a, b } => {
            regs.u
                .insert(dst, compare::<u32, N>(regs.u.find(a), regs.u.find(b), op));
        }
        Instr::SelectF { dst, cond, a, b } => {
            let c = to_bool::<N>(regs.u.find(cond));
            regs.f
                .insert(dst, select_many(c, regs.f.find(a), regs.f.find(b)));
        }
        Instr::SelectU { dst, cond, a, b } => {
            let c = to_bool::<N>(regs.u.find(cond));
            regs.u
                .insert(dst, select_many(c, regs.u.find(a), regs.u.find(b)));
        }
        Instr::U32ToF32 { dst, a } => {
            regs.f
                .insert(dst, Vector::<f32, N>::cast_from(regs.u.find(a)));
        }
        Instr::F32ToU32 { dst, a } => {
            regs.u.insert(dst, math::f32_to_u32::<N>(regs.f.find(a)));
        }
        Instr::F32ToBool { dst, a } => {
            let x = regs.f.find(a);
            let b = x.not_equal(Vector::new(f32::new(0.0)));
            regs.u.insert(dst, Vector::<u32, N>::cast_from(b));
        }
        Instr::U32ToBool { dst, a } => {
            let x = regs.u.find(a);
            regs.u
                .insert(dst, Vector::<u32, N>::cast_from(to_bool::<N>(x)));
        }
        Instr::Random { dst, key, counter } => {
            let mut w0 = 0u32;
            let mut w1 = 0u32;
            // Scalar words: random ops only run with `N = 1` (see `vectorizable`).
            threefry2x32_cube(
                u32::cast_from(regs.u.find(key[0])),
                u32::cast_from(regs.u.find(key[1])),
                u32::cast_from(regs.u.find(counter[0])),
                u32::cast_from(regs.u.find(counter[1])),
                &mut w0,
                &mut w1,
            );
            let scale = f32::new(comptime!(1.0f32 / 8_388_608.0));
            if comptime!(dst[0].is_some()) {
                let value = symmetric_uniform_cube(w0, scale);
                regs.f
                    .insert(comptime!(dst[0].unwrap()), Vector::new(value));
            }
            if comptime!(dst[1].is_some()) {
                let value = symmetric_uniform_cube(w1, scale);
                regs.f
                    .insert(comptime!(dst[1].unwrap()), Vector::new(value));
            }
        }
        Instr::Guard { .. } => {
            comptime!(unreachable!("guards run through run_body"));
        }
        Instr::StoreF {
            buffer,
            src,
            per_step,
        } => {
            bufs.out_f.index_mut(buffer as usize)[lane + step_offset(n, per_step, step)] =
                regs.f.find(src);
        }
        Instr::StoreU {
            buffer,
            src,
            per_step,
        } => {
            bufs.out_u.index_mut(buffer as usize)[lane + step_offset(n, per_step, step)] =
                regs.u.find(src);
        }
        Instr::StorePackedF {
            buffer,
            src,
            k,
            column,
            per_step,
        } => {
            bufs.out_f.index_mut(buffer as usize)
                [(lane + step_offset(n, per_step, step)) * k as usize + column as usize] =
                regs.f.find(src);
        }
    }
}
