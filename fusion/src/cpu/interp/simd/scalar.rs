//! The portable level: one lane, plain Rust (any target).

use super::Simd;

/// One lane at a time; the reference every wider level must match bit for bit.
#[derive(Debug, Clone, Copy, Default)]
pub struct Scalar;

impl Simd for Scalar {
    const LANES: usize = 1;
    type F = f32;
    type U = u32;
    type M = bool;

    // SAFETY (the pointer methods): the caller guarantees the pointers are valid for the
    // access (see the trait).
    simd_fns! {
        unsafe fn load(p: *const f32) -> f32 { unsafe { p.read_unaligned() } }
        unsafe fn store(p: *mut f32, v: f32) { unsafe { p.write_unaligned(v) } }
        unsafe fn store_rows4(p: *mut f32, columns: [f32; 4]) {
            unsafe { p.cast::<[f32; 4]>().write_unaligned(columns) }
        }
        unsafe fn load_u(p: *const u32) -> u32 { unsafe { p.read_unaligned() } }
        unsafe fn store_u(p: *mut u32, v: u32) { unsafe { p.write_unaligned(v) } }
        fn splat(x: f32) -> f32 { x }
        fn splat_u(x: u32) -> u32 { x }
        fn add(a: f32, b: f32) -> f32 { a + b }
        fn sub(a: f32, b: f32) -> f32 { a - b }
        fn mul(a: f32, b: f32) -> f32 { a * b }
        fn div(a: f32, b: f32) -> f32 { a / b }
        fn sqrt(a: f32) -> f32 { a.sqrt() }
        fn min_raw(a: f32, b: f32) -> f32 { if a < b { a } else { b } }
        fn max_raw(a: f32, b: f32) -> f32 { if a > b { a } else { b } }
        fn lt(a: f32, b: f32) -> bool { a < b }
        fn le(a: f32, b: f32) -> bool { a <= b }
        fn eq(a: f32, b: f32) -> bool { a == b }
        fn ne(a: f32, b: f32) -> bool { a != b }
        fn select(m: bool, a: f32, b: f32) -> f32 { if m { a } else { b } }
        fn to_bits(a: f32) -> u32 { a.to_bits() }
        fn from_bits(a: u32) -> f32 { f32::from_bits(a) }
        fn i32_to_f32(a: u32) -> f32 { a as i32 as f32 }
        fn u32_to_f32(a: u32) -> f32 { a as f32 }
        fn add_u(a: u32, b: u32) -> u32 { a.wrapping_add(b) }
        fn sub_u(a: u32, b: u32) -> u32 { a.wrapping_sub(b) }
        fn mul_u(a: u32, b: u32) -> u32 { a.wrapping_mul(b) }
        fn and_u(a: u32, b: u32) -> u32 { a & b }
        fn or_u(a: u32, b: u32) -> u32 { a | b }
        fn xor_u(a: u32, b: u32) -> u32 { a ^ b }
        fn shl_u(a: u32, n: u32) -> u32 { a << n }
        fn shr_u(a: u32, n: u32) -> u32 { a >> n }
        fn rotl_u(a: u32, n: u32) -> u32 { a.rotate_left(n) }
        fn min_u(a: u32, b: u32) -> u32 { a.min(b) }
        fn max_u(a: u32, b: u32) -> u32 { a.max(b) }
        fn eq_u(a: u32, b: u32) -> bool { a == b }
        fn lt_u(a: u32, b: u32) -> bool { a < b }
        fn select_u(m: bool, a: u32, b: u32) -> u32 { if m { a } else { b } }
        fn mask_and(a: bool, b: bool) -> bool { a & b }
        fn mask_or(a: bool, b: bool) -> bool { a | b }
        fn mask_not(a: bool) -> bool { !a }
        fn mask_bits(a: bool) -> u64 { u64::from(a) }
    }

    #[inline(always)]
    fn trunc_i32(self, a: f32) -> u32 {
        if a.is_nan() || !(-2_147_483_648.0..2_147_483_648.0).contains(&a) {
            0x8000_0000
        } else {
            a as i32 as u32
        }
    }
}
