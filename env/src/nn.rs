//! A small neural network as graph ops, so a policy can run inside the same kernel as the
//! environment it acts in (the study's "fusing simulation with inference").
//!
//! - [`MlpShape`]: the layer widths of a `tanh` MLP and the names of its weights.
//! - [`mlp`]: a per-lane dense layer after another, each output one affine op
//!   ([`cartfuse_fusion::graph::Op::Affine`]) plus its bias. Every weight and bias is a runtime
//!   param, so the weights live in the kernel's bound params buffer: new weights after a
//!   learning update are a buffer write, never a recompile.
//! - [`log_softmax`], [`categorical`] and [`unit_uniform`]: an action drawn from logits with
//!   the counter-based generator, so a policy on the host (burn, numpy) that reads the same
//!   Threefry word draws the same action.
//!
//! Each helper writes the math in the order its host twin in `cartfuse-train` does (sums
//! left to right, the max subtracted before `exp`), so the two agree to float rounding.

use cartfuse_fusion::graph::{DType, GraphBuilder, Var};

/// The widths of a `tanh` MLP: inputs, then each layer's outputs (the last one linear).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MlpShape {
    widths: Vec<u32>,
}

/// Why an [`MlpShape`] cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MlpShapeError {
    /// Fewer than two widths (an input and an output).
    #[error("an MLP needs at least an input and an output width, got {0:?}")]
    TooFewLayers(Vec<u32>),
    /// A zero width.
    #[error("layer widths must be at least 1, got {0:?}")]
    ZeroWidth(Vec<u32>),
}

impl MlpShape {
    /// An MLP of `widths`: `[inputs, hidden.., outputs]`.
    pub fn new(widths: Vec<u32>) -> Result<Self, MlpShapeError> {
        if widths.len() < 2 {
            return Err(MlpShapeError::TooFewLayers(widths));
        }
        if widths.contains(&0) {
            return Err(MlpShapeError::ZeroWidth(widths));
        }
        Ok(Self { widths })
    }

    /// The widths, inputs first.
    pub fn widths(&self) -> &[u32] {
        &self.widths
    }

    /// Inputs of the first layer.
    pub fn inputs(&self) -> u32 {
        self.widths[0]
    }

    /// Outputs of the last layer.
    pub fn outputs(&self) -> u32 {
        *self.widths.last().expect("at least two widths")
    }

    /// Dense layers.
    pub fn layers(&self) -> usize {
        self.widths.len() - 1
    }

    /// Weights and biases in all.
    pub fn param_count(&self) -> usize {
        self.widths
            .windows(2)
            .map(|w| (w[0] as usize + 1) * w[1] as usize)
            .sum()
    }

    /// The param names of every weight and bias under `prefix`, in the order a flat weight
    /// vector lists them: layer by layer, each layer's weights row by row (`[out][in]`),
    /// then its biases.
    pub fn param_names(&self, prefix: &str) -> Vec<String> {
        let mut names = Vec::with_capacity(self.param_count());
        for (layer, w) in self.widths.windows(2).enumerate() {
            for out in 0..w[1] {
                for input in 0..w[0] {
                    names.push(weight_name(prefix, layer, out, input));
                }
            }
            for out in 0..w[1] {
                names.push(bias_name(prefix, layer, out));
            }
        }
        names
    }
}

/// The param holding the weight from input `input` to output `out` of `layer`.
pub fn weight_name(prefix: &str, layer: usize, out: u32, input: u32) -> String {
    format!("{prefix}.{layer}.w{out}_{input}")
}

/// The param holding output `out`'s bias in `layer`.
pub fn bias_name(prefix: &str, layer: usize, out: u32) -> String {
    format!("{prefix}.{layer}.b{out}")
}

/// Inputs one [`GraphBuilder::affine`] node sums at most. A wider layer chains slices
/// (each continuing the last one's sum), so an unfused plan's kernel for one slice binds at
/// most this many input buffers plus its running sum, within every device's binding limit.
pub const TERMS_PER_NODE: usize = 32;

/// One dense layer on one lane: `out_j = sum_i w[j][i] x_i + b_j`, summed left to right
/// (an affine per [`TERMS_PER_NODE`] inputs, then the bias).
fn dense<'g>(
    g: &'g GraphBuilder,
    prefix: &str,
    layer: usize,
    x: &[Var<'g>],
    outputs: u32,
) -> Vec<Var<'g>> {
    (0..outputs)
        .map(|out| {
            let weights: Vec<Var<'g>> = (0..x.len())
                .map(|input| g.param(&weight_name(prefix, layer, out, input as u32), DType::F32))
                .collect();
            let sum = weights
                .chunks(TERMS_PER_NODE)
                .zip(x.chunks(TERMS_PER_NODE))
                .fold(None, |sum, (w, x)| Some(g.affine(sum, w, x)))
                .expect("at least one input");
            sum + g.param(&bias_name(prefix, layer, out), DType::F32)
        })
        .collect()
}

/// The MLP `shape` with weights under `prefix` applied to `x` (`shape.inputs()` values per
/// lane): `tanh` after every layer but the last.
pub fn mlp<'g>(g: &'g GraphBuilder, shape: &MlpShape, prefix: &str, x: &[Var<'g>]) -> Vec<Var<'g>> {
    assert_eq!(
        x.len(),
        shape.inputs() as usize,
        "the MLP reads {} inputs",
        shape.inputs()
    );
    let mut h = x.to_vec();
    for (layer, w) in shape.widths.windows(2).enumerate() {
        h = dense(g, prefix, layer, &h, w[1]);
        if layer + 1 < shape.layers() {
            h = h.into_iter().map(Var::tanh).collect();
        }
    }
    h
}

/// `log softmax(logits)`: `l - max - log(sum exp(l - max))`.
pub fn log_softmax<'g>(logits: &[Var<'g>]) -> Vec<Var<'g>> {
    let max = logits[1..].iter().fold(logits[0], |m, l| m.max(*l));
    let shifted: Vec<Var<'g>> = logits.iter().map(|l| *l - max).collect();
    let sum = shifted[1..]
        .iter()
        .fold(shifted[0].exp(), |s, l| s + l.exp());
    let log_sum = sum.log();
    shifted.iter().map(|l| *l - log_sum).collect()
}

/// The action (`u32`) drawn from `log_probs` by the uniform `u` in `[0, 1)`: the first
/// action whose cumulative probability exceeds `u`, the last one if rounding leaves the
/// sum at or below `u`. Written as a count of cumulative sums `u` has passed, branch-free.
pub fn categorical<'g>(g: &'g GraphBuilder, log_probs: &[Var<'g>], u: Var<'g>) -> Var<'g> {
    if log_probs.len() == 1 {
        return g.u32(0);
    }
    let mut cumulative = log_probs[0].exp();
    let mut action = u.ge(cumulative).cast(DType::U32);
    for lp in &log_probs[1..log_probs.len() - 1] {
        cumulative = cumulative + lp.exp();
        action = action + u.ge(cumulative).cast(DType::U32);
    }
    action
}

/// `values[index]` per lane (`index` a `u32` below `values.len()`).
pub fn pick<'g>(g: &'g GraphBuilder, values: &[Var<'g>], index: Var<'g>) -> Var<'g> {
    values
        .iter()
        .enumerate()
        .skip(1)
        .fold(values[0], |picked, (i, value)| {
            g.select(index.eq(g.u32(i as u32)), *value, picked)
        })
}

/// A uniform in `[0, 1)`: the top 24 bits of word 0 of Threefry-2x32 block `counter` under
/// `key`, times `2^-24`. Built from [`GraphBuilder::random_uniform`]'s `[-1, 1)` draw as
/// `(r + 1) / 2`, which is exact in `f32`, so it equals
/// `((threefry2x32(key, counter)[0] >> 8) as f32) * 2^-24` on the host bit for bit.
pub fn unit_uniform<'g>(g: &'g GraphBuilder, key: [Var<'g>; 2], counter: [Var<'g>; 2]) -> Var<'g> {
    (g.random_uniform(key, counter, 0) + 1.0) * 0.5
}

/// [`unit_uniform`] on the host.
pub fn unit_uniform_host(key: [u32; 2], counter: [u32; 2]) -> f32 {
    let bits = cartfuse_fusion::rng::threefry2x32(key, counter)[0];
    (bits >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    use cartfuse_fusion::graph::{HostArray, Scalar};
    use cartfuse_fusion::interpret::{Values, interpret};

    #[test]
    fn shapes_name_every_weight_once_in_flat_order() {
        let shape = MlpShape::new(vec![4, 3, 2]).unwrap();
        let names = shape.param_names("pi");
        assert_eq!(names.len(), shape.param_count());
        assert_eq!(shape.param_count(), (4 + 1) * 3 + (3 + 1) * 2);
        assert_eq!(names[0], "pi.0.w0_0");
        assert_eq!(names[4], "pi.0.w1_0");
        assert_eq!(names[12], "pi.0.b0");
        assert_eq!(names[15], "pi.1.w0_0");
        assert_eq!(names.last().unwrap(), "pi.1.b1");
        let unique: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
        assert!(matches!(
            MlpShape::new(vec![4]),
            Err(MlpShapeError::TooFewLayers(_))
        ));
        assert!(matches!(
            MlpShape::new(vec![4, 0, 2]),
            Err(MlpShapeError::ZeroWidth(_))
        ));
    }

    /// The graph's MLP, log-softmax, draw and pick against the same math in f64 on the host.
    #[test]
    fn a_policy_graph_matches_host_math() {
        let shape = MlpShape::new(vec![2, 3, 3]).unwrap();
        let g = GraphBuilder::new();
        let x = [g.input("x0", DType::F32), g.input("x1", DType::F32)];
        let logits = mlp(&g, &shape, "pi", &x);
        let lp = log_softmax(&logits);
        let key = [g.param("k0", DType::U32), g.param("k1", DType::U32)];
        let u = unit_uniform(&g, key, [g.lane_index(), g.u32(9)]);
        let action = categorical(&g, &lp, u);
        g.output("action", action);
        g.output("log_prob", pick(&g, &lp, action));
        g.output("u", u);
        let graph = g.build().unwrap();

        let weights: Vec<f32> = (0..shape.param_count())
            .map(|i| ((i * 37 % 17) as f32 - 8.0) / 8.0)
            .collect();
        let mut params: HashMap<String, Scalar> = shape
            .param_names("pi")
            .into_iter()
            .zip(&weights)
            .map(|(name, w)| (name, Scalar::F32(*w)))
            .collect();
        params.insert("k0".into(), Scalar::U32(5));
        params.insert("k1".into(), Scalar::U32(6));
        let lanes = 64;
        let xs: Vec<[f32; 2]> = (0..lanes)
            .map(|i| [(i as f32 * 0.37).sin(), (i as f32 * 0.11).cos()])
            .collect();
        let inputs: HashMap<String, HostArray> = HashMap::from([
            (
                "x0".to_string(),
                HostArray::F32(xs.iter().map(|x| x[0]).collect()),
            ),
            (
                "x1".to_string(),
                HostArray::F32(xs.iter().map(|x| x[1]).collect()),
            ),
        ]);
        let out = interpret::<f32>(&graph, lanes, &inputs, &params).unwrap();
        let Values::Int(actions) = &out["action"] else {
            panic!("u32 actions")
        };
        let Values::Float(log_probs) = &out["log_prob"] else {
            panic!("f32 log-probs")
        };
        let Values::Float(us) = &out["u"] else {
            panic!("f32 draws")
        };

        let mut seen = [false; 3];
        for (lane, x) in xs.iter().enumerate() {
            // Host: W row-major [out][in], then biases, per layer.
            let mut h: Vec<f64> = x.iter().map(|v| f64::from(*v)).collect();
            let mut offset = 0;
            for (layer, w) in shape.widths().windows(2).enumerate() {
                let (fan_in, fan_out) = (w[0] as usize, w[1] as usize);
                let bias = offset + fan_in * fan_out;
                h = (0..fan_out)
                    .map(|j| {
                        let s: f64 = (0..fan_in)
                            .map(|i| f64::from(weights[offset + j * fan_in + i]) * h[i])
                            .sum();
                        let v = s + f64::from(weights[bias + j]);
                        if layer + 1 < shape.layers() {
                            v.tanh()
                        } else {
                            v
                        }
                    })
                    .collect();
                offset = bias + fan_out;
            }
            let max = h.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let log_sum = h.iter().map(|l| (l - max).exp()).sum::<f64>().ln();
            let host_lp: Vec<f64> = h.iter().map(|l| l - max - log_sum).collect();
            let u = unit_uniform_host([5, 6], [lane as u32, 9]);
            assert_eq!(us[lane].to_bits(), u.to_bits(), "lane {lane}: the draw");
            let mut cumulative = 0.0;
            let mut host_action = 2;
            for (a, l) in host_lp.iter().enumerate() {
                cumulative += l.exp();
                if f64::from(u) < cumulative {
                    host_action = a;
                    break;
                }
            }
            assert_eq!(actions[lane] as usize, host_action, "lane {lane}");
            seen[host_action] = true;
            let lp = host_lp[host_action];
            assert!(
                (f64::from(log_probs[lane]) - lp).abs() < 1e-5,
                "lane {lane}: {lp}"
            );
        }
        assert!(
            seen.iter().all(|s| *s),
            "the draws reach every action: {seen:?}"
        );
    }
}
