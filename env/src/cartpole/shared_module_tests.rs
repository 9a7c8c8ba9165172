//! CartPole as the concrete environment of the shared modules' tests (kept here so that no
//! shared module imports an environment): its spaces as gymnasium declares them, the
//! memory a batch of it needs, and the CPU runtime's split output copies.

use cartfuse_fusion::cpu::{Cpu, CpuOptions};
use cartfuse_fusion::plan::Strategy;

use crate::cartpole::CartPoleParams;
use crate::environment::{EpisodeOptions, GraphEnv};
use crate::memory::bytes_per_env;
use crate::params::AutoresetMode;
use crate::spaces::{ActionSpace, batched_box};
use crate::{StepPlan, VecEnv};

#[test]
fn cartpole_bounds_match_gymnasium() {
    let space = CartPoleParams::default().observation_space();
    assert_eq!(space.high[0], 4.8);
    assert_eq!(space.high[1], f32::INFINITY);
    assert!((space.high[2] - 0.418_879).abs() < 1e-6);
    assert_eq!(space.low[3], f32::NEG_INFINITY);
    let batched = batched_box(space, 8);
    assert_eq!(batched.shape, vec![8, 4]);
    let ActionSpace::Discrete(actions) = CartPoleParams::default().action_space().batched(8) else {
        panic!("CartPole's actions are discrete")
    };
    assert_eq!((actions.shape, actions.n), (vec![8], 2));
}

#[test]
fn cartpole_needs_at_least_its_inputs_outputs_and_carries() {
    let env = CartPoleParams::default();
    let episode = EpisodeOptions::default_for::<CartPoleParams>();
    let fused = bytes_per_env(&env, &episode, StepPlan::Graph(Strategy::Fused));
    // Step: 4 state + 3 counters + action in, their 7 next values, obs (4) + reward +
    // 2 flags out; reset: 4 state + 3 counters + mask in, 7 next, obs (4) out.
    assert!(fused >= 4 * ((8 + 7 + 7) + (8 + 7 + 4)), "{fused}");
    let ten = bytes_per_env(&env, &episode, StepPlan::Graph(Strategy::FusedSteps(10)));
    // Nine more steps of outputs (obs, reward, 2 flags) and actions per call.
    assert_eq!(
        ten,
        fused + 4 * 9 * (7 + 1),
        "outputs and actions are per step"
    );
    let same_step = EpisodeOptions {
        autoreset: AutoresetMode::SameStep,
        ..episode
    };
    let with_final = bytes_per_env(&env, &same_step, StepPlan::Graph(Strategy::Fused));
    // Final observations (4 words) in, the step's needs_reset carry (2 words) out.
    assert_eq!(with_final, fused + 4 * (4 - 2));
}

/// A planned engine's outputs copied by every thread into the caller's memory equal
/// what reading its buffers gives, in every autoreset mode.
#[test]
fn split_copies_of_planned_outputs_equal_the_buffers() {
    let modes = [
        AutoresetMode::NextStep,
        AutoresetMode::SameStep,
        AutoresetMode::Disabled,
    ];
    for autoreset in modes {
        let options = CpuOptions {
            threads: 2,
            parallel_min_lanes: 0,
            ..CpuOptions::default()
        };
        let episode = EpisodeOptions {
            autoreset,
            max_episode_steps: 6,
        };
        let build = || {
            let cpu = Cpu::new(options.clone()).unwrap();
            let plan = StepPlan::Graph(Strategy::Fused);
            let mut env =
                VecEnv::build(cpu, CartPoleParams::default(), 999, episode, plan).unwrap();
            env.reset(Some(11)).unwrap();
            env
        };
        let (mut copied, mut read) = (build(), build());
        for step in 0..10 {
            let actions: Vec<u32> = (0..999).map(|i| ((i + step) % 2) as u32).collect();
            let got = copied.step(&actions).unwrap();
            let uploaded = read.upload_actions(&actions).unwrap();
            let want = read.step_device(&uploaded).unwrap().to_host().unwrap();
            assert_eq!(got, want, "{autoreset:?} step {step}");
        }
    }
}
