//! Threefry-2x32-20 and the uniform mapping on 32-bit vector lanes.
//!
//! The same rounds, rotations and key schedule as [`crate::rng::threefry2x32`] (checked bit
//! for bit in the tests), one counter per lane. Only wrapping add, rotate and xor are used,
//! so every level gives the same bits.

use super::simd::Simd;
use crate::rng::{KEY_PARITY, ROTATIONS, ROUNDS};

/// Threefry-2x32-20 of counters `(c0, c1)` under keys `(k0, k1)`, lane by lane.
///
/// Written as five blocks of four rounds so that every rotation is a constant and the
/// compiler unrolls all 20 rounds (a counted loop with `round % 8` lookups measured about
/// 2x slower in the native CartPole step, where resets draw 4 words).
#[inline(always)]
pub fn threefry2x32<V: Simd>(s: V, k0: V::U, k1: V::U, c0: V::U, c1: V::U) -> [V::U; 2] {
    const _: () = assert!(ROUNDS == 20, "five blocks of four rounds");
    let ks = [k0, k1, s.xor_u(s.xor_u(k0, k1), s.splat_u(KEY_PARITY))];
    let mut x = [s.add_u(c0, ks[0]), s.add_u(c1, ks[1])];
    for injection in 1..=5usize {
        let first = if injection % 2 == 1 { 0 } else { 4 };
        x = four_rounds(s, x, first);
        x[0] = s.add_u(x[0], ks[injection % 3]);
        x[1] = s.add_u(
            s.add_u(x[1], ks[(injection + 1) % 3]),
            s.splat_u(injection as u32),
        );
    }
    x
}

/// Rounds using rotations `first..first + 4` of [`ROTATIONS`].
#[inline(always)]
fn four_rounds<V: Simd>(s: V, [mut x0, mut x1]: [V::U; 2], first: usize) -> [V::U; 2] {
    let round = |x0: V::U, x1: V::U, rotation: u32| {
        let x0 = s.add_u(x0, x1);
        (x0, s.xor_u(s.rotl_u(x1, rotation), x0))
    };
    (x0, x1) = round(x0, x1, ROTATIONS[first]);
    (x0, x1) = round(x0, x1, ROTATIONS[first + 1]);
    (x0, x1) = round(x0, x1, ROTATIONS[first + 2]);
    (x0, x1) = round(x0, x1, ROTATIONS[first + 3]);
    [x0, x1]
}

/// [`crate::rng::symmetric_uniform`] with half-width 1: `((bits >> 8) - 2^23) * 2^-23`.
#[inline(always)]
pub fn symmetric_uniform<V: Simd>(s: V, bits: V::U) -> V::F {
    let centered = s.sub_u(s.shr_u(bits, 8), s.splat_u(1 << 23));
    s.mul(
        s.i32_to_f32(centered),
        s.splat(crate::rng::symmetric_uniform_scale(1.0)),
    )
}
