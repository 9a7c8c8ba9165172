//! The per-vector loops an op runs as (one map over a chunk's vectors per op), mask and
//! bool conversions, comparisons, and the guard test of a vector. `#[inline(always)]`, like
//! everything `kernel` calls, so they compile under the SIMD level's target features.

use super::simd::Simd;
use crate::graph::CompareOp;

/// Whether some valid lane of vector `v` of a `len`-lane slot has `cond == when`.
///
/// # Safety
/// Vector `v` lies within the padded slot at `c`.
#[inline(always)]
pub(super) unsafe fn vector_taken<V: Simd>(
    s: V,
    c: *const u32,
    len: usize,
    v: usize,
    when: bool,
) -> bool {
    // SAFETY: see the contract.
    let m = unsafe { s.load_u(c.add(v * V::LANES)) };
    let zero = s.eq_u(m, s.splat_u(0));
    let mut bits = s.mask_bits(if when { s.mask_not(zero) } else { zero });
    let valid = len - v * V::LANES;
    if valid < V::LANES {
        bits &= (1u64 << valid) - 1;
    }
    bits != 0
}

/// A lane-wise map over floats (a float map is a word map between bit casts, which cost
/// nothing in registers).
#[inline(always)]
pub(super) unsafe fn map_f<V: Simd>(
    s: V,
    lo: usize,
    hi: usize,
    d: *mut u32,
    a: *const u32,
    f: impl Fn(V::F) -> V::F,
) {
    // SAFETY: the caller's contract.
    unsafe {
        map_u(
            s,
            lo,
            hi,
            d,
            a,
            #[inline(always)]
            |x| s.to_bits(f(s.from_bits(x))),
        )
    }
}

/// A lane-wise map of two float operands.
#[inline(always)]
pub(super) unsafe fn map_ff<V: Simd>(
    s: V,
    lo: usize,
    hi: usize,
    d: *mut u32,
    a: *const u32,
    b: *const u32,
    f: impl Fn(V::F, V::F) -> V::F,
) {
    // SAFETY: the caller's contract.
    unsafe {
        map_uu(
            s,
            lo,
            hi,
            d,
            a,
            b,
            #[inline(always)]
            |x, y| s.to_bits(f(s.from_bits(x), s.from_bits(y))),
        )
    }
}

#[inline(always)]
pub(super) unsafe fn map_uu<V: Simd>(
    s: V,
    lo: usize,
    hi: usize,
    d: *mut u32,
    a: *const u32,
    b: *const u32,
    f: impl Fn(V::U, V::U) -> V::U,
) {
    let mut i = lo;
    while i < hi {
        // SAFETY: `lo..hi` lies within the slots.
        unsafe {
            let x = s.load_u(a.add(i));
            let y = s.load_u(b.add(i));
            s.store_u(d.add(i), f(x, y));
        }
        i += V::LANES;
    }
}

/// A lane-wise map whose operands and result are raw words (any type).
#[inline(always)]
pub(super) unsafe fn map_u<V: Simd>(
    s: V,
    lo: usize,
    hi: usize,
    d: *mut u32,
    a: *const u32,
    f: impl Fn(V::U) -> V::U,
) {
    let mut i = lo;
    while i < hi {
        // SAFETY: `lo..hi` lies within both slots.
        unsafe { s.store_u(d.add(i), f(s.load_u(a.add(i)))) };
        i += V::LANES;
    }
}

#[inline(always)]
pub(super) fn to_bool<V: Simd>(s: V, m: V::M) -> V::U {
    s.select_u(m, s.splat_u(1), s.splat_u(0))
}

#[inline(always)]
pub(super) fn truthy<V: Simd>(s: V, x: V::U) -> V::M {
    s.mask_not(s.eq_u(x, s.splat_u(0)))
}

#[inline(always)]
pub(super) fn compare_f<V: Simd>(s: V, op: CompareOp, x: V::F, y: V::F) -> V::M {
    match op {
        CompareOp::Lt => s.lt(x, y),
        CompareOp::Le => s.le(x, y),
        CompareOp::Gt => s.lt(y, x),
        CompareOp::Ge => s.le(y, x),
        CompareOp::Eq => s.eq(x, y),
        CompareOp::Ne => s.ne(x, y),
    }
}

#[inline(always)]
pub(super) fn compare_u<V: Simd>(s: V, op: CompareOp, x: V::U, y: V::U) -> V::M {
    match op {
        CompareOp::Lt => s.lt_u(x, y),
        CompareOp::Le => s.mask_not(s.lt_u(y, x)),
        CompareOp::Gt => s.lt_u(y, x),
        CompareOp::Ge => s.mask_not(s.lt_u(x, y)),
        CompareOp::Eq => s.eq_u(x, y),
        CompareOp::Ne => s.mask_not(s.eq_u(x, y)),
    }
}
