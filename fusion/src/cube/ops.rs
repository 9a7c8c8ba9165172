//! The math of the interpreter kernel, one `#[cube]` function per op family, each generic
//! over the vector width `N`. The op enums are typed by operand kind, so every match is
//! exhaustive without fallback arms.
#![allow(missing_docs)] // `#[cube]` expands into undocumented items.

use cubecl::prelude::*;

use super::math;
use crate::graph::{BinaryOp, CompareOp, FloatBinary, FloatUnary, LogicBinary, LogicUnary};

/// `op(x)` on floats.
#[cube]
pub fn float_unary<N: Size>(x: Vector<f32, N>, #[comptime] op: FloatUnary) -> Vector<f32, N> {
    match op {
        // The sign bit flipped (`-x` bit for bit, NaNs too): cubecl's CUDA backend writes
        // `-x` for a vector as C++ unary minus, which its `float_4` struct does not have.
        FloatUnary::Neg => math::neg::<N>(x),
        FloatUnary::Abs => math::abs::<N>(x),
        FloatUnary::Sqrt => Sqrt::sqrt(x),
        FloatUnary::Exp => math::exp::<N>(x),
        FloatUnary::Log => math::log::<N>(x),
        FloatUnary::Sin => math::sin_cos::<N>(x).0,
        FloatUnary::Cos => math::sin_cos::<N>(x).1,
        FloatUnary::Tanh => math::tanh::<N>(x),
        FloatUnary::Erf => math::erf::<N>(x),
        FloatUnary::Square => x * x,
        FloatUnary::Recip => Vector::new(f32::new(1.0)) / x,
        FloatUnary::Floor => Floor::floor(x),
    }
}

/// `op(x, y)` on floats or integers (`u32` wraps); floats go through [`binary_f()`].
#[cube]
pub fn binary<T: Numeric, N: Size>(
    x: Vector<T, N>,
    y: Vector<T, N>,
    #[comptime] op: BinaryOp,
) -> Vector<T, N> {
    match op {
        BinaryOp::Add => x + y,
        BinaryOp::Sub => x - y,
        BinaryOp::Mul => x * y,
        BinaryOp::Div => x / y,
        BinaryOp::Min => min(x, y),
        BinaryOp::Max => max(x, y),
    }
}

/// `op(x, y)` on floats: [`binary()`]'s arithmetic, with `min` and `max` as the CPU runtime
/// defines them ([`math::min()`]).
#[cube]
pub fn binary_f<N: Size>(
    x: Vector<f32, N>,
    y: Vector<f32, N>,
    #[comptime] op: BinaryOp,
) -> Vector<f32, N> {
    match op {
        BinaryOp::Min => math::min::<N>(x, y),
        BinaryOp::Max => math::max::<N>(x, y),
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => binary::<f32, N>(x, y, op),
    }
}

/// `op(x, y)` on floats only.
#[cube]
pub fn float_binary<N: Size>(
    x: Vector<f32, N>,
    y: Vector<f32, N>,
    #[comptime] op: FloatBinary,
) -> Vector<f32, N> {
    match op {
        FloatBinary::Pow => math::pow::<N>(x, y),
    }
}

/// Booleans as `u32` 0/1.
#[cube]
pub fn from_bool<N: Size>(b: Vector<bool, N>) -> Vector<u32, N> {
    Vector::<u32, N>::cast_from(b)
}

/// `u32` 0/1 as booleans.
#[cube]
pub fn to_bool<N: Size>(x: Vector<u32, N>) -> Vector<bool, N> {
    x.not_equal(Vector::new(0u32))
}

/// `op(x)` on booleans stored as `u32` 0/1.
#[cube]
pub fn logic_unary<N: Size>(x: Vector<u32, N>, #[comptime] op: LogicUnary) -> Vector<u32, N> {
    match op {
        LogicUnary::Not => from_bool::<N>(x.equal(Vector::new(0u32))),
    }
}

/// `op(x, y)` on booleans stored as `u32` 0/1.
#[cube]
pub fn logic_binary<N: Size>(
    x: Vector<u32, N>,
    y: Vector<u32, N>,
    #[comptime] op: LogicBinary,
) -> Vector<u32, N> {
    match op {
        LogicBinary::And => from_bool::<N>(to_bool::<N>(x).and(to_bool::<N>(y))),
        LogicBinary::Or => from_bool::<N>(to_bool::<N>(x).or(to_bool::<N>(y))),
    }
}

/// `x op y` as `u32` 0/1, for float and integer registers alike.
#[cube]
pub fn compare<T: Numeric, N: Size>(
    x: Vector<T, N>,
    y: Vector<T, N>,
    #[comptime] op: CompareOp,
) -> Vector<u32, N> {
    let b = match op {
        CompareOp::Lt => x.less_than(y),
        CompareOp::Le => x.less_equal(y),
        CompareOp::Gt => x.greater_than(y),
        CompareOp::Ge => x.greater_equal(y),
        CompareOp::Eq => x.equal(y),
        // Not `not_equal`: naga writes a float `!=` as SPIR-V's ordered comparison, false
        // when an operand is NaN; IEEE's (the CPU's) is true.
        CompareOp::Ne => x.equal(y).equal(Vector::new(false)),
    };
    from_bool::<N>(b)
}
