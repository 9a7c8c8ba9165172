//! Where the native step writes its outputs: the engine's own buffers (`u32` flags, as every
//! engine leaves them for [`DeviceStep`](crate::DeviceStep)) or memory the caller owns
//! ([`HostOutputs`](crate::HostOutputs): `bool` flags, as numpy holds them).
//!
//! Neither is assumed to have padding past `n`: a vector reaching past the last env is
//! written lane by lane, so caller memory of exactly `n` entries is never overrun.

use cartfuse_fusion::cpu::interp::simd::Simd;

/// A flag output: `u32` words (0 or 1) or `bool` bytes.
#[derive(Clone, Copy)]
pub(super) enum Flags {
    /// One `u32` per env.
    Words(*mut u32),
    /// One `bool` per env.
    Bytes(*mut bool),
}

/// The output pointers of one step, each holding exactly `n` entries (rows for the
/// observations). `final_obs` is read only in `SameStep`.
#[derive(Clone, Copy)]
pub(super) struct Sink {
    pub obs: *mut f32,
    pub reward: *mut f32,
    pub terminated: Flags,
    pub truncated: Flags,
    pub final_obs: *mut f32,
}

/// Lanes of the vector at env `i` that hold envs below `n`.
#[inline(always)]
fn valid<V: Simd>(n: usize, i: usize) -> usize {
    V::LANES.min(n - i)
}

/// Copies the first `count` of `LANES` values from `from` to `to`: one conditional move per
/// lane (a copy of variable length would be a call to `memcpy`, a tenth of a one-env step).
///
/// # Safety
/// `from` must be readable and `to` writable for `count` values, `count <= LANES <= 16`.
#[inline(always)]
unsafe fn copy_lanes<V: Simd, T: Copy>(from: *const T, to: *mut T, count: usize) {
    for k in 0..V::LANES {
        if k < count {
            // SAFETY: `k < count`.
            unsafe { *to.add(k) = *from.add(k) };
        }
    }
}

/// Stores the lanes of `v` for envs `i..min(i + LANES, n)` at `p + i`.
///
/// # Safety
/// `p` must hold `n` floats and `i < n`.
#[inline(always)]
pub(super) unsafe fn store_f32<V: Simd>(s: V, p: *mut f32, n: usize, i: usize, v: V::F) {
    if i + V::LANES <= n {
        // SAFETY: lanes `i..i + LANES` lie in `p`.
        unsafe { s.store(p.add(i), v) };
        return;
    }
    let mut lanes = [0.0f32; 16];
    // SAFETY: 16 floats hold any level's vector; the first `valid` lanes lie in `p`.
    unsafe {
        s.store(lanes.as_mut_ptr(), v);
        copy_lanes::<V, _>(lanes.as_ptr(), p.add(i), valid::<V>(n, i));
    }
}

/// Loads the `u32` lanes of envs `i..min(i + LANES, n)` from `p + i`; lanes past `n` read 0.
///
/// # Safety
/// `p` must hold `n` words and `i < n`.
#[inline(always)]
pub(super) unsafe fn load_u32<V: Simd>(s: V, p: *const u32, n: usize, i: usize) -> V::U {
    if i + V::LANES <= n {
        // SAFETY: lanes `i..i + LANES` lie in `p`.
        return unsafe { s.load_u(p.add(i)) };
    }
    let mut lanes = [0u32; 16];
    // SAFETY: the first `valid` lanes lie in `p`; 16 words hold any level's vector.
    unsafe {
        copy_lanes::<V, _>(p.add(i), lanes.as_mut_ptr(), valid::<V>(n, i));
        s.load_u(lanes.as_ptr())
    }
}

impl Flags {
    /// Stores the flags `v` (0 or 1 per lane) of envs `i..min(i + LANES, n)`.
    ///
    /// # Safety
    /// The flag memory must hold `n` entries and `i < n`.
    #[inline(always)]
    pub(super) unsafe fn store<V: Simd>(self, s: V, n: usize, i: usize, v: V::U) {
        match self {
            Flags::Words(p) if i + V::LANES <= n => {
                // SAFETY: lanes `i..i + LANES` lie in `p`.
                unsafe { s.store_u(p.add(i), v) }
            }
            Flags::Words(p) => {
                let mut lanes = [0u32; 16];
                // SAFETY: as in `store_f32`.
                unsafe {
                    s.store_u(lanes.as_mut_ptr(), v);
                    copy_lanes::<V, _>(lanes.as_ptr(), p.add(i), valid::<V>(n, i));
                }
            }
            Flags::Bytes(p) => {
                let bits = s.mask_bits(s.mask_not(s.eq_u(v, s.splat_u(0))));
                // SAFETY: the first `valid` bytes from `p + i` lie in `p`.
                unsafe { write_bits(p.add(i).cast(), bits, valid::<V>(n, i)) }
            }
        }
    }
}

/// Byte `j` of the result is bit `j` of `bits` (0 or 1): the byte-per-lane form of a mask.
#[inline(always)]
pub(super) fn spread_bits(bits: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Every byte a copy of `bits`, then byte `j` keeps bit `j` (a value 0 or 2^j), and
    // adding 0x7F sets bit 7 exactly where that value is non-zero (never carrying out).
    let bit_j = (u64::from(bits) * ONES) & 0x8040_2010_0804_0201;
    ((bit_j + 0x7F7F_7F7F_7F7F_7F7F) >> 7) & ONES
}

/// Writes bit `k` of `bits` as byte `p[k]` for `k < count` (8 bytes at a time).
///
/// # Safety
/// `p` must be writable for `count` bytes.
#[inline(always)]
unsafe fn write_bits(p: *mut u8, bits: u64, count: usize) {
    let mut k = 0;
    while k + 8 <= count {
        // SAFETY: bytes `k..k + 8` lie below `count`.
        unsafe {
            p.add(k)
                .cast::<u64>()
                .write_unaligned(spread_bits((bits >> k) as u8))
        };
        k += 8;
    }
    while k < count {
        // SAFETY: `k < count`.
        unsafe { *p.add(k) = ((bits >> k) & 1) as u8 };
        k += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_bits_puts_each_bit_in_its_byte() {
        for bits in 0..=255u8 {
            let bytes = spread_bits(bits).to_le_bytes();
            for (j, byte) in bytes.iter().enumerate() {
                assert_eq!(
                    u32::from(*byte),
                    u32::from((bits >> j) & 1),
                    "{bits:#010b} byte {j}"
                );
            }
        }
    }

    #[test]
    fn write_bits_writes_exactly_count_bytes() {
        let bits = 0b1011_0110_1100_1010_0101u64;
        for count in 0..20 {
            let mut bytes = [7u8; 24];
            // SAFETY: 24 bytes hold any count below 20.
            unsafe { write_bits(bytes.as_mut_ptr(), bits, count) };
            for (k, byte) in bytes.iter().enumerate() {
                let want = if k < count {
                    ((bits >> k) & 1) as u8
                } else {
                    7
                };
                assert_eq!(*byte, want, "count {count}, byte {k}");
            }
        }
    }
}
