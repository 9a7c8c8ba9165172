//! Running a [`ChunkProgram`] over one chunk of lanes at one SIMD level.
//!
//! Each op is one loop over the chunk's vectors (operands and results in L1/L2-resident
//! slots or streamed from input buffers); the op is matched once per chunk, never per lane.
//! Everything here is `#[inline(always)]` so it compiles under the level's target features
//! (see [`super::simd::WithSimd`]), and no op's loop is a closure handed to a function: a
//! closure is a function of its own, compiled without the level's target features, so one
//! that is not inlined calls each intrinsic out of line (about 10x slower; seen in `perf` as
//! calls to `_mm512_mul_ps`).

use super::affine;
use super::frame::{Ctx, Frame};
use super::math;
use super::ops::{ChunkProgram, L, Loc, Op};
use super::simd::Simd;
use super::threefry;
use crate::graph::{
    BinaryOp, CompareOp, FloatBinary, FloatUnary, LogicBinary, LogicUnary, ReduceOp,
};

/// Lane offsets `0..16` for building lane indices.
static IOTA: [u32; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

/// Runs `program` over lanes `start..start + len` (one chunk), using `ptrs` as the
/// location table.
///
/// # Safety
/// Buffers hold `steps * n * width + 16` words, scratch holds `(pinned + slots) * stride`
/// words with `stride >= len` rounded up to 16, and `ptrs` has one entry per location.
#[inline(always)]
pub(crate) unsafe fn run_chunk<V: Simd>(
    s: V,
    program: &ChunkProgram,
    frame: &Frame<'_>,
    ptrs: &mut [*mut u32],
    start: usize,
    len: usize,
) {
    for (p, loc) in ptrs.iter_mut().zip(&program.locs) {
        // SAFETY: offsets stay inside the buffers (see the contract above).
        *p = unsafe {
            match *loc {
                Loc::Scratch(slot) => frame
                    .scratch
                    .add((frame.pinned + slot as usize) * frame.stride),
                Loc::Pinned(slot) => frame.scratch.add(slot as usize * frame.stride),
                Loc::Input { buffer, step } => {
                    frame.buffers[buffer as usize].add(step as usize * frame.n + start)
                }
            }
        };
    }
    let ctx = Ctx {
        ptrs,
        locs: &program.locs,
        frame,
        start,
        len,
    };
    let hi = len.next_multiple_of(V::LANES);
    let ops = &program.ops;
    let mut i = 0;
    while i < ops.len() {
        match ops[i] {
            Op::Guard {
                cond,
                when,
                len: guarded,
            } => {
                let block = &ops[i + 1..i + 1 + guarded as usize];
                // SAFETY: as for every op.
                unsafe { run_guarded(s, &ctx, block, cond, when) };
                i += 1 + guarded as usize;
            }
            _ => {
                // SAFETY: the range is within the chunk's padded slots.
                i = unsafe { exec_at(s, &ctx, ops, i, 0, hi) };
            }
        }
    }
}

/// Runs the op at `ops[i]` (with its terms, for an affine) over lanes `lo..hi`; returns
/// the index of the next op.
///
/// # Safety
/// As for [`exec`].
#[inline(always)]
unsafe fn exec_at<V: Simd>(
    s: V,
    ctx: &Ctx<'_>,
    ops: &[Op],
    i: usize,
    lo: usize,
    hi: usize,
) -> usize {
    match ops[i] {
        Op::Affine {
            dst,
            acc,
            len,
            pinned_weights,
        } => {
            let terms = &ops[i + 1..i + 1 + len as usize];
            // SAFETY: as for every op.
            unsafe { affine::run(s, ctx, (dst, acc, pinned_weights), terms, lo, hi) };
            i + 1 + len as usize
        }
        op => {
            // SAFETY: as for every op.
            unsafe { exec(s, ctx, &op, lo, hi) };
            i + 1
        }
    }
}

/// Runs `block` over the runs of vectors where some lane has `cond == when`.
#[inline(always)]
unsafe fn run_guarded<V: Simd>(s: V, ctx: &Ctx<'_>, block: &[Op], cond: L, when: bool) {
    let c = ctx.p(cond);
    let vectors = ctx.len.div_ceil(V::LANES);
    let mut v = 0;
    while v < vectors {
        // SAFETY: `v < vectors` lies within the padded slot.
        while v < vectors && !unsafe { vector_taken(s, c, ctx.len, v, when) } {
            v += 1;
        }
        let begin = v;
        // SAFETY: as above.
        while v < vectors && unsafe { vector_taken(s, c, ctx.len, v, when) } {
            v += 1;
        }
        let mut i = 0;
        while begin < v && i < block.len() {
            // SAFETY: a sub-range of the chunk.
            i = unsafe { exec_at(s, ctx, block, i, begin * V::LANES, v * V::LANES) };
        }
    }
}

/// Runs one op over vector-aligned lanes `lo..hi` of the chunk.
#[inline(always)]
unsafe fn exec<V: Simd>(s: V, ctx: &Ctx<'_>, op: &Op, lo: usize, hi: usize) {
    // `d = body` over the chunk's vectors, each operand `x` loaded into the variable of its
    // name as words (`u32`) or floats (`f32`: bit casts, free in registers). `d` and the
    // operands are locations, or pointers (`*u32`, `*f32`) the ops with sub-ops look up once
    // before matching the sub-op (so LLVM compiles the other ops' loops as well as before).
    macro_rules! map {
        (*u32, $d:ident, [$($x:ident),+], $body:expr) => {{
            let mut i = lo;
            while i < hi {
                $(let $x = s.load_u($x.add(i));)+
                s.store_u($d.add(i), $body);
                i += V::LANES;
            }
        }};
        (*f32, $d:ident, [$($x:ident),+], $body:expr) => {
            map!(*u32, $d, [$($x),+], s.to_bits({
                $(let $x = s.from_bits($x);)+
                $body
            }))
        };
        ($t:tt, $d:ident, [$($x:ident),+], $body:expr) => {{
            let $d = ctx.p($d);
            $(let $x = ctx.p($x);)+
            map!(*$t, $d, [$($x),+], $body)
        }};
    }
    // SAFETY (whole body): every location points at a slot or buffer slice holding at least
    // `hi` words (padded chunk), and stores write exactly the chunk's lanes.
    unsafe {
        match *op {
            Op::UnaryF(u, d, x) => {
                let (d, x) = (ctx.p(d), ctx.p(x));
                match u {
                    FloatUnary::Neg => map!(*f32, d, [x], math::neg(s, x)),
                    FloatUnary::Abs => map!(*f32, d, [x], math::abs(s, x)),
                    FloatUnary::Sqrt => map!(*f32, d, [x], s.sqrt(x)),
                    FloatUnary::Exp => map!(*f32, d, [x], math::exp(s, x)),
                    FloatUnary::Log => map!(*f32, d, [x], math::log(s, x)),
                    FloatUnary::Sin => map!(*f32, d, [x], math::sin(s, x)),
                    FloatUnary::Cos => map!(*f32, d, [x], math::cos(s, x)),
                    FloatUnary::Tanh => map!(*f32, d, [x], math::tanh(s, x)),
                    FloatUnary::Erf => map!(*f32, d, [x], math::erf(s, x)),
                    FloatUnary::Square => map!(*f32, d, [x], s.mul(x, x)),
                    FloatUnary::Recip => map!(*f32, d, [x], s.div(s.splat(1.0), x)),
                    FloatUnary::Floor => map!(*f32, d, [x], math::floor(s, x)),
                }
            }
            Op::LogicUnary(LogicUnary::Not, d, x) => {
                map!(u32, d, [x], to_bool(s, s.eq_u(x, s.splat_u(0))))
            }
            Op::LogicBinary(op, d, x, y) => {
                let (d, x, y) = (ctx.p(d), ctx.p(x), ctx.p(y));
                match op {
                    LogicBinary::And => map!(
                        *u32,
                        d,
                        [x, y],
                        to_bool(s, s.mask_and(truthy(s, x), truthy(s, y)))
                    ),
                    LogicBinary::Or => map!(
                        *u32,
                        d,
                        [x, y],
                        to_bool(s, s.mask_or(truthy(s, x), truthy(s, y)))
                    ),
                }
            }
            Op::FloatBinary(FloatBinary::Pow, d, x, y) => map!(f32, d, [x, y], math::pow(s, x, y)),
            Op::BinaryF(op, d, x, y) => {
                let (d, x, y) = (ctx.p(d), ctx.p(x), ctx.p(y));
                match op {
                    BinaryOp::Add => map!(*f32, d, [x, y], s.add(x, y)),
                    BinaryOp::Sub => map!(*f32, d, [x, y], s.sub(x, y)),
                    BinaryOp::Mul => map!(*f32, d, [x, y], s.mul(x, y)),
                    BinaryOp::Div => map!(*f32, d, [x, y], s.div(x, y)),
                    BinaryOp::Min => map!(*f32, d, [x, y], math::min(s, x, y)),
                    BinaryOp::Max => map!(*f32, d, [x, y], math::max(s, x, y)),
                }
            }
            Op::BinaryU(op, d, x, y) => {
                let (d, x, y) = (ctx.p(d), ctx.p(x), ctx.p(y));
                match op {
                    BinaryOp::Add => map!(*u32, d, [x, y], s.add_u(x, y)),
                    BinaryOp::Sub => map!(*u32, d, [x, y], s.sub_u(x, y)),
                    BinaryOp::Mul => map!(*u32, d, [x, y], s.mul_u(x, y)),
                    BinaryOp::Min => map!(*u32, d, [x, y], s.min_u(x, y)),
                    BinaryOp::Max => map!(*u32, d, [x, y], s.max_u(x, y)),
                    BinaryOp::Div => {
                        // No vector integer division on x86: one lane at a time.
                        for i in lo..hi {
                            *d.add(i) = (*x.add(i)).checked_div(*y.add(i)).unwrap_or(u32::MAX);
                        }
                    }
                }
            }
            Op::CompareF(op, d, x, y) => map!(u32, d, [x, y], to_bool(s, compare_f(s, op, x, y))),
            Op::CompareU(op, d, x, y) => map!(u32, d, [x, y], to_bool(s, compare_u(s, op, x, y))),
            Op::Select(d, c, x, y) => map!(u32, d, [c, x, y], s.select_u(truthy(s, c), x, y)),
            Op::U32ToF32(d, x) => map!(u32, d, [x], s.to_bits(s.u32_to_f32(x))),
            Op::F32ToU32(d, x) => map!(u32, d, [x], math::f32_to_u32(s, s.from_bits(x))),
            Op::F32ToBool(d, x) => {
                map!(u32, d, [x], to_bool(s, s.ne(s.from_bits(x), s.splat(0.0))))
            }
            Op::U32ToBool(d, x) => map!(u32, d, [x], to_bool(s, truthy(s, x))),
            Op::Random(d, [k0, k1, c0, c1], word) => map!(u32, d, [k0, k1, c0, c1], {
                let w = threefry::threefry2x32(s, k0, k1, c0, c1);
                s.to_bits(threefry::symmetric_uniform(s, w[word as usize]))
            }),
            Op::Lane(d) => {
                let d = ctx.p(d);
                let iota = s.load_u(IOTA.as_ptr());
                let mut i = lo;
                while i < hi {
                    s.store_u(
                        d.add(i),
                        s.add_u(iota, s.splat_u((ctx.start - ctx.frame.lane0 + i) as u32)),
                    );
                    i += V::LANES;
                }
            }
            Op::LoadPacked {
                dst,
                buffer,
                k,
                column,
                step,
            } => {
                let d = ctx.p(dst);
                let base = step as usize * ctx.frame.n + ctx.start;
                let (k, src) = (k as usize, ctx.frame.buffers[buffer as usize]);
                let mut from = src.add((base + lo) * k + column as usize);
                for i in lo..hi.min(ctx.len) {
                    *d.add(i) = *from;
                    from = from.add(k);
                }
            }
            Op::Store {
                src,
                buffer,
                step,
                k,
                column,
            } => {
                let a = ctx.p(src);
                let out = ctx.frame.buffers[buffer as usize];
                let base = step as usize * ctx.frame.n + ctx.start;
                if k == 0 {
                    std::ptr::copy_nonoverlapping(a, out.add(base), ctx.len);
                } else {
                    let mut to = out.add(base * k as usize + column as usize);
                    for i in 0..ctx.len {
                        *to = *a.add(i);
                        to = to.add(k as usize);
                    }
                }
            }
            Op::RowReduce(r, src, d, cols) => {
                let (a, d) = (ctx.p(src).cast::<f32>(), ctx.p(d).cast::<f32>());
                let cols = cols as usize;
                for row in 0..ctx.len / cols {
                    let at = row * cols;
                    let mut acc = if r == ReduceOp::Max { -f32::MAX } else { 0.0 };
                    for c in 0..cols {
                        let x = *a.add(at + c);
                        acc = if r == ReduceOp::Max {
                            acc.max(x)
                        } else {
                            acc + x
                        };
                    }
                    if r == ReduceOp::Mean {
                        acc /= cols as f32;
                    }
                    for c in 0..cols {
                        *d.add(at + c) = acc;
                    }
                }
            }
            Op::Guard { .. } => unreachable!("guards are handled by run_chunk"),
            Op::Affine { .. } | Op::Term(..) => unreachable!("affines are handled by exec_at"),
        }
    }
}

/// Whether some valid lane of vector `v` of a `len`-lane slot has `cond == when`.
///
/// # Safety
/// Vector `v` lies within the padded slot at `c`.
#[inline(always)]
unsafe fn vector_taken<V: Simd>(s: V, c: *const u32, len: usize, v: usize, when: bool) -> bool {
    // SAFETY: see the contract.
    let m = unsafe { s.load_u(c.add(v * V::LANES)) };
    let zero = s.eq_u(m, s.splat_u(0));
    let mut bits = s.mask_bits(if when { s.mask_not(zero) } else { zero });
    let valid = len - v * V::LANES;
    if valid < V::LANES {
        bits &= (1u64 << valid) - 1;
    }
    bits != 0
}

#[inline(always)]
fn to_bool<V: Simd>(s: V, m: V::M) -> V::U {
    s.select_u(m, s.splat_u(1), s.splat_u(0))
}

#[inline(always)]
fn truthy<V: Simd>(s: V, x: V::U) -> V::M {
    s.mask_not(s.eq_u(x, s.splat_u(0)))
}

#[inline(always)]
fn compare_f<V: Simd>(s: V, op: CompareOp, x: V::U, y: V::U) -> V::M {
    let (x, y) = (s.from_bits(x), s.from_bits(y));
    match op {
        CompareOp::Lt => s.lt(x, y),
        CompareOp::Le => s.le(x, y),
        CompareOp::Gt => s.lt(y, x),
        CompareOp::Ge => s.le(y, x),
        CompareOp::Eq => s.eq(x, y),
        CompareOp::Ne => s.ne(x, y),
    }
}

#[inline(always)]
fn compare_u<V: Simd>(s: V, op: CompareOp, x: V::U, y: V::U) -> V::M {
    match op {
        CompareOp::Lt => s.lt_u(x, y),
        CompareOp::Le => s.mask_not(s.lt_u(y, x)),
        CompareOp::Gt => s.lt_u(y, x),
        CompareOp::Ge => s.mask_not(s.lt_u(x, y)),
        CompareOp::Eq => s.eq_u(x, y),
        CompareOp::Ne => s.mask_not(s.eq_u(x, y)),
    }
}
