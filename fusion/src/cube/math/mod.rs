//! The CPU runtime's float functions inside a kernel: `sin`, `cos`, `exp`, `log`, `tanh`,
//! `erf`, `pow`, `min`, `max` and the cast to `u32` as [`crate::cpu::interp::math`] computes
//! them, so that a kernel returns the CPU's bits instead of the driver's (issue 51: the same
//! episodes on every device).
//!
//! cubecl 0.10 expands `#[cube]` functions into IR builders the host cannot call, so each
//! algorithm is written once more here, the same IEEE operations in the same order over the
//! same constants (taken from the CPU's definitions, never retyped), as the C prelude of the
//! compiled CPU kernels is (`cpu::native::prelude`). A device that evaluates single-precision
//! `+ - * /` exactly and contracts none of them returns the CPU's bits for every input;
//! Mesa's lavapipe does, subnormal numbers included (asserted per op by the runtime suites'
//! `math` tests). Where a driver divides approximately, the results stay within the CPU's
//! accuracy bounds (the table in [`crate::cpu::interp::math`]) but may differ in the last
//! bits ([`crate::exec::FloatAgreement`]).
//!
//! Details that keep the compilers between here and the device from changing the results:
//!
//! - Rounding to an integer is the `round` instruction (IEEE's ties-to-even, which the CPU
//!   computes as `(|x| + 2^23) - 2^23` with the sign kept), one instruction instead of three
//!   an optimiser might fold.
//! - NaN is found from the bits: naga's float `!=` is SPIR-V's ordered comparison, which
//!   is false when an operand is NaN, where IEEE's (and the CPU's) is true.
//! - A constant's bits are taken on the host ([`to_bits()`], [`from_bits()`]), and
//!   infinities, NaN and zeros reach the kernel through a value the backends cannot fold
//!   before the driver does: cubecl's C++ backend cannot reinterpret a literal, it prints
//!   no infinity or NaN, and its optimiser rewrites `x * 0` and `x + 0`.
#![allow(missing_docs)] // `#[cube]` expands into undocumented items.

mod bits;
#[cfg(all(test, any(feature = "wgpu", feature = "cuda")))]
mod tests;

use cubecl::prelude::*;

use bits::splat_bits;
pub use bits::{from_bits, to_bits};

use crate::cpu::interp::math::{
    COS_P, DP1, DP2, DP3, ERF_T, ERFC_P, ERFC_R, EXP_P, FOPI, LN2_HI, LN2_LO, LOG_P, LOG2E, SIGN,
    SIN_P, SQRT_HALF, TANH_P,
};

/// Every lane `x`.
#[cube]
fn splat<N: Size>(#[comptime] x: f32) -> Vector<f32, N> {
    Vector::new(f32::new(x))
}

/// Every lane the integer `x`.
#[cube]
fn splat_u<N: Size>(#[comptime] x: u32) -> Vector<u32, N> {
    Vector::new(x)
}

/// `-x` (the sign bit flipped).
#[cube]
pub fn neg<N: Size>(x: Vector<f32, N>) -> Vector<f32, N> {
    from_bits::<N>(to_bits::<N>(x) ^ splat_u::<N>(SIGN))
}

/// `|x|` (the sign bit cleared; llvmpipe's `abs` of a constant `-0.0` is `-0.0`).
#[cube]
pub fn abs<N: Size>(x: Vector<f32, N>) -> Vector<f32, N> {
    from_bits::<N>(to_bits::<N>(x) & splat_u::<N>(!SIGN))
}

/// `a < b ? a : b` (the CPU's `min_raw`: `b` when either is NaN).
#[cube]
fn min_raw<N: Size>(a: Vector<f32, N>, b: Vector<f32, N>) -> Vector<f32, N> {
    select_many(a.less_than(b), a, b)
}

/// `a > b ? a : b` (the CPU's `max_raw`: `b` when either is NaN).
#[cube]
fn max_raw<N: Size>(a: Vector<f32, N>, b: Vector<f32, N>) -> Vector<f32, N> {
    select_many(a.greater_than(b), a, b)
}

/// The CPU's `min` (Rust's `f32::min`): a NaN operand yields the other, and otherwise
/// `a < b ? a : b`, so that signed zeros come out as on the CPU (a driver's `min` may
/// return either zero).
#[cube]
pub fn min<N: Size>(a: Vector<f32, N>, b: Vector<f32, N>) -> Vector<f32, N> {
    select_many(is_nan::<N>(b), a, min_raw::<N>(a, b))
}

/// The CPU's `max` (Rust's `f32::max`): a NaN operand yields the other.
#[cube]
pub fn max<N: Size>(a: Vector<f32, N>, b: Vector<f32, N>) -> Vector<f32, N> {
    select_many(is_nan::<N>(b), a, max_raw::<N>(a, b))
}

/// The CPU's float-to-`u32` cast (Rust's saturating `as`): toward zero, NaN and negative
/// lanes to 0, lanes of 2^32 and more to `u32::MAX` (WGSL's cast clamps to the largest float
/// below 2^32 instead).
#[cube]
pub fn f32_to_u32<N: Size>(x: Vector<f32, N>) -> Vector<u32, N> {
    let positive = x.greater_than(splat::<N>(0.0));
    let big = x.greater_equal(splat::<N>(4_294_967_296.0));
    let safe = select_many(
        positive.and(big.equal(Vector::new(false))),
        x,
        splat::<N>(0.0),
    );
    select_many(
        big,
        splat_u::<N>(u32::MAX),
        Vector::<u32, N>::cast_from(safe),
    )
}

/// Whether each lane is NaN, from its bits: naga writes a float `!=` as SPIR-V's ordered
/// comparison, false for NaN, so `x != x` cannot tell.
#[cube]
pub fn is_nan<N: Size>(x: Vector<f32, N>) -> Vector<bool, N> {
    (to_bits::<N>(x) & splat_u::<N>(!SIGN)).greater_than(splat_u::<N>(0x7F80_0000u32))
}

/// The CPU's `trunc_i32` (x86 `cvttps2dq`): toward zero, and `i32::MIN`'s bits for NaN and
/// out-of-range lanes.
#[cube]
fn trunc_i32<N: Size>(x: Vector<f32, N>) -> Vector<u32, N> {
    let in_range = x
        .greater_equal(splat::<N>(-2_147_483_648.0))
        .and(x.less_than(splat::<N>(2_147_483_648.0)));
    let safe = select_many(in_range, x, splat::<N>(0.0));
    // Casts between the integer types keep the bits in WGSL and C++ alike.
    let truncated = Vector::<u32, N>::cast_from(Vector::<i32, N>::cast_from(safe));
    select_many(in_range, truncated, splat_u::<N>(SIGN))
}

/// The lane's bits as `i32`, to the nearest float.
#[cube]
fn i32_to_f32<N: Size>(x: Vector<u32, N>) -> Vector<f32, N> {
    Vector::<f32, N>::cast_from(Vector::<i32, N>::cast_from(x))
}

/// Horner evaluation of `coefficients` (highest degree first) at `x`, multiply then add.
#[cube]
#[allow(clippy::needless_range_loop)] // `#[unroll]` needs indices.
fn horner<N: Size>(x: Vector<f32, N>, #[comptime] coefficients: Vec<f32>) -> Vector<f32, N> {
    let mut acc = splat::<N>(comptime!(coefficients[0]));
    #[unroll]
    for k in 1..coefficients.len() {
        acc = acc * x + splat::<N>(comptime!(coefficients[k]));
    }
    acc
}

/// `2^k` for integer lanes `k` in `[-126, 127]`.
#[cube]
fn pow2i<N: Size>(k: Vector<u32, N>) -> Vector<f32, N> {
    from_bits::<N>((k + splat_u::<N>(127u32)) << splat_u::<N>(23u32))
}

/// Sine and cosine from one range reduction (the CPU's `math::sin_cos`).
#[cube]
pub fn sin_cos<N: Size>(x: Vector<f32, N>) -> (Vector<f32, N>, Vector<f32, N>) {
    let ax = abs::<N>(x);
    let j = trunc_i32::<N>(ax * splat::<N>(FOPI));
    let j = (j + splat_u::<N>(1u32)) & splat_u::<N>(!1u32);
    let y = i32_to_f32::<N>(j);
    let r = ax - y * splat::<N>(DP1);
    let r = r - y * splat::<N>(DP2);
    let r = r - y * splat::<N>(DP3);
    let z = r * r;
    let ps = horner::<N>(z, comptime!(SIN_P.to_vec())) * z * r + r;
    let pc = horner::<N>(z, comptime!(COS_P.to_vec())) * z * z;
    let pc = (pc - splat::<N>(0.5) * z) + splat::<N>(1.0);
    let sin_sign =
        (to_bits::<N>(x) & splat_u::<N>(SIGN)) ^ ((j & splat_u::<N>(4u32)) << splat_u::<N>(29u32));
    let sin_poly = (j & splat_u::<N>(2u32)).equal(splat_u::<N>(0u32));
    let sin = from_bits::<N>(to_bits::<N>(select_many(sin_poly, ps, pc)) ^ sin_sign);
    let jc = j - splat_u::<N>(2u32);
    let cos_sign = ((jc ^ splat_u::<N>(u32::MAX)) & splat_u::<N>(4u32)) << splat_u::<N>(29u32);
    let cos_poly = (jc & splat_u::<N>(2u32)).equal(splat_u::<N>(0u32));
    let cos = from_bits::<N>(to_bits::<N>(select_many(cos_poly, ps, pc)) ^ cos_sign);
    (sin, cos)
}

/// `e^x` (the CPU's `math::exp`): infinity above ~88.72, subnormal results kept, NaN stays.
#[cube]
pub fn exp<N: Size>(x: Vector<f32, N>) -> Vector<f32, N> {
    let xc = min_raw::<N>(max_raw::<N>(x, splat::<N>(-104.0)), splat::<N>(89.0));
    let n = Round::round(xc * splat::<N>(LOG2E));
    let r = xc - n * splat::<N>(LN2_HI);
    let r = r - n * splat::<N>(LN2_LO);
    let p = horner::<N>(r, comptime!(EXP_P.to_vec())) * r * r;
    let p = (p + r) + splat::<N>(1.0);
    let k = trunc_i32::<N>(n);
    let k1 = trunc_i32::<N>(n * splat::<N>(0.5));
    let k2 = k - k1;
    let y = p * pow2i::<N>(k1) * pow2i::<N>(k2);
    select_many(is_nan::<N>(x), x, y)
}

/// Natural logarithm (the CPU's `math::log`): `log 0 = -inf`, negative inputs give NaN.
#[cube]
pub fn log<N: Size>(x: Vector<f32, N>) -> Vector<f32, N> {
    let tiny = x.less_than(splat::<N>(f32::MIN_POSITIVE));
    let xs = select_many(tiny, x * splat::<N>(8_388_608.0), x);
    let bits = to_bits::<N>(xs);
    let e = i32_to_f32::<N>((bits >> splat_u::<N>(23u32)) - splat_u::<N>(126u32));
    let e = e - select_many(tiny, splat::<N>(23.0), splat::<N>(0.0));
    let m = from_bits::<N>((bits & splat_u::<N>(0x007F_FFFFu32)) | splat_u::<N>(0x3F00_0000u32));
    let below = m.less_than(splat::<N>(SQRT_HALF));
    let e = e - select_many(below, splat::<N>(1.0), splat::<N>(0.0));
    let xm = (m + select_many(below, m, splat::<N>(0.0))) - splat::<N>(1.0);
    let z = xm * xm;
    let y = horner::<N>(xm, comptime!(LOG_P.to_vec())) * xm * z;
    let y = y + e * splat::<N>(LN2_LO);
    let y = y - splat::<N>(0.5) * z;
    let r = (xm + y) + e * splat::<N>(LN2_HI);
    let infinity = splat_bits::<N>(f32::INFINITY.to_bits());
    let r = select_many(x.equal(infinity), x, r);
    let r = select_many(
        x.less_than(splat::<N>(0.0)),
        splat_bits::<N>(f32::NAN.to_bits()),
        r,
    );
    let r = select_many(
        x.equal(splat::<N>(0.0)),
        splat_bits::<N>(f32::NEG_INFINITY.to_bits()),
        r,
    );
    select_many(is_nan::<N>(x), x, r)
}

/// Hyperbolic tangent (the CPU's `math::tanh`).
#[cube]
pub fn tanh<N: Size>(x: Vector<f32, N>) -> Vector<f32, N> {
    let ax = abs::<N>(x);
    let z = x * x;
    let small = horner::<N>(z, comptime!(TANH_P.to_vec())) * z * x + x;
    let e = exp::<N>(ax + ax);
    let large = splat::<N>(1.0) - splat::<N>(2.0) / (e + splat::<N>(1.0));
    let large = from_bits::<N>(to_bits::<N>(large) | (to_bits::<N>(x) & splat_u::<N>(SIGN)));
    select_many(ax.less_than(splat::<N>(0.625)), small, large)
}

/// The error function (the CPU's `math::erf`).
#[cube]
pub fn erf<N: Size>(x: Vector<f32, N>) -> Vector<f32, N> {
    let ax = abs::<N>(x);
    let z = x * x;
    let small = x * horner::<N>(z, comptime!(ERF_T.to_vec()));
    let a = max_raw::<N>(min_raw::<N>(ax, splat::<N>(10.0)), splat::<N>(1.0));
    let ez = exp::<N>(neg::<N>(a * a));
    let q = splat::<N>(1.0) / a;
    let qq = q * q;
    let p = select_many(
        a.less_than(splat::<N>(2.0)),
        horner::<N>(qq, comptime!(ERFC_P.to_vec())),
        horner::<N>(qq, comptime!(ERFC_R.to_vec())),
    );
    let large = splat::<N>(1.0) - ez * q * p;
    let large = from_bits::<N>(to_bits::<N>(large) | (to_bits::<N>(x) & splat_u::<N>(SIGN)));
    let r = select_many(ax.less_than(splat::<N>(1.0)), small, large);
    select_many(is_nan::<N>(x), x, r)
}

/// `x^y` (the CPU's `math::pow`): `exp(y log |x|)`, `x^0 = 1`, `1^y = 1`, negative bases
/// for integer `y` (the sign by parity), NaN otherwise.
#[cube]
pub fn pow<N: Size>(x: Vector<f32, N>, y: Vector<f32, N>) -> Vector<f32, N> {
    let r = exp::<N>(y * log::<N>(abs::<N>(x)));
    let ay = abs::<N>(y);
    let huge = splat::<N>(8_388_608.0).less_equal(ay);
    let integer = huge.or(Round::round(y).equal(y));
    let odd_bit = trunc_i32::<N>(y) & splat_u::<N>(1u32);
    let odd = ay
        .less_than(splat::<N>(16_777_216.0))
        .and(odd_bit.equal(splat_u::<N>(1u32)));
    let negative = (to_bits::<N>(x) >> splat_u::<N>(31u32)).equal(splat_u::<N>(1u32));
    let flip = negative.and(integer).and(odd);
    let r = select_many(flip, neg::<N>(r), r);
    let not_integer = integer.equal(Vector::new(false));
    let r = select_many(
        x.less_than(splat::<N>(0.0)).and(not_integer),
        splat_bits::<N>(f32::NAN.to_bits()),
        r,
    );
    let one = y.equal(splat::<N>(0.0)).or(x.equal(splat::<N>(1.0)));
    select_many(one, splat::<N>(1.0), r)
}

/// [`exp()`] of one value, for kernels that compute on scalars (a 1-lane vector is the
/// scalar itself, so both conversions are free).
#[cube]
pub fn exp_scalar(x: f32) -> f32 {
    f32::cast_from(exp::<Const<1>>(Vector::new(x)))
}

/// [`log()`] of one value (see [`exp_scalar()`]).
#[cube]
pub fn log_scalar(x: f32) -> f32 {
    f32::cast_from(log::<Const<1>>(Vector::new(x)))
}

/// [`tanh()`] of one value (see [`exp_scalar()`]).
#[cube]
pub fn tanh_scalar(x: f32) -> f32 {
    f32::cast_from(tanh::<Const<1>>(Vector::new(x)))
}
