//! The one generated kernel: an interpreter of a comptime [`LaunchProgram`], unrolled at
//! JIT time into CubeCL IR (no per-element interpretation at run time). A step is
//! straight-line code; a multi-step (`fused-xK`) program runs one copy of it in a loop over
//! the steps, with the carried state in variables the loop assigns, so compile time does not
//! grow with K. Guard blocks ([`crate::lir::guards`]) become `if` branches.
//!
//! It is generic over the vector width `N` (cubecl's `Vector<_, N>`): `N = 1` is the scalar
//! kernel every program runs with; programs that [`vectorizable`](crate::lir::vector::vectorizable)
//! accepts also run with `N = 4` lanes per thread. The math lives in [`super::ops`].
#![allow(missing_docs)] // `#[cube]` expands into undocumented items.

use cubecl::prelude::*;

use super::instr::{Buffers, Regs, exec};
use crate::graph::ReduceOp;
use crate::lir::compact::stash_len;
use crate::lir::program::{GuardBlock, Instr, KernelProgram, LaunchProgram, Reg};

/// Entry kernel of every plan.
///
/// # Arguments
///
/// * `bufs` - the inputs, outputs and runtime scalars.
/// * `threads` - threads of the domain per part: lanes / `N`, or rows for rows-domain parts.
/// * `cubes_per_part` - cubes given to each part of a horizontal launch.
/// * `launch` - the comptime program.
/// * `row_units` - for rows-domain parts: `0`, one thread per row; else the units of a
///   cube, which then reduces one row together (`threads` is rows times it).
#[cube(launch_unchecked)]
pub fn fused_array<N: Size>(
    bufs: &mut Buffers<N>,
    threads: usize,
    cubes_per_part: usize,
    #[comptime] launch: LaunchProgram,
    #[comptime] row_units: u32,
) {
    // One part owns every cube: no division to find the part (an integer division per
    // thread is a scalarised loop on a CPU-backed device such as lavapipe).
    let mut part = 0usize;
    if comptime!(launch.parts.len() > 1) {
        part = CUBE_POS / cubes_per_part;
    }
    #[unroll]
    for p in 0..launch.parts.len() {
        let program = comptime!(launch.parts[p].clone());
        if part == p {
            let local = ABSOLUTE_POS - p * cubes_per_part * CUBE_DIM as usize;
            if local < threads {
                run_program::<N>(bufs, local, threads, program, row_units);
            }
        }
    }
}

#[cube]
fn run_program<N: Size>(
    bufs: &mut Buffers<N>,
    pos: usize,
    n: usize,
    #[comptime] program: KernelProgram,
    #[comptime] row_units: u32,
) {
    let mut regs = Regs::<N> {
        f: Registry::<Reg, Vector<f32, N>>::new(),
        u: Registry::<Reg, Vector<u32, N>>::new(),
        stash: Array::<Vector<f32, N>>::new(comptime!(stash_len(&program).max(1) as usize)),
    };
    match comptime!(program.rows_of) {
        Some(cols) => {
            if comptime!(row_units > 0) {
                // A cube per row: this unit takes every `row_units`-th column.
                let units = row_units as usize;
                let lanes = (n / units) * cols as usize;
                run_rows::<N>(
                    bufs,
                    &mut regs,
                    (pos / units, pos % units),
                    lanes,
                    program,
                    cols,
                    row_units,
                );
            } else {
                // A thread per row: every phase loops over the row's columns.
                run_rows::<N>(
                    bufs,
                    &mut regs,
                    (pos, 0),
                    n * cols as usize,
                    program,
                    cols,
                    1u32,
                );
            }
        }
        None => {
            if comptime!(program.steps == 1) {
                run_body::<N>(
                    bufs,
                    &mut regs,
                    pos,
                    n,
                    0u32,
                    comptime!(program.body.clone()),
                    comptime!(program.guards.clone()),
                );
            } else {
                run_body::<N>(
                    bufs,
                    &mut regs,
                    pos,
                    n,
                    0u32,
                    comptime!(program.prologue.clone()),
                    comptime!(Vec::new()),
                );
                // The carried registers become variables the loop assigns.
                carried_variables::<f32, N>(&mut regs.f, comptime!(program.carries_f.clone()));
                carried_variables::<u32, N>(&mut regs.u, comptime!(program.carries_u.clone()));
                // One copy of the step in a loop: compile time does not grow with K.
                for step in 0..comptime!(program.steps) {
                    run_body::<N>(
                        bufs,
                        &mut regs,
                        pos,
                        n,
                        step,
                        comptime!(program.body.clone()),
                        comptime!(program.guards.clone()),
                    );
                    advance_carries::<f32, N>(&mut regs.f, comptime!(program.carries_f.clone()));
                    advance_carries::<u32, N>(&mut regs.u, comptime!(program.carries_u.clone()));
                }
                run_body::<N>(
                    bufs,
                    &mut regs,
                    pos,
                    n,
                    comptime!(program.steps - 1),
                    comptime!(program.epilogue.clone()),
                    comptime!(Vec::new()),
                );
            }
        }
    }
}

/// Makes each carried register (`to` of `carries`) a variable that later assignments update.
#[cube]
#[allow(clippy::needless_range_loop)] // `#[unroll]` needs indices.
fn carried_variables<T: Numeric, N: Size>(
    regs: &mut Registry<Reg, Vector<T, N>>,
    #[comptime] carries: Vec<(Reg, Reg)>,
) {
    #[unroll]
    for c in 0..carries.len() {
        let (to, _) = comptime!(carries[c]);
        let state = regs.find(to);
        #[allow(unused_mut)]
        let mut variable = state;
        regs.insert(to, variable);
    }
}

/// `to = from` for every carry of one register file, every next value copied before any
/// carried variable changes (a carry may read another carry's input; the files are apart).
#[cube]
#[allow(clippy::needless_range_loop)] // `#[unroll]` needs indices.
fn advance_carries<T: Numeric, N: Size>(
    regs: &mut Registry<Reg, Vector<T, N>>,
    #[comptime] carries: Vec<(Reg, Reg)>,
) {
    let mut next = Registry::<u32, Vector<T, N>>::new();
    #[unroll]
    for c in 0..carries.len() {
        let (_, from) = comptime!(carries[c]);
        let value = regs.find(from);
        #[allow(unused_mut)]
        let mut copy = value;
        next.insert(comptime!(c as u32), copy);
    }
    #[unroll]
    for c in 0..carries.len() {
        let (to, _) = comptime!(carries[c]);
        assign::<T, N>(&mut regs.find(to), next.find(comptime!(c as u32)));
    }
}

/// `*target = value`: assigns a variable declared in an enclosing scope.
#[cube]
fn assign<T: Numeric, N: Size>(target: &mut Vector<T, N>, value: Vector<T, N>) {
    *target = value;
}

/// One row of a rows-domain program, on `units` units (a power of two): with one, the
/// thread loops over the row's columns; with more, the units of a cube share the row, each
/// taking the columns `unit, unit + units, ...` (adjacent units read adjacent columns:
/// coalesced on a GPU), and their partial results meet in shared memory in a tree
/// (`log2(units)` rounds, a barrier each) that every unit reads the row's result from.
/// `at` is `(row, unit)`; `lanes` the launch's.
#[cube]
fn run_rows<N: Size>(
    bufs: &mut Buffers<N>,
    regs: &mut Regs<N>,
    at: (usize, usize),
    lanes: usize,
    #[comptime] program: KernelProgram,
    #[comptime] cols: u32,
    #[comptime] units: u32,
) {
    let (row, unit) = at;
    let row_start = row * cols as usize;
    let mut partials = SharedMemory::<Vector<f32, N>>::new(comptime!(units as usize));
    #[unroll]
    for phase_index in 0..program.phases.len() {
        let phase = comptime!(program.phases[phase_index].clone());
        let mut acc = Vector::<f32, N>::new(f32::new(0.0));
        if comptime!(phase.op == ReduceOp::Max) {
            acc = Vector::new(f32::new(comptime!(-f32::MAX)));
        }
        let mut c = unit;
        while c < cols as usize {
            let lane = row_start + c;
            #[unroll]
            for i in 0..phase.body.len() {
                let instr = comptime!(phase.body[i]);
                exec::<N>(bufs, regs, lane, lanes, 0u32, instr);
            }
            let value = regs.f.find(comptime!(phase.value));
            if comptime!(phase.op == ReduceOp::Max) {
                acc = max(acc, value);
            } else {
                acc += value;
            }
            c += units as usize;
        }
        if comptime!(units > 1) {
            partials[unit] = acc;
            sync_cube();
            #[unroll]
            for round in 0..comptime!(units.trailing_zeros()) {
                let stride = comptime!((units >> (round + 1)) as usize);
                if unit < stride {
                    if comptime!(phase.op == ReduceOp::Max) {
                        partials[unit] = max(partials[unit], partials[unit + stride]);
                    } else {
                        partials[unit] = partials[unit] + partials[unit + stride];
                    }
                }
                sync_cube();
            }
            acc = partials[0];
            // Every unit has read the total before the next phase writes its partial.
            sync_cube();
        }
        if comptime!(phase.op == ReduceOp::Mean) {
            acc /= Vector::new(f32::new(comptime!(cols as f32)));
        }
        regs.f.insert(comptime!(phase.result), acc);
    }
    let mut c = unit;
    while c < cols as usize {
        let lane = row_start + c;
        #[unroll]
        for i in 0..program.body.len() {
            let instr = comptime!(program.body[i]);
            exec::<N>(bufs, regs, lane, lanes, 0u32, instr);
        }
        c += units as usize;
    }
}

/// Runs `body`, entering guard blocks where it says.
#[cube]
#[allow(clippy::needless_range_loop)] // `#[unroll]` needs indices.
fn run_body<N: Size>(
    bufs: &mut Buffers<N>,
    regs: &mut Regs<N>,
    lane: usize,
    n: usize,
    step: u32,
    #[comptime] body: Vec<Instr>,
    #[comptime] guards: Vec<GuardBlock>,
) {
    #[unroll]
    for i in 0..body.len() {
        let instr = comptime!(body[i]);
        match instr {
            Instr::Guard { index } => {
                let guard = comptime!(guards[index as usize].clone());
                run_guard::<N>(bufs, regs, lane, n, step, guard);
            }
            _ => exec::<N>(bufs, regs, lane, n, step, instr),
        }
    }
}

/// Runs a guard block where its condition holds; its outputs are variables declared
/// before the branch (zero where the branch is not taken; the selects never pick them).
/// Blocks hold random draws, so they only run with `N = 1`.
#[cube]
fn run_guard<N: Size>(
    bufs: &mut Buffers<N>,
    regs: &mut Regs<N>,
    lane: usize,
    n: usize,
    step: u32,
    #[comptime] guard: GuardBlock,
) {
    let mut outer_f = Registry::<Reg, Vector<f32, N>>::new();
    let mut outer_u = Registry::<Reg, Vector<u32, N>>::new();
    #[unroll]
    for o in 0..guard.outputs_f.len() {
        #[allow(unused_mut)]
        let mut variable = Vector::<f32, N>::new(f32::new(0.0));
        outer_f.insert(comptime!(guard.outputs_f[o]), variable);
    }
    #[unroll]
    for o in 0..guard.outputs_u.len() {
        #[allow(unused_mut)]
        let mut variable = Vector::<u32, N>::new(u32::new(0));
        outer_u.insert(comptime!(guard.outputs_u[o]), variable);
    }
    let taken = u32::cast_from(regs.u.find(comptime!(guard.cond)));
    if taken != 0u32 {
        #[unroll]
        for i in 0..guard.body.len() {
            let instr = comptime!(guard.body[i]);
            exec::<N>(bufs, regs, lane, n, step, instr);
        }
        #[unroll]
        for o in 0..guard.outputs_f.len() {
            let reg = comptime!(guard.outputs_f[o]);
            assign::<f32, N>(&mut outer_f.find(reg), regs.f.find(reg));
        }
        #[unroll]
        for o in 0..guard.outputs_u.len() {
            let reg = comptime!(guard.outputs_u[o]);
            assign::<u32, N>(&mut outer_u.find(reg), regs.u.find(reg));
        }
    }
    #[unroll]
    for o in 0..guard.outputs_f.len() {
        let reg = comptime!(guard.outputs_f[o]);
        regs.f.insert(reg, outer_f.find(reg));
    }
    #[unroll]
    for o in 0..guard.outputs_u.len() {
        let reg = comptime!(guard.outputs_u[o]);
        regs.u.insert(reg, outer_u.find(reg));
    }
}

/// Copies `output.len()` words of `input` from word `start` on into `output` (a page of a
/// call's actions, or from word 0 the `xla-default` loop-carried state copy).
#[cube(launch_unchecked)]
pub fn copy_range(input: &Array<u32>, output: &mut Array<u32>, start: u32) {
    if ABSOLUTE_POS < output.len() {
        output[ABSOLUTE_POS] = input[start as usize + ABSOLUTE_POS];
    }
}

/// Threads per cube of every elementwise launch.
pub const ELEMENTWISE_CUBE_DIM: u32 = 256;

/// Cube dimension and count for one thread per unit of work over `units` units.
///
/// Counts beyond 65535 cubes are spread over the x and y dispatch dimensions (wgpu's limit
/// per dimension); kernels index with the linear `ABSOLUTE_POS` and guard `pos < len`.
pub fn elementwise_launch_shape<R: Runtime>(
    client: &ComputeClient<R>,
    units: usize,
) -> (CubeCount, CubeDim) {
    let cube_dim = CubeDim::new_1d(ELEMENTWISE_CUBE_DIM);
    let count = cubecl::calculate_cube_count_elemwise(client, units.max(1), cube_dim);
    (count, cube_dim)
}
