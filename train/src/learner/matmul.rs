//! The three row-major matrix products a dense layer's forward and backward passes need,
//! on matrixmultiply's `sgemm` (the kernel burn's NdArray backend multiplies with). Its
//! strides let a transposed operand be read in place, so nothing is copied.
//!
//! Every slice is row-major and contiguous; the lengths are checked before `sgemm` reads.

/// `c[m, n] = a[m, k] b[k, n] + beta c` (`beta` 0 or 1: overwrite or accumulate).
pub fn ab(c: &mut [f32], a: &[f32], b: &[f32], (m, k, n): (usize, usize, usize), beta: f32) {
    assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n);
    // SAFETY: the asserts above keep every read and write in bounds for these strides.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            beta,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// `c[k, n] = a[m, k]^T b[m, n]`: a weight gradient, summed over the `m` rows.
pub fn at_b(c: &mut [f32], a: &[f32], b: &[f32], (m, k, n): (usize, usize, usize)) {
    assert!(a.len() >= m * k && b.len() >= m * n && c.len() >= k * n);
    // SAFETY: as in `ab`; `a` is read transposed through its strides.
    unsafe {
        matrixmultiply::sgemm(
            k,
            m,
            n,
            1.0,
            a.as_ptr(),
            1,
            k as isize,
            b.as_ptr(),
            n as isize,
            1,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// `c[m, k] = a[m, n] b[k, n]^T`: the gradient of a layer's input.
pub fn a_bt(c: &mut [f32], a: &[f32], b: &[f32], (m, k, n): (usize, usize, usize)) {
    assert!(a.len() >= m * n && b.len() >= k * n && c.len() >= m * k);
    // SAFETY: as in `ab`; `b` is read transposed through its strides.
    unsafe {
        matrixmultiply::sgemm(
            m,
            n,
            k,
            1.0,
            a.as_ptr(),
            n as isize,
            1,
            b.as_ptr(),
            1,
            n as isize,
            0.0,
            c.as_mut_ptr(),
            k as isize,
            1,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `a[r][c]` of a row-major `[rows, cols]` matrix from a formula.
    fn matrix(rows: usize, cols: usize, f: impl Fn(usize, usize) -> f32) -> Vec<f32> {
        (0..rows * cols).map(|i| f(i / cols, i % cols)).collect()
    }

    #[test]
    fn products_match_the_definition() {
        let (m, k, n) = (5, 3, 4);
        let a = matrix(m, k, |r, c| (r * 3 + c) as f32 * 0.5 - 2.0);
        let b = matrix(k, n, |r, c| (r as f32 - c as f32) * 0.25);
        let mut c = vec![1.0; m * n];
        ab(&mut c, &a, &b, (m, k, n), 1.0);
        for r in 0..m {
            for j in 0..n {
                let want = 1.0 + (0..k).map(|i| a[r * k + i] * b[i * n + j]).sum::<f32>();
                assert!((c[r * n + j] - want).abs() < 1e-5);
            }
        }
        // a^T (m x k)^T times g (m x n): k x n.
        let g = matrix(m, n, |r, c| (r + 2 * c) as f32 * 0.1);
        let mut at = vec![f32::NAN; k * n];
        at_b(&mut at, &a, &g, (m, k, n));
        for i in 0..k {
            for j in 0..n {
                let want = (0..m).map(|r| a[r * k + i] * g[r * n + j]).sum::<f32>();
                assert!((at[i * n + j] - want).abs() < 1e-5);
            }
        }
        // g (m x n) times b^T where b is k x n: m x k.
        let mut bt = vec![f32::NAN; m * k];
        a_bt(&mut bt, &g, &b, (m, k, n));
        for r in 0..m {
            for i in 0..k {
                let want = (0..n).map(|j| g[r * n + j] * b[i * n + j]).sum::<f32>();
                assert!((bt[r * k + i] - want).abs() < 1e-5);
            }
        }
    }
}
