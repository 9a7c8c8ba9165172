//! Reset draws of the native step, made only for the envs that reset: queued while the
//! step runs, then drawn `LANES` to a Threefry evaluation with the device's counters.

use cartfuse_fusion::cpu::interp::simd::Simd;
use cartfuse_fusion::cpu::interp::threefry;

use super::frame::{Frame, Rows};

/// Resetting envs queued before their draws are made (see [`PendingResets`]).
const PENDING: usize = 256;

/// Envs that reset in this step and still hold a placeholder state: their draws are made
/// together, `LANES` resetting envs per Threefry evaluation, instead of a whole vector's
/// draws for every vector holding one resetting env (about half of them for CartPole's
/// ~22-step random episodes).
pub(super) struct PendingResets {
    /// The first `len` are queued envs; the rest is never read, so it is left
    /// uninitialised (zeroing 1 KiB showed in the profile of a one-env step).
    envs: [std::mem::MaybeUninit<u32>; PENDING],
    len: usize,
}

impl PendingResets {
    pub(super) fn new() -> Self {
        Self {
            envs: [std::mem::MaybeUninit::uninit(); PENDING],
            len: 0,
        }
    }

    /// The queued envs.
    fn queued(&self) -> &[u32] {
        // SAFETY: the first `len` entries were written by `push`.
        unsafe { std::slice::from_raw_parts(self.envs.as_ptr().cast(), self.len) }
    }

    /// Draws what is queued when another vector's resets might not fit.
    ///
    /// # Safety
    /// As [`draw_pending`].
    #[inline(always)]
    pub(super) unsafe fn make_room<V: Simd>(&mut self, s: V, f: &Frame) {
        if self.len + V::LANES > PENDING {
            // SAFETY: as the caller guarantees.
            unsafe { draw_pending(s, f, self) };
        }
    }

    /// Adds the envs `i + k` for each bit `k` of `lanes`, below `n` (after
    /// [`Self::make_room`]).
    #[inline(always)]
    pub(super) fn push(&mut self, mut lanes: u64, i: usize, n: usize) {
        while lanes != 0 {
            let env = i + lanes.trailing_zeros() as usize;
            if env < n {
                self.envs[self.len] = std::mem::MaybeUninit::new(env as u32);
                self.len += 1;
            }
            lanes &= lanes - 1;
        }
    }
}

/// Draws reset number `count` of each lane's env under its keys `(k0, k1)` (the `#[cube]`
/// kernel's draws), in the default bounds.
#[inline(always)]
fn draw<V: Simd>(s: V, f: &Frame, [k0, k1]: [V::U; 2], count: V::U) -> Rows<V> {
    let first = s.add_u(count, count);
    let lane = s.splat_u(0);
    let [a, b] = threefry::threefry2x32(s, k0, k1, lane, first);
    let [c, d] = threefry::threefry2x32(s, k0, k1, lane, s.add_u(first, s.splat_u(1)));
    let (center, half) = (
        s.splat(f.physics.reset_center),
        s.splat(f.physics.reset_half),
    );
    let uniform = |bits| {
        let centered = s.sub_u(s.shr_u(bits, 8), s.splat_u(1 << 23));
        let draw = s.mul(s.i32_to_f32(centered), s.splat(1.0 / (1 << 23) as f32));
        s.add(center, s.mul(half, draw))
    };
    [uniform(a), uniform(b), uniform(c), uniform(d)]
}

/// Draws the new state of every pending env (their reset counters are already advanced)
/// and writes it over the placeholder in the state and observation buffers.
///
/// # Safety
/// As `step::finish_vector`; every pending env is below `n`.
#[inline(always)]
pub(super) unsafe fn draw_pending<V: Simd>(s: V, f: &Frame, pending: &mut PendingResets) {
    for envs in pending.queued().chunks(V::LANES) {
        let (mut keys, mut counts) = ([[0u32; 16]; 2], [0u32; 16]);
        for (k, &env) in envs.iter().enumerate() {
            // SAFETY: `env < n`; the counter was advanced when the env was queued.
            unsafe {
                counts[k] = *f.resets.add(env as usize) - 1;
                keys[0][k] = *f.key0.add(env as usize);
                keys[1][k] = *f.key1.add(env as usize);
            }
        }
        // SAFETY: 16 words hold any level's vector.
        let drawn = unsafe {
            let words = [keys[0].as_ptr(), keys[1].as_ptr()];
            draw(s, f, words.map(|w| s.load_u(w)), s.load_u(counts.as_ptr()))
        };
        let mut columns = [[0.0f32; 16]; 4];
        for (column, values) in columns.iter_mut().zip(drawn) {
            // SAFETY: as above.
            unsafe { s.store(column.as_mut_ptr(), values) };
        }
        for (k, &env) in envs.iter().enumerate() {
            let env = env as usize;
            for (c, column) in columns.iter().enumerate() {
                // SAFETY: `env < n`, so its state lane and observation row exist.
                unsafe {
                    *f.state[c].add(env) = column[k];
                    *f.out.obs.add(4 * env + c) = column[k];
                }
            }
        }
    }
    pending.len = 0;
}
