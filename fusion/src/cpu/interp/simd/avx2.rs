//! The AVX2 level: 8 lanes, no FMA (so results equal the scalar level's bit for bit).

use std::arch::x86_64::*;

use super::{Simd, WithSimd};

/// The level's vector types, short for the one-line methods below.
type F = __m256;
type U = __m256i;

x86_token!(Avx2, "avx2", "AVX2");

// SAFETY (every `unsafe` block below): an `Avx2` token exists only when AVX2 is available.
impl Simd for Avx2 {
    const LANES: usize = 8;
    type F = __m256;
    type U = __m256i;
    type M = __m256i;

    simd_fns! {
        fn splat(x: f32) -> F { unsafe { _mm256_set1_ps(x) } }
        fn splat_u(x: u32) -> U { unsafe { _mm256_set1_epi32(x as i32) } }
        unsafe fn load(p: *const f32) -> F { unsafe { _mm256_loadu_ps(p) } }
        unsafe fn store(p: *mut f32, v: F) { unsafe { _mm256_storeu_ps(p, v) } }
        unsafe fn load_u(p: *const u32) -> U { unsafe { _mm256_loadu_si256(p.cast()) } }
        unsafe fn store_u(p: *mut u32, v: U) { unsafe { _mm256_storeu_si256(p.cast(), v) } }
        fn add(a: F, b: F) -> F { unsafe { _mm256_add_ps(a, b) } }
        fn sub(a: F, b: F) -> F { unsafe { _mm256_sub_ps(a, b) } }
        fn mul(a: F, b: F) -> F { unsafe { _mm256_mul_ps(a, b) } }
        fn div(a: F, b: F) -> F { unsafe { _mm256_div_ps(a, b) } }
        fn sqrt(a: F) -> F { unsafe { _mm256_sqrt_ps(a) } }
        fn min_raw(a: F, b: F) -> F { unsafe { _mm256_min_ps(a, b) } }
        fn max_raw(a: F, b: F) -> F { unsafe { _mm256_max_ps(a, b) } }
        fn lt(a: F, b: F) -> U { unsafe { _mm256_castps_si256(_mm256_cmp_ps::<_CMP_LT_OQ>(a, b)) } }
        fn le(a: F, b: F) -> U { unsafe { _mm256_castps_si256(_mm256_cmp_ps::<_CMP_LE_OQ>(a, b)) } }
        fn eq(a: F, b: F) -> U { unsafe { _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(a, b)) } }
        fn ne(a: F, b: F) -> U {
            unsafe { _mm256_castps_si256(_mm256_cmp_ps::<_CMP_NEQ_UQ>(a, b)) }
        }
        fn select(m: U, a: F, b: F) -> F {
            unsafe { _mm256_blendv_ps(b, a, _mm256_castsi256_ps(m)) }
        }
        fn to_bits(a: F) -> U { unsafe { _mm256_castps_si256(a) } }
        fn from_bits(a: U) -> F { unsafe { _mm256_castsi256_ps(a) } }
        fn i32_to_f32(a: U) -> F { unsafe { _mm256_cvtepi32_ps(a) } }
        fn trunc_i32(a: F) -> U { unsafe { _mm256_cvttps_epi32(a) } }
        fn add_u(a: U, b: U) -> U { unsafe { _mm256_add_epi32(a, b) } }
        fn sub_u(a: U, b: U) -> U { unsafe { _mm256_sub_epi32(a, b) } }
        fn mul_u(a: U, b: U) -> U { unsafe { _mm256_mullo_epi32(a, b) } }
        fn and_u(a: U, b: U) -> U { unsafe { _mm256_and_si256(a, b) } }
        fn or_u(a: U, b: U) -> U { unsafe { _mm256_or_si256(a, b) } }
        fn xor_u(a: U, b: U) -> U { unsafe { _mm256_xor_si256(a, b) } }
        fn shl_u(a: U, n: u32) -> U { unsafe { _mm256_sll_epi32(a, _mm_cvtsi32_si128(n as i32)) } }
        fn shr_u(a: U, n: u32) -> U { unsafe { _mm256_srl_epi32(a, _mm_cvtsi32_si128(n as i32)) } }
        fn min_u(a: U, b: U) -> U { unsafe { _mm256_min_epu32(a, b) } }
        fn max_u(a: U, b: U) -> U { unsafe { _mm256_max_epu32(a, b) } }
        fn eq_u(a: U, b: U) -> U { unsafe { _mm256_cmpeq_epi32(a, b) } }
        fn select_u(m: U, a: U, b: U) -> U { unsafe { _mm256_blendv_epi8(b, a, m) } }
        fn mask_and(a: U, b: U) -> U { unsafe { _mm256_and_si256(a, b) } }
        fn mask_or(a: U, b: U) -> U { unsafe { _mm256_or_si256(a, b) } }
        fn mask_not(a: U) -> U { unsafe { _mm256_xor_si256(a, _mm256_set1_epi32(-1)) } }
        fn mask_bits(a: U) -> u64 {
            unsafe { _mm256_movemask_ps(_mm256_castsi256_ps(a)) as u32 as u64 }
        }
    }

    #[inline(always)]
    unsafe fn store_rows4(self, p: *mut f32, [x, y, z, w]: [__m256; 4]) {
        unsafe {
            // Rows k and k + 4 share a 128-bit half after the unpacks.
            let (xy_lo, xy_hi) = (_mm256_unpacklo_ps(x, y), _mm256_unpackhi_ps(x, y));
            let (zw_lo, zw_hi) = (_mm256_unpacklo_ps(z, w), _mm256_unpackhi_ps(z, w));
            let pd = _mm256_castps_pd;
            let r04 = _mm256_castpd_ps(_mm256_unpacklo_pd(pd(xy_lo), pd(zw_lo)));
            let r15 = _mm256_castpd_ps(_mm256_unpackhi_pd(pd(xy_lo), pd(zw_lo)));
            let r26 = _mm256_castpd_ps(_mm256_unpacklo_pd(pd(xy_hi), pd(zw_hi)));
            let r37 = _mm256_castpd_ps(_mm256_unpackhi_pd(pd(xy_hi), pd(zw_hi)));
            _mm256_storeu_ps(p, _mm256_permute2f128_ps(r04, r15, 0x20));
            _mm256_storeu_ps(p.add(8), _mm256_permute2f128_ps(r26, r37, 0x20));
            _mm256_storeu_ps(p.add(16), _mm256_permute2f128_ps(r04, r15, 0x31));
            _mm256_storeu_ps(p.add(24), _mm256_permute2f128_ps(r26, r37, 0x31));
        }
    }
    #[inline(always)]
    fn u32_to_f32(self, a: __m256i) -> __m256 {
        // hi * 2^16 and lo are exact floats; their sum rounds once, as `u32 as f32` does.
        unsafe {
            let hi = _mm256_cvtepi32_ps(_mm256_srli_epi32::<16>(a));
            let lo = _mm256_cvtepi32_ps(_mm256_and_si256(a, _mm256_set1_epi32(0xFFFF)));
            _mm256_add_ps(_mm256_mul_ps(hi, _mm256_set1_ps(65536.0)), lo)
        }
    }
    #[inline(always)]
    fn rotl_u(self, a: U, n: u32) -> U {
        self.or_u(self.shl_u(a, n), self.shr_u(a, 32 - n))
    }
    #[inline(always)]
    fn lt_u(self, a: __m256i, b: __m256i) -> __m256i {
        unsafe {
            let bias = _mm256_set1_epi32(i32::MIN);
            _mm256_cmpgt_epi32(_mm256_xor_si256(b, bias), _mm256_xor_si256(a, bias))
        }
    }
}
