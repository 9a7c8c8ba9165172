//! The math of the interpreter kernel, one `#[cube]` function per op family, each generic
//! over the vector width `N`. The op enums are typed by operand kind, so every match is
//! exhaustive without fallback arms.
#![allow(missing_docs)] // `#[cube]` expands into undocumented items.

use cubecl::prelude::*;

use crate::graph::{BinaryOp, CompareOp, FloatBinary, FloatUnary, LogicBinary, LogicUnary};

/// `op(x)` on floats.
#[cube]
pub fn float_unary<N: Size>(x: Vector<f32, N>, #[comptime] op: FloatUnary) -> Vector<f32, N> {
    match op {
        // The sign bit flipped (`-x` bit for bit, NaNs too): cubecl's CUDA backend writes
        // `-x` for a vector as C++ unary minus, which its `float_4` struct does not have.
        FloatUnary::Neg => Vector::<f32, N>::reinterpret(
            Vector::<u32, N>::reinterpret(x) ^ Vector::new(0x8000_0000u32),
        ),
        FloatUnary::Abs => Abs::abs(x),
        FloatUnary::Sqrt => Sqrt::sqrt(x),
        FloatUnary::Exp => Exp::exp(x),
        FloatUnary::Log => Log::ln(x),
        FloatUnary::Sin => Sin::sin(x),
        FloatUnary::Cos => Cos::cos(x),
        FloatUnary::Tanh => Tanh::tanh(x),
        FloatUnary::Erf => Erf::erf(x),
        FloatUnary::Square => x * x,
        FloatUnary::Recip => Vector::new(f32::new(1.0)) / x,
        FloatUnary::Floor => Floor::floor(x),
    }
}

/// `op(x, y)` on floats or integers (`u32` wraps).
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

/// `op(x, y)` on floats only.
#[cube]
pub fn float_binary<N: Size>(
    x: Vector<f32, N>,
    y: Vector<f32, N>,
    #[comptime] op: FloatBinary,
) -> Vector<f32, N> {
    match op {
        FloatBinary::Pow => Powf::powf(x, y),
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
        CompareOp::Ne => x.not_equal(y),
    };
    from_bool::<N>(b)
}
