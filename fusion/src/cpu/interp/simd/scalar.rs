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

    #[inline(always)]
    fn splat(self, x: f32) -> f32 {
        x
    }
    #[inline(always)]
    fn splat_u(self, x: u32) -> u32 {
        x
    }
    #[inline(always)]
    unsafe fn load(self, p: *const f32) -> f32 {
        // SAFETY: the caller guarantees `p` is readable.
        unsafe { p.read_unaligned() }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32, v: f32) {
        // SAFETY: the caller guarantees `p` is writable.
        unsafe { p.write_unaligned(v) }
    }
    #[inline(always)]
    unsafe fn store_rows4(self, p: *mut f32, columns: [f32; 4]) {
        // SAFETY: the caller guarantees 4 writable floats.
        unsafe { p.cast::<[f32; 4]>().write_unaligned(columns) }
    }
    #[inline(always)]
    unsafe fn load_u(self, p: *const u32) -> u32 {
        // SAFETY: the caller guarantees `p` is readable.
        unsafe { p.read_unaligned() }
    }
    #[inline(always)]
    unsafe fn store_u(self, p: *mut u32, v: u32) {
        // SAFETY: the caller guarantees `p` is writable.
        unsafe { p.write_unaligned(v) }
    }
    #[inline(always)]
    fn add(self, a: f32, b: f32) -> f32 {
        a + b
    }
    #[inline(always)]
    fn sub(self, a: f32, b: f32) -> f32 {
        a - b
    }
    #[inline(always)]
    fn mul(self, a: f32, b: f32) -> f32 {
        a * b
    }
    #[inline(always)]
    fn div(self, a: f32, b: f32) -> f32 {
        a / b
    }
    #[inline(always)]
    fn sqrt(self, a: f32) -> f32 {
        a.sqrt()
    }
    #[inline(always)]
    fn min_raw(self, a: f32, b: f32) -> f32 {
        if a < b { a } else { b }
    }
    #[inline(always)]
    fn max_raw(self, a: f32, b: f32) -> f32 {
        if a > b { a } else { b }
    }
    #[inline(always)]
    fn lt(self, a: f32, b: f32) -> bool {
        a < b
    }
    #[inline(always)]
    fn le(self, a: f32, b: f32) -> bool {
        a <= b
    }
    #[inline(always)]
    fn eq(self, a: f32, b: f32) -> bool {
        a == b
    }
    #[inline(always)]
    fn ne(self, a: f32, b: f32) -> bool {
        a != b
    }
    #[inline(always)]
    fn select(self, m: bool, a: f32, b: f32) -> f32 {
        if m { a } else { b }
    }
    #[inline(always)]
    fn to_bits(self, a: f32) -> u32 {
        a.to_bits()
    }
    #[inline(always)]
    fn from_bits(self, a: u32) -> f32 {
        f32::from_bits(a)
    }
    #[inline(always)]
    fn i32_to_f32(self, a: u32) -> f32 {
        a as i32 as f32
    }
    #[inline(always)]
    fn u32_to_f32(self, a: u32) -> f32 {
        a as f32
    }
    #[inline(always)]
    fn trunc_i32(self, a: f32) -> u32 {
        if a.is_nan() || !(-2_147_483_648.0..2_147_483_648.0).contains(&a) {
            0x8000_0000
        } else {
            a as i32 as u32
        }
    }
    #[inline(always)]
    fn add_u(self, a: u32, b: u32) -> u32 {
        a.wrapping_add(b)
    }
    #[inline(always)]
    fn sub_u(self, a: u32, b: u32) -> u32 {
        a.wrapping_sub(b)
    }
    #[inline(always)]
    fn mul_u(self, a: u32, b: u32) -> u32 {
        a.wrapping_mul(b)
    }
    #[inline(always)]
    fn and_u(self, a: u32, b: u32) -> u32 {
        a & b
    }
    #[inline(always)]
    fn or_u(self, a: u32, b: u32) -> u32 {
        a | b
    }
    #[inline(always)]
    fn xor_u(self, a: u32, b: u32) -> u32 {
        a ^ b
    }
    #[inline(always)]
    fn shl_u(self, a: u32, n: u32) -> u32 {
        a << n
    }
    #[inline(always)]
    fn shr_u(self, a: u32, n: u32) -> u32 {
        a >> n
    }
    #[inline(always)]
    fn rotl_u(self, a: u32, n: u32) -> u32 {
        a.rotate_left(n)
    }
    #[inline(always)]
    fn min_u(self, a: u32, b: u32) -> u32 {
        a.min(b)
    }
    #[inline(always)]
    fn max_u(self, a: u32, b: u32) -> u32 {
        a.max(b)
    }
    #[inline(always)]
    fn eq_u(self, a: u32, b: u32) -> bool {
        a == b
    }
    #[inline(always)]
    fn lt_u(self, a: u32, b: u32) -> bool {
        a < b
    }
    #[inline(always)]
    fn select_u(self, m: bool, a: u32, b: u32) -> u32 {
        if m { a } else { b }
    }
    #[inline(always)]
    fn mask_and(self, a: bool, b: bool) -> bool {
        a & b
    }
    #[inline(always)]
    fn mask_or(self, a: bool, b: bool) -> bool {
        a | b
    }
    #[inline(always)]
    fn mask_not(self, a: bool) -> bool {
        !a
    }
    #[inline(always)]
    fn mask_bits(self, a: bool) -> u64 {
        u64::from(a)
    }
}
