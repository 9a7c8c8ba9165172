//! Accuracy of the transcendental functions against `f64`, and level-to-level bit identity.

use crate::cpu::interp::math;
use crate::cpu::{Scalar, Simd, SimdLevel, WithSimd};

/// Applies `f` to `xs` (and `ys` for pow) at one level.
struct Apply<'a> {
    f: &'static str,
    xs: &'a [f32],
    ys: &'a [f32],
}

impl WithSimd for Apply<'_> {
    type Output = Vec<f32>;
    fn with_simd<V: Simd>(self, s: V) -> Vec<f32> {
        let mut out = vec![0.0; self.xs.len()];
        for i in (0..self.xs.len()).step_by(V::LANES) {
            // SAFETY: lengths are multiples of 16.
            unsafe {
                let x = s.load(self.xs.as_ptr().add(i));
                let y = s.load(self.ys.as_ptr().add(i));
                let r = match self.f {
                    "sin" => math::sin(s, x),
                    "cos" => math::cos(s, x),
                    "exp" => math::exp(s, x),
                    "log" => math::log(s, x),
                    "tanh" => math::tanh(s, x),
                    "erf" => math::erf(s, x),
                    "pow" => math::pow(s, x, y),
                    _ => unreachable!(),
                };
                s.store(out.as_mut_ptr().add(i), r);
            }
        }
        out
    }
}

fn sweep(lo: f32, hi: f32, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| lo + (hi - lo) * (i as f32 / n as f32))
        .collect()
}

/// Max error of `f` over `xs` against `reference`: absolute where |ref| < 1, else relative.
fn max_error(f: &'static str, xs: &[f32], ys: &[f32], reference: impl Fn(f64, f64) -> f64) -> f64 {
    let got = Scalar.vectorize_scalar(Apply { f, xs, ys });
    for level in SimdLevel::ALL.into_iter().filter(|l| l.is_supported()) {
        let other = level.dispatch(Apply { f, xs, ys }).unwrap();
        let same = got
            .iter()
            .zip(&other)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{f}: {level} differs from scalar");
    }
    xs.iter()
        .zip(ys)
        .zip(&got)
        .map(|((x, y), g)| {
            let r = reference(f64::from(*x), f64::from(*y));
            (f64::from(*g) - r).abs() / r.abs().max(1.0)
        })
        // A NaN error is the worst (`f64::max` would drop it and pass).
        .fold(
            0.0,
            |worst: f64, e| if e > worst || e.is_nan() { e } else { worst },
        )
}

trait ScalarRun {
    fn vectorize_scalar<W: WithSimd>(self, body: W) -> W::Output;
}
impl ScalarRun for Scalar {
    fn vectorize_scalar<W: WithSimd>(self, body: W) -> W::Output {
        body.with_simd(self)
    }
}

#[test]
fn transcendentals_are_within_their_documented_bounds() {
    let n = 1 << 17;
    let zeros = vec![0.0; n];
    type Case = (&'static str, Vec<f32>, f64, fn(f64) -> f64);
    let cases: [Case; 6] = [
        ("sin", sweep(-100.0, 100.0, n), 2e-7, f64::sin),
        ("cos", sweep(-100.0, 100.0, n), 2e-7, f64::cos),
        ("exp", sweep(-87.0, 88.0, n), 3e-7, f64::exp),
        ("log", sweep(1e-3, 1e4, n), 2e-7, f64::ln),
        ("tanh", sweep(-10.0, 10.0, n), 3e-7, f64::tanh),
        ("erf", sweep(-5.0, 5.0, n), 3e-7, libm::erf),
    ];
    for (f, xs, bound, reference) in cases {
        let error = max_error(f, &xs, &zeros, |x, _| reference(x));
        println!("{f}: max error {error:.2e} (bound {bound:.0e})");
        assert!(error <= bound, "{f}: max error {error:e} > {bound:e}");
    }
    let xs = sweep(0.05, 20.0, n);
    let ys: Vec<f32> = sweep(-3.0, 3.0, n).into_iter().rev().collect();
    let error = max_error("pow", &xs, &ys, f64::powf);
    println!("pow: max error {error:.2e}");
    assert!(error <= 2e-6, "pow: {error:e}");
}

#[test]
fn special_values_follow_ieee() {
    let xs = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -1.0,
        1e-40,
        100.0,
        -100.0,
        3.0,
        -2.0,
        0.5,
        1.0,
        89.0,
        -104.0,
        2.0,
    ];
    let ys = [
        2.0,
        3.0,
        1.0,
        2.0,
        0.0,
        0.5,
        1.0,
        1.0,
        1.0,
        2.0,
        3.0,
        -1.0,
        f32::NAN,
        1.0,
        1.0,
        0.0,
    ];
    let apply = |f| {
        Scalar.vectorize_scalar(Apply {
            f,
            xs: &xs,
            ys: &ys,
        })
    };
    let (exp, log, pow) = (apply("exp"), apply("log"), apply("pow"));
    assert_eq!(exp[2], f32::INFINITY);
    assert_eq!(exp[3], 0.0);
    assert!(exp[4].is_nan());
    assert_eq!(exp[13], f32::INFINITY);
    assert_eq!(log[0], f32::NEG_INFINITY);
    assert!(log[5].is_nan());
    assert!((log[6] - (1e-40f64).ln() as f32).abs() < 1e-4);
    assert_eq!(log[2], f32::INFINITY);
    assert_eq!(pow[4], 1.0); // NaN^0
    assert_eq!(pow[12], 1.0); // 1^NaN
    assert!(pow[5].is_nan()); // (-1)^0.5
    assert_eq!(pow[10], -8.0); // (-2)^3
    assert_eq!(pow[15], 1.0);
    let sin = apply("sin");
    assert!(sin[2].is_nan() && sin[4].is_nan());
    assert_eq!(sin[1].to_bits(), (-0.0f32).to_bits());
}
