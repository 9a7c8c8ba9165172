//! PPO's loss and its gradient with respect to the networks' outputs, written out: the
//! clipped policy objective and the entropy bonus from the actor's logits, the value loss
//! from the critic's values (CleanRL's `ppo.py`, as [`crate::ppo`] writes it with burn).
//!
//! With `lp = log softmax(logits)`, `p = exp(lp)`, `r = exp(lp[a] - old)` and `A` the
//! normalised advantage, over the `m` rows:
//! - policy loss `mean(max(-A r, -A clip(r, 1 - c, 1 + c)))`; where the unclipped term is
//!   the larger, `d/d logit_j = -A r (1[j = a] - p_j) / m`, else 0;
//! - entropy `H = -sum_j p_j lp_j`, and `-ent_coef mean H` gives
//!   `d/d logit_j = ent_coef p_j (lp_j + H) / m`;
//! - value loss `0.5 mean((v - target)^2)`, and `vf_coef` times it gives
//!   `d/dv = vf_coef (v - target) / m`.

use crate::minibatch::Minibatch;
use crate::policy::log_softmax_row;

/// The policy loss and the mean entropy of `logits` (`[m, actions]`) on `batch`; writes the
/// gradient of `policy loss - ent_coef * entropy` with respect to the logits into `d_logits`.
pub fn policy(
    logits: &[f32],
    batch: &Minibatch,
    clip: f32,
    ent_coef: f32,
    d_logits: &mut Vec<f32>,
) -> (f32, f32) {
    let m = batch.len();
    let actions = logits.len() / m;
    d_logits.resize(logits.len(), 0.0);
    let (mut loss_sum, mut entropy_sum) = (0.0f32, 0.0f32);
    let inv_m = 1.0 / m as f32;
    for (row, (d, logits)) in d_logits
        .chunks_mut(actions)
        .zip(logits.chunks(actions))
        .enumerate()
    {
        let lp = log_softmax_row(logits);
        let p: Vec<f32> = lp.iter().map(|l| l.exp()).collect();
        let entropy = -p.iter().zip(&lp).map(|(p, l)| p * l).sum::<f32>();
        let taken = batch.actions[row] as usize;
        let ratio = (lp[taken] - batch.old_log_probs[row]).exp();
        let advantage = batch.advantages[row];
        let unclipped = -advantage * ratio;
        let clipped = -advantage * ratio.clamp(1.0 - clip, 1.0 + clip);
        loss_sum += unclipped.max(clipped);
        entropy_sum += entropy;
        let d_taken = if unclipped >= clipped {
            -advantage * ratio * inv_m
        } else {
            0.0
        };
        for (j, d) in d.iter_mut().enumerate() {
            let one_hot = if j == taken { 1.0 } else { 0.0 };
            *d = d_taken * (one_hot - p[j]) + ent_coef * p[j] * (lp[j] + entropy) * inv_m;
        }
    }
    (loss_sum * inv_m, entropy_sum * inv_m)
}

/// The value loss `0.5 mean((values - targets)^2)`; writes the gradient of `vf_coef` times
/// it with respect to the values into `d_values`.
pub fn value(values: &[f32], targets: &[f32], vf_coef: f32, d_values: &mut Vec<f32>) -> f32 {
    let inv_m = 1.0 / values.len() as f32;
    d_values.clear();
    let mut sum = 0.0f32;
    for (v, t) in values.iter().zip(targets) {
        let error = v - t;
        sum += error * error;
        d_values.push(vf_coef * error * inv_m);
    }
    0.5 * sum * inv_m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch() -> Minibatch {
        Minibatch {
            obs: vec![0.0; 3 * 4],
            actions: vec![0, 1, 0],
            old_log_probs: vec![-0.5, -0.4, -0.8],
            advantages: vec![1.0, -0.5, 2.0],
            targets: vec![1.0, 2.0, 3.0],
        }
    }

    /// The total loss in f64 from its definition.
    fn loss(logits: &[f64], b: &Minibatch, clip: f64, ent: f64) -> f64 {
        let m = b.len() as f64;
        let mut total = 0.0;
        for (row, l) in logits.chunks(2).enumerate() {
            let max = l[0].max(l[1]);
            let sum = ((l[0] - max).exp() + (l[1] - max).exp()).ln();
            let lp = [l[0] - max - sum, l[1] - max - sum];
            let h = -(lp[0].exp() * lp[0] + lp[1].exp() * lp[1]);
            let r = (lp[b.actions[row] as usize] - f64::from(b.old_log_probs[row])).exp();
            let a = f64::from(b.advantages[row]);
            total += (-a * r).max(-a * r.clamp(1.0 - clip, 1.0 + clip)) / m - ent * h / m;
        }
        total
    }

    #[test]
    fn gradients_match_finite_differences_inside_and_outside_the_clip() {
        let b = batch();
        // Row 0's ratio lands inside the clip range, row 2's far outside it.
        let logits = [0.3f32, -0.2, 0.1, 0.5, 1.5, -1.0];
        let mut d = Vec::new();
        let (pl, h) = policy(&logits, &b, 0.2, 0.01, &mut d);
        let wide: Vec<f64> = logits.iter().map(|&l| f64::from(l)).collect();
        let no_ent = loss(&wide, &b, 0.2, 0.0);
        assert!((f64::from(pl) - no_ent).abs() < 1e-6, "{pl} vs {no_ent}");
        assert!(h > 0.0 && h < 2f32.ln());
        for i in 0..logits.len() {
            let (mut up, mut down) = (wide.clone(), wide.clone());
            up[i] += 1e-6;
            down[i] -= 1e-6;
            let numeric = (loss(&up, &b, 0.2, 0.01) - loss(&down, &b, 0.2, 0.01)) / 2e-6;
            assert!(
                (f64::from(d[i]) - numeric).abs() < 1e-5,
                "logit {i}: {} vs {numeric}",
                d[i]
            );
        }
        // Row 2 is clipped (advantage 2 and a ratio far above 1.2): no policy gradient,
        // only the entropy's.
        let mut d_no_ent = Vec::new();
        policy(&logits, &b, 0.2, 0.0, &mut d_no_ent);
        assert_eq!(d_no_ent[4..], [0.0, 0.0]);

        let mut dv = Vec::new();
        let vl = value(&[1.5, 2.0, 2.0], &b.targets, 0.5, &mut dv);
        assert!((vl - 0.5 * (0.25 + 0.0 + 1.0) / 3.0).abs() < 1e-7);
        assert_eq!(dv, [0.5 * 0.5 / 3.0, 0.0, -0.5 / 3.0]);
    }
}
