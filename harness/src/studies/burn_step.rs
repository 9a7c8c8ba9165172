//! The CartPole-v1 step and autoreset written with burn tensor ops, generic over
//! [`Backend`], so burn's own fusion can be compared with cartfuse's plans.
//!
//! It is written the way burn fuses best:
//! - **Float masks, not bool logic.** Conditions come from comparisons (which burn's
//!   element-wise fuser takes) and are combined as `0.0/1.0` floats with `+`, `*` and
//!   `clamp`: burn 0.21's fuser closes on bool `and`/`or`/`not`, so `a | b` would end a
//!   fused block where `clamp(a + b, 0, 1)` does not.
//! - **No slice or cat inside the step.** The state is structure of arrays (one tensor per
//!   component) and observations are returned as those four tensors; `cat`/`stack` into
//!   `[n, 4]` (and slicing it back) also close burn's fusers, so packing, if wanted, happens
//!   outside the step.
//! - **No random op inside the step.** burn's fuser closes on random ops, so reset states
//!   come in as tensors (`fresh`): drawn from cartfuse's Threefry stream in the parity tests,
//!   a pool precomputed once in the benchmark, as the study's "precomputed random numbers".
//!
//! Semantics are those of [`cartfuse_env::reference::ReferenceVecEnv`] in `NextStep` mode.

use burn::tensor::{Tensor, backend::Backend};

use cartfuse_env::CartPoleConfig;

/// The state of `n` envs, one tensor of `n` floats per quantity.
#[derive(Debug, Clone)]
pub struct BurnCartPoleState<B: Backend> {
    /// Cart position.
    pub x: Tensor<B, 1>,
    /// Cart velocity.
    pub x_dot: Tensor<B, 1>,
    /// Pole angle.
    pub theta: Tensor<B, 1>,
    /// Pole angular velocity.
    pub theta_dot: Tensor<B, 1>,
    /// Steps taken in the current episode (a float count).
    pub elapsed: Tensor<B, 1>,
    /// 1.0 where the previous step ended the episode (`NextStep` autoreset pending).
    pub needs_reset: Tensor<B, 1>,
}

/// What one step returns besides the new state (whose four components are the
/// observations).
#[derive(Debug, Clone)]
pub struct BurnStepOutput<B: Backend> {
    /// 1.0 per physics step, 0.0 on a reset step.
    pub reward: Tensor<B, 1>,
    /// 1.0 where the pole fell or the cart left the track.
    pub terminated: Tensor<B, 1>,
    /// 1.0 where the episode reached the step limit.
    pub truncated: Tensor<B, 1>,
}

impl<B: Backend> BurnCartPoleState<B> {
    /// States from `[x, x_dot, theta, theta_dot]` rows, counters at zero.
    pub fn from_rows(rows: &[[f32; 4]], device: &B::Device) -> Self {
        let column = |k: usize| {
            Tensor::<B, 1>::from_floats(
                rows.iter().map(|r| r[k]).collect::<Vec<_>>().as_slice(),
                device,
            )
        };
        let zeros = Tensor::<B, 1>::zeros([rows.len()], device);
        Self {
            x: column(0),
            x_dot: column(1),
            theta: column(2),
            theta_dot: column(3),
            elapsed: zeros.clone(),
            needs_reset: zeros,
        }
    }

    /// The observations as host rows (copies to the host).
    pub fn observation_rows(&self) -> Vec<[f32; 4]> {
        let host = |t: &Tensor<B, 1>| t.clone().into_data().to_vec::<f32>().expect("f32 tensor");
        let (x, x_dot, theta, theta_dot) = (
            host(&self.x),
            host(&self.x_dot),
            host(&self.theta),
            host(&self.theta_dot),
        );
        (0..x.len())
            .map(|i| [x[i], x_dot[i], theta[i], theta_dot[i]])
            .collect()
    }
}

/// One `NextStep` CartPole-v1 step of every env.
///
/// `action` holds 0.0 (push left) or 1.0 (push right); `fresh` the four components of the
/// state each env resets to if it must reset now.
pub fn burn_cartpole_step<B: Backend>(
    state: BurnCartPoleState<B>,
    action: Tensor<B, 1>,
    fresh: &[Tensor<B, 1>; 4],
    config: &CartPoleConfig,
) -> (BurnCartPoleState<B>, BurnStepOutput<B>) {
    let p = &config.params;
    let (gravity, masspole, total_mass, length) = (
        p.gravity as f32,
        p.masspole as f32,
        p.total_mass() as f32,
        p.length as f32,
    );
    let (polemass_length, force_mag, tau) =
        (p.polemass_length() as f32, p.force_mag as f32, p.tau as f32);
    let BurnCartPoleState {
        x,
        x_dot,
        theta,
        theta_dot,
        elapsed,
        needs_reset,
    } = state;

    // force = action == 1 ? F : -F, as 2 F a - F.
    let force = action.mul_scalar(2.0 * force_mag).sub_scalar(force_mag);
    let costheta = theta.clone().cos();
    let sintheta = theta.clone().sin();
    let temp = (force + theta_dot.clone() * theta_dot.clone() * sintheta.clone() * polemass_length)
        .div_scalar(total_mass);
    let denominator = (costheta.clone() * costheta.clone() * (-masspole / total_mass))
        .add_scalar(4.0 / 3.0)
        .mul_scalar(length);
    let thetaacc = (sintheta * gravity - costheta.clone() * temp.clone()) / denominator;
    let xacc = temp - (thetaacc.clone() * costheta).mul_scalar(polemass_length / total_mass);
    let stepped = [
        x + x_dot.clone().mul_scalar(tau),
        x_dot + xacc.mul_scalar(tau),
        theta + theta_dot.clone().mul_scalar(tau),
        theta_dot + thetaacc.mul_scalar(tau),
    ];
    let steps = elapsed.add_scalar(1.0);

    // Float masks: comparisons fuse, bool and/or would not.
    let out_of_bounds = (stepped[0]
        .clone()
        .abs()
        .greater_elem(p.x_threshold as f32)
        .float()
        + stepped[2]
            .clone()
            .abs()
            .greater_elem(p.theta_threshold_radians as f32)
            .float())
    .clamp_max(1.0);
    let hit_limit = steps
        .clone()
        .greater_equal_elem(config.max_episode_steps as f32)
        .float();
    let keep = needs_reset.clone().neg().add_scalar(1.0);
    let terminated = out_of_bounds * keep.clone();
    let truncated = hit_limit * keep.clone();
    let reset_now = needs_reset.greater_elem(0.5);
    let [sx, sxd, st, std] = stepped;
    let next = BurnCartPoleState {
        x: sx.mask_where(reset_now.clone(), fresh[0].clone()),
        x_dot: sxd.mask_where(reset_now.clone(), fresh[1].clone()),
        theta: st.mask_where(reset_now.clone(), fresh[2].clone()),
        theta_dot: std.mask_where(reset_now, fresh[3].clone()),
        elapsed: steps * keep.clone(),
        needs_reset: (terminated.clone() + truncated.clone()).clamp_max(1.0),
    };
    (
        next,
        BurnStepOutput {
            reward: keep,
            terminated,
            truncated,
        },
    )
}
