//! The vectorised twin of [`fused_array`](super::kernel::fused_array): for programs that
//! only load, compute and store `f32` lanes, each thread handles `N` consecutive lanes with
//! vector loads and stores (`N = 4`: 16-byte accesses).
#![allow(missing_docs)] // `#[cube]` expands into undocumented items.

use cubecl::prelude::*;

use super::program::{Instr, KernelProgram, LaunchProgram, Reg, StepFilter};
use crate::graph::{BinaryOp, UnaryOp};

/// Lanes per thread of vectorised launches.
pub const VECTOR_WIDTH: usize = 4;

/// Whether `program` can run vectorised: `f32` loads, params, constants, float math
/// without min/max, and stores, over lanes (no rows, packs, integers, randoms or indices).
pub fn vectorizable(program: &KernelProgram) -> bool {
    program.rows_of.is_none()
        && program.body.iter().all(|instr| match instr {
            Instr::LoadF { .. }
            | Instr::ParamF { .. }
            | Instr::ConstF { .. }
            | Instr::StoreF { .. } => true,
            Instr::UnaryF { op, .. } => *op != UnaryOp::Not,
            Instr::BinaryF { op, .. } => matches!(
                op,
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Pow
            ),
            _ => false,
        })
}

/// Entry kernel of vectorised launches; arguments as [`fused_array`](super::kernel::fused_array),
/// with `vectors` (lanes / `N`) in place of `n`.
#[cube(launch_unchecked)]
pub fn fused_vector_array<N: Size>(
    in_f: &Sequence<Array<Vector<f32, N>>>,
    out_f: &mut Sequence<Array<Vector<f32, N>>>,
    params_f: &Array<f32>,
    vectors: usize,
    cubes_per_part: usize,
    #[comptime] launch: LaunchProgram,
) {
    let part = CUBE_POS / cubes_per_part;
    #[unroll]
    for p in 0..launch.parts.len() {
        let program = comptime!(launch.parts[p].clone());
        if part == p {
            let local = ABSOLUTE_POS - p * cubes_per_part * CUBE_DIM as usize;
            if local < vectors {
                let mut regs = Registry::<Reg, Vector<f32, N>>::new();
                #[unroll]
                for step in 0..program.steps {
                    #[unroll]
                    for i in 0..program.body.len() {
                        let instr = comptime!(program.body[i]);
                        exec_vector::<N>(
                            in_f,
                            out_f,
                            params_f,
                            &mut regs,
                            local,
                            vectors,
                            step,
                            program.steps,
                            instr,
                        );
                    }
                    #[unroll]
                    for c in 0..program.carries_f.len() {
                        let (to, from) = comptime!(program.carries_f[c]);
                        let value = regs.find(from);
                        regs.insert(to, value);
                    }
                }
            }
        }
    }
}

fn active(at: StepFilter, step: u32, steps: u32) -> bool {
    match at {
        StepFilter::Every => true,
        StepFilter::First => step == 0,
        StepFilter::Last => step + 1 == steps,
    }
}

#[cube]
fn offset(n: usize, #[comptime] per_step: bool, #[comptime] step: u32) -> usize {
    let mut offset = 0usize;
    if comptime!(per_step) {
        offset = n * comptime!(step as usize);
    }
    offset
}

#[cube]
#[allow(clippy::too_many_arguments)]
fn exec_vector<N: Size>(
    in_f: &Sequence<Array<Vector<f32, N>>>,
    out_f: &mut Sequence<Array<Vector<f32, N>>>,
    params_f: &Array<f32>,
    regs: &mut Registry<Reg, Vector<f32, N>>,
    pos: usize,
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
                regs.insert(
                    dst,
                    in_f.index(buffer as usize)[pos + offset(n, per_step, step)],
                );
            }
        }
        Instr::ParamF { dst, index } => {
            regs.insert(dst, Vector::new(params_f[index as usize]));
        }
        Instr::ConstF { dst, bits } => {
            regs.insert(dst, Vector::new(f32::new(comptime!(f32::from_bits(bits)))));
        }
        Instr::UnaryF { op, dst, a } => {
            let x = regs.find(a);
            let y = match op {
                UnaryOp::Neg => -x,
                UnaryOp::Abs => Abs::abs(x),
                UnaryOp::Sqrt => Sqrt::sqrt(x),
                UnaryOp::Exp => Exp::exp(x),
                UnaryOp::Log => Log::ln(x),
                UnaryOp::Sin => Sin::sin(x),
                UnaryOp::Cos => Cos::cos(x),
                UnaryOp::Tanh => Tanh::tanh(x),
                UnaryOp::Erf => Erf::erf(x),
                UnaryOp::Square => x * x,
                UnaryOp::Recip => Vector::new(f32::new(1.0)) / x,
                UnaryOp::Not => x,
            };
            regs.insert(dst, y);
        }
        Instr::BinaryF { op, dst, a, b } => {
            let x = regs.find(a);
            let y = regs.find(b);
            let z = match op {
                BinaryOp::Add => x + y,
                BinaryOp::Sub => x - y,
                BinaryOp::Mul => x * y,
                BinaryOp::Div => x / y,
                BinaryOp::Pow => Powf::powf(x, y),
                _ => x,
            };
            regs.insert(dst, z);
        }
        Instr::StoreF {
            buffer,
            src,
            per_step,
            at,
        } => {
            if comptime!(active(at, step, steps)) {
                let value = regs.find(src);
                let out = out_f.index_mut(buffer as usize);
                out[pos + offset(n, per_step, step)] = value;
            }
        }
        _ => {}
    }
}
