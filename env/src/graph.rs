//! CartPole-v1 written once as a fusion graph, so the same step runs under every plan.
//!
//! The graph follows gymnasium's `CartPoleEnv.step` and the vector env's autoreset rules
//! (see [`crate::reference`]), with the reset draws of the same Threefry stream as the
//! hand-written kernel: reset number `r` of env `i` reads blocks `(i, 2r)` and `(i, 2r+1)`.
//! Autoreset is branchless, as in gymnax: both the stepped and the reset state are computed
//! and `select` picks one.
//!
//! Two layouts of the state:
//! - [`StateLayout::StructOfArrays`]: one carried buffer per component (the default).
//! - [`StateLayout::Packed`]: the four components carried in one `[n, 4]` array that the
//!   step unpacks and re-packs, as a JAX CartPole keeps `jnp.array([x, x_dot, ...])`; the
//!   pack then has several users, one of the boundaries of XLA's baseline.
//!
//! Names: inputs `action`, state inputs (see [`STATE_INPUTS`] / [`PACKED_STATE`]),
//! `elapsed`, `resets`, `needs_reset`; outputs `obs`, `reward`, `terminated`, `truncated`
//! and, in `SameStep` mode, `final_obs`.

use cartfuse_fusion::graph::{DType, Graph, GraphBuilder, Var};
use cartfuse_fusion::interpret::Scalar;
use cartfuse_fusion::rng;

use crate::params::{AutoresetMode, CartPoleConfig};

/// The four state components, in observation order.
pub const STATE_INPUTS: [&str; 4] = ["x", "x_dot", "theta", "theta_dot"];
/// The packed state input of [`StateLayout::Packed`].
pub const PACKED_STATE: &str = "state";

/// How the physical state is carried between steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StateLayout {
    /// One buffer per component.
    #[default]
    StructOfArrays,
    /// One `[n, 4]` buffer, unpacked and re-packed every step.
    Packed,
}

/// The CartPole-v1 step graph for `autoreset` with its state in `layout`.
pub fn cartpole_step_graph(autoreset: AutoresetMode, layout: StateLayout) -> Graph {
    let g = GraphBuilder::new();
    let action = g.input("action", DType::U32);
    let packed_state = (layout == StateLayout::Packed).then(|| g.input_packed(PACKED_STATE, 4));
    let state_inputs = STATE_INPUTS
        .map(|name| (layout == StateLayout::StructOfArrays).then(|| g.input(name, DType::F32)));
    let [x, x_dot, theta, theta_dot] = match packed_state {
        Some(state) => [0, 1, 2, 3].map(|column| state.unpack(column)),
        None => state_inputs.map(|input| input.expect("struct-of-arrays inputs")),
    };
    let elapsed = g.input("elapsed", DType::U32);
    let p = |name| g.param(name, DType::F32);
    let (gravity, masspole, total_mass, length) =
        (p("gravity"), p("masspole"), p("total_mass"), p("length"));
    let (polemass_length, force_mag, tau) = (p("polemass_length"), p("force_mag"), p("tau"));
    let (x_threshold, theta_threshold) = (p("x_threshold"), p("theta_threshold"));
    let max_steps = g.param("max_steps", DType::U32);

    // Physics: gymnasium's Euler step.
    let force = g.select(action.eq(g.u32(1)), force_mag, -force_mag);
    let costheta = theta.cos();
    let sintheta = theta.sin();
    let temp = (force + polemass_length * theta_dot * theta_dot * sintheta) / total_mass;
    let thetaacc = (gravity * sintheta - costheta * temp)
        / (length * (4.0 / 3.0 - masspole * costheta * costheta / total_mass));
    let xacc = temp - polemass_length * thetaacc * costheta / total_mass;
    let mut stepped = [
        x + tau * x_dot,
        x_dot + tau * xacc,
        theta + tau * theta_dot,
        theta_dot + tau * thetaacc,
    ];
    if packed_state.is_some() {
        // A JAX step that keeps its state as one array builds it here and reads it back:
        // the pack gets one user per column.
        let array = g.pack(&stepped);
        stepped = [0, 1, 2, 3].map(|column| array.unpack(column));
    }
    let steps = elapsed + g.u32(1);
    let [sx, _, stheta, _] = stepped;
    let out_of_bounds = sx
        .lt(-x_threshold)
        .or(sx.gt(x_threshold))
        .or(stheta.lt(-theta_threshold))
        .or(stheta.gt(theta_threshold));
    let hit_limit = steps.ge(max_steps);

    let mut next_state = stepped;
    let mut next_elapsed = steps;
    let mut reward = None;
    let mut terminated = out_of_bounds;
    let mut truncated = hit_limit;
    match autoreset {
        AutoresetMode::Disabled => {}
        AutoresetMode::NextStep => {
            let resets = g.input("resets", DType::U32);
            let needs_reset = g.input("needs_reset", DType::Bool);
            let fresh = reset_draws(&g, resets);
            let keep = !needs_reset;
            next_state = [0, 1, 2, 3].map(|k| g.select(needs_reset, fresh[k], stepped[k]));
            next_elapsed = g.select(needs_reset, g.u32(0), steps);
            reward = Some(g.select(needs_reset, g.f32(0.0), g.f32(1.0)));
            terminated = out_of_bounds.and(keep);
            truncated = hit_limit.and(keep);
            g.carry(resets, g.select(needs_reset, resets + g.u32(1), resets));
            g.carry(needs_reset, terminated.or(truncated));
        }
        AutoresetMode::SameStep => {
            let resets = g.input("resets", DType::U32);
            let fresh = reset_draws(&g, resets);
            let done = out_of_bounds.or(hit_limit);
            next_state = [0, 1, 2, 3].map(|k| g.select(done, fresh[k], stepped[k]));
            next_elapsed = g.select(done, g.u32(0), steps);
            g.carry(resets, g.select(done, resets + g.u32(1), resets));
            g.output("final_obs", g.pack(&stepped));
        }
    }
    let obs = g.pack(&next_state);
    match packed_state {
        // The new state array is both the observation and the carry.
        Some(state) => g.carry(state, obs),
        None => {
            for (input, next) in state_inputs.into_iter().zip(next_state) {
                g.carry(input.expect("struct-of-arrays inputs"), next);
            }
        }
    }
    g.carry(elapsed, next_elapsed);
    g.output("obs", obs);
    g.output("reward", reward.unwrap_or_else(|| g.f32(1.0)));
    g.output("terminated", terminated);
    g.output("truncated", truncated);
    g.build().expect("the CartPole graph is well-typed")
}

/// The four reset components of reset number `resets` of each lane.
fn reset_draws<'g>(g: &'g GraphBuilder, resets: Var<'g>) -> [Var<'g>; 4] {
    let reset_bound = g.param("reset_bound", DType::F32);
    let key = [g.param("key0", DType::U32), g.param("key1", DType::U32)];
    let lane = g.lane_index();
    let first = resets * g.u32(2);
    let second = first + g.u32(1);
    [(first, 0), (first, 1), (second, 0), (second, 1)]
        .map(|(counter, word)| g.random_uniform(key, [lane, counter], word) * reset_bound)
}

/// The runtime params of the graph for `config` and `seed`.
pub fn graph_params(config: &CartPoleConfig, seed: u64) -> Vec<(&'static str, Scalar)> {
    let p = &config.params;
    let [key0, key1] = rng::seed_key(seed);
    vec![
        ("gravity", Scalar::F32(p.gravity as f32)),
        ("masspole", Scalar::F32(p.masspole as f32)),
        ("total_mass", Scalar::F32(p.total_mass() as f32)),
        ("length", Scalar::F32(p.length as f32)),
        ("polemass_length", Scalar::F32(p.polemass_length() as f32)),
        ("force_mag", Scalar::F32(p.force_mag as f32)),
        ("tau", Scalar::F32(p.tau as f32)),
        ("x_threshold", Scalar::F32(p.x_threshold as f32)),
        (
            "theta_threshold",
            Scalar::F32(p.theta_threshold_radians as f32),
        ),
        ("reset_bound", Scalar::F32(p.reset_bound as f32)),
        ("max_steps", Scalar::U32(config.max_episode_steps)),
        ("key0", Scalar::U32(key0)),
        ("key1", Scalar::U32(key1)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use cartfuse_fusion::plan::{Plan, PlanOptions, Strategy};

    #[test]
    fn every_mode_and_layout_builds_and_plans() {
        for autoreset in [
            AutoresetMode::NextStep,
            AutoresetMode::SameStep,
            AutoresetMode::Disabled,
        ] {
            for layout in [StateLayout::StructOfArrays, StateLayout::Packed] {
                let graph = cartpole_step_graph(autoreset, layout);
                for strategy in Strategy::ALL {
                    let plan = Plan::build(&graph, strategy, &PlanOptions::default());
                    let steps_with_packed_carry = matches!(strategy, Strategy::FusedSteps(_))
                        && layout == StateLayout::Packed;
                    assert!(
                        plan.is_ok() || steps_with_packed_carry,
                        "{autoreset:?} {layout:?} {strategy}: {plan:?}"
                    );
                }
            }
        }
    }

    /// The graph interpreted in f64 is the f64 reference, operation for operation.
    #[test]
    fn graph_in_f64_is_the_reference_step() {
        use crate::reference::{CartPoleState, is_terminated, step_physics};
        use cartfuse_fusion::interpret::{HostArray, interpret};
        use std::collections::HashMap;

        let config = CartPoleConfig {
            autoreset: AutoresetMode::Disabled,
            ..CartPoleConfig::default()
        };
        let graph = cartpole_step_graph(config.autoreset, StateLayout::StructOfArrays);
        let states: Vec<[f32; 4]> = (0..200)
            .map(|i| {
                let t = i as f32;
                [
                    (t * 0.37).sin() * 2.5,
                    (t * 0.11).cos() * 3.0,
                    (t * 0.23).sin() * 0.25,
                    (t * 0.05).cos() * 2.0,
                ]
            })
            .collect();
        let n = states.len();
        let mut inputs: HashMap<String, HostArray> = STATE_INPUTS
            .iter()
            .enumerate()
            .map(|(k, name)| {
                (
                    name.to_string(),
                    HostArray::F32(states.iter().map(|s| s[k]).collect()),
                )
            })
            .collect();
        inputs.insert(
            "action".into(),
            HostArray::U32((0..n as u32).map(|i| i % 2).collect()),
        );
        inputs.insert("elapsed".into(), HostArray::U32(vec![0; n]));
        let params: HashMap<String, _> = graph_params(&config, 0)
            .into_iter()
            .filter(|(name, _)| graph.params().iter().any(|(_, p)| p == name))
            .map(|(name, value)| (name.to_string(), value))
            .collect();
        let out = interpret::<f64>(&graph, n, &inputs, &params).unwrap();
        let cartfuse_fusion::interpret::Values::Float(obs) = &out["obs"] else {
            panic!()
        };
        let cartfuse_fusion::interpret::Values::Int(terminated) = &out["terminated"] else {
            panic!()
        };
        // Params are f32 on the device; the reference uses the same f32-rounded constants.
        let p32 = |v: f64| f64::from(v as f32);
        let d = config.params;
        let params32 = crate::CartPoleParams {
            gravity: p32(d.gravity),
            masscart: p32(d.total_mass()) - p32(d.masspole),
            masspole: p32(d.masspole),
            length: p32(d.length),
            force_mag: p32(d.force_mag),
            tau: p32(d.tau),
            x_threshold: p32(d.x_threshold),
            theta_threshold_radians: p32(d.theta_threshold_radians),
            reset_bound: d.reset_bound,
        };
        for (i, state) in states.iter().enumerate() {
            let expected = step_physics(
                CartPoleState::from_array(state.map(f64::from)),
                (i % 2) as u32,
                &params32,
            );
            for k in 0..4 {
                // Graph constants such as 4/3 are f32 literals: ~1e-8 relative.
                let (got, want) = (obs[4 * i + k], expected.to_array()[k]);
                assert!(
                    (got - want).abs() < 1e-7,
                    "lane {i} component {k}: {got} vs {want}"
                );
            }
            assert_eq!(
                terminated[i] != 0,
                is_terminated(&expected, &params32),
                "lane {i}"
            );
        }
    }
}
