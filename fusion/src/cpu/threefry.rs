//! Threefry-2x32-20 and the uniform mapping on 32-bit vector lanes.
//!
//! The same rounds, rotations and key schedule as [`crate::rng::threefry2x32`] (checked bit
//! for bit in the tests), one counter per lane. Only wrapping add, rotate and xor are used,
//! so every level gives the same bits.

use super::simd::Simd;
use crate::rng::{KEY_PARITY, ROTATIONS, ROUNDS};

/// Threefry-2x32-20 of counters `(c0, c1)` under keys `(k0, k1)`, lane by lane.
#[inline(always)]
pub fn threefry2x32<V: Simd>(s: V, k0: V::U, k1: V::U, c0: V::U, c1: V::U) -> [V::U; 2] {
    let ks = [k0, k1, s.xor_u(s.xor_u(k0, k1), s.splat_u(KEY_PARITY))];
    let mut x0 = s.add_u(c0, ks[0]);
    let mut x1 = s.add_u(c1, ks[1]);
    for round in 0..ROUNDS {
        x0 = s.add_u(x0, x1);
        x1 = s.rotl_u(x1, ROTATIONS[round % 8]);
        x1 = s.xor_u(x1, x0);
        if round % 4 == 3 {
            let injection = round / 4 + 1;
            x0 = s.add_u(x0, ks[injection % 3]);
            x1 = s.add_u(
                s.add_u(x1, ks[(injection + 1) % 3]),
                s.splat_u(injection as u32),
            );
        }
    }
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
