//! The step and reset graphs of any [`GraphEnv`], with the episode logic written once.
//!
//! The environment supplies dynamics, termination, reward, observation and the reset
//! distribution as graph ops; this module adds what every gymnasium vector env shares:
//! the step counter and truncation at `max_episode_steps`, the two autoreset modes, and the
//! reset draws of the counter-based generator. Autoreset is branchless, as in gymnax: both
//! the stepped and the reset state are computed and `select` picks one.
//!
//! Reset number `r` of a lane reads Threefry blocks `(0, B r + j)`, `j < B`, where
//! `B = ceil(RESET_DRAWS / 2)`, under the lane's own key (inputs `key0`, `key1`, read once a
//! launch): every plan and every runtime draws the same resets, the host reference
//! ([`reference_reset`]) reads the same words, and a lane's episodes depend on its own seed
//! only, whatever the batch, as a gymnasium vector env's sub-envs do. One batch seed `s`
//! keys lane `i` by `s + i`, gymnasium's `reset(seed=s)`
//! ([`LaneKeys`](crate::engine::LaneKeys)).
//!
//! Two layouts of the state:
//! - [`StateLayout::StructOfArrays`]: one carried buffer per component (the default).
//! - [`StateLayout::Packed`]: the components carried in one `[n, k]` array that the step
//!   unpacks and re-packs, as a JAX step keeps `jnp.array([x, x_dot, ...])`; the pack then
//!   has several users, one of the boundaries of XLA's baseline.
//!
//! Names: inputs `action`, the state inputs ([`GraphEnv::STATE`] or [`PACKED_STATE`]),
//! `elapsed`, `resets`, `needs_reset`, `key0`, `key1`; outputs `obs`, `reward`,
//! `terminated`, `truncated` and, in `SameStep` mode, `final_obs`. The reset graph reads
//! `resets`, `key0`, `key1`, `reset_mask` and `restart` (lanes whose draws start over at
//! reset number 0) beside the state and writes the state, `resets`, `elapsed`,
//! `needs_reset` and `obs`.

use cartfuse_fusion::graph::Scalar;
use cartfuse_fusion::graph::{DType, Graph, GraphBuilder, Var};
use cartfuse_fusion::rng;

use crate::environment::{ActionElement, EpisodeOptions, GraphEnv, Transition};
use crate::params::AutoresetMode;
use crate::policy::PolicySpec;

/// The packed state input of [`StateLayout::Packed`].
pub const PACKED_STATE: &str = "state";
/// The reset graph's per-lane mask input: lanes whose mask is false keep their state.
pub const RESET_MASK: &str = "reset_mask";
/// The reset graph's per-lane input: masked lanes that draw reset number 0 (a new seed).
pub const RESTART: &str = "restart";
/// The per-lane inputs holding each lane's Threefry key.
pub const KEYS: [&str; 2] = ["key0", "key1"];
/// The most components one reset draws.
pub const MAX_RESET_DRAWS: usize = 6;
/// The params centring and scaling each drawn component: component `k` of a reset is
/// `reset_center{k} + reset_half{k} * draw`, `draw` uniform in `[-1, 1)`.
const RESET_CENTER: [&str; MAX_RESET_DRAWS] = [
    "reset_center0",
    "reset_center1",
    "reset_center2",
    "reset_center3",
    "reset_center4",
    "reset_center5",
];
/// See [`RESET_CENTER`].
const RESET_HALF: [&str; MAX_RESET_DRAWS] = [
    "reset_half0",
    "reset_half1",
    "reset_half2",
    "reset_half3",
    "reset_half4",
    "reset_half5",
];

/// How the physical state is carried between steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StateLayout {
    /// One buffer per component.
    #[default]
    StructOfArrays,
    /// One `[n, k]` buffer, unpacked and re-packed every step.
    Packed,
}

/// The state inputs of a graph: one per component, or one packed array.
struct StateInputs<'g> {
    packed: Option<Var<'g>>,
    columns: Vec<Var<'g>>,
    components: Vec<Var<'g>>,
}

impl<'g> StateInputs<'g> {
    fn declare<E: GraphEnv>(g: &'g GraphBuilder, layout: StateLayout) -> Self {
        let k = E::STATE.len();
        match layout {
            StateLayout::Packed => {
                let packed = g.input_packed(PACKED_STATE, k as u32);
                let components = (0..k as u32).map(|c| packed.unpack(c)).collect();
                Self {
                    packed: Some(packed),
                    columns: Vec::new(),
                    components,
                }
            }
            StateLayout::StructOfArrays => {
                let columns: Vec<Var<'g>> = E::STATE
                    .iter()
                    .map(|name| g.input(name, DType::F32))
                    .collect();
                Self {
                    packed: None,
                    components: columns.clone(),
                    columns,
                }
            }
        }
    }

    /// Carries `next` into the state inputs; returns the packed next state if packed.
    fn carry(&self, g: &'g GraphBuilder, next: &[Var<'g>], packed_next: Option<Var<'g>>) {
        match self.packed {
            Some(packed) => g.carry(packed, packed_next.unwrap_or_else(|| g.pack(next))),
            None => {
                for (input, value) in self.columns.iter().zip(next) {
                    g.carry(*input, *value);
                }
            }
        }
    }
}

/// The step graph of `env` for `autoreset` with its state in `layout`.
pub fn step_graph<E: GraphEnv>(env: &E, autoreset: AutoresetMode, layout: StateLayout) -> Graph {
    build_step(env, autoreset, layout, None)
}

/// The step graph with its action read from the `action` input (`policy` is `None`) or
/// chosen in the graph by `policy` on the observation of the current state.
pub(crate) fn build_step<E: GraphEnv>(
    env: &E,
    autoreset: AutoresetMode,
    layout: StateLayout,
    policy: Option<&PolicySpec>,
) -> Graph {
    let g = GraphBuilder::new();
    let action_input = policy
        .is_none()
        .then(|| g.input("action", E::Action::DTYPE));
    let state = StateInputs::declare::<E>(&g, layout);
    let elapsed = g.input("elapsed", DType::U32);
    let max_steps = g.param("max_steps", DType::U32);
    let action = match (action_input, policy) {
        (Some(action), _) => action,
        (None, Some(policy)) => policy.act(&g, &env.observe(&g, &state.components)),
        (None, None) => unreachable!("an action input or a policy"),
    };

    let mut stepped = env.dynamics(&g, &state.components, action);
    if state.packed.is_some() {
        // A JAX step that keeps its state as one array builds it here and reads it back:
        // the pack gets one user per column.
        let array = g.pack(&stepped);
        stepped = (0..stepped.len() as u32).map(|c| array.unpack(c)).collect();
    }
    let steps = elapsed + g.u32(1);
    let out_of_bounds = env.terminated(&g, &stepped);
    let hit_limit = steps.ge(max_steps);
    let step_reward = env.reward(
        &g,
        &Transition {
            state: &state.components,
            action,
            next: &stepped,
            terminated: out_of_bounds,
        },
    );

    let mut next_state = stepped.clone();
    let mut next_elapsed = steps;
    let mut reward = step_reward;
    let mut terminated = out_of_bounds;
    let mut truncated = hit_limit;
    match autoreset {
        AutoresetMode::Disabled => {}
        AutoresetMode::NextStep => {
            let resets = g.input("resets", DType::U32);
            let needs_reset = g.input("needs_reset", DType::Bool);
            let fresh = reset_state(env, &g, resets);
            let keep = !needs_reset;
            next_state = select_all(&g, needs_reset, &fresh, &stepped);
            next_elapsed = g.select(needs_reset, g.u32(0), steps);
            reward = g.select(needs_reset, g.f32(0.0), step_reward);
            terminated = out_of_bounds.and(keep);
            truncated = hit_limit.and(keep);
            g.carry(resets, g.select(needs_reset, resets + g.u32(1), resets));
            g.carry(needs_reset, terminated.or(truncated));
        }
        AutoresetMode::SameStep => {
            let resets = g.input("resets", DType::U32);
            let fresh = reset_state(env, &g, resets);
            let done = out_of_bounds.or(hit_limit);
            next_state = select_all(&g, done, &fresh, &stepped);
            next_elapsed = g.select(done, g.u32(0), steps);
            g.carry(resets, g.select(done, resets + g.u32(1), resets));
            g.output("final_obs", g.pack(&env.observe(&g, &stepped)));
        }
    }
    let obs = observation(env, &g, &next_state);
    // A packed state whose observation is the state itself is both the observation and
    // the carry, as a JAX step returns one array.
    let packed_next = (state.packed.is_some() && observation_is_state::<E>()).then_some(obs);
    state.carry(&g, &next_state, packed_next);
    g.carry(elapsed, next_elapsed);
    g.output("obs", obs);
    g.output("reward", reward);
    g.output("terminated", terminated);
    g.output("truncated", truncated);
    g.build()
        .unwrap_or_else(|error| panic!("the {} step graph is ill-typed: {error}", E::ID))
}

/// The reset graph of `env`: lanes whose [`RESET_MASK`] is set draw their next reset state
/// (reset number `resets`); the others keep theirs. Counters restart in reset lanes.
pub fn reset_graph<E: GraphEnv>(env: &E, layout: StateLayout) -> Graph {
    let g = GraphBuilder::new();
    let state = StateInputs::declare::<E>(&g, layout);
    let elapsed = g.input("elapsed", DType::U32);
    let resets = g.input("resets", DType::U32);
    let needs_reset = g.input("needs_reset", DType::Bool);
    let mask = g.input(RESET_MASK, DType::Bool);
    let restart = g.input(RESTART, DType::Bool);
    let drawn = g.select(restart, g.u32(0), resets);
    let fresh = reset_state(env, &g, drawn);
    let next = select_all(&g, mask, &fresh, &state.components);
    let obs = observation(env, &g, &next);
    let packed_next = (state.packed.is_some() && observation_is_state::<E>()).then_some(obs);
    state.carry(&g, &next, packed_next);
    g.carry(elapsed, g.select(mask, g.u32(0), elapsed));
    g.carry(resets, g.select(mask, drawn + g.u32(1), resets));
    g.carry(needs_reset, g.select(mask, g.bool(false), needs_reset));
    g.output("obs", obs);
    g.build()
        .unwrap_or_else(|error| panic!("the {} reset graph is ill-typed: {error}", E::ID))
}

fn observation_is_state<E: GraphEnv>() -> bool {
    E::OBS_DIM == E::STATE.len()
}

fn observation<'g, E: GraphEnv>(env: &E, g: &'g GraphBuilder, state: &[Var<'g>]) -> Var<'g> {
    g.pack(&env.observe(g, state))
}

fn select_all<'g>(
    g: &'g GraphBuilder,
    cond: Var<'g>,
    on_true: &[Var<'g>],
    on_false: &[Var<'g>],
) -> Vec<Var<'g>> {
    on_true
        .iter()
        .zip(on_false)
        .map(|(t, f)| g.select(cond, *t, *f))
        .collect()
}

/// Threefry blocks one reset reads.
pub fn reset_blocks<E: GraphEnv>() -> u32 {
    E::RESET_DRAWS.div_ceil(2) as u32
}

/// The fresh state of reset number `resets` of each lane.
fn reset_state<'g, E: GraphEnv>(env: &E, g: &'g GraphBuilder, resets: Var<'g>) -> Vec<Var<'g>> {
    let key = KEYS.map(|name| g.input_per_launch(name, DType::U32));
    let lane = g.u32(0);
    let blocks = reset_blocks::<E>();
    let first = resets * g.u32(blocks);
    let counters: Vec<Var<'g>> = (0..blocks)
        .map(|j| if j == 0 { first } else { first + g.u32(j) })
        .collect();
    let drawn: Vec<Var<'g>> = (0..E::RESET_DRAWS)
        .map(|d| {
            let draw = g.random_uniform(key, [lane, counters[d / 2]], (d % 2) as u8);
            let (center, half) = (RESET_CENTER[d], RESET_HALF[d]);
            g.param(center, DType::F32) + g.param(half, DType::F32) * draw
        })
        .collect();
    env.reset_state(g, &drawn)
}

/// The params placing each drawn component of a reset in `bounds` (`(low, high)` each):
/// centre and half width, as `f32`.
pub fn reset_bound_params(bounds: &[(f64, f64)]) -> Vec<(&'static str, Scalar)> {
    assert!(
        bounds.len() <= MAX_RESET_DRAWS,
        "at most {MAX_RESET_DRAWS} drawn components"
    );
    let (centers, halves) = scale_of(bounds);
    (centers.iter().zip(&halves).enumerate())
        .flat_map(|(k, (c, h))| {
            [
                (RESET_CENTER[k], Scalar::F32(*c)),
                (RESET_HALF[k], Scalar::F32(*h)),
            ]
        })
        .collect()
}

/// The `f32` centre and half width of each `(low, high)`, as the graphs read them.
pub fn scale_of(bounds: &[(f64, f64)]) -> (Vec<f32>, Vec<f32>) {
    (bounds.iter())
        .map(|&(low, high)| (((low + high) / 2.0) as f32, ((high - low) / 2.0) as f32))
        .unzip()
}

/// Raw draws (uniform in `[-1, 1)`) placed in `bounds`, in the graph's `f32` arithmetic.
pub fn place_draws(draws: &[f32], bounds: &[(f64, f64)]) -> Vec<f32> {
    let (centers, halves) = scale_of(bounds);
    (draws.iter().zip(centers.iter().zip(&halves)))
        .map(|(d, (c, h))| c + h * d)
        .collect()
}

/// The raw draws (uniform in `[-1, 1)`) of reset number `reset_index` of lane `lane` of a
/// batch seeded `seed` (keyed by `seed + lane`), on the host: the same words the graph reads.
pub fn reset_draws<E: GraphEnv>(seed: u64, lane: u32, reset_index: u32) -> Vec<f32> {
    let key = rng::seed_key(seed.wrapping_add(u64::from(lane)));
    let blocks = reset_blocks::<E>();
    (0..E::RESET_DRAWS)
        .map(|d| {
            let counter = reset_index
                .wrapping_mul(blocks)
                .wrapping_add((d / 2) as u32);
            let bits = rng::threefry2x32(key, [0, counter])[d % 2];
            rng::symmetric_uniform(bits, 1.0)
        })
        .collect()
}

/// The reference reset of lane `lane`: reset number `reset_index` of stream `seed`, in the
/// environment's default bounds.
pub fn reference_reset<E: GraphEnv>(env: &E, seed: u64, lane: u32, reset_index: u32) -> Vec<f64> {
    let draws = reset_draws::<E>(seed, lane, reset_index);
    env.reference_reset(&place_draws(&draws, &env.reset_bounds()))
}

/// The runtime params of `env`'s graphs for `episode` (lanes apart by index).
pub fn graph_params<E: GraphEnv>(env: &E, episode: &EpisodeOptions) -> Vec<(&'static str, Scalar)> {
    let mut params = env.graph_params();
    params.push(("max_steps", Scalar::U32(episode.max_episode_steps)));
    params.extend(reset_bound_params(&env.reset_bounds()));
    params
}
