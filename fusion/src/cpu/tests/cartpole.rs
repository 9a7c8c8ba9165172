//! A CartPole-v1 step graph comparable to `env/src/graph.rs` (the env crate depends on this
//! one, so the tests build their own): gymnasium's Euler step, threshold termination, and
//! branchless autoreset from Threefry draws, with the state carried struct-of-arrays or
//! packed.

use super::*;
use crate::graph::{DType, GraphBuilder};

/// Same-step autoreset (`select(done, reset, stepped)`) or next-step (`needs_reset` input).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Mode {
    SameStep,
    NextStep,
}

pub(super) fn graph(mode: Mode, packed: bool) -> Graph {
    let g = GraphBuilder::new();
    let action = g.input("action", DType::U32);
    let state = packed.then(|| g.input_packed("state", 4));
    let soa =
        ["x", "x_dot", "theta", "theta_dot"].map(|n| (!packed).then(|| g.input(n, DType::F32)));
    let [x, x_dot, theta, theta_dot] = match state {
        Some(s) => [0, 1, 2, 3].map(|c| s.unpack(c)),
        None => soa.map(|v| v.unwrap()),
    };
    let elapsed = g.input("elapsed", DType::U32);
    let resets = g.input("resets", DType::U32);
    let p = |name| g.param(name, DType::F32);
    let (gravity, masspole, total_mass, length) =
        (p("gravity"), p("masspole"), p("total_mass"), p("length"));
    let (pml, force_mag, tau) = (p("polemass_length"), p("force_mag"), p("tau"));
    let force = g.select(action.eq(g.u32(1)), force_mag, -force_mag);
    let (c, s) = (theta.cos(), theta.sin());
    let temp = (force + pml * theta_dot * theta_dot * s) / total_mass;
    let thetaacc =
        (gravity * s - c * temp) / (length * (4.0 / 3.0 - masspole * c * c / total_mass));
    let xacc = temp - pml * thetaacc * c / total_mass;
    let stepped = [
        x + tau * x_dot,
        x_dot + tau * xacc,
        theta + tau * theta_dot,
        theta_dot + tau * thetaacc,
    ];
    let steps = elapsed + g.u32(1);
    let out = stepped[0].lt(g.f32(-2.4)).or(stepped[0].gt(g.f32(2.4)));
    let out = out
        .or(stepped[2].lt(g.f32(-0.2095)))
        .or(stepped[2].gt(g.f32(0.2095)));
    let limit = steps.ge(g.param("max_steps", DType::U32));
    let key = [g.param("key0", DType::U32), g.param("key1", DType::U32)];
    let lane = g.lane_index();
    let first = resets * g.u32(2);
    let second = first + g.u32(1);
    let bound = p("reset_bound");
    let fresh = [(first, 0), (first, 1), (second, 0), (second, 1)]
        .map(|(counter, word)| g.random_uniform(key, [lane, counter], word) * bound);
    let (done, terminated, truncated) = match mode {
        Mode::SameStep => {
            let done = out.or(limit);
            g.output("final_obs", g.pack(&stepped));
            (done, out, limit)
        }
        Mode::NextStep => {
            let needs = g.input("needs_reset", DType::Bool);
            let (t, u) = (out.and(!needs), limit.and(!needs));
            g.carry(needs, t.or(u));
            (needs, t, u)
        }
    };
    let next = [0, 1, 2, 3].map(|k| g.select(done, fresh[k], stepped[k]));
    g.carry(elapsed, g.select(done, g.u32(0), steps));
    g.carry(resets, g.select(done, resets + g.u32(1), resets));
    let obs = g.pack(&next);
    match state {
        Some(s) => g.carry(s, obs),
        None => soa
            .into_iter()
            .zip(next)
            .for_each(|(i, v)| g.carry(i.unwrap(), v)),
    }
    g.output("obs", obs);
    g.output("terminated", terminated);
    g.output("truncated", truncated);
    g.build().expect("cartpole graph")
}

pub(super) fn params() -> Params {
    let f = |v: f32| Scalar::F32(v);
    Params::from([
        ("gravity".into(), f(9.8)),
        ("masspole".into(), f(0.1)),
        ("total_mass".into(), f(1.1)),
        ("length".into(), f(0.5)),
        ("polemass_length".into(), f(0.05)),
        ("force_mag".into(), f(10.0)),
        ("tau".into(), f(0.02)),
        ("reset_bound".into(), f(0.05)),
        ("max_steps".into(), Scalar::U32(500)),
        ("key0".into(), Scalar::U32(1234)),
        ("key1".into(), Scalar::U32(0)),
    ])
}

/// A state near the thresholds so some lanes terminate; per-step actions for `steps` steps.
pub(super) fn inputs(graph: &Graph, n: usize, steps: usize, seed: u64) -> Inputs {
    let mut g = Gen(seed);
    let mut inputs = Inputs::new();
    let comps = [
        g.f32s(n, -2.5, 2.5),
        g.f32s(n, -2.0, 2.0),
        g.f32s(n, -0.22, 0.22),
        g.f32s(n, -2.0, 2.0),
    ];
    if graph.input_id("state").is_some() {
        let rows = (0..n)
            .flat_map(|i| comps.iter().map(move |c| c[i]))
            .collect();
        inputs.insert("state".into(), HostArray::F32(rows));
    } else {
        for (name, c) in ["x", "x_dot", "theta", "theta_dot"].iter().zip(comps) {
            inputs.insert(name.to_string(), HostArray::F32(c));
        }
    }
    inputs.insert("action".into(), HostArray::U32(g.u32s(n * steps, 2)));
    inputs.insert("elapsed".into(), HostArray::U32(g.u32s(n, 510)));
    inputs.insert("resets".into(), HostArray::U32(g.u32s(n, 100)));
    if graph.input_id("needs_reset").is_some() {
        let sparse = g
            .u32s(n, 16)
            .into_iter()
            .map(|v| u32::from(v == 0))
            .collect();
        inputs.insert("needs_reset".into(), HostArray::U32(sparse));
    }
    inputs
}
