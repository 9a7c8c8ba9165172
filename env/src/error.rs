//! Errors of environments and vector envs.

use cartfuse_fusion::device::DeviceError;
use cartfuse_fusion::exec::ExecError;
use cartfuse_fusion::exec::ReadError;
use cartfuse_fusion::plan::PlanError;

/// Everything that can go wrong creating or stepping a vector env.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// A parameter is not finite or not positive.
    #[error("invalid parameter `{name}` = {value}: expected {expected}")]
    InvalidParam {
        /// Field name.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// What would be accepted.
        expected: &'static str,
    },
    /// A constructor argument the environment does not take.
    #[error("{env} takes no argument `{name}` (it takes: {})", if expected.is_empty() { "none".into() } else { expected.join(", ") })]
    UnknownKwarg {
        /// The environment's id.
        env: &'static str,
        /// The name given.
        name: String,
        /// The names it takes.
        expected: Vec<&'static str>,
    },
    /// Reset bounds that are not one finite, ordered pair per drawn component.
    #[error("invalid reset bounds: {0}")]
    InvalidResetBounds(String),
    /// `max_episode_steps` is zero.
    #[error("max_episode_steps must be at least 1")]
    InvalidMaxEpisodeSteps,
    /// A vector env needs at least one env.
    #[error("num_envs must be at least 1")]
    ZeroEnvs,
    /// The device cannot hold the requested number of envs.
    #[error("{requested} envs do not fit on this device: at most {max} (limited by {limit})")]
    TooManyEnvs {
        /// Envs asked for.
        requested: usize,
        /// The most this device holds.
        max: usize,
        /// Which device limit binds.
        limit: String,
    },
    /// The batch's buffers would not fit in the memory available (checked before any of
    /// them is allocated).
    #[error(
        "{num_envs} envs need at least {needed} bytes ({}) of {memory} for their buffers, but \
         {available} bytes ({}) are available: ask for fewer envs",
        human_bytes(*needed),
        human_bytes(*available)
    )]
    OutOfMemory {
        /// Envs asked for.
        num_envs: usize,
        /// Bytes their buffers need at the least.
        needed: u64,
        /// Bytes the memory can still give.
        available: u64,
        /// Which memory (`host memory`, a device).
        memory: String,
    },
    /// An input holds a different number of entries than there are envs.
    #[error("expected {expected} {what} ({per_env} per env), got {found}")]
    WrongCount {
        /// What was counted (actions, states, ...).
        what: &'static str,
        /// How many per env (`K` actions per env for a `fused-xK` call).
        per_env: usize,
        /// `num_envs`.
        expected: usize,
        /// What was passed.
        found: usize,
    },
    /// An action outside the environment's action space.
    #[error("action {value} of env {env} is not in the action space {space}")]
    InvalidAction {
        /// Env index.
        env: usize,
        /// The rejected action.
        value: String,
        /// The action space, as gymnasium writes it.
        space: String,
    },
    /// Device-resident actions held a value outside {0, 1}; the kernel flagged it.
    #[error(
        "a device-resident action outside {{0, 1}} was stepped since the last check; the \
         outputs of those steps treat it as 0 (push left) and are not to be trusted"
    )]
    InvalidDeviceAction,
    /// A state component is NaN or infinite.
    #[error("state of env {env} must be {expected} finite numbers, got {state:?}")]
    BadState {
        /// Env index.
        env: usize,
        /// Components a state has.
        expected: usize,
        /// The rejected state.
        state: Vec<f64>,
    },
    /// `step` was called before the first `reset` or `set_state`.
    #[error("the env must be reset (or given a state) before it is stepped")]
    NotReset,
    /// A `fused-xK` output lies over several device buffers, so no single buffer holds it.
    #[error(
        "{output} lies over {pages} buffers: {steps} steps of it exceed the device's largest \
         buffer, so each launch of a call writes its own; use DeviceStep::pages or to_host"
    )]
    PagedOutput {
        /// The output asked for.
        output: &'static str,
        /// Buffers it lies over.
        pages: usize,
        /// Steps one call writes.
        steps: usize,
    },
    /// A policy rollout's policy, weights or length do not fit.
    #[error("invalid policy rollout: {0}")]
    InvalidRollout(String),
    /// The chosen engine cannot do what was asked.
    #[error("not supported: {0}")]
    Unsupported(String),
    /// A plan this environment or runtime does not have.
    #[error("{plan} is not available for {env} on {runtime}: {reason}")]
    PlanUnavailable {
        /// The plan asked for.
        plan: String,
        /// The environment id.
        env: &'static str,
        /// The runtime name.
        runtime: &'static str,
        /// Why.
        reason: String,
    },
    /// The step plan could not be built.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The step plan could not run.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// The device could not be opened.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// A device read failed.
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// `bytes` as people read them: `1.50 GiB`, `12.0 MiB`, `512 B`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    match unit {
        0 => format!("{bytes} B"),
        _ if value < 10.0 => format!("{value:.2} {}", UNITS[unit]),
        _ => format!("{value:.1} {}", UNITS[unit]),
    }
}
