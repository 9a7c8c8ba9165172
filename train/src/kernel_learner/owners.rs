//! Which unit of a [`super::kernel::ppo_step()`] cube owns which gradient entry of a network,
//! and where a group's gradients sit in the scratch.
//!
//! An agent's parameters are the actor's, then the critic's, each network its three dense
//! layers' weights (`[fan_in][fan_out]`, row by row) and biases ([`crate::shape::NetShape`]).
//! Unit `j` of a group owns column `j` of the first two layers' weights and entry `j` of
//! their biases, row `j` of the output layer's weights, and unit 0 also the output biases:
//! every entry one owner, each unit's entries the ones its rows' gradients touch.
#![allow(missing_docs)] // `#[cube]` expands into undocumented items.

use cubecl::prelude::*;

/// Parameters of one network (`obs_dim -> hidden -> hidden -> out`, weights then biases
/// per layer).
pub const fn net_len(d: usize, h: usize, out: usize) -> usize {
    (d + 1) * h + (h + 1) * h + (h + 1) * out
}

/// Gradient entries unit `unit` owns in a network with `out` outputs.
#[cube]
fn owned_count(
    unit: usize,
    #[comptime] d: usize,
    #[comptime] h: usize,
    #[comptime] out: usize,
) -> usize {
    let mut count = comptime!(d + 1 + h + 1 + out).runtime();
    if unit == 0 {
        count += out;
    }
    count
}

/// Where entry `c` of unit `unit`'s owned entries sits in a network's parameters: column
/// `unit` of the first layer's weights (`d`), its bias, column `unit` of the second
/// layer's weights (`h`), its bias, row `unit` of the output layer's weights (`out`), and
/// for unit 0 the output biases.
#[cube]
fn owned_offset(
    c: usize,
    unit: usize,
    #[comptime] d: usize,
    #[comptime] h: usize,
    #[comptime] out: usize,
) -> usize {
    let w2 = comptime!((d + 1) * h);
    let w3 = comptime!((d + 1) * h + (h + 1) * h);
    // The output biases (unit 0's last entries) unless an earlier block holds `c`.
    let mut at = w3 + comptime!(h * out) + c - comptime!(d + 2 + h + out);
    if c < d {
        at = c * h + unit;
    } else if c == d {
        at = comptime!(d * h) + unit;
    } else if c < comptime!(d + 1 + h) {
        at = w2 + (c - comptime!(d + 1)) * h + unit;
    } else if c == comptime!(d + 1 + h) {
        at = w2 + comptime!(h * h) + unit;
    } else if c < comptime!(d + 2 + h + out) {
        at = w3 + unit * out + (c - comptime!(d + 2 + h));
    }
    at
}

/// Entries unit `unit` owns in network `net` (0 the actor, 1 the critic).
#[cube]
pub fn net_owned_count(
    net: usize,
    unit: usize,
    #[comptime] d: usize,
    #[comptime] h: usize,
    #[comptime] a: usize,
) -> usize {
    let mut count = owned_count(unit, d, h, a);
    if net == 1 {
        count = owned_count(unit, d, h, 1usize);
    }
    count
}

/// Where entry `c` of unit `unit`'s owned entries of network `net` sits in an agent's
/// parameters.
#[cube]
pub fn net_owned_at(
    net: usize,
    c: usize,
    unit: usize,
    #[comptime] d: usize,
    #[comptime] h: usize,
    #[comptime] a: usize,
) -> usize {
    let mut at = owned_offset(c, unit, d, h, a);
    if net == 1 {
        at = comptime!(net_len(d, h, a)) + owned_offset(c, unit, d, h, 1usize);
    }
    at
}

/// Where group `group`'s gradients of entry `at` of its agent's parameters sit in `grads`.
#[cube]
pub fn slot(
    agent: usize,
    group: usize,
    at: usize,
    #[comptime] groups: usize,
    #[comptime] per_agent: usize,
) -> usize {
    (agent * groups + group) * per_agent + at
}
