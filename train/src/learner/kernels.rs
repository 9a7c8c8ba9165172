//! The learner's elementwise passes, vectorised on the CPU runtime's [`Simd`] trait and its
//! numeric functions ([`cartfuse_fusion::cpu::interp::math`]): `tanh` and its gradient, bias
//! gradients (column sums), and Adam's update.
//!
//! Each pass is an [`Elementwise`] body run over whole vectors at the widest level the CPU
//! has ([`SimdLevel::detect`]) and over the tail one lane at a time. The levels never fuse
//! a multiply-add, so every level returns the same bits and a result does not depend on
//! where a slice starts or how long it is.

use cartfuse_fusion::cpu::interp::math;
use cartfuse_fusion::cpu::{Scalar, Simd, SimdLevel, WithSimd};

/// A pass over `len()` independent positions.
trait Elementwise {
    /// Positions.
    fn len(&self) -> usize;
    /// Computes positions `i..i + V::LANES`.
    ///
    /// # Safety
    /// `i + V::LANES <= self.len()`.
    unsafe fn apply<V: Simd>(&mut self, s: V, i: usize);
}

/// Runs an [`Elementwise`] body: whole vectors, then the tail on [`Scalar`].
struct Run<K>(K);

impl<K: Elementwise> WithSimd for Run<K> {
    type Output = ();

    #[inline(always)]
    fn with_simd<V: Simd>(self, s: V) {
        let mut body = self.0;
        let len = body.len();
        let whole = len - len % V::LANES;
        let mut i = 0;
        while i < whole {
            // SAFETY: `i + LANES <= whole <= len`.
            unsafe { body.apply(s, i) };
            i += V::LANES;
        }
        while i < len {
            // SAFETY: `i < len`.
            unsafe { body.apply(Scalar, i) };
            i += 1;
        }
    }
}

fn run<K: Elementwise>(level: SimdLevel, body: K) {
    level
        .dispatch(Run(body))
        .expect("the level was detected on this CPU");
}

/// `xs = tanh(xs)`.
pub fn tanh(level: SimdLevel, xs: &mut [f32]) {
    struct Tanh<'a>(&'a mut [f32]);
    impl Elementwise for Tanh<'_> {
        fn len(&self) -> usize {
            self.0.len()
        }
        #[inline(always)]
        unsafe fn apply<V: Simd>(&mut self, s: V, i: usize) {
            // SAFETY: in bounds by the caller's contract.
            unsafe {
                let p = self.0.as_mut_ptr().add(i);
                s.store(p, math::tanh(s, s.load(p)));
            }
        }
    }
    run(level, Tanh(xs));
}

/// `grad *= 1 - h^2`: the gradient through `h = tanh(z)`, from `h`.
pub fn tanh_grad(level: SimdLevel, grad: &mut [f32], h: &[f32]) {
    struct TanhGrad<'a>(&'a mut [f32], &'a [f32]);
    impl Elementwise for TanhGrad<'_> {
        fn len(&self) -> usize {
            self.0.len()
        }
        #[inline(always)]
        unsafe fn apply<V: Simd>(&mut self, s: V, i: usize) {
            // SAFETY: in bounds by the caller's contract (`h` is as long, asserted).
            unsafe {
                let p = self.0.as_mut_ptr().add(i);
                let h = s.load(self.1.as_ptr().add(i));
                let slope = s.sub(s.splat(1.0), s.mul(h, h));
                s.store(p, s.mul(s.load(p), slope));
            }
        }
    }
    assert_eq!(grad.len(), h.len());
    run(level, TanhGrad(grad, h));
}

/// `sums[j] = sum over rows r of m[r][j]` for the row-major `m` of `sums.len()` columns,
/// rows added in order.
pub fn column_sums(level: SimdLevel, sums: &mut [f32], m: &[f32]) {
    struct ColumnSums<'a>(&'a mut [f32], &'a [f32]);
    impl Elementwise for ColumnSums<'_> {
        fn len(&self) -> usize {
            self.0.len()
        }
        #[inline(always)]
        unsafe fn apply<V: Simd>(&mut self, s: V, j: usize) {
            let cols = self.0.len();
            let rows = self.1.len() / cols;
            // SAFETY: column `j + LANES - 1 < cols` of every row is inside `m`.
            unsafe {
                let mut sum = s.load(self.1.as_ptr().add(j));
                for r in 1..rows {
                    sum = s.add(sum, s.load(self.1.as_ptr().add(r * cols + j)));
                }
                s.store(self.0.as_mut_ptr().add(j), sum);
            }
        }
    }
    assert!(!sums.is_empty() && !m.is_empty() && m.len().is_multiple_of(sums.len()));
    run(level, ColumnSums(sums, m));
}

/// Adam's decays of the first and second moments (burn's defaults).
pub const ADAM_BETAS: (f32, f32) = (0.9, 0.999);

/// One Adam step's constants, burn's `AdaptiveMomentum` formulation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdamStep {
    /// Multiplies every gradient first (the global-norm clip; 1 leaves them as they are).
    pub grad_scale: f32,
    /// First moment's decay.
    pub beta_1: f32,
    /// Second moment's decay.
    pub beta_2: f32,
    /// `sqrt(1 - beta_2^t) / (1 - beta_1^t)`.
    pub combined: f32,
    /// `epsilon * sqrt(1 - beta_2^t)`.
    pub epsilon: f32,
    /// The learning rate.
    pub lr: f32,
}

impl AdamStep {
    /// Step `time` (1 for the first) with `epsilon` and learning rate `lr`, betas 0.9 and
    /// 0.999 (burn's defaults), gradients scaled by `grad_scale`.
    pub fn new(time: i32, epsilon: f32, lr: f32, grad_scale: f32) -> Self {
        let (beta_1, beta_2) = ADAM_BETAS;
        let correction_2 = (1.0 - beta_2.powi(time)).sqrt();
        Self {
            grad_scale,
            beta_1,
            beta_2,
            combined: correction_2 / (1.0 - beta_1.powi(time)),
            epsilon: epsilon * correction_2,
            lr,
        }
    }
}

/// Adam: with `g = grad * grad_scale`, `m = beta_1 m + (1 - beta_1) g`,
/// `v = beta_2 v + (1 - beta_2) g^2`, `params -= lr * (m * combined) / (sqrt v + epsilon)`,
/// each product and sum rounded in burn's order.
pub fn adam(
    level: SimdLevel,
    step: AdamStep,
    params: &mut [f32],
    grads: &[f32],
    m: &mut [f32],
    v: &mut [f32],
) {
    struct Adam<'a> {
        step: AdamStep,
        params: &'a mut [f32],
        grads: &'a [f32],
        m: &'a mut [f32],
        v: &'a mut [f32],
    }
    impl Elementwise for Adam<'_> {
        fn len(&self) -> usize {
            self.params.len()
        }
        #[inline(always)]
        unsafe fn apply<V: Simd>(&mut self, s: V, i: usize) {
            let c = self.step;
            // SAFETY: the four slices are as long (asserted) and `i` in bounds.
            unsafe {
                let g = s.mul(s.load(self.grads.as_ptr().add(i)), s.splat(c.grad_scale));
                let pm = self.m.as_mut_ptr().add(i);
                let pv = self.v.as_mut_ptr().add(i);
                let m = s.add(
                    s.mul(s.load(pm), s.splat(c.beta_1)),
                    s.mul(g, s.splat(1.0 - c.beta_1)),
                );
                let v = s.add(
                    s.mul(s.load(pv), s.splat(c.beta_2)),
                    s.mul(s.mul(g, g), s.splat(1.0 - c.beta_2)),
                );
                s.store(pm, m);
                s.store(pv, v);
                let update = s.div(
                    s.mul(m, s.splat(c.combined)),
                    s.add(s.sqrt(v), s.splat(c.epsilon)),
                );
                let pp = self.params.as_mut_ptr().add(i);
                s.store(pp, s.sub(s.load(pp), s.mul(update, s.splat(c.lr))));
            }
        }
    }
    assert!(grads.len() == params.len() && m.len() == params.len() && v.len() == params.len());
    run(
        level,
        Adam {
            step,
            params,
            grads,
            m,
            v,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels() -> Vec<SimdLevel> {
        SimdLevel::ALL
            .into_iter()
            .filter(|l| l.is_supported())
            .collect()
    }

    #[test]
    fn every_level_gives_the_same_bits_as_scalar_code() {
        let xs: Vec<f32> = (0..37).map(|i| (i as f32 - 18.0) * 0.31).collect();
        let hs: Vec<f32> = xs.iter().map(|x| x.tanh()).collect();
        for level in levels() {
            let mut t = xs.clone();
            tanh(level, &mut t);
            for (x, y) in xs.iter().zip(&t) {
                assert!((x.tanh() - y).abs() < 3e-7, "{level}: tanh({x}) = {y}");
            }
            let mut scalar = xs.clone();
            tanh(SimdLevel::Scalar, &mut scalar);
            assert_eq!(t, scalar, "{level}");

            let mut g = vec![2.0f32; xs.len()];
            tanh_grad(level, &mut g, &hs);
            for (g, h) in g.iter().zip(&hs) {
                assert_eq!(*g, 2.0 * (1.0 - h * h));
            }

            // 3 rows of 37 columns (two vectors and a tail at AVX-512).
            let m: Vec<f32> = (0..3 * 37).map(|i| i as f32 * 0.5).collect();
            let mut sums = vec![0.0; 37];
            column_sums(level, &mut sums, &m);
            for (j, s) in sums.iter().enumerate() {
                assert_eq!(*s, (m[j] + m[37 + j]) + m[74 + j]);
            }
        }
    }

    #[test]
    fn adam_matches_its_definition() {
        let grads: Vec<f32> = (0..21).map(|i| (i as f32 - 10.0) * 0.1).collect();
        for level in levels() {
            let mut params = vec![1.0f32; 21];
            let (mut m, mut v) = (vec![0.0f32; 21], vec![0.0f32; 21]);
            let first = AdamStep::new(1, 1e-5, 0.01, 0.5);
            adam(level, first, &mut params, &grads, &mut m, &mut v);
            for i in 0..21 {
                let g = grads[i] * 0.5;
                assert_eq!(m[i], 0.0 * 0.9 + g * (1.0 - 0.9f32));
                assert_eq!(v[i], 0.0 * 0.999 + g * g * (1.0 - 0.999f32));
                // The first step moves each weight by about lr * sign(g).
                let moved = 1.0 - params[i];
                if g != 0.0 {
                    assert!((moved - 0.01 * g.signum()).abs() < 1e-4, "{moved}");
                } else {
                    assert_eq!(moved, 0.0);
                }
            }
        }
    }
}
