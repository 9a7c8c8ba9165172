//! The C spelling of registers, state arrays and the graph's float, integer and comparison
//! ops, as [`super`] emits them.

use std::fmt::Write;

use crate::graph::{BinaryOp, CompareOp, FloatUnary};
use crate::lir::program::Reg;

/// Carried register `to` read from its state array (the start of a step's lane loop).
pub(super) fn load_state(to: Reg, float: bool) -> String {
    let r = reg(to, float);
    format!("const {} {r} = st_{r}[i - b0];\n", ty(float))
}

/// Each carry's next value written to its state array (the end of a step's lane loop).
pub(super) fn store_state(carries: &[(Reg, Reg, bool)]) -> String {
    let mut c = String::new();
    for (to, from, float) in carries {
        let _ = writeln!(
            c,
            "st_{}[i - b0] = {};",
            reg(*to, *float),
            reg(*from, *float)
        );
    }
    c
}

pub(super) fn ty(float: bool) -> &'static str {
    if float { "float" } else { "uint32_t" }
}

pub(super) fn reg(r: Reg, float: bool) -> String {
    format!("{}{r}", if float { 'f' } else { 'u' })
}

pub(super) fn unary(op: FloatUnary, a: &str) -> String {
    match op {
        FloatUnary::Neg => format!("cf_neg({a})"),
        FloatUnary::Abs => format!("cf_abs({a})"),
        FloatUnary::Sqrt => format!("__builtin_sqrtf({a})"),
        FloatUnary::Exp => format!("cf_exp({a})"),
        FloatUnary::Log => format!("cf_log({a})"),
        FloatUnary::Sin => format!("cf_sin({a})"),
        FloatUnary::Cos => format!("cf_cos({a})"),
        FloatUnary::Tanh => format!("cf_tanh({a})"),
        FloatUnary::Erf => format!("cf_erf({a})"),
        FloatUnary::Square => format!("{a} * {a}"),
        FloatUnary::Recip => format!("1.0f / {a}"),
        FloatUnary::Floor => format!("cf_floor({a})"),
    }
}

pub(super) fn binary_f(op: BinaryOp, a: &str, b: &str) -> String {
    match op {
        BinaryOp::Add => format!("{a} + {b}"),
        BinaryOp::Sub => format!("{a} - {b}"),
        BinaryOp::Mul => format!("{a} * {b}"),
        BinaryOp::Div => format!("{a} / {b}"),
        BinaryOp::Min => format!("cf_min({a}, {b})"),
        BinaryOp::Max => format!("cf_max({a}, {b})"),
    }
}

/// Wrapping `u32` arithmetic (C's unsigned arithmetic wraps); division by zero gives
/// `u32::MAX`, as the interpreter's.
pub(super) fn binary_u(op: BinaryOp, a: &str, b: &str) -> String {
    match op {
        BinaryOp::Add => format!("{a} + {b}"),
        BinaryOp::Sub => format!("{a} - {b}"),
        BinaryOp::Mul => format!("{a} * {b}"),
        BinaryOp::Div => format!("{b} == 0u ? 0xffffffffu : {a} / {b}"),
        BinaryOp::Min => format!("{a} < {b} ? {a} : {b}"),
        BinaryOp::Max => format!("{a} > {b} ? {a} : {b}"),
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
