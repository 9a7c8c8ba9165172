//! The C spelling of registers, state arrays and the graph's float, integer and comparison
//! ops, as [`super`] emits them.

use std::fmt::Write;

use crate::graph::{BinaryOp, CompareOp, FloatUnary};
use crate::lir::program::Reg;

/// Register `r` read from its per-block array `<array>_<r>` (`st`: carried state, `sp`: a
/// spill), at the start of a lane loop.
pub(super) fn load(array: &str, r: Reg, float: bool) -> String {
    let r = reg(r, float);
    format!("const {} {r} = {array}_{r}[i - b0];\n", ty(float))
}

/// Each carry's next value written to its state array (the end of a step's lane loop).
pub(super) fn store_state(carries: &[(Reg, Reg, bool)]) -> String {
    let mut c = String::new();
    for (to, from, float) in carries {
        let (to, from) = (reg(*to, *float), reg(*from, *float));
        let _ = writeln!(c, "st_{to}[i - b0] = {from};");
    }
    c
}

pub(super) fn ty(float: bool) -> &'static str {
    if float { "float" } else { "uint32_t" }
}

/// The letter of a register file, naming its registers and the bindings of its type.
pub(super) fn file(float: bool) -> char {
    if float { 'f' } else { 'u' }
}

pub(super) fn reg(r: Reg, float: bool) -> String {
    format!("{}{r}", file(float))
}

/// The zero of a register file.
pub(super) fn zero(float: bool) -> &'static str {
    if float { "0.0f" } else { "0u" }
}

/// `op(a)`: the prelude's function named after the op, where C has no expression for it.
pub(super) fn unary(op: FloatUnary, a: &str) -> String {
    match op {
        FloatUnary::Sqrt => format!("__builtin_sqrtf({a})"),
        FloatUnary::Square => format!("{a} * {a}"),
        FloatUnary::Recip => format!("1.0f / {a}"),
        _ => format!("cf_{}({a})", op.name()),
    }
}

/// `op(a, b)` in the `f32` file (`float`) or the `u32` file. `u32` arithmetic wraps (as C's
/// unsigned arithmetic does); division by zero gives `u32::MAX`, as the interpreter's.
pub(super) fn binary(op: BinaryOp, float: bool, a: &str, b: &str) -> String {
    match (op, float) {
        (BinaryOp::Add, _) => format!("{a} + {b}"),
        (BinaryOp::Sub, _) => format!("{a} - {b}"),
        (BinaryOp::Mul, _) => format!("{a} * {b}"),
        (BinaryOp::Div, true) => format!("{a} / {b}"),
        (BinaryOp::Div, false) => format!("{b} == 0u ? 0xffffffffu : {a} / {b}"),
        (BinaryOp::Min | BinaryOp::Max, true) => format!("cf_{}({a}, {b})", op.name()),
        (BinaryOp::Min, false) => format!("{a} < {b} ? {a} : {b}"),
        (BinaryOp::Max, false) => format!("{a} > {b} ? {a} : {b}"),
    }
}

pub(super) fn compare(op: CompareOp) -> &'static str {
    match op {
        CompareOp::Lt => "<",
        CompareOp::Le => "<=",
        CompareOp::Gt => ">",
        CompareOp::Ge => ">=",
        CompareOp::Eq => "==",
        CompareOp::Ne => "!=",
    }
}
