//! [`ppo_step()`]: one PPO minibatch step of a whole population as one CubeCL launch, a cube
//! per agent: `G` groups of a unit per hidden unit of its networks.
//!
//! The cube takes its agent's minibatch (through the step's sample indices) `G * R` rows
//! a round, each group `R` of them together: both networks' forward pass, PPO's loss and
//! its gradient with respect to the outputs (the native learner's
//! [`crate::learner::loss`], term for term), and the backward pass, accumulating the
//! gradients in the group's slot of `grads` (`[K, G, P]`). Barriers (`sync_cube`) separate
//! the six phases of a round, so a step costs `6 m / (G R)` of them; the activations of the
//! round's rows sit in shared memory, and each weight a unit reads serves its `R` rows (a
//! weight's gradient is read and written once a round). Then the groups' gradients are
//! added up, the agent's global gradient norm taken (a sum over the units in shared
//! memory), the gradients clipped, and Adam steps the parameters.
//!
//! While rows are processed each gradient entry of a group has one owner, the unit that
//! accumulates it row after row ([`super::owners`]), so no atomic is needed. Once every
//! row is done (a storage barrier), unit `j` of group `g` adds up, clips and steps the
//! entries of unit `j`'s list whose position is `g` modulo `G`.
//!
//! `tanh`, `exp` and `log` are the CPU runtime's ([`cartfuse_fusion::cube::math`], the
//! native learner's `tanh` too), not the driver's, whose may be approximate (NVIDIA's
//! Vulkan `tanh`); `sqrt` is the device's, correctly rounded on CUDA and lavapipe.
#![allow(missing_docs)] // `#[cube]` expands into undocumented items.
#![allow(clippy::too_many_arguments)] // A kernel's arguments are its bindings.
#![allow(clippy::manual_div_ceil)] // `#[cube]` code has no `div_ceil`.

use cartfuse_fusion::cube::math;
use cubecl::prelude::*;

use super::owners::{net_len, net_owned_at, net_owned_count, slot};

/// Columns of an agent's row of the step settings table: learning rate, ratio clip,
/// entropy weight, value weight, max gradient norm, Adam's combined bias correction and
/// its epsilon (see [`crate::learner::kernels::AdamStep`]), and 1 when the agent learns.
pub const SETTINGS: usize = 8;

/// The sum over the cube's units of `value` (every unit gets it): partials in `partial`,
/// added by unit 0.
#[cube]
fn cube_sum(
    value: f32,
    partial: &mut SharedMemory<f32>,
    unit: usize,
    #[comptime] units: usize,
) -> f32 {
    partial[unit] = value;
    sync_cube();
    if unit == 0 {
        let mut total = f32::new(0.0);
        for u in 0..units {
            total += partial[u];
        }
        partial[units] = total;
    }
    sync_cube();
    let total = partial[units];
    // Nobody writes `partial` again before every unit has read the total.
    sync_cube();
    total
}

/// One minibatch step of every learning agent: forward, loss, backward, clip and Adam.
///
/// # Arguments
///
/// * `obs` - `[K, N, obs_dim]` every agent's samples' observations.
/// * `actions`, `old_log_probs`, `advantages`, `targets` - `[K, N]` the samples' actions,
///   their log-probabilities under the rollout's policy, GAE advantages and value targets.
/// * `indices` - `[S, K, m]` each step's minibatch rows (sample numbers of the agent).
/// * `step_settings` - `[S, K, SETTINGS]` each step's settings of each agent.
/// * `params`, `moment_1`, `moment_2` - `[K, P]` the weights and Adam's moments, stepped in
///   place.
/// * `grads` - `[K, G, P]` scratch for the groups' gradients.
/// * `sums` - `[K, 3]` policy loss, value loss and entropy, the step's added.
/// * `agents`, `samples`, `rows`, `step` - `K`, `N`, `m` and the step's number.
/// * `beta_1`, `beta_2` - Adam's moment decays.
/// * `obs_dim`, `hidden`, `actions_len` - the networks' widths (comptime); `hidden` is at
///   least `obs_dim`, more than `actions_len`, and at least `R (actions_len + 1)`.
/// * `groups`, `rows_each` - `G` and `R` (comptime); a cube has `G * hidden` units.
#[cube(launch_unchecked)]
pub fn ppo_step(
    obs: &Array<f32>,
    actions: &Array<i32>,
    old_log_probs: &Array<f32>,
    advantages: &Array<f32>,
    targets: &Array<f32>,
    indices: &Array<u32>,
    step_settings: &Array<f32>,
    params: &mut Array<f32>,
    moment_1: &mut Array<f32>,
    moment_2: &mut Array<f32>,
    grads: &mut Array<f32>,
    sums: &mut Array<f32>,
    agents: u32,
    samples: u32,
    rows: u32,
    step: u32,
    beta_1: f32,
    beta_2: f32,
    #[comptime] obs_dim: u32,
    #[comptime] hidden: u32,
    #[comptime] actions_len: u32,
    #[comptime] groups: u32,
    #[comptime] rows_each: u32,
) {
    let d = comptime!(obs_dim as usize);
    let h = comptime!(hidden as usize);
    let a = comptime!(actions_len as usize);
    let gs = comptime!(groups as usize);
    let rq = comptime!(rows_each as usize);
    let units = comptime!(groups as usize * hidden as usize);
    let at_once = comptime!(groups as usize * rows_each as usize);
    let actor_len = comptime!(net_len(d, h, a));
    let per_agent = comptime!(net_len(d, h, a) + net_len(d, h, 1));
    let w2 = comptime!((d + 1) * h);
    let w3 = comptime!((d + 1) * h + (h + 1) * h);
    let agent = CUBE_POS;
    let unit = UNIT_POS as usize;
    let group = unit / h;
    let j = unit % h;
    let row_of_step = step as usize * agents as usize + agent;
    let set = row_of_step * SETTINGS;
    // `&&` evaluates both sides in a cube function: the settings are read for agents only.
    let mut live = false;
    if agent < agents as usize {
        live = step_settings[set + 7] != 0.0;
    }
    if live {
        let clip = step_settings[set + 1];
        let ent_coef = step_settings[set + 2];
        let vf_coef = step_settings[set + 3];
        let pa = agent * per_agent;
        let pc = pa + actor_len;
        // This group's gradient slots of the actor and of the critic.
        let ga_at = slot(agent, group, 0usize, gs, per_agent);
        let gc_at = ga_at + actor_len;
        let first = agent * samples as usize;
        let picks = row_of_step * rows as usize;
        let m = rows as usize;
        let inv_m = f32::new(1.0) / f32::cast_from(rows);

        let mut partial = SharedMemory::<f32>::new(comptime!(units + 1));
        // The round's rows (row slot `group * R + q`): the observation, both networks'
        // hidden units (actor's, then critic's), the actor's logits and the critic's
        // value, and their gradients.
        let mut x = SharedMemory::<f32>::new(comptime!(at_once * d));
        let mut h1 = SharedMemory::<f32>::new(comptime!(at_once * 2 * h));
        let mut h2 = SharedMemory::<f32>::new(comptime!(at_once * 2 * h));
        let mut dz2 = SharedMemory::<f32>::new(comptime!(at_once * 2 * h));
        let mut out = SharedMemory::<f32>::new(comptime!(at_once * (a + 1)));
        let mut d_out = SharedMemory::<f32>::new(comptime!(at_once * (a + 1)));
        // Each unit's per-row sums of one round.
        let mut acc_a = Array::<f32>::new(rq);
        let mut acc_c = Array::<f32>::new(rq);

        // The minibatch's advantages, normalised as `Minibatch::gather` does.
        let mut own = f32::new(0.0);
        let mut r = unit;
        while r < m {
            own += advantages[first + indices[picks + r] as usize];
            r += units;
        }
        let mean = cube_sum(own, &mut partial, unit, units) / f32::cast_from(rows);
        own = f32::new(0.0);
        r = unit;
        while r < m {
            let centred = advantages[first + indices[picks + r] as usize] - mean;
            own += centred * centred;
            r += units;
        }
        let squares = cube_sum(own, &mut partial, unit, units);
        let variance = squares / f32::cast_from(max(rows, 2u32) - 1u32);
        let adv_scale = f32::new(1.0) / (f32::sqrt(variance) + f32::new(1e-8));

        for net in 0..2usize {
            for c in 0..net_owned_count(net, j, d, h, a) {
                grads[ga_at + net_owned_at(net, c, j, d, h, a)] = f32::new(0.0);
            }
        }

        let mut policy_sum = f32::new(0.0);
        let mut value_sum = f32::new(0.0);
        let mut entropy_sum = f32::new(0.0);
        let rounds = (m + at_once - 1) / at_once;
        for round in 0..rounds {
            let base_row = round * at_once + group * rq;
            // Layer 1 of the group's rows, both networks; units `0..d` keep the
            // observation. A row past the minibatch's end reads zeros and gets no
            // gradient, so it adds exact zeros.
            #[unroll]
            for q in 0..rq {
                let rs = group * rq + q;
                let r = base_row + q;
                let mut s = first;
                let mut live = f32::new(0.0);
                if r < m {
                    s = first + indices[picks + r] as usize;
                    live = f32::new(1.0);
                }
                let mut za = f32::new(0.0);
                let mut zc = f32::new(0.0);
                #[unroll]
                for i in 0..d {
                    let xi = obs[s * d + i] * live;
                    za += xi * params[pa + i * h + j];
                    zc += xi * params[pc + i * h + j];
                }
                if j < d {
                    x[rs * d + j] = obs[s * d + j] * live;
                }
                h1[rs * 2 * h + j] = math::tanh_scalar(za + params[pa + comptime!(d * h) + j]);
                h1[rs * 2 * h + h + j] = math::tanh_scalar(zc + params[pc + comptime!(d * h) + j]);
            }
            sync_cube();
            // Layer 2: each weight read once for the group's rows.
            #[unroll]
            for q in 0..rq {
                acc_a[q] = f32::new(0.0);
                acc_c[q] = f32::new(0.0);
            }
            for k in 0..h {
                let wa = params[pa + w2 + k * h + j];
                let wc = params[pc + w2 + k * h + j];
                #[unroll]
                for q in 0..rq {
                    let rs = group * rq + q;
                    acc_a[q] += h1[rs * 2 * h + k] * wa;
                    acc_c[q] += h1[rs * 2 * h + h + k] * wc;
                }
            }
            let ba = params[pa + w2 + comptime!(h * h) + j];
            let bc = params[pc + w2 + comptime!(h * h) + j];
            #[unroll]
            for q in 0..rq {
                let rs = group * rq + q;
                h2[rs * 2 * h + j] = math::tanh_scalar(acc_a[q] + ba);
                h2[rs * 2 * h + h + j] = math::tanh_scalar(acc_c[q] + bc);
            }
            sync_cube();
            // Output layer: unit `q (a + 1) + o` of the group computes output `o` of its
            // row `q` (the actor's logits, then the critic's value).
            if j < comptime!(rq * (a + 1)) {
                let q = j / comptime!(a + 1);
                let o = j % comptime!(a + 1);
                let rs = group * rq + q;
                let mut z = f32::new(0.0);
                if o < a {
                    for k in 0..h {
                        z += h2[rs * 2 * h + k] * params[pa + w3 + k * a + o];
                    }
                    z += params[pa + w3 + comptime!(h * a) + o];
                } else {
                    for k in 0..h {
                        z += h2[rs * 2 * h + h + k] * params[pc + w3 + k];
                    }
                    z += params[pc + w3 + h];
                }
                out[rs * comptime!(a + 1) + o] = z;
            }
            sync_cube();
            // The loss terms' gradients with respect to the outputs (`learner::loss`):
            // unit `q` of the group takes its row `q`.
            if j < rq {
                let rs = group * rq + j;
                let r = base_row + j;
                let ob = rs * comptime!(a + 1);
                if r < m {
                    let s = first + indices[picks + r] as usize;
                    let mut top = out[ob];
                    #[unroll]
                    for o in 1..a {
                        top = max(top, out[ob + o]);
                    }
                    let mut total = f32::new(0.0);
                    #[unroll]
                    for o in 0..a {
                        total += math::exp_scalar(out[ob + o] - top);
                    }
                    let log_total = math::log_scalar(total);
                    let mut plogp = f32::new(0.0);
                    #[unroll]
                    for o in 0..a {
                        let lp = out[ob + o] - top - log_total;
                        plogp += math::exp_scalar(lp) * lp;
                    }
                    let entropy = f32::new(0.0) - plogp;
                    let taken = usize::cast_from(actions[s]);
                    let ratio =
                        math::exp_scalar(out[ob + taken] - top - log_total - old_log_probs[s]);
                    let advantage = (advantages[s] - mean) * adv_scale;
                    let unclipped = (f32::new(0.0) - advantage) * ratio;
                    let bounded = min(max(ratio, f32::new(1.0) - clip), f32::new(1.0) + clip);
                    let clipped = (f32::new(0.0) - advantage) * bounded;
                    policy_sum += max(unclipped, clipped);
                    entropy_sum += entropy;
                    let mut d_taken = f32::new(0.0);
                    if unclipped >= clipped {
                        d_taken = (f32::new(0.0) - advantage) * ratio * inv_m;
                    }
                    #[unroll]
                    for o in 0..a {
                        let lp = out[ob + o] - top - log_total;
                        let p = math::exp_scalar(lp);
                        let mut one_hot = f32::new(0.0);
                        if o == taken {
                            one_hot = f32::new(1.0);
                        }
                        d_out[ob + o] =
                            d_taken * (one_hot - p) + ent_coef * p * (lp + entropy) * inv_m;
                    }
                    let error = out[ob + a] - targets[s];
                    value_sum += error * error;
                    d_out[ob + a] = vf_coef * error * inv_m;
                } else {
                    #[unroll]
                    for o in 0..comptime!(a + 1) {
                        d_out[ob + o] = f32::new(0.0);
                    }
                }
            }
            sync_cube();
            // Output layer backward: unit `j` owns row `j` of its weights.
            #[unroll]
            for o in 0..a {
                let mut g = f32::new(0.0);
                #[unroll]
                for q in 0..rq {
                    let rs = group * rq + q;
                    g += h2[rs * 2 * h + j] * d_out[rs * comptime!(a + 1) + o];
                }
                grads[ga_at + w3 + j * a + o] += g;
            }
            let mut gv = f32::new(0.0);
            #[unroll]
            for q in 0..rq {
                let rs = group * rq + q;
                gv += h2[rs * 2 * h + h + j] * d_out[rs * comptime!(a + 1) + a];
            }
            grads[gc_at + w3 + j] += gv;
            if j == 0 {
                #[unroll]
                for o in 0..comptime!(a + 1) {
                    let mut g = f32::new(0.0);
                    #[unroll]
                    for q in 0..rq {
                        g += d_out[(group * rq + q) * comptime!(a + 1) + o];
                    }
                    if o < a {
                        grads[ga_at + w3 + comptime!(h * a) + o] += g;
                    } else {
                        grads[gc_at + w3 + h] += g;
                    }
                }
            }
            #[unroll]
            for q in 0..rq {
                let rs = group * rq + q;
                let ob = rs * comptime!(a + 1);
                let mut dha = f32::new(0.0);
                #[unroll]
                for o in 0..a {
                    dha += d_out[ob + o] * params[pa + w3 + j * a + o];
                }
                let dhc = d_out[ob + a] * params[pc + w3 + j];
                let ha = h2[rs * 2 * h + j];
                let hc = h2[rs * 2 * h + h + j];
                dz2[rs * 2 * h + j] = dha * (f32::new(1.0) - ha * ha);
                dz2[rs * 2 * h + h + j] = dhc * (f32::new(1.0) - hc * hc);
            }
            sync_cube();
            // Second layer backward: unit `j` owns column `j` of its weights (each
            // gradient read and written once for the group's rows) and takes the gradient
            // through row `j` to its first-layer unit.
            // This unit's own gradients of each row, kept out of the loop.
            let mut own_a = Array::<f32>::new(rq);
            let mut own_c = Array::<f32>::new(rq);
            #[unroll]
            for q in 0..rq {
                let hb = (group * rq + q) * 2 * h;
                acc_a[q] = f32::new(0.0);
                acc_c[q] = f32::new(0.0);
                own_a[q] = dz2[hb + j];
                own_c[q] = dz2[hb + h + j];
            }
            for k in 0..h {
                let wa = params[pa + w2 + j * h + k];
                let wc = params[pc + w2 + j * h + k];
                let mut ga = f32::new(0.0);
                let mut gc = f32::new(0.0);
                #[unroll]
                for q in 0..rq {
                    let hb = (group * rq + q) * 2 * h;
                    ga += h1[hb + k] * own_a[q];
                    gc += h1[hb + h + k] * own_c[q];
                    acc_a[q] += wa * dz2[hb + k];
                    acc_c[q] += wc * dz2[hb + h + k];
                }
                grads[ga_at + w2 + k * h + j] += ga;
                grads[gc_at + w2 + k * h + j] += gc;
            }
            let mut bias_a = f32::new(0.0);
            let mut bias_c = f32::new(0.0);
            let mut first_a = f32::new(0.0);
            let mut first_c = f32::new(0.0);
            #[unroll]
            for q in 0..rq {
                let hb = (group * rq + q) * 2 * h;
                bias_a += own_a[q];
                bias_c += own_c[q];
                let h1a = h1[hb + j];
                let h1c = h1[hb + h + j];
                let dz1a = acc_a[q] * (f32::new(1.0) - h1a * h1a);
                let dz1c = acc_c[q] * (f32::new(1.0) - h1c * h1c);
                acc_a[q] = dz1a;
                acc_c[q] = dz1c;
                first_a += dz1a;
                first_c += dz1c;
            }
            grads[ga_at + w2 + comptime!(h * h) + j] += bias_a;
            grads[gc_at + w2 + comptime!(h * h) + j] += bias_c;
            #[unroll]
            for i in 0..d {
                let mut ga = f32::new(0.0);
                let mut gc = f32::new(0.0);
                #[unroll]
                for q in 0..rq {
                    let xi = x[(group * rq + q) * d + i];
                    ga += xi * acc_a[q];
                    gc += xi * acc_c[q];
                }
                grads[ga_at + i * h + j] += ga;
                grads[gc_at + i * h + j] += gc;
            }
            grads[ga_at + comptime!(d * h) + j] += first_a;
            grads[gc_at + comptime!(d * h) + j] += first_c;
            // Nothing of this round is overwritten before every unit is done with it.
            sync_cube();
        }
        // Every group's gradients are written before any unit adds them up.
        sync_storage();
        // The groups' gradients added into group 0's slots, and their squares: unit `j`
        // of group `g` takes the entries of unit `j`'s list at positions `g` modulo `G`.
        let mut own_squares = f32::new(0.0);
        for net in 0..2usize {
            let count = net_owned_count(net, j, d, h, a);
            let mut c = group;
            while c < count {
                let at = net_owned_at(net, c, j, d, h, a);
                let mut g = grads[slot(agent, 0usize, at, gs, per_agent)];
                for other in 1..gs {
                    g += grads[slot(agent, other, at, gs, per_agent)];
                }
                grads[slot(agent, 0usize, at, gs, per_agent)] = g;
                own_squares += g * g;
                c += gs;
            }
        }
        let norm = f32::sqrt(cube_sum(own_squares, &mut partial, unit, units));
        let scale = min(
            step_settings[set + 4] / (norm + f32::new(1e-6)),
            f32::new(1.0),
        );
        let lr = step_settings[set];
        let combined = step_settings[set + 5];
        let epsilon = step_settings[set + 6];
        // Adam over the same entries (their sums are this unit's own writes).
        for net in 0..2usize {
            let count = net_owned_count(net, j, d, h, a);
            let mut c = group;
            while c < count {
                let at = net_owned_at(net, c, j, d, h, a);
                let i = pa + at;
                let g = grads[slot(agent, 0usize, at, gs, per_agent)] * scale;
                let m1 = moment_1[i] * beta_1 + g * (f32::new(1.0) - beta_1);
                let m2 = moment_2[i] * beta_2 + g * g * (f32::new(1.0) - beta_2);
                moment_1[i] = m1;
                moment_2[i] = m2;
                let update = (m1 * combined) / (f32::sqrt(m2) + epsilon);
                params[i] = params[i] - update * lr;
                c += gs;
            }
        }
        // The groups' loss sums (each group's unit 0 holds its rows').
        let policy = cube_sum(policy_sum, &mut partial, unit, units);
        let value = cube_sum(value_sum, &mut partial, unit, units);
        let entropy = cube_sum(entropy_sum, &mut partial, unit, units);
        if unit == 0 {
            let at = agent * 3;
            sums[at] += policy * inv_m;
            sums[at + 1] += f32::new(0.5) * value * inv_m;
            sums[at + 2] += entropy * inv_m;
        }
    }
}
