//! The vector trait every CPU kernel is written on, its three levels, and run-time dispatch.
//!
//! # Why `std::arch` behind a small trait (and not pulp, macerator or `fearless_simd`)
//!
//! - Every level must give **bit-identical** results, so the kernels may only use operations
//!   whose IEEE result is fixed (add, sub, mul, div, sqrt, compares, exact conversions) and
//!   never a fused multiply-add: a trait of ~40 such primitives makes that a property of the
//!   code, not of a crate's build flags (`wide`'s `mul_add` fuses or not per build).
//! - None of those crates has sin/cos/exp/log, so the numeric kernels ([`super::math`]) are
//!   ours anyway; the remaining surface (load, store, arithmetic, masks) is small.
//! - AVX-512 intrinsics and `#[target_feature]` are stable since Rust 1.89; runtime choice
//!   is `is_x86_feature_detected!`. No new dependency.
//!
//! A level is a zero-sized token ([`Scalar`], [`Avx2`], [`Avx512`]) that can only be obtained
//! when the CPU has the features, so calling its (safe) methods is sound. Code generic over
//! [`Simd`] runs under the right `#[target_feature]` through [`SimdLevel::dispatch`] and a
//! [`WithSimd`] body, the pattern pulp uses; everything below the entry is `#[inline(always)]`.

/// Writes methods of a [`Simd`] impl, each `#[inline(always)]` so that it compiles under the
/// level's target features (see [`WithSimd`]): `fn name(args) -> T { body }`, or `unsafe fn`
/// for the pointer methods. `self` is implied.
macro_rules! simd_fns {
    () => {};
    (unsafe fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)? $body:block $($rest:tt)*) => {
        #[inline(always)]
        unsafe fn $name(self, $($arg: $ty),*) $(-> $ret)? $body
        simd_fns! { $($rest)* }
    };
    (fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block $($rest:tt)*) => {
        #[inline(always)]
        fn $name(self, $($arg: $ty),*) -> $ret $body
        simd_fns! { $($rest)* }
    };
}

/// Defines the token of an x86 level `$name`: it exists only on CPUs with `$feature`, and
/// runs [`WithSimd`] bodies compiled with that feature enabled.
#[cfg(target_arch = "x86_64")]
macro_rules! x86_token {
    ($name:ident, $feature:tt, $level:literal) => {
        #[doc = concat!($level, " token; exists only on CPUs with ", $level, ".")]
        #[derive(Debug, Clone, Copy)]
        pub struct $name {
            _private: (),
        }

        impl $name {
            #[doc = concat!("The token, if this CPU has ", $level, ".")]
            pub fn try_new() -> Option<Self> {
                is_x86_feature_detected!($feature).then_some($name { _private: () })
            }

            #[doc = concat!("Runs `body` compiled with ", $level, " enabled.")]
            pub fn vectorize<W: WithSimd>(self, body: W) -> W::Output {
                #[target_feature(enable = $feature)]
                fn inner<W: WithSimd>(simd: $name, body: W) -> W::Output {
                    body.with_simd(simd)
                }
                // SAFETY: the token proves the CPU has the feature.
                unsafe { inner(self, body) }
            }
        }
    };
}

mod scalar;
pub use scalar::Scalar;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "x86_64")]
pub use avx2::Avx2;
#[cfg(target_arch = "x86_64")]
pub use avx512::Avx512;

use std::str::FromStr;

/// A vector instruction set: `LANES` `f32`/`u32` lanes and a lane mask.
///
/// Float operations are IEEE-754 single precision, round to nearest even, never fused.
/// `u32` arithmetic wraps. Masks come from comparisons and choose lanes in `select`.
pub trait Simd: Copy + Send + Sync + 'static {
    /// Lanes per vector.
    const LANES: usize;
    /// `LANES` floats.
    type F: Copy;
    /// `LANES` unsigned 32-bit integers.
    type U: Copy;
    /// One boolean per lane.
    type M: Copy;

    /// Every lane `x`.
    fn splat(self, x: f32) -> Self::F;
    /// Every lane `x`.
    fn splat_u(self, x: u32) -> Self::U;
    /// Loads `LANES` floats.
    ///
    /// # Safety
    /// `p` must be valid for reading `LANES` floats (no alignment needed).
    unsafe fn load(self, p: *const f32) -> Self::F;
    /// Stores `LANES` floats.
    ///
    /// # Safety
    /// `p` must be valid for writing `LANES` floats (no alignment needed).
    unsafe fn store(self, p: *mut f32, v: Self::F);
    /// Stores four columns as `LANES` consecutive rows of four floats:
    /// `p[4 k + c] = columns[c][k]` (a transpose in registers, for packed observations).
    ///
    /// # Safety
    /// `p` must be valid for writing `4 * LANES` floats (no alignment needed).
    unsafe fn store_rows4(self, p: *mut f32, columns: [Self::F; 4]);
    /// Loads `LANES` integers.
    ///
    /// # Safety
    /// `p` must be valid for reading `LANES` integers.
    unsafe fn load_u(self, p: *const u32) -> Self::U;
    /// Stores `LANES` integers.
    ///
    /// # Safety
    /// `p` must be valid for writing `LANES` integers.
    unsafe fn store_u(self, p: *mut u32, v: Self::U);

    /// `a + b`.
    fn add(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a - b`.
    fn sub(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a * b`.
    fn mul(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a / b`.
    fn div(self, a: Self::F, b: Self::F) -> Self::F;
    /// Correctly rounded square root.
    fn sqrt(self, a: Self::F) -> Self::F;
    /// `a < b ? a : b` (x86 `minps`: `b` when either is NaN).
    fn min_raw(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a > b ? a : b` (x86 `maxps`: `b` when either is NaN).
    fn max_raw(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a < b` (false when either is NaN).
    fn lt(self, a: Self::F, b: Self::F) -> Self::M;
    /// `a <= b` (false when either is NaN).
    fn le(self, a: Self::F, b: Self::F) -> Self::M;
    /// `a == b` (false when either is NaN).
    fn eq(self, a: Self::F, b: Self::F) -> Self::M;
    /// `a != b` (true when either is NaN).
    fn ne(self, a: Self::F, b: Self::F) -> Self::M;
    /// `m ? a : b` per lane.
    fn select(self, m: Self::M, a: Self::F, b: Self::F) -> Self::F;
    /// The bits of each float.
    fn to_bits(self, a: Self::F) -> Self::U;
    /// Floats from bits.
    #[allow(clippy::wrong_self_convention)]
    fn from_bits(self, a: Self::U) -> Self::F;
    /// Signed integer (the lane's bits as `i32`) to float, round to nearest.
    fn i32_to_f32(self, a: Self::U) -> Self::F;
    /// Unsigned integer to float, round to nearest.
    fn u32_to_f32(self, a: Self::U) -> Self::F;
    /// Float to `i32` truncating toward zero; NaN and out-of-range give `i32::MIN` (x86).
    fn trunc_i32(self, a: Self::F) -> Self::U;

    /// `a + b` (wrapping).
    fn add_u(self, a: Self::U, b: Self::U) -> Self::U;
    /// `a - b` (wrapping).
    fn sub_u(self, a: Self::U, b: Self::U) -> Self::U;
    /// `a * b` (wrapping, low 32 bits).
    fn mul_u(self, a: Self::U, b: Self::U) -> Self::U;
    /// `a & b`.
    fn and_u(self, a: Self::U, b: Self::U) -> Self::U;
    /// `a | b`.
    fn or_u(self, a: Self::U, b: Self::U) -> Self::U;
    /// `a ^ b`.
    fn xor_u(self, a: Self::U, b: Self::U) -> Self::U;
    /// `a << n` (`n < 32`; a constant after inlining).
    fn shl_u(self, a: Self::U, n: u32) -> Self::U;
    /// `a >> n`, logical (`n < 32`).
    fn shr_u(self, a: Self::U, n: u32) -> Self::U;
    /// `a` rotated left by `n` (`0 < n < 32`).
    fn rotl_u(self, a: Self::U, n: u32) -> Self::U;
    /// Unsigned minimum.
    fn min_u(self, a: Self::U, b: Self::U) -> Self::U;
    /// Unsigned maximum.
    fn max_u(self, a: Self::U, b: Self::U) -> Self::U;
    /// `a == b`.
    fn eq_u(self, a: Self::U, b: Self::U) -> Self::M;
    /// `a < b`, unsigned.
    fn lt_u(self, a: Self::U, b: Self::U) -> Self::M;
    /// `m ? a : b` per lane.
    fn select_u(self, m: Self::M, a: Self::U, b: Self::U) -> Self::U;

    /// Lane-wise and.
    fn mask_and(self, a: Self::M, b: Self::M) -> Self::M;
    /// Lane-wise or.
    fn mask_or(self, a: Self::M, b: Self::M) -> Self::M;
    /// Lane-wise not.
    fn mask_not(self, a: Self::M) -> Self::M;
    /// Bit `i` set when lane `i` is set.
    fn mask_bits(self, a: Self::M) -> u64;
}

/// A body generic over the vector level, run by [`SimdLevel::dispatch`].
pub trait WithSimd {
    /// What the body returns.
    type Output;
    /// Runs the body with level `V`. Mark implementations `#[inline(always)]` so the body is
    /// compiled under the level's target features.
    fn with_simd<V: Simd>(self, simd: V) -> Self::Output;
}

/// An instruction-set level of the CPU runtime, named (`Display`) in lower case.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, strum::Display, strum::EnumIter,
)]
#[strum(serialize_all = "lowercase")]
pub enum SimdLevel {
    /// Portable scalar code, one lane at a time (any CPU).
    Scalar,
    /// x86-64 AVX2, 8 lanes (FMA is deliberately not used).
    Avx2,
    /// x86-64 AVX-512F, 16 lanes.
    Avx512,
}

impl SimdLevel {
    /// Every level, narrowest first.
    pub const ALL: [SimdLevel; 3] = [SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512];

    /// The widest level this CPU supports, unless `CARTFUSE_CPU_SIMD` (`scalar`, `avx2`,
    /// `avx512`) asks for a narrower one.
    pub fn detect() -> SimdLevel {
        let best = Self::ALL
            .into_iter()
            .rev()
            .find(|l| l.is_supported())
            .unwrap_or(SimdLevel::Scalar);
        match std::env::var("CARTFUSE_CPU_SIMD").map(|v| v.parse::<SimdLevel>()) {
            Ok(Ok(forced)) => forced.min(best),
            Ok(Err(why)) => {
                // The CLI and the Python package refuse it first (`device::check_environment`).
                static WARNED: std::sync::Once = std::sync::Once::new();
                WARNED.call_once(|| tracing::warn!("ignoring CARTFUSE_CPU_SIMD: {why}"));
                best
            }
            Err(_) => best,
        }
    }

    /// Whether this CPU can run the level.
    pub fn is_supported(self) -> bool {
        /// A body that does nothing.
        struct Nothing;
        impl WithSimd for Nothing {
            type Output = ();
            fn with_simd<V: Simd>(self, _: V) {}
        }
        self.dispatch(Nothing).is_some()
    }

    /// Lanes per vector.
    pub fn lanes(self) -> usize {
        match self {
            SimdLevel::Scalar => 1,
            SimdLevel::Avx2 => 8,
            SimdLevel::Avx512 => 16,
        }
    }

    /// Runs `body` at this level, or `None` when the CPU does not support it.
    pub fn dispatch<W: WithSimd>(self, body: W) -> Option<W::Output> {
        match self {
            SimdLevel::Scalar => Some(body.with_simd(Scalar)),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 => Avx2::try_new().map(|s| s.vectorize(body)),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 => Avx512::try_new().map(|s| s.vectorize(body)),
            #[cfg(not(target_arch = "x86_64"))]
            _ => None,
        }
    }
}

impl FromStr for SimdLevel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        crate::switches::parse_choice(s, "SIMD level")
    }
}
