//! The one numeric definition of the CPU runtime's float functions, generic over [`Simd`].
//!
//! Every function is a fixed sequence of IEEE operations from the [`Simd`] trait (no FMA, no
//! table lookups, no level-specific instruction), so the scalar, AVX2 and AVX-512 levels
//! return the same bits for the same input. The algorithms are Cephes' single-precision ones
//! (as in Pommier's `sse_mathfun` and Mesa's llvmpipe), vectorised with selects instead of
//! branches:
//!
//! Errors below are measured by `cpu::tests::accuracy` over 131072 evenly spaced inputs
//! against `f64` (absolute where the result is below 1 in magnitude, else relative); the
//! test asserts the bound in brackets.
//!
//! | function | method | max error |
//! |---|---|---|
//! | `sin`, `cos` | Cody-Waite reduction by pi/4 (constant split in 3), degree 7/8 polynomials | 7.1e-8 on [-100, 100] [2e-7]; Cephes' reduction is valid to \|x\| ~ 8192 |
//! | `exp` | `2^n e^r`, `r` by 2-part ln 2, degree-7 polynomial, two-step scaling (denormals kept) | 7.9e-8 on [-87, 88] [3e-7] |
//! | `log` | mantissa in [sqrt(1/2), sqrt 2), degree-9 polynomial, denormal inputs rescaled | 6.2e-8 on [1e-3, 1e4] [2e-7] |
//! | `tanh` | odd polynomial below 0.625, `1 - 2/(e^2x + 1)` above | 7.2e-8 on [-10, 10] [3e-7] |
//! | `erf` | odd polynomial below 1, `1 - e^-x^2 P(1/x^2)/x` above (Cephes `erff`/`erfcf`) | 1.3e-7 on [-5, 5] [3e-7] |
//! | `pow` | `exp(y log x)`, IEEE special cases for 0, 1, negative bases | 3.2e-7 for x in [0.05, 20], y in [-3, 3] [2e-6]; grows with \|y log x\| |
//! | `sqrt`, `/` | the hardware's correctly rounded instructions | exact |
//!
//! `min`/`max` follow Rust's `f32::min`/`max` (a NaN operand yields the other operand),
//! and float-to-`u32` casts Rust's saturating `as` (NaN and negatives to 0).

use super::simd::Simd;

pub(crate) const SIGN: u32 = 0x8000_0000;
/// 2^23: below it, `(|x| + M) - M` is `|x|` rounded to an integer, ties to even (the sum's
/// unit in the last place is 1); from it on every float is an integer.
pub(crate) const ROUND_MAGIC: f32 = 8_388_608.0;

/// `-a` (flips the sign bit, as Rust's `-` does).
#[inline(always)]
pub fn neg<V: Simd>(s: V, a: V::F) -> V::F {
    s.from_bits(s.xor_u(s.to_bits(a), s.splat_u(SIGN)))
}

/// `|a|` (clears the sign bit).
#[inline(always)]
pub fn abs<V: Simd>(s: V, a: V::F) -> V::F {
    s.from_bits(s.and_u(s.to_bits(a), s.splat_u(!SIGN)))
}

/// Whether each lane is NaN.
#[inline(always)]
pub fn is_nan<V: Simd>(s: V, a: V::F) -> V::M {
    s.ne(a, a)
}

/// Rust's `f32::min`: a NaN operand yields the other one.
#[inline(always)]
pub fn min<V: Simd>(s: V, a: V::F, b: V::F) -> V::F {
    s.select(is_nan(s, b), a, s.min_raw(a, b))
}

/// Rust's `f32::max`: a NaN operand yields the other one.
#[inline(always)]
pub fn max<V: Simd>(s: V, a: V::F, b: V::F) -> V::F {
    s.select(is_nan(s, b), a, s.max_raw(a, b))
}

/// Rust's `f32 as u32`: truncates, saturates, NaN and negatives give 0.
#[inline(always)]
pub fn f32_to_u32<V: Simd>(s: V, a: V::F) -> V::U {
    let x = s.select(s.lt(s.splat(0.0), a), a, s.splat(0.0));
    let two31 = s.splat(2_147_483_648.0);
    let low = s.trunc_i32(x);
    let high = s.xor_u(s.trunc_i32(s.sub(x, two31)), s.splat_u(SIGN));
    let big = s.le(two31, x);
    let over = s.le(s.splat(4_294_967_296.0), x);
    s.select_u(over, s.splat_u(u32::MAX), s.select_u(big, high, low))
}

/// `x` rounded to the nearest integer, ties to even, with its sign (IEEE's
/// `roundToIntegralTiesToEven`, every kernel's `round` instruction): exact for every float,
/// NaN and infinities passed through.
#[inline(always)]
fn round<V: Simd>(s: V, x: V::F) -> V::F {
    let ax = abs(s, x);
    let rounded = s.sub(s.add(ax, s.splat(ROUND_MAGIC)), s.splat(ROUND_MAGIC));
    let signed = s.from_bits(s.or_u(s.to_bits(rounded), s.and_u(s.to_bits(x), s.splat_u(SIGN))));
    s.select(s.lt(ax, s.splat(ROUND_MAGIC)), signed, x)
}

/// `floor(x)`, exact for every `f32` (lanes of magnitude 2^23 or more, infinities and NaN
/// are already integral and pass through; `-0.0` stays `-0.0`).
#[inline(always)]
pub fn floor<V: Simd>(s: V, x: V::F) -> V::F {
    let truncated = s.i32_to_f32(s.trunc_i32(x));
    let below = s.select(
        s.lt(x, truncated),
        s.sub(truncated, s.splat(1.0)),
        truncated,
    );
    // Keep the sign of zero results (`trunc(-0.5) = -0.0`, as Rust's `floor(-0.0)`).
    let signed = s.from_bits(s.or_u(s.to_bits(below), s.and_u(s.to_bits(x), s.splat_u(SIGN))));
    let below = s.select(s.eq(below, s.splat(0.0)), signed, below);
    s.select(s.lt(abs(s, x), s.splat(8_388_608.0)), below, x)
}

/// Horner evaluation of `coefficients` (highest degree first) at `x`, mul then add.
#[inline(always)]
fn horner<V: Simd>(s: V, x: V::F, coefficients: &[f32]) -> V::F {
    let mut acc = s.splat(coefficients[0]);
    for c in &coefficients[1..] {
        acc = s.add(s.mul(acc, x), s.splat(*c));
    }
    acc
}

/// `2^k` for integer lanes `k` in `[-126, 127]`.
#[inline(always)]
fn pow2i<V: Simd>(s: V, k: V::U) -> V::F {
    s.from_bits(s.shl_u(s.add_u(k, s.splat_u(127)), 23))
}

pub(crate) const FOPI: f32 = 1.273_239_5; // 4 / pi
pub(crate) const DP1: f32 = 0.785_156_25;
pub(crate) const DP2: f32 = 2.418_756_5e-4;
pub(crate) const DP3: f32 = 3.774_895e-8;
pub(crate) const SIN_P: [f32; 3] = [-1.951_529_6e-4, 8.332_161e-3, -1.666_665_5e-1];
pub(crate) const COS_P: [f32; 3] = [2.443_315_7e-5, -1.388_731_6e-3, 4.166_664_6e-2];

/// Octant of `|x|` (made even) and `|x|` reduced by it into [-pi/4, pi/4].
#[inline(always)]
fn reduce<V: Simd>(s: V, ax: V::F) -> (V::U, V::F) {
    let j = s.trunc_i32(s.mul(ax, s.splat(FOPI)));
    let j = s.and_u(s.add_u(j, s.splat_u(1)), s.splat_u(!1));
    let y = s.i32_to_f32(j);
    let x = s.sub(ax, s.mul(y, s.splat(DP1)));
    let x = s.sub(x, s.mul(y, s.splat(DP2)));
    (j, s.sub(x, s.mul(y, s.splat(DP3))))
}

/// The sine and cosine polynomials at a reduced argument.
#[inline(always)]
fn sin_cos_poly<V: Simd>(s: V, x: V::F) -> (V::F, V::F) {
    let z = s.mul(x, x);
    let sin = s.add(s.mul(s.mul(horner(s, z, &SIN_P), z), x), x);
    let cos = s.mul(s.mul(horner(s, z, &COS_P), z), z);
    let cos = s.add(s.sub(cos, s.mul(s.splat(0.5), z)), s.splat(1.0));
    (sin, cos)
}

/// Sine and cosine from one range reduction: the only definition of both ([`sin`] and
/// [`cos`] take one half, and inlining drops the other).
#[inline(always)]
pub fn sin_cos<V: Simd>(s: V, x: V::F) -> (V::F, V::F) {
    let (j, r) = reduce(s, abs(s, x));
    let (ps, pc) = sin_cos_poly(s, r);
    let sin_sign = s.xor_u(
        s.and_u(s.to_bits(x), s.splat_u(SIGN)),
        s.shl_u(s.and_u(j, s.splat_u(4)), 29),
    );
    let sin_poly = s.eq_u(s.and_u(j, s.splat_u(2)), s.splat_u(0));
    let sin = s.from_bits(s.xor_u(s.to_bits(s.select(sin_poly, ps, pc)), sin_sign));
    let jc = s.sub_u(j, s.splat_u(2));
    let cos_sign = s.shl_u(s.and_u(s.xor_u(jc, s.splat_u(u32::MAX)), s.splat_u(4)), 29);
    let cos_poly = s.eq_u(s.and_u(jc, s.splat_u(2)), s.splat_u(0));
    let cos = s.from_bits(s.xor_u(s.to_bits(s.select(cos_poly, ps, pc)), cos_sign));
    (sin, cos)
}

/// Sine.
#[inline(always)]
pub fn sin<V: Simd>(s: V, x: V::F) -> V::F {
    sin_cos(s, x).0
}

/// Cosine.
#[inline(always)]
pub fn cos<V: Simd>(s: V, x: V::F) -> V::F {
    sin_cos(s, x).1
}

pub(crate) const LOG2E: f32 = std::f32::consts::LOG2_E;
pub(crate) const LN2_HI: f32 = 0.693_359_4;
pub(crate) const LN2_LO: f32 = -2.121_944_4e-4;
pub(crate) const EXP_P: [f32; 6] = [
    1.987_569_1e-4,
    1.398_2e-3,
    8.333_452e-3,
    4.166_579_6e-2,
    1.666_666_5e-1,
    5e-1,
];

/// `e^x`: overflows to infinity above ~88.72, keeps denormal results, NaN stays NaN.
#[inline(always)]
pub fn exp<V: Simd>(s: V, x: V::F) -> V::F {
    let xc = s.min_raw(s.max_raw(x, s.splat(-104.0)), s.splat(89.0));
    let n = round(s, s.mul(xc, s.splat(LOG2E)));
    let r = s.sub(xc, s.mul(n, s.splat(LN2_HI)));
    let r = s.sub(r, s.mul(n, s.splat(LN2_LO)));
    let p = s.mul(s.mul(horner(s, r, &EXP_P), r), r);
    let p = s.add(s.add(p, r), s.splat(1.0));
    let k = s.trunc_i32(n);
    let k1 = s.trunc_i32(s.mul(n, s.splat(0.5)));
    let k2 = s.sub_u(k, k1);
    let y = s.mul(s.mul(p, pow2i(s, k1)), pow2i(s, k2));
    s.select(is_nan(s, x), x, y)
}

pub(crate) const SQRT_HALF: f32 = std::f32::consts::FRAC_1_SQRT_2;
pub(crate) const LOG_P: [f32; 9] = [
    7.037_683_6e-2,
    -1.151_461e-1,
    1.167_699_9e-1,
    -1.242_014_1e-1,
    1.424_932_3e-1,
    -1.666_805_8e-1,
    2.000_071_4e-1,
    -2.499_999_4e-1,
    3.333_333e-1,
];

/// Natural logarithm: `log 0 = -inf`, negative inputs give NaN, `log inf = inf`.
#[inline(always)]
pub fn log<V: Simd>(s: V, x: V::F) -> V::F {
    let tiny = s.lt(x, s.splat(f32::MIN_POSITIVE));
    let xs = s.select(tiny, s.mul(x, s.splat(8_388_608.0)), x);
    let bits = s.to_bits(xs);
    let e = s.i32_to_f32(s.sub_u(s.shr_u(bits, 23), s.splat_u(126)));
    let e = s.sub(e, s.select(tiny, s.splat(23.0), s.splat(0.0)));
    let m = s.from_bits(s.or_u(
        s.and_u(bits, s.splat_u(0x007F_FFFF)),
        s.splat_u(0x3F00_0000),
    ));
    let below = s.lt(m, s.splat(SQRT_HALF));
    let e = s.sub(e, s.select(below, s.splat(1.0), s.splat(0.0)));
    let xm = s.sub(s.add(m, s.select(below, m, s.splat(0.0))), s.splat(1.0));
    let z = s.mul(xm, xm);
    let y = s.mul(s.mul(horner(s, xm, &LOG_P), xm), z);
    let y = s.add(y, s.mul(e, s.splat(LN2_LO)));
    let y = s.sub(y, s.mul(s.splat(0.5), z));
    let r = s.add(s.add(xm, y), s.mul(e, s.splat(LN2_HI)));
    let r = s.select(s.eq(x, s.splat(f32::INFINITY)), x, r);
    let r = s.select(s.lt(x, s.splat(0.0)), s.splat(f32::NAN), r);
    let r = s.select(s.eq(x, s.splat(0.0)), s.splat(f32::NEG_INFINITY), r);
    s.select(is_nan(s, x), x, r)
}

pub(crate) const TANH_P: [f32; 5] = [
    -5.704_988_7e-3,
    2.063_909e-2,
    -5.373_971_6e-2,
    1.333_144_2e-1,
    -3.333_328e-1,
];

/// Hyperbolic tangent.
#[inline(always)]
pub fn tanh<V: Simd>(s: V, x: V::F) -> V::F {
    let ax = abs(s, x);
    let z = s.mul(x, x);
    let small = s.add(s.mul(s.mul(horner(s, z, &TANH_P), z), x), x);
    let e = exp(s, s.add(ax, ax));
    let large = s.sub(s.splat(1.0), s.div(s.splat(2.0), s.add(e, s.splat(1.0))));
    let large = s.from_bits(s.or_u(s.to_bits(large), s.and_u(s.to_bits(x), s.splat_u(SIGN))));
    s.select(s.lt(ax, s.splat(0.625)), small, large)
}

#[allow(clippy::approx_constant)] // Cephes' coefficient, kept verbatim.
pub(crate) const ERF_T: [f32; 7] = [
    7.853_861_4e-5,
    -8.010_193_6e-4,
    5.188_327_7e-3,
    -2.685_381_2e-2,
    1.128_358_5e-1,
    -3.761_262_6e-1,
    1.128_379_2,
];
pub(crate) const ERFC_P: [f32; 9] = [
    2.326_82e-2,
    -1.387_039_4e-1,
    3.687_424_6e-1,
    -5.824_733e-1,
    6.210_004_6e-1,
    -4.944_515_3e-1,
    3.404_88e-1,
    -2.741_127e-1,
    5.638_259_4e-1,
];
pub(crate) const ERFC_R: [f32; 8] = [
    -1.047_766_4e1,
    1.297_72e1,
    -7.495_518_7,
    2.921_019,
    -1.015_265_3,
    4.218_463_3e-1,
    -2.820_767_4e-1,
    5.641_895e-1,
];

/// The error function.
#[inline(always)]
pub fn erf<V: Simd>(s: V, x: V::F) -> V::F {
    let ax = abs(s, x);
    let z = s.mul(x, x);
    let small = s.mul(x, horner(s, z, &ERF_T));
    let a = s.max_raw(s.min_raw(ax, s.splat(10.0)), s.splat(1.0));
    let ez = exp(s, neg(s, s.mul(a, a)));
    let q = s.div(s.splat(1.0), a);
    let qq = s.mul(q, q);
    let p = s.select(
        s.lt(a, s.splat(2.0)),
        horner(s, qq, &ERFC_P),
        horner(s, qq, &ERFC_R),
    );
    let large = s.sub(s.splat(1.0), s.mul(s.mul(ez, q), p));
    let large = s.from_bits(s.or_u(s.to_bits(large), s.and_u(s.to_bits(x), s.splat_u(SIGN))));
    let r = s.select(s.lt(ax, s.splat(1.0)), small, large);
    s.select(is_nan(s, x), x, r)
}

/// `x^y` as `exp(y log |x|)`, with `x^0 = 1`, `1^y = 1`, negative bases defined for
/// integer `y` (sign by parity) and NaN otherwise.
#[inline(always)]
pub fn pow<V: Simd>(s: V, x: V::F, y: V::F) -> V::F {
    let r = exp(s, s.mul(y, log(s, abs(s, x))));
    let ay = abs(s, y);
    let huge = s.le(s.splat(8_388_608.0), ay);
    let integer = s.mask_or(huge, s.eq(round(s, y), y));
    let odd_bit = s.and_u(s.trunc_i32(y), s.splat_u(1));
    let odd = s.mask_and(
        s.lt(ay, s.splat(16_777_216.0)),
        s.eq_u(odd_bit, s.splat_u(1)),
    );
    let negative = s.eq_u(s.shr_u(s.to_bits(x), 31), s.splat_u(1));
    let flip = s.mask_and(s.mask_and(negative, integer), odd);
    let r = s.select(flip, neg(s, r), r);
    let r = s.select(
        s.mask_and(s.lt(x, s.splat(0.0)), s.mask_not(integer)),
        s.splat(f32::NAN),
        r,
    );
    let one = s.mask_or(s.eq(y, s.splat(0.0)), s.eq(x, s.splat(1.0)));
    s.select(one, s.splat(1.0), r)
}
