//! The AVX-512F level: 16 lanes, `__mmask16` lane masks, no FMA.

use std::arch::x86_64::*;

use super::{Simd, WithSimd};

/// The level's vector types, short for the one-line methods below.
type F = __m512;
type U = __m512i;
type M = __mmask16;

x86_token!(Avx512, "avx512f", "AVX-512F");

// SAFETY (every `unsafe` block below): an `Avx512` token exists only when AVX-512F is available.
impl Simd for Avx512 {
    const LANES: usize = 16;
    type F = __m512;
    type U = __m512i;
    type M = __mmask16;

    simd_fns! {
        fn splat(x: f32) -> F { unsafe { _mm512_set1_ps(x) } }
        fn splat_u(x: u32) -> U { unsafe { _mm512_set1_epi32(x as i32) } }
        unsafe fn load(p: *const f32) -> F { unsafe { _mm512_loadu_ps(p) } }
        unsafe fn store(p: *mut f32, v: F) { unsafe { _mm512_storeu_ps(p, v) } }
        unsafe fn load_u(p: *const u32) -> U { unsafe { _mm512_loadu_epi32(p.cast()) } }
        unsafe fn store_u(p: *mut u32, v: U) { unsafe { _mm512_storeu_epi32(p.cast(), v) } }
        fn add(a: F, b: F) -> F { unsafe { _mm512_add_ps(a, b) } }
        fn sub(a: F, b: F) -> F { unsafe { _mm512_sub_ps(a, b) } }
        fn mul(a: F, b: F) -> F { unsafe { _mm512_mul_ps(a, b) } }
        fn div(a: F, b: F) -> F { unsafe { _mm512_div_ps(a, b) } }
        fn sqrt(a: F) -> F { unsafe { _mm512_sqrt_ps(a) } }
        fn min_raw(a: F, b: F) -> F { unsafe { _mm512_min_ps(a, b) } }
        fn max_raw(a: F, b: F) -> F { unsafe { _mm512_max_ps(a, b) } }
        fn lt(a: F, b: F) -> M { unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, b) } }
        fn le(a: F, b: F) -> M { unsafe { _mm512_cmp_ps_mask::<_CMP_LE_OQ>(a, b) } }
        fn eq(a: F, b: F) -> M { unsafe { _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(a, b) } }
        fn ne(a: F, b: F) -> M { unsafe { _mm512_cmp_ps_mask::<_CMP_NEQ_UQ>(a, b) } }
        fn select(m: M, a: F, b: F) -> F { unsafe { _mm512_mask_blend_ps(m, b, a) } }
        fn to_bits(a: F) -> U { unsafe { _mm512_castps_si512(a) } }
        fn from_bits(a: U) -> F { unsafe { _mm512_castsi512_ps(a) } }
        fn i32_to_f32(a: U) -> F { unsafe { _mm512_cvtepi32_ps(a) } }
        fn u32_to_f32(a: U) -> F { unsafe { _mm512_cvtepu32_ps(a) } }
        fn trunc_i32(a: F) -> U { unsafe { _mm512_cvttps_epi32(a) } }
        fn add_u(a: U, b: U) -> U { unsafe { _mm512_add_epi32(a, b) } }
        fn sub_u(a: U, b: U) -> U { unsafe { _mm512_sub_epi32(a, b) } }
        fn mul_u(a: U, b: U) -> U { unsafe { _mm512_mullo_epi32(a, b) } }
        fn and_u(a: U, b: U) -> U { unsafe { _mm512_and_si512(a, b) } }
        fn or_u(a: U, b: U) -> U { unsafe { _mm512_or_si512(a, b) } }
        fn xor_u(a: U, b: U) -> U { unsafe { _mm512_xor_si512(a, b) } }
        fn shl_u(a: U, n: u32) -> U { unsafe { _mm512_sll_epi32(a, _mm_cvtsi32_si128(n as i32)) } }
        fn shr_u(a: U, n: u32) -> U { unsafe { _mm512_srl_epi32(a, _mm_cvtsi32_si128(n as i32)) } }
        fn rotl_u(a: U, n: u32) -> U {
            unsafe { _mm512_rolv_epi32(a, _mm512_set1_epi32(n as i32)) }
        }
        fn min_u(a: U, b: U) -> U { unsafe { _mm512_min_epu32(a, b) } }
        fn max_u(a: U, b: U) -> U { unsafe { _mm512_max_epu32(a, b) } }
        fn eq_u(a: U, b: U) -> M { unsafe { _mm512_cmpeq_epi32_mask(a, b) } }
        fn lt_u(a: U, b: U) -> M { unsafe { _mm512_cmplt_epu32_mask(a, b) } }
        fn select_u(m: M, a: U, b: U) -> U { unsafe { _mm512_mask_blend_epi32(m, b, a) } }
        fn mask_and(a: M, b: M) -> M { a & b }
        fn mask_or(a: M, b: M) -> M { a | b }
        fn mask_not(a: M) -> M { !a }
        fn mask_bits(a: M) -> u64 { u64::from(a) }
    }

    #[inline(always)]
    unsafe fn store_rows4(self, p: *mut f32, [x, y, z, w]: [__m512; 4]) {
        unsafe {
            // After the unpacks, 128-bit lane j of `r{k}` holds row 4 j + k.
            let (xy_lo, xy_hi) = (_mm512_unpacklo_ps(x, y), _mm512_unpackhi_ps(x, y));
            let (zw_lo, zw_hi) = (_mm512_unpacklo_ps(z, w), _mm512_unpackhi_ps(z, w));
            let pd = _mm512_castps_pd;
            let r0 = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(xy_lo), pd(zw_lo)));
            let r1 = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(xy_lo), pd(zw_lo)));
            let r2 = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(xy_hi), pd(zw_hi)));
            let r3 = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(xy_hi), pd(zw_hi)));
            // Lanes (0, 2) and (1, 3) of two vectors: rows [0, 8, 1, 9], [2, 10, 3, 11], ...
            const EVEN: i32 = 0b10_00_10_00;
            const ODD: i32 = 0b11_01_11_01;
            let (r0_8_1_9, r2_10_3_11) = (
                _mm512_shuffle_f32x4::<EVEN>(r0, r1),
                _mm512_shuffle_f32x4::<EVEN>(r2, r3),
            );
            let (r4_12_5_13, r6_14_7_15) = (
                _mm512_shuffle_f32x4::<ODD>(r0, r1),
                _mm512_shuffle_f32x4::<ODD>(r2, r3),
            );
            _mm512_storeu_ps(p, _mm512_shuffle_f32x4::<EVEN>(r0_8_1_9, r2_10_3_11));
            _mm512_storeu_ps(
                p.add(16),
                _mm512_shuffle_f32x4::<EVEN>(r4_12_5_13, r6_14_7_15),
            );
            _mm512_storeu_ps(p.add(32), _mm512_shuffle_f32x4::<ODD>(r0_8_1_9, r2_10_3_11));
            _mm512_storeu_ps(
                p.add(48),
                _mm512_shuffle_f32x4::<ODD>(r4_12_5_13, r6_14_7_15),
            );
        }
    }
}
