//! Which programs run vectorised: [`fused_array`](fn@crate::cube::kernel::fused_array) with
//! `N = VECTOR_WIDTH` lanes per thread (16-byte loads and stores) instead of `N = 1`.

use super::program::{Instr, KernelProgram};
use crate::graph::BinaryOp;

/// Lanes per thread of vectorised launches.
pub const VECTOR_WIDTH: usize = 4;

/// Whether `program` can run vectorised: `f32` loads, params, constants, float math
/// without min/max, and stores, over lanes (no rows, packs, integers, randoms or indices,
/// whose instructions address single lanes).
pub fn vectorizable(program: &KernelProgram) -> bool {
    program.rows_of.is_none()
        && (program.lists().into_iter().flatten()).all(|instr| match instr {
            Instr::LoadF { .. }
            | Instr::ParamF { .. }
            | Instr::ConstF { .. }
            | Instr::StoreF { .. }
            | Instr::UnaryF { .. }
            | Instr::MulAdd { .. }
            | Instr::Stash { .. }
            | Instr::DotParams { .. }
            | Instr::DenseParams { .. }
            | Instr::Unstash { .. }
            | Instr::FloatBinary { .. } => true,
            Instr::BinaryF { op, .. } => matches!(
                op,
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div
            ),
            _ => false,
        })
}
