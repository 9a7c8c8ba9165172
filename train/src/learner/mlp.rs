//! One three-layer `tanh` MLP's forward and backward passes on a batch of rows: the matrix
//! products on [`super::matmul`], the elementwise work on [`super::kernels`].
//!
//! `z_l = a_l W_l + b_l`, `a_{l+1} = tanh(z_l)` for the two hidden layers, the last layer
//! linear. Backward from `d out`: `dW_l = a_l^T dz_l`, `db_l = column sums of dz_l`,
//! `da_l = dz_l W_l^T`, `dz_{l-1} = da_l (1 - a_l^2)`.

use cartfuse_fusion::cpu::SimdLevel;

use super::kernels;
use super::matmul;
use crate::shape::Layer;

/// A forward pass's activations, kept for the backward pass (buffers reused between calls).
#[derive(Debug, Default, Clone)]
pub struct Trace {
    /// The two hidden layers' outputs, `[rows, hidden]` each.
    hidden: [Vec<f32>; 2],
    /// The last layer's output, `[rows, outputs]`.
    out: Vec<f32>,
    /// Rows of the last pass.
    rows: usize,
}

impl Trace {
    /// The output of the last forward pass, `[rows, outputs]`.
    pub fn out(&self) -> &[f32] {
        &self.out
    }
}

/// Scratch of the backward pass: the gradients flowing into the two hidden layers.
#[derive(Debug, Default, Clone)]
pub struct Backprop {
    grads: [Vec<f32>; 2],
}

/// `a W + b` of `layer` (weights and biases read from `params`) on the `rows` rows of `a`,
/// into `out`.
fn dense(params: &[f32], layer: &Layer, a: &[f32], rows: usize, out: &mut Vec<f32>) {
    let bias = &params[layer.biases()];
    out.clear();
    for _ in 0..rows {
        out.extend_from_slice(bias);
    }
    let shape = (rows, layer.fan_in, layer.fan_out);
    matmul::ab(out, a, &params[layer.weights()], shape, 1.0);
}

/// The MLP of `layers` (in `params`) on the `rows` rows of `x`, keeping the activations
/// in `trace`; the output is [`Trace::out`].
pub fn forward(
    level: SimdLevel,
    params: &[f32],
    layers: &[Layer; 3],
    x: &[f32],
    rows: usize,
    trace: &mut Trace,
) {
    assert_eq!(x.len(), rows * layers[0].fan_in);
    trace.rows = rows;
    let [h0, h1] = &mut trace.hidden;
    dense(params, &layers[0], x, rows, h0);
    kernels::tanh(level, h0);
    dense(params, &layers[1], h0, rows, h1);
    kernels::tanh(level, h1);
    dense(params, &layers[2], h1, rows, &mut trace.out);
}

/// The gradient of the MLP's parameters (written into `grads`, laid out as `params`) for
/// the gradient `d_out` of its last forward pass's output (`trace`, on input `x`).
#[allow(clippy::too_many_arguments)]
pub fn backward(
    level: SimdLevel,
    params: &[f32],
    layers: &[Layer; 3],
    x: &[f32],
    trace: &Trace,
    d_out: &[f32],
    grads: &mut [f32],
    scratch: &mut Backprop,
) {
    let rows = trace.rows;
    assert_eq!(d_out.len(), rows * layers[2].fan_out);
    let inputs: [&[f32]; 3] = [x, &trace.hidden[0], &trace.hidden[1]];
    // The gradient of layer l's pre-activation: d_out for the last layer, then the hidden
    // layers' gradients in `scratch`, each computed from the layer above.
    for l in (0..3).rev() {
        let layer = &layers[l];
        let [g0, g1] = &mut scratch.grads;
        let (dz, below): (&[f32], Option<&mut Vec<f32>>) = match l {
            2 => (d_out, Some(g1)),
            1 => (&g1[..], Some(g0)),
            _ => (&g0[..], None),
        };
        let shape = (rows, layer.fan_in, layer.fan_out);
        matmul::at_b(&mut grads[layer.weights()], inputs[l], dz, shape);
        kernels::column_sums(level, &mut grads[layer.biases()], dz);
        if let Some(below) = below {
            below.resize(rows * layer.fan_in, 0.0);
            matmul::a_bt(below, dz, &params[layer.weights()], shape);
            kernels::tanh_grad(level, below, inputs[l]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::{Net, NetShape};

    /// The MLP's output, in f64, straight from the definition.
    fn reference(params: &[f32], layers: &[Layer; 3], x: &[f32], rows: usize) -> Vec<f64> {
        let mut a: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        for (l, layer) in layers.iter().enumerate() {
            let mut z = vec![0.0f64; rows * layer.fan_out];
            for r in 0..rows {
                for o in 0..layer.fan_out {
                    let mut sum = f64::from(params[layer.bias + o]);
                    for i in 0..layer.fan_in {
                        let w = params[layer.weight + i * layer.fan_out + o];
                        sum += a[r * layer.fan_in + i] * f64::from(w);
                    }
                    z[r * layer.fan_out + o] = if l < 2 { sum.tanh() } else { sum };
                }
            }
            a = z;
        }
        a
    }

    #[test]
    fn backward_matches_finite_differences() {
        let shape = NetShape::new(3, 5, 2);
        let layers = shape.layers(Net::Actor);
        let mut params = shape.init(7)[shape.range(Net::Actor)].to_vec();
        // Non-zero biases, so their gradients are exercised off the starting point.
        for (i, p) in params.iter_mut().enumerate() {
            *p += 0.01 * (i % 7) as f32;
        }
        let rows = 4;
        let x: Vec<f32> = (0..rows * 3).map(|i| (i as f32 * 0.37).sin()).collect();
        // Loss: sum over outputs of c_k out_k, so d_out = c.
        let c: Vec<f32> = (0..rows * 2).map(|i| 1.0 - 0.3 * i as f32).collect();
        let level = SimdLevel::detect();
        let mut trace = Trace::default();
        forward(level, &params, &layers, &x, rows, &mut trace);
        let want = reference(&params, &layers, &x, rows);
        for (o, w) in trace.out().iter().zip(&want) {
            assert!((f64::from(*o) - w).abs() < 1e-5, "{o} vs {w}");
        }
        let mut grads = vec![f32::NAN; params.len()];
        backward(
            level,
            &params,
            &layers,
            &x,
            &trace,
            &c,
            &mut grads,
            &mut Backprop::default(),
        );
        let loss = |p: &[f32]| -> f64 {
            let out = reference(p, &layers, &x, rows);
            out.iter().zip(&c).map(|(o, c)| o * f64::from(*c)).sum()
        };
        for i in 0..params.len() {
            let h = 1e-3f32;
            let (mut up, mut down) = (params.clone(), params.clone());
            up[i] += h;
            down[i] -= h;
            let numeric = (loss(&up) - loss(&down)) / f64::from(2.0 * h);
            assert!(
                (f64::from(grads[i]) - numeric).abs() < 2e-3 * numeric.abs().max(1.0),
                "param {i}: {} vs {numeric}",
                grads[i]
            );
        }
    }
}
