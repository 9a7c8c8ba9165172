//! The one generated kernel: an interpreter of a comptime [`LaunchProgram`], unrolled at
//! JIT time into straight-line CubeCL IR (no per-element interpretation at run time).
#![allow(missing_docs)] // `#[cube]` expands into undocumented items.

use cubecl::prelude::*;

use super::program::{Instr, KernelProgram, LaunchProgram, Reg, StepFilter};
use crate::graph::{BinaryOp, CompareOp, ReduceOp, UnaryOp};
use crate::rng::{symmetric_uniform_cube, threefry2x32_cube};

/// Entry kernel of every plan.
///
/// # Arguments
///
/// * `in_f`, `in_u` - input buffers (`f32`, and `u32` for integers and booleans).
/// * `out_f`, `out_u` - output buffers.
/// * `params_f`, `params_u` - runtime scalars.
/// * `n` - lanes of the domain (elements, or rows for rows-domain parts).
/// * `cubes_per_part` - cubes given to each part of a horizontal launch.
/// * `launch` - the comptime program.
#[cube(launch_unchecked)]
pub fn fused_array(
    in_f: &Sequence<Array<f32>>,
    in_u: &Sequence<Array<u32>>,
    out_f: &mut Sequence<Array<f32>>,
    out_u: &mut Sequence<Array<u32>>,
    params_f: &Array<f32>,
    params_u: &Array<u32>,
    n: usize,
    cubes_per_part: usize,
    #[comptime] launch: LaunchProgram,
) {
    let part = CUBE_POS / cubes_per_part;
    #[unroll]
    for p in 0..launch.parts.len() {
        let program = comptime!(launch.parts[p].clone());
        if part == p {
            let local = ABSOLUTE_POS - p * cubes_per_part * CUBE_DIM as usize;
            if local < n {
                run_program(
                    in_f, in_u, out_f, out_u, params_f, params_u, local, n, program,
                );
            }
        }
    }
}

#[cube]
fn run_program(
    in_f: &Sequence<Array<f32>>,
    in_u: &Sequence<Array<u32>>,
    out_f: &mut Sequence<Array<f32>>,
    out_u: &mut Sequence<Array<u32>>,
    params_f: &Array<f32>,
    params_u: &Array<u32>,
    pos: usize,
    n: usize,
    #[comptime] program: KernelProgram,
) {
    let mut regs_f = Registry::<Reg, f32>::new();
    let mut regs_u = Registry::<Reg, u32>::new();
    match comptime!(program.rows_of) {
        Some(cols) => {
            // One thread per row: every phase loops over the row's columns.
            let row_start = pos * cols as usize;
            let lanes = n * cols as usize;
            #[unroll]
            for phase_index in 0..program.phases.len() {
                let phase = comptime!(program.phases[phase_index].clone());
                let mut acc = f32::new(0.0);
                if comptime!(phase.op == ReduceOp::Max) {
                    acc = f32::new(comptime!(-f32::MAX));
                }
                for c in 0..cols as usize {
                    let lane = row_start + c;
                    #[unroll]
                    for i in 0..phase.body.len() {
                        let instr = comptime!(phase.body[i]);
                        exec(
                            in_f,
                            in_u,
                            out_f,
                            out_u,
                            params_f,
                            params_u,
                            &mut regs_f,
                            &mut regs_u,
                            lane,
                            lanes,
                            0u32,
                            1u32,
                            instr,
                        );
                    }
                    let value = regs_f.find(comptime!(phase.value));
                    if comptime!(phase.op == ReduceOp::Max) {
                        acc = f32::max(acc, value);
                    } else {
                        acc += value;
                    }
                }
                if comptime!(phase.op == ReduceOp::Mean) {
                    acc /= f32::new(comptime!(cols as f32));
                }
                regs_f.insert(comptime!(phase.result), acc);
            }
            for c in 0..cols as usize {
                let lane = row_start + c;
                #[unroll]
                for i in 0..program.body.len() {
                    let instr = comptime!(program.body[i]);
                    exec(
                        in_f,
                        in_u,
                        out_f,
                        out_u,
                        params_f,
                        params_u,
                        &mut regs_f,
                        &mut regs_u,
                        lane,
                        lanes,
                        0u32,
                        1u32,
                        instr,
                    );
                }
            }
        }
        None =>
        {
            #[unroll]
            for step in 0..program.steps {
                #[unroll]
                for i in 0..program.body.len() {
                    let instr = comptime!(program.body[i]);
                    exec(
                        in_f,
                        in_u,
                        out_f,
                        out_u,
                        params_f,
                        params_u,
                        &mut regs_f,
                        &mut regs_u,
                        pos,
                        n,
                        step,
                        program.steps,
                        instr,
                    );
                }
                #[unroll]
                for c in 0..program.carries_f.len() {
                    let (to, from) = comptime!(program.carries_f[c]);
                    let value = regs_f.find(from);
                    regs_f.insert(to, value);
                }
                #[unroll]
                for c in 0..program.carries_u.len() {
                    let (to, from) = comptime!(program.carries_u[c]);
                    let value = regs_u.find(from);
                    regs_u.insert(to, value);
                }
            }
        }
    }
}

/// Whether an access filtered by `at` happens at `step` of `steps`.
fn active(at: StepFilter, step: u32, steps: u32) -> bool {
    match at {
        StepFilter::Every => true,
        StepFilter::First => step == 0,
        StepFilter::Last => step + 1 == steps,
    }
}

/// Element offset of a per-step buffer at `step`.
#[cube]
fn step_offset(n: usize, #[comptime] per_step: bool, #[comptime] step: u32) -> usize {
    let mut offset = 0usize;
    if comptime!(per_step) {
        offset = n * comptime!(step as usize);
    }
    offset
}

#[cube]
#[allow(clippy::too_many_arguments)]
fn exec(
    in_f: &Sequence<Array<f32>>,
    in_u: &Sequence<Array<u32>>,
    out_f: &mut Sequence<Array<f32>>,
    out_u: &mut Sequence<Array<u32>>,
    params_f: &Array<f32>,
    params_u: &Array<u32>,
    regs_f: &mut Registry<Reg, f32>,
    regs_u: &mut Registry<Reg, u32>,
    lane: usize,
    n: usize,
    #[comptime] step: u32,
    #[comptime] steps: u32,
    #[comptime] instr: Instr,
) {
    match instr {
        Instr::LoadF {
            dst,
            buffer,
            per_step,
            at,
        } => {
            if comptime!(active(at, step, steps)) {
                let value = in_f.index(buffer as usize)[lane + step_offset(n, per_step, step)];
                regs_f.insert(dst, value);
            }
        }
        Instr::LoadU {
            dst,
            buffer,
            per_step,
            at,
        } => {
            if comptime!(active(at, step, steps)) {
                let value = in_u.index(buffer as usize)[lane + step_offset(n, per_step, step)];
                regs_u.insert(dst, value);
            }
        }
        Instr::LoadPackedF {
            dst,
            buffer,
            k,
            column,
            per_step,
            at,
        } => {
            if comptime!(active(at, step, steps)) {
                let index = (lane + step_offset(n, per_step, step)) * k as usize + column as usize;
                let value = in_f.index(buffer as usize)[index];
                regs_f.insert(dst, value);
            }
        }
        Instr::ParamF { dst, index } => {
            regs_f.insert(dst, params_f[index as usize]);
        }
        Instr::ParamU { dst, index } => {
            regs_u.insert(dst, params_u[index as usize]);
        }
        Instr::ConstF { dst, bits } => {
            regs_f.insert(dst, f32::new(comptime!(f32::from_bits(bits))));
        }
        Instr::ConstU { dst, value } => {
            regs_u.insert(dst, u32::new(comptime!(value as i64)));
        }
        Instr::Lane { dst } => {
            regs_u.insert(dst, u32::cast_from(lane));
        }
        Instr::UnaryF { op, dst, a } => {
            let x = regs_f.find(a);
            regs_f.insert(dst, unary_f(x, op));
        }
        Instr::Not { dst, a } => {
            let x = regs_u.find(a);
            regs_u.insert(dst, u32::cast_from(x == 0u32));
        }
        Instr::BinaryF { op, dst, a, b } => {
            let x = regs_f.find(a);
            let y = regs_f.find(b);
            regs_f.insert(dst, binary_f(x, y, op));
        }
        Instr::BinaryU { op, dst, a, b } => {
            let x = regs_u.find(a);
            let y = regs_u.find(b);
            regs_u.insert(dst, binary_u(x, y, op));
        }
        Instr::CompareF { op, dst, a, b } => {
            let x = regs_f.find(a);
            let y = regs_f.find(b);
            regs_u.insert(dst, u32::cast_from(compare::<f32>(x, y, op)));
        }
        Instr::CompareU { op, dst, a, b } => {
            let x = regs_u.find(a);
            let y = regs_u.find(b);
            regs_u.insert(dst, u32::cast_from(compare::<u32>(x, y, op)));
        }
        Instr::SelectF { dst, cond, a, b } => {
            let c = regs_u.find(cond);
            let x = regs_f.find(a);
            let y = regs_f.find(b);
            regs_f.insert(dst, select(c != 0u32, x, y));
        }
        Instr::SelectU { dst, cond, a, b } => {
            let c = regs_u.find(cond);
            let x = regs_u.find(a);
            let y = regs_u.find(b);
            regs_u.insert(dst, select(c != 0u32, x, y));
        }
        Instr::U32ToF32 { dst, a } => {
            let x = regs_u.find(a);
            regs_f.insert(dst, f32::cast_from(x));
        }
        Instr::F32ToU32 { dst, a } => {
            let x = regs_f.find(a);
            regs_u.insert(dst, u32::cast_from(x));
        }
        Instr::F32ToBool { dst, a } => {
            let x = regs_f.find(a);
            regs_u.insert(dst, u32::cast_from(x != f32::new(0.0)));
        }
        Instr::U32ToBool { dst, a } => {
            let x = regs_u.find(a);
            regs_u.insert(dst, u32::cast_from(x != 0u32));
        }
        Instr::Random {
            dst,
            key,
            counter,
            word,
        } => {
            let mut w0 = 0u32;
            let mut w1 = 0u32;
            threefry2x32_cube(
                regs_u.find(key[0]),
                regs_u.find(key[1]),
                regs_u.find(counter[0]),
                regs_u.find(counter[1]),
                &mut w0,
                &mut w1,
            );
            let mut bits = w0;
            if comptime!(word == 1) {
                bits = w1;
            }
            regs_f.insert(
                dst,
                symmetric_uniform_cube(bits, f32::new(comptime!(1.0f32 / 8_388_608.0))),
            );
        }
        Instr::StoreF {
            buffer,
            src,
            per_step,
            at,
        } => {
            if comptime!(active(at, step, steps)) {
                let value = regs_f.find(src);
                let out = out_f.index_mut(buffer as usize);
                out[lane + step_offset(n, per_step, step)] = value;
            }
        }
        Instr::StoreU {
            buffer,
            src,
            per_step,
            at,
        } => {
            if comptime!(active(at, step, steps)) {
                let value = regs_u.find(src);
                let out = out_u.index_mut(buffer as usize);
                out[lane + step_offset(n, per_step, step)] = value;
            }
        }
        Instr::StorePackedF {
            buffer,
            src,
            k,
            column,
            per_step,
            at,
        } => {
            if comptime!(active(at, step, steps)) {
                let value = regs_f.find(src);
                let out = out_f.index_mut(buffer as usize);
                out[(lane + step_offset(n, per_step, step)) * k as usize + column as usize] = value;
            }
        }
    }
}

#[cube]
fn unary_f(x: f32, #[comptime] op: UnaryOp) -> f32 {
    match op {
        UnaryOp::Neg => -x,
        UnaryOp::Abs => f32::abs(x),
        UnaryOp::Sqrt => f32::sqrt(x),
        UnaryOp::Exp => f32::exp(x),
        UnaryOp::Log => f32::ln(x),
        UnaryOp::Sin => f32::sin(x),
        UnaryOp::Cos => f32::cos(x),
        UnaryOp::Tanh => f32::tanh(x),
        UnaryOp::Erf => Erf::erf(x),
        UnaryOp::Square => x * x,
        UnaryOp::Recip => f32::new(1.0) / x,
        UnaryOp::Not => x,
    }
}

#[cube]
fn binary_f(x: f32, y: f32, #[comptime] op: BinaryOp) -> f32 {
    match op {
        BinaryOp::Add => x + y,
        BinaryOp::Sub => x - y,
        BinaryOp::Mul => x * y,
        BinaryOp::Div => x / y,
        BinaryOp::Min => f32::min(x, y),
        BinaryOp::Max => f32::max(x, y),
        BinaryOp::Pow => f32::powf(x, y),
        BinaryOp::And => x,
        BinaryOp::Or => x,
    }
}

#[cube]
fn binary_u(x: u32, y: u32, #[comptime] op: BinaryOp) -> u32 {
    match op {
        BinaryOp::Add => x + y,
        BinaryOp::Sub => x - y,
        BinaryOp::Mul => x * y,
        BinaryOp::Div => x / y,
        BinaryOp::Min => u32::min(x, y),
        BinaryOp::Max => u32::max(x, y),
        BinaryOp::And => u32::cast_from(x != 0u32 && y != 0u32),
        BinaryOp::Or => u32::cast_from(x != 0u32 || y != 0u32),
        BinaryOp::Pow => x,
    }
}

/// `x op y` for `f32` and `u32` registers alike.
#[cube]
fn compare<T: Numeric>(x: T, y: T, #[comptime] op: CompareOp) -> bool {
    match op {
        CompareOp::Lt => x < y,
        CompareOp::Le => x <= y,
        CompareOp::Gt => x > y,
        CompareOp::Ge => x >= y,
        CompareOp::Eq => x == y,
        CompareOp::Ne => x != y,
    }
}

/// Copies `input` into `output` word by word (the `xla-default` loop-carried state copy).
#[cube(launch_unchecked)]
pub fn copy_array(input: &Array<u32>, output: &mut Array<u32>) {
    if ABSOLUTE_POS < input.len() {
        output[ABSOLUTE_POS] = input[ABSOLUTE_POS];
    }
}
