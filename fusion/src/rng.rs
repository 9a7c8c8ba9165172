//! Counter-based random numbers: Threefry-2x32 with 20 rounds, on the host and in kernels.
//!
//! Threefry (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011) is a
//! keyed bijection of a 64-bit counter: the same `(key, counter)` gives the same bits on any
//! device, in any order, with no state to carry. It is also the generator JAX uses, which
//! is the generator of the study's CartPole.
//!
//! cartfuse keys it with the user's 64-bit seed and counts with `(stream, draw)`: for an
//! environment, `stream` is the env index and `draw` its own draw counter. Each call gives
//! two 32-bit words.
//!
//! The algorithm is written twice, once as plain Rust ([`threefry2x32`]) and once as a
//! `#[cube]` function (`cube::rng::threefry2x32_cube`, with a GPU feature), because cubecl 0.10 expands `#[cube]`
//! functions into IR builders that the host cannot call. Both read the same constants
//! ([`ROTATIONS`], [`KEY_PARITY`]) and use only wrapping `u32` add, rotate and xor, so they
//! agree bit for bit; the integration tests check that on the device.

/// Threefry-2x32 rotation distances, one per round, repeating every 8 rounds.
pub const ROTATIONS: [u32; 8] = [13, 15, 26, 6, 17, 29, 16, 24];

/// The Skein key-schedule parity constant for 32-bit words.
pub const KEY_PARITY: u32 = 0x1BD1_1BDA;

/// Number of rounds (Threefry-2x32-20, the Random123 and JAX default).
pub const ROUNDS: usize = 20;

/// A 64-bit seed split into the two key words of Threefry-2x32.
pub fn seed_key(seed: u64) -> [u32; 2] {
    [seed as u32, (seed >> 32) as u32]
}

/// Threefry-2x32-20 of `counter` under `key`, on the host.
pub fn threefry2x32(key: [u32; 2], counter: [u32; 2]) -> [u32; 2] {
    let ks = [key[0], key[1], KEY_PARITY ^ key[0] ^ key[1]];
    let mut x0 = counter[0].wrapping_add(ks[0]);
    let mut x1 = counter[1].wrapping_add(ks[1]);
    for round in 0..ROUNDS {
        x0 = x0.wrapping_add(x1);
        x1 = x1.rotate_left(ROTATIONS[round % 8]);
        x1 ^= x0;
        if round % 4 == 3 {
            let injection = (round / 4 + 1) as u32;
            x0 = x0.wrapping_add(ks[injection as usize % 3]);
            x1 = x1
                .wrapping_add(ks[(injection as usize + 1) % 3])
                .wrapping_add(injection);
        }
    }
    [x0, x1]
}

/// Maps 32 random bits to an `f32` uniform in `[low, -low)`, identically on host and device.
///
/// The top 24 bits `k` give the integer `k - 2^23` in `[-2^23, 2^23)`, which is exact in
/// `f32`; one multiplication by `half_width * 2^-23` (exact: a power-of-two scaling of an
/// `f32`) rounds once, so host and device produce the same bits. The result lies in
/// `[-half_width, half_width)` as `f32` values.
pub fn symmetric_uniform(bits: u32, half_width: f32) -> f32 {
    let centered = (bits >> 8) as i32 - (1 << 23);
    centered as f32 * symmetric_uniform_scale(half_width)
}

/// The multiplier of [`symmetric_uniform`]: `half_width * 2^-23`.
pub fn symmetric_uniform_scale(half_width: f32) -> f32 {
    half_width / (1u32 << 23) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known-answer vectors of Random123's `kat_vectors` for `threefry2x32_20` (also JAX's tests).
    #[test]
    fn threefry_matches_known_answers() {
        assert_eq!(threefry2x32([0, 0], [0, 0]), [0x6b20_0159, 0x99ba_4efe]);
        assert_eq!(
            threefry2x32([u32::MAX, u32::MAX], [u32::MAX, u32::MAX]),
            [0x1cb9_96fc, 0xbb00_2be7]
        );
        assert_eq!(
            threefry2x32([0x1319_8a2e, 0x0370_7344], [0x243f_6a88, 0x85a3_08d3]),
            [0xc492_3a9c, 0x483d_f7a0]
        );
    }

    #[test]
    fn symmetric_uniform_covers_its_half_open_range() {
        let half = 0.05f32;
        assert_eq!(symmetric_uniform(0, half), -half);
        assert!(symmetric_uniform(u32::MAX, half) < half);
        assert_eq!(symmetric_uniform(0x8000_0000, half), 0.0);
        assert!(symmetric_uniform(u32::MAX, half) > 0.049_999);
    }

    #[test]
    fn seed_key_splits_low_then_high() {
        assert_eq!(seed_key(0x0123_4567_89ab_cdef), [0x89ab_cdef, 0x0123_4567]);
    }
}
