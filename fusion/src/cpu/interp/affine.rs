//! The affine op ([`Op::Affine`], one output of a per-lane dense layer) over a chunk.
//!
//! `dst = acc + w0 x0 + w1 x1 + ..` for every lane of the chunk in one pass per block of
//! terms: the running sum stays in registers, each input vector is loaded once per output,
//! and pinned weights (params: one value per chunk) are read once per chunk and broadcast.
//! Products and sums are rounded one at a time, left to right, exactly as the interpreter
//! and the generated kernels' chain of [`Instr::MulAdd`](crate::lir::program::Instr)
//! compute them, so every runtime agrees bit for bit.

use super::frame::Ctx;
use super::ops::{L, Loc, Op};
use super::simd::Simd;

/// Terms gathered per pass: their weights and input pointers live on the stack.
const TERMS_PER_PASS: usize = 32;

/// Computes `dst` over vector-aligned lanes `lo..hi` from the [`Op::Term`]s `terms`.
///
/// With `pinned_weights`, the weights are read from the frame's `pin_values` (so their
/// broadcast slots need not be filled).
///
/// # Safety
/// `ctx.ptrs` holds the chunk's location table; every location it names holds at least `hi`
/// words, and the frame's `pin_values` has an entry for every pinned slot.
#[inline(always)]
pub(super) unsafe fn run<V: Simd>(
    s: V,
    ctx: &Ctx<'_>,
    (dst, acc, pinned_weights): (L, Option<L>, bool),
    terms: &[Op],
    lo: usize,
    hi: usize,
) {
    let ptrs = ctx.ptrs;
    let d = ptrs[dst as usize].cast::<f32>();
    for (pass, block) in terms.chunks(TERMS_PER_PASS).enumerate() {
        let mut weights = [std::ptr::null::<f32>(); TERMS_PER_PASS];
        let mut scalars = [0f32; TERMS_PER_PASS];
        let mut inputs = [std::ptr::null::<f32>(); TERMS_PER_PASS];
        for (k, term) in block.iter().enumerate() {
            let Op::Term(w, x) = *term else {
                unreachable!("an affine is followed by its terms")
            };
            weights[k] = ptrs[w as usize].cast::<f32>();
            inputs[k] = ptrs[x as usize].cast::<f32>();
            if pinned_weights {
                let Loc::Pinned(slot) = ctx.locs[w as usize] else {
                    unreachable!("pinned weights are pinned")
                };
                // SAFETY: one value per pinned slot (see the contract).
                scalars[k] = f32::from_bits(unsafe { *ctx.frame.pin_values.add(slot as usize) });
            }
        }
        // The sum this pass continues: the op's own `acc`, then its own partial result.
        let start = if pass == 0 {
            acc.map(|a| ptrs[a as usize].cast::<f32>().cast_const())
        } else {
            Some(d.cast_const())
        };
        let (first, len) = (usize::from(start.is_none()), block.len());
        let terms = Terms {
            pinned_weights,
            start,
            scalars: &scalars,
            weights: &weights,
            inputs: &inputs,
        };
        // Four vectors at a time: four independent sums hide the adds' latency.
        let mut v = lo;
        while v + 4 * V::LANES <= hi {
            let at = [v, v + V::LANES, v + 2 * V::LANES, v + 3 * V::LANES];
            // SAFETY (here and below): `lo..hi` lies within every location (see the
            // contract).
            let mut sums = unsafe {
                [
                    terms.begin(s, at[0]),
                    terms.begin(s, at[1]),
                    terms.begin(s, at[2]),
                    terms.begin(s, at[3]),
                ]
            };
            for k in first..len {
                for (sum, at) in sums.iter_mut().zip(at) {
                    *sum = s.add(*sum, unsafe { terms.term(s, k, at) });
                }
            }
            for (sum, at) in sums.into_iter().zip(at) {
                // SAFETY: as above.
                unsafe { s.store(d.add(at), sum) };
            }
            v += 4 * V::LANES;
        }
        while v < hi {
            let mut sum = unsafe { terms.begin(s, v) };
            for k in first..len {
                sum = s.add(sum, unsafe { terms.term(s, k, v) });
            }
            // SAFETY: as above.
            unsafe { s.store(d.add(v), sum) };
            v += V::LANES;
        }
    }
}

/// One pass's terms.
struct Terms<'a> {
    pinned_weights: bool,
    /// The running sum the pass continues, if any.
    start: Option<*const f32>,
    scalars: &'a [f32; TERMS_PER_PASS],
    weights: &'a [*const f32; TERMS_PER_PASS],
    inputs: &'a [*const f32; TERMS_PER_PASS],
}

impl Terms<'_> {
    /// The sum before the pass's later terms at lanes `v..v + LANES`: the running sum, or
    /// the first term.
    ///
    /// # Safety
    /// As for [`Self::term`], and the running sum holds lanes `v..v + LANES`.
    #[inline(always)]
    unsafe fn begin<V: Simd>(&self, s: V, v: usize) -> V::F {
        // SAFETY: see the contract.
        unsafe {
            match self.start {
                Some(p) => s.load(p.add(v)),
                None => self.term(s, 0, v),
            }
        }
    }

    /// `w_k * x_k` at lanes `v..v + LANES` (a function, not a closure, so it inlines under
    /// the level's target features).
    ///
    /// # Safety
    /// Term `k` exists and its locations hold lanes `v..v + LANES`.
    #[inline(always)]
    unsafe fn term<V: Simd>(&self, s: V, k: usize, v: usize) -> V::F {
        // SAFETY: see the contract.
        unsafe {
            let w = if self.pinned_weights {
                s.splat(self.scalars[k])
            } else {
                s.load(self.weights[k].add(v))
            };
            s.mul(w, s.load(self.inputs[k].add(v)))
        }
    }
}
