//! The native step against itself: every SIMD level and thread split, bit for bit.

use cartfuse_fusion::cpu::Cpu;
use cartfuse_fusion::cpu::{CpuOptions, SimdLevel};

use crate::cartpole::params::CartPoleParams;
use crate::engine::StepPlan;
use crate::environment::EpisodeOptions;
use crate::params::AutoresetMode;
use crate::vec_env::{StepOutput, VecEnv};

/// Every output of `steps` steps of 1000 envs (a partial last vector) whose episodes
/// end every few steps, so each call queues and draws hundreds of resets.
fn run(options: CpuOptions, autoreset: AutoresetMode) -> Vec<StepOutput> {
    let n = 1000;
    let episode = EpisodeOptions {
        autoreset,
        max_episode_steps: 4,
    };
    let cpu = Cpu::new(options).unwrap();
    let plan = StepPlan::HandWritten;
    let mut env = VecEnv::build(cpu, CartPoleParams::default(), n, episode, plan).unwrap();
    env.reset(Some(7)).unwrap();
    let mut bits = 0x9e37_79b9u32;
    (0..30)
        .map(|_| {
            let actions: Vec<u32> = (0..n)
                .map(|_| {
                    bits ^= bits << 13;
                    bits ^= bits >> 17;
                    bits ^= bits << 5;
                    bits >> 31
                })
                .collect();
            env.step(&actions).unwrap()
        })
        .collect()
}

#[test]
fn every_level_and_thread_split_gives_the_same_bits() {
    for autoreset in [AutoresetMode::NextStep, AutoresetMode::SameStep] {
        let want = run(CpuOptions::single(SimdLevel::Scalar), autoreset);
        let resets: usize = want
            .iter()
            .map(|out| {
                out.terminated
                    .iter()
                    .chain(&out.truncated)
                    .filter(|d| **d)
                    .count()
            })
            .sum();
        assert!(resets > 5000, "only {resets} episodes ended");
        let levels = SimdLevel::ALL.into_iter().filter(|l| l.is_supported());
        for simd in levels {
            let split = CpuOptions {
                simd,
                threads: 2,
                parallel_min_lanes: 0,
                ..CpuOptions::default()
            };
            for options in [CpuOptions::single(simd), split] {
                let got = run(options.clone(), autoreset);
                for (step, (got, want)) in got.iter().zip(&want).enumerate() {
                    let what = format!("{autoreset:?} {options:?} step {step}");
                    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&got.obs), bits(&want.obs), "{what}");
                    assert_eq!(got.reward, want.reward, "{what}");
                    assert_eq!(got.terminated, want.terminated, "{what}");
                    assert_eq!(got.truncated, want.truncated, "{what}");
                    let final_bits = |o: &StepOutput| o.final_obs.as_deref().map(bits);
                    assert_eq!(final_bits(got), final_bits(want), "{what}");
                }
            }
        }
    }
}

/// Both places the native step writes its outputs, the engine's buffers (`u32` flags,
/// padded) and the caller's memory (`bool` flags, exactly `n` entries), hold the same values
/// step after step, for sizes that end on a partial vector, on one thread and split.
#[test]
fn outputs_in_the_callers_memory_equal_the_engines_buffers() {
    for autoreset in [AutoresetMode::NextStep, AutoresetMode::SameStep] {
        for (n, parallel_min_lanes) in [(1, usize::MAX), (37, usize::MAX), (1000, 0)] {
            let episode = EpisodeOptions {
                autoreset,
                max_episode_steps: 5,
            };
            let options = CpuOptions {
                threads: 2,
                parallel_min_lanes,
                ..CpuOptions::default()
            };
            let build = || {
                let cpu = Cpu::new(options.clone()).unwrap();
                let params = CartPoleParams::default();
                let plan = StepPlan::HandWritten;
                let mut env = VecEnv::build(cpu, params, n, episode, plan).unwrap();
                env.reset(Some(3)).unwrap();
                env
            };
            let (mut host, mut device) = (build(), build());
            for step in 0..12 {
                let actions: Vec<u32> = (0..n).map(|i| ((i * 7 + step) % 3 % 2) as u32).collect();
                let want = {
                    let uploaded = device.upload_actions(&actions).unwrap();
                    device.step_device(&uploaded).unwrap().to_host().unwrap()
                };
                let got = host.step(&actions).unwrap();
                assert_eq!(got, want, "{autoreset:?} n = {n}, step {step}");
            }
        }
    }
}
