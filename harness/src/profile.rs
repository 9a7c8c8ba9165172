//! The step profiler: warm-up with the JIT compile timed on its own, repeats of at least a
//! minimum duration, a device sync before every clock stop, and median/min/max.

use std::time::Instant;

use cartfuse_env::{
    CartPoleConfig, CartPoleParams, DeviceActions, EnvBackend, EnvError, EpisodeOptions, GraphEnv,
    OwnedOutputs, StepPlan, VecEnv,
};
use cartfuse_fusion::exec::LaunchTotals;

use crate::work::flops_per_lane;

/// How long and how often to measure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProfileSettings {
    /// Each repeat runs at least this long (unless `calls_per_repeat` is set).
    pub min_seconds_per_repeat: f64,
    /// Number of timed repeats (the median is reported).
    pub repeats: usize,
    /// Run exactly this many step calls per repeat instead of timing-based sizing.
    pub calls_per_repeat: Option<u64>,
}

impl Default for ProfileSettings {
    fn default() -> Self {
        Self {
            min_seconds_per_repeat: 0.5,
            repeats: 5,
            calls_per_repeat: None,
        }
    }
}

/// What profiling one plan at one size measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StepProfile {
    /// The plan's name.
    pub plan: String,
    /// Envs stepped in parallel.
    pub num_envs: usize,
    /// Env steps per call (`K` of `fused-xK`).
    pub steps_per_call: usize,
    /// Step calls per timed repeat.
    pub calls_per_repeat: u64,
    /// Median time of one env-batch step (seconds): repeat time / (calls * K).
    pub step_s_median: f64,
    /// Fastest repeat's time per batch step.
    pub step_s_min: f64,
    /// Slowest repeat's time per batch step.
    pub step_s_max: f64,
    /// `num_envs / step_s_median`.
    pub env_steps_per_s: f64,
    /// Kernel launches per batch step (ledger).
    pub launches_per_step: f64,
    /// Compulsory bytes moved per env-step (ledger).
    pub bytes_per_env_step: f64,
    /// Achieved bandwidth: bytes per env-step x env-steps/s (GB/s).
    pub gbps: f64,
    /// Achieved arithmetic: FLOPs of the CartPole graph per env-step x env-steps/s
    /// (GFLOP/s; the same count for every plan, the hand-written kernel included).
    pub gflops: f64,
    /// First call (JIT compile of every kernel of the plan) minus a steady-state call, plus
    /// the CPU's compiled kernels built before the first call (or found in the disk cache).
    pub compile_s: f64,
    /// Every launch this profile made, warm-up and reset included (ledger).
    pub launches_total: u64,
}

/// FLOPs of one env-step of `env`, counted on its graph (see [`crate::work`]).
pub fn flops_per_env_step<E: GraphEnv>(env: &E, autoreset: cartfuse_env::AutoresetMode) -> f64 {
    flops_per_lane(&cartfuse_env::graph::step_graph(
        env,
        autoreset,
        cartfuse_env::graph::StateLayout::StructOfArrays,
    ))
}

/// FLOPs of one CartPole env-step, counted on its graph (see [`crate::work`]).
pub fn cartpole_flops_per_env_step(autoreset: cartfuse_env::AutoresetMode) -> f64 {
    flops_per_env_step(&CartPoleParams::default(), autoreset)
}

fn sync<E: GraphEnv, B: EnvBackend>(env: &VecEnv<E, B>) -> Result<(), EnvError> {
    env.sync()
}

/// Profiles the CartPole step of `plan` over `num_envs` envs on `backend`, calling
/// `progress(done, total)` after each repeat.
pub fn profile_cartpole<B: EnvBackend>(
    backend: B,
    config: CartPoleConfig,
    plan: StepPlan,
    num_envs: usize,
    settings: &ProfileSettings,
    progress: impl FnMut(usize, usize),
) -> Result<StepProfile, EnvError> {
    profile_env(
        backend,
        config.params,
        config.episode(),
        plan,
        num_envs,
        settings,
        progress,
    )
}

/// One env ready to be timed: built, reset, its actions uploaded once and its kernels
/// compiled by a first call. [`profile_env`] and [`crate::turns`] time through it, so both
/// measure a step the same way.
pub struct TimedEnv<E: GraphEnv, B: EnvBackend> {
    env: VecEnv<E, B>,
    plan: StepPlan,
    actions: DeviceActions<B::Buffer>,
    /// Set: each call is a host step (host actions in, every output copied out), as a
    /// user's loop steps; unset: device-resident calls.
    host: Option<HostStep<E>>,
    /// Seconds of the first call beyond a steady call, plus the CPU's kernels built ahead.
    compile_s: f64,
    /// The fastest of three steady calls.
    warm_call_s: f64,
}

/// A host step's actions and the host memory its outputs are copied into, allocated once.
struct HostStep<E: GraphEnv> {
    actions: Vec<E::Action>,
    out: OwnedOutputs,
}

impl<E: GraphEnv, B: EnvBackend> TimedEnv<E, B> {
    /// Builds `num_envs` envs of `env_params` under `plan`, resets them, uploads the
    /// env's pattern actions for one call, and makes the first (compiling) call and three
    /// steady ones.
    pub fn new(
        backend: B,
        env_params: E,
        episode: EpisodeOptions,
        plan: StepPlan,
        num_envs: usize,
    ) -> Result<Self, EnvError> {
        // The CPU's compiled engine builds its kernels here, before the first call.
        let built_before = cartfuse_fusion::cpu::native::total_build_time();
        let mut env = VecEnv::build(backend, env_params, num_envs, episode, plan)?;
        env.reset(Some(0))?;
        let ahead = (cartfuse_fusion::cpu::native::total_build_time() - built_before).as_secs_f64();
        let k = env.steps_per_call();
        let pattern = env.env().pattern_actions(num_envs * k);
        let actions = env.upload_actions(&pattern)?;
        sync(&env)?;
        let mut timed = Self {
            env,
            plan,
            actions,
            host: None,
            compile_s: 0.0,
            warm_call_s: f64::MAX,
        };
        // The first call compiles every kernel of the plan; the next ones are steady state.
        let first = timed.time_calls(1)?;
        for _ in 0..3 {
            timed.warm_call_s = timed.warm_call_s.min(timed.time_calls(1)?);
        }
        timed.compile_s = ahead + (first - timed.warm_call_s).max(0.0);
        Ok(timed)
    }

    /// This env timed as a user's loop steps it: host actions in, every output copied into
    /// host memory allocated once, one call after the other (the steady call re-timed).
    pub fn host_steps(mut self) -> Result<Self, EnvError> {
        let lanes = self.env.steps_per_call() * self.env.num_envs();
        let actions = self.env.env().pattern_actions(lanes);
        let out = self.env.owned_outputs();
        self.host = Some(HostStep { actions, out });
        self.warm_call_s = f64::MAX;
        for _ in 0..3 {
            self.warm_call_s = self.warm_call_s.min(self.time_calls(1)?);
        }
        Ok(self)
    }

    /// Seconds of `calls` back-to-back calls, synchronised before and after.
    pub fn time_calls(&mut self, calls: u64) -> Result<f64, EnvError> {
        self.time_repeat(calls, f64::INFINITY)
            .map(|(seconds, _)| seconds)
    }

    /// Up to `calls` back-to-back calls, stopping early once `limit_s` seconds have passed
    /// (checked every 16 calls): `(seconds, calls made)`, synchronised before and after.
    /// On a machine that slows down after the calls were sized (a loaded 2-core VM can
    /// stall a two-thread step for a scheduler slice), a repeat stays bounded.
    pub fn time_repeat(&mut self, calls: u64, limit_s: f64) -> Result<(f64, u64), EnvError> {
        sync(&self.env)?;
        let start = Instant::now();
        let mut made = 0;
        while made < calls {
            match &mut self.host {
                Some(host) => self.env.step_into(&host.actions, &mut host.out.as_host())?,
                None => {
                    self.env.step_device(&self.actions)?;
                }
            }
            made += 1;
            if made % 16 == 0 && start.elapsed().as_secs_f64() > limit_s {
                break;
            }
        }
        sync(&self.env)?;
        Ok((start.elapsed().as_secs_f64(), made))
    }

    /// Calls that make one repeat last at least `seconds`, from the steady call's time.
    pub fn calls_for(&self, seconds: f64) -> u64 {
        ((seconds / self.warm_call_s.max(1e-7)).ceil() as u64).clamp(1, 1_000_000)
    }

    /// Env steps per call (`K` of `fused-xK`).
    pub fn steps_per_call(&self) -> usize {
        self.env.steps_per_call()
    }

    /// JIT compile (first call minus a steady one) plus kernels built ahead.
    pub fn compile_s(&self) -> f64 {
        self.compile_s
    }

    /// The env.
    pub fn env(&self) -> &VecEnv<E, B> {
        &self.env
    }

    /// The profile of repeats of (up to) `calls` calls, `total_calls` in all, that took
    /// `step_times` seconds per batch step each, with launches and bytes from the ledger
    /// since `before` (taken before the first of them) and `flops` per env-step.
    pub fn summarize(
        &self,
        (calls, total_calls): (u64, u64),
        step_times: &[f64],
        before: &LaunchTotals,
        flops: f64,
    ) -> StepProfile {
        let num_envs = self.env.num_envs();
        let k = self.steps_per_call();
        let totals = self.env.ledger().totals().since(before);
        let batch_steps = (total_calls * k as u64) as f64;
        let bytes_per_env_step = totals.bytes_moved() as f64 / (batch_steps * num_envs as f64);
        let median = median(step_times.to_vec());
        StepProfile {
            plan: self.plan.to_string(),
            num_envs,
            steps_per_call: k,
            calls_per_repeat: calls,
            step_s_median: median,
            step_s_min: step_times.iter().copied().fold(f64::INFINITY, f64::min),
            step_s_max: step_times.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            env_steps_per_s: num_envs as f64 / median,
            launches_per_step: totals.launches as f64 / batch_steps,
            bytes_per_env_step,
            gbps: bytes_per_env_step * num_envs as f64 / median / 1e9,
            gflops: flops * num_envs as f64 / median / 1e9,
            compile_s: self.compile_s,
            launches_total: self.env.ledger().totals().launches,
        }
    }
}

/// The median of `values` (the mean of the middle two for an even count).
///
/// # Panics
/// On no values.
pub fn median(mut values: Vec<f64>) -> f64 {
    assert!(!values.is_empty(), "a median of no values");
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// Profiles the step of `env` under `plan` over `num_envs` envs on `backend`, calling
/// `progress(done, total)` after each repeat.
pub fn profile_env<E: GraphEnv, B: EnvBackend>(
    backend: B,
    env_params: E,
    episode: EpisodeOptions,
    plan: StepPlan,
    num_envs: usize,
    settings: &ProfileSettings,
    mut progress: impl FnMut(usize, usize),
) -> Result<StepProfile, EnvError> {
    let flops = flops_per_env_step(&env_params, episode.autoreset);
    let mut timed = TimedEnv::new(backend, env_params, episode, plan, num_envs)?;
    let k = timed.steps_per_call();
    let calls = settings
        .calls_per_repeat
        .unwrap_or_else(|| timed.calls_for(settings.min_seconds_per_repeat));
    let before = timed.env().ledger().totals();
    let mut step_times = Vec::with_capacity(settings.repeats);
    for repeat in 0..settings.repeats {
        step_times.push(timed.time_calls(calls)? / (calls as f64 * k as f64));
        progress(repeat + 1, settings.repeats);
    }
    Ok(timed.summarize(
        (calls, calls * settings.repeats as u64),
        &step_times,
        &before,
        flops,
    ))
}

/// A profile of made-up numbers (`plan` at `n` envs taking `step_s` a step, `launches` a
/// step) for the tests of the tables and reports that read profiles.
#[cfg(test)]
pub(crate) fn test_profile(plan: &str, n: usize, step_s: f64, launches: f64) -> StepProfile {
    StepProfile {
        plan: plan.into(),
        num_envs: n,
        steps_per_call: 1,
        calls_per_repeat: 10,
        step_s_median: step_s,
        step_s_min: step_s,
        step_s_max: step_s,
        env_steps_per_s: n as f64 / step_s,
        launches_per_step: launches,
        bytes_per_env_step: 88.0,
        gbps: 1.0,
        gflops: 1.0,
        compile_s: 0.01,
        launches_total: 100,
    }
}
