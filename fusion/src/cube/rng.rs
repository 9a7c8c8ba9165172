//! The `#[cube]` twins of [`crate::rng`]'s Threefry-2x32 and uniform scaling: cubecl 0.10
//! expands `#[cube]` functions into IR builders the host cannot call, so the algorithm is
//! written once more here over the same constants; the device tests check the bits.

#![allow(missing_docs)] // cubecl expands these into undocumented items

use crate::rng::{KEY_PARITY, ROTATIONS};
use cubecl::prelude::*;

/// One Threefry round: mix, rotate by `rotation`, xor.
#[cube]
fn threefry_round(x0: &mut u32, x1: &mut u32, #[comptime] rotation: u32) {
    *x0 += *x1;
    *x1 = (*x1 << rotation) | (*x1 >> comptime!(32 - rotation));
    *x1 ^= *x0;
}

/// Four rounds starting at rotation `first_rotation`, then key injection number `injection`
/// with the key words `key_a = ks[injection % 3]` and `key_b = ks[(injection + 1) % 3]`.
#[cube]
fn threefry_block(
    x0: &mut u32,
    x1: &mut u32,
    key_a: u32,
    key_b: u32,
    #[comptime] first_rotation: usize,
    #[comptime] injection: u32,
) {
    threefry_round(x0, x1, comptime!(ROTATIONS[first_rotation]));
    threefry_round(x0, x1, comptime!(ROTATIONS[first_rotation + 1]));
    threefry_round(x0, x1, comptime!(ROTATIONS[first_rotation + 2]));
    threefry_round(x0, x1, comptime!(ROTATIONS[first_rotation + 3]));
    *x0 += key_a;
    *x1 += key_b + injection;
}

/// Threefry-2x32-20 of `(counter0, counter1)` under `(key0, key1)`, inside a kernel.
///
/// Writes the two output words to `out0` and `out1`.
#[cube]
pub fn threefry2x32_cube(
    key0: u32,
    key1: u32,
    counter0: u32,
    counter1: u32,
    out0: &mut u32,
    out1: &mut u32,
) {
    let key2 = KEY_PARITY ^ key0 ^ key1;
    let mut x0 = counter0 + key0;
    let mut x1 = counter1 + key1;
    threefry_block(&mut x0, &mut x1, key1, key2, 0usize, 1u32);
    threefry_block(&mut x0, &mut x1, key2, key0, 4usize, 2u32);
    threefry_block(&mut x0, &mut x1, key0, key1, 0usize, 3u32);
    threefry_block(&mut x0, &mut x1, key1, key2, 4usize, 4u32);
    threefry_block(&mut x0, &mut x1, key2, key0, 0usize, 5u32);
    *out0 = x0;
    *out1 = x1;
}

/// [`crate::rng::symmetric_uniform`] inside a kernel; `scale` is [`crate::rng::symmetric_uniform_scale`].
#[cube]
pub fn symmetric_uniform_cube(bits: u32, scale: f32) -> f32 {
    let centered = i32::cast_from(bits >> 8) - 8_388_608i32;
    f32::cast_from(centered) * scale
}
