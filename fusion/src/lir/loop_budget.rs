//! Run-time loop iterations per thread, and the budget lavapipe allows them.
//!
//! Mesa's llvmpipe (and so lavapipe, the Vulkan driver on top of it) guards every shader
//! against infinite loops with one counter per shader invocation, shared by all its loops:
//! `LP_MAX_TGSI_LOOP_ITERATIONS`, 65,535, in `src/gallium/auxiliary/gallivm/lp_bld_limits.h`
//! ("Maximum iterations before loop termination. Shared between every loop in a TGSI
//! shader"). `lp_exec_endloop` decrements it at every back edge and leaves the loop once it
//! reaches zero, so from then on every loop of that invocation runs its body once and exits.
//! Nothing reports it: the kernel finishes and its results are silently wrong.
//!
//! A generated kernel loops at run time over the steps of `fused-xK`, over a row's columns
//! (rows-domain programs), over the rows of a dense layer and over chunks of a dot
//! product's terms. A `fused-x8` rollout of PPO's 4-64-64 policy once ran about 9,000
//! iterations a step, one term per iteration, and lost its last step's critic values to
//! this limit. [`DOT_CHUNK`] terms per iteration now keep a step of that policy near 700,
//! and [`loop_iterations`] counts an upper bound (loops the driver unrolls count as if they
//! ran) so that the executor can refuse a plan that would cross the budget instead of
//! returning wrong numbers.

use super::program::{Instr, KernelProgram, LaunchProgram};

/// The loop iterations one lavapipe shader invocation may run, all loops together
/// (`LP_MAX_TGSI_LOOP_ITERATIONS` in Mesa's gallivm).
pub const LAVAPIPE_LOOP_ITERATIONS: u64 = 65_535;

/// Terms of a dot product unrolled into one iteration of its run-time loop; the terms past
/// the last whole chunk are unrolled after the loop. The sum still adds the terms one by
/// one in order, so chunking changes no rounding.
pub const DOT_CHUNK: u32 = 16;

/// The run-time loop iterations of a dot product over terms `start..len`: one per whole
/// chunk (the remainder is unrolled).
pub fn dot_iterations(start: u32, len: u32) -> u64 {
    u64::from(len.saturating_sub(start) / DOT_CHUNK)
}

/// The loop iterations `body` of `program` runs (guard blocks are counted as taken).
fn body_iterations(body: &[Instr], program: &KernelProgram) -> u64 {
    (body.iter())
        .map(|instr| match *instr {
            Instr::DotParams { acc, len, .. } => dot_iterations(u32::from(acc.is_none()), len),
            Instr::DenseParams { rows, len, .. } => u64::from(rows) * (1 + dot_iterations(1, len)),
            Instr::Guard { index } => {
                body_iterations(&program.guards[index as usize].body, program)
            }
            _ => 0,
        })
        .sum()
}

/// An upper bound on the run-time loop iterations one thread of `program` runs.
pub fn loop_iterations(program: &KernelProgram) -> u64 {
    let (fixed, per_step) = iterations_split(program);
    fixed + u64::from(program.steps) * per_step
}

/// `(fixed, per step)`: a multi-step program runs `fixed + steps * per_step` iterations.
fn iterations_split(program: &KernelProgram) -> (u64, u64) {
    let body = body_iterations(&program.body, program);
    match program.rows_of {
        Some(cols) => {
            let cols = u64::from(cols);
            let phases: u64 = (program.phases.iter())
                .map(|phase| cols * (1 + body_iterations(&phase.body, program)))
                .sum();
            (phases + cols * (1 + body), 0)
        }
        None if program.steps == 1 => (body, 0),
        None => (
            body_iterations(&program.prologue, program)
                + body_iterations(&program.epilogue, program),
            1 + body,
        ),
    }
}

/// The most loop iterations a thread of `launch` runs (a thread runs one of its parts).
pub fn launch_iterations(launch: &LaunchProgram) -> u64 {
    launch.parts.iter().map(loop_iterations).max().unwrap_or(0)
}

/// The most steps per launch with which every part of `launch` stays within `budget`
/// iterations, if the parts are multi-step programs and one step fits.
pub fn steps_within(launch: &LaunchProgram, budget: u64) -> Option<u32> {
    launch
        .parts
        .iter()
        .filter(|part| part.rows_of.is_none() && part.steps > 1)
        .map(|part| {
            let (fixed, per_step) = iterations_split(part);
            budget.checked_sub(fixed).map(|left| left / per_step.max(1))
        })
        .try_fold(u64::MAX, |most, steps| Some(most.min(steps?)))
        .filter(|steps| (1..u64::MAX).contains(steps))
        .map(|steps| u32::try_from(steps).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::ReduceOp;
    use crate::lir::program::{GuardBlock, ReducePhase};

    fn dense(rows: u32, len: u32) -> Instr {
        Instr::DenseParams {
            out_slot: 0,
            in_slot: 0,
            rows,
            len,
            first_param: 0,
            bias_param: 0,
            stride: len + 1,
            activation: None,
        }
    }

    fn dot(len: u32) -> Instr {
        Instr::DotParams {
            dst: 0,
            acc: None,
            first_param: 0,
            slot: 0,
            len,
        }
    }

    #[test]
    fn a_dot_product_loops_once_per_whole_chunk_of_terms() {
        // Terms 1..16: 15, no whole chunk; 1..17: one; 1..64: 63 terms, three chunks.
        assert_eq!(dot_iterations(1, 16), 0);
        assert_eq!(dot_iterations(1, 17), 1);
        assert_eq!(dot_iterations(1, 64), 3);
        assert_eq!(dot_iterations(0, 64), 4);
        assert_eq!(dot_iterations(3, 2), 0);
    }

    #[test]
    fn a_fused_steps_program_counts_its_steps_and_each_steps_layers() {
        // PPO's 4-64-64 actor and critic: hidden layers of 64 rows, outputs as dots.
        let body = vec![dense(64, 4), dense(64, 64), dot(64), dot(64)];
        let mut program = KernelProgram::of_body(body);
        // Rows 64 * (1 + 0) + 64 * (1 + 3) + 3 + 3, no step loop.
        let one_step = 64 + 64 * 4 + 3 + 3;
        assert_eq!(loop_iterations(&program), one_step);
        program.steps = 8;
        program.prologue = vec![dot(32)];
        program.epilogue = vec![dense(2, 33)];
        let fixed = 1 + 2 * (1 + 2);
        assert_eq!(loop_iterations(&program), fixed + 8 * (1 + one_step));
        let launch = LaunchProgram::new(vec![program]);
        let most = steps_within(&launch, LAVAPIPE_LOOP_ITERATIONS).unwrap();
        assert_eq!(u64::from(most), (65_535 - fixed) / (1 + one_step));
        assert!(fixed + u64::from(most) * (1 + one_step) <= LAVAPIPE_LOOP_ITERATIONS);
        assert!(fixed + u64::from(most + 1) * (1 + one_step) > LAVAPIPE_LOOP_ITERATIONS);
        assert_eq!(steps_within(&launch, 10), None);
    }

    #[test]
    fn rows_loop_over_their_columns_once_per_phase_and_once_for_the_body() {
        let mut program = KernelProgram::of_body(vec![dot(40)]);
        program.rows_of = Some(100);
        program.phases = vec![ReducePhase {
            body: vec![dot(17)],
            value: 0,
            op: ReduceOp::Sum,
            result: 1,
        }];
        assert_eq!(loop_iterations(&program), 100 * (1 + 1) + 100 * (1 + 2));
        assert_eq!(
            steps_within(&LaunchProgram::new(vec![program]), 1 << 20),
            None
        );
    }

    #[test]
    fn guard_blocks_count_as_taken_and_a_launch_counts_its_largest_part() {
        let mut guarded = KernelProgram::of_body(vec![Instr::Guard { index: 0 }]);
        guarded.guards = vec![GuardBlock {
            cond: 0,
            body: vec![dense(10, 40)],
            outputs_f: Vec::new(),
            outputs_u: Vec::new(),
        }];
        assert_eq!(loop_iterations(&guarded), 10 * 3);
        let small = KernelProgram::of_body(vec![dot(48)]);
        assert_eq!(
            launch_iterations(&LaunchProgram::new(vec![small, guarded])),
            30
        );
    }
}
