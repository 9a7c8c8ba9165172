//! A host step is one round trip: the actions written into a buffer that exists, every
//! output back in one copy, nothing allocated, counted exactly by the backend.

use cartfuse::env::{DeviceActions, EnvError, VecEnv};
use cartfuse::fusion::exec::{Backend, StagingStats, TransferCounts};
use cartfuse::fusion::plan::Strategy;
use cartfuse::{AutoresetMode, CartPoleConfig, StepPlan};

use super::util;

/// Whether the runtime under test crosses a bus (its backend counts transfers).
fn counts_transfers() -> bool {
    util::backend().runtime_name() != "cpu"
}

/// What `steps` host steps cost on this runtime: on a device one write and one read of one
/// copy each, on the CPU nothing (its buffers are host memory).
fn per_host_steps(steps: u64) -> TransferCounts {
    match counts_transfers() {
        true => TransferCounts {
            writes: steps,
            reads: steps,
            copies: steps,
            ..TransferCounts::default()
        },
        false => TransferCounts::default(),
    }
}

#[test]
fn a_host_step_is_one_write_and_one_read_under_every_plan_and_mode() {
    let modes = [
        AutoresetMode::NextStep,
        AutoresetMode::SameStep,
        AutoresetMode::Disabled,
    ];
    for plan in util::plans() {
        for autoreset in modes {
            let config = CartPoleConfig {
                autoreset,
                max_episode_steps: 3,
                ..CartPoleConfig::default()
            };
            let Ok(mut env) = util::build(5, config, plan) else {
                continue; // a plan this mode does not offer is refused, tested elsewhere
            };
            env.reset(Some(3)).unwrap();
            let actions = vec![1u32; 5 * env.steps_per_call()];
            // The first step allocates the actions' buffer once.
            env.step(&actions).unwrap();
            let before = env.backend().transfers();
            for _ in 0..4 {
                if let Err(error) = env.step(&actions) {
                    // Disabled: stepping an ended episode is refused; nothing else is.
                    assert!(matches!(error, EnvError::Unsupported(_)), "{error}");
                }
            }
            let counted = env.backend().transfers().since(&before);
            assert_eq!(counted, per_host_steps(4), "{plan} {autoreset:?}");
        }
    }
}

#[test]
fn one_read_brings_back_the_same_outputs_as_reading_each_buffer() {
    for plan in util::single_step_plans() {
        let config = CartPoleConfig {
            autoreset: AutoresetMode::SameStep,
            max_episode_steps: 4,
            ..CartPoleConfig::default()
        };
        let mut host = util::env_with(7, config, plan, 5);
        let mut device = util::env_with(7, config, plan, 5);
        for step in 0..9 {
            let actions: Vec<u32> = (0..7).map(|i| ((i + step) % 2) as u32).collect();
            let got = host.step(&actions).unwrap();
            let uploaded = device.upload_actions(&actions).unwrap();
            let backend = device.backend().clone();
            let stepped = device.step_device(&uploaded).unwrap();
            let read = |buffer: &<util::TestBackend as Backend>::Buffer| {
                backend.read_u32(buffer).unwrap()
            };
            let obs: Vec<f32> = read(stepped.obs().unwrap())
                .into_iter()
                .map(f32::from_bits)
                .collect();
            let flags = |b| read(b).into_iter().map(|w| w != 0).collect::<Vec<_>>();
            assert_eq!(got.obs, obs, "{plan} step {step}");
            assert_eq!(got.terminated, flags(stepped.terminated().unwrap()));
            assert_eq!(got.truncated, flags(stepped.truncated().unwrap()));
            let final_obs: Vec<f32> = read(stepped.final_obs().unwrap().unwrap())
                .into_iter()
                .map(f32::from_bits)
                .collect();
            assert_eq!(got.final_obs.unwrap(), final_obs, "{plan} step {step}");
        }
    }
}

#[test]
fn device_actions_are_checked_within_the_outputs_read() {
    for plan in util::single_step_plans() {
        let mut env = util::env_with(4, CartPoleConfig::default(), plan, 0);
        let actions = DeviceActions::from_buffer(env.backend().upload_u32(&[0, 1, 1, 0]));
        // The first step also uploads the step's params.
        env.step_device(&actions).unwrap().to_host().unwrap();
        let before = env.backend().transfers();
        env.step_device(&actions).unwrap().to_host().unwrap();
        let counted = env.backend().transfers().since(&before);
        if counts_transfers() {
            // A planned engine zeroes its flag word before the check kernel; the
            // hand-written step raises its own.
            let writes = u64::from(plan != StepPlan::HandWritten);
            let expected = TransferCounts {
                writes,
                reads: 1,
                copies: 1,
                ..TransferCounts::default()
            };
            assert_eq!(counted, expected, "{plan}");
        }
        let bad = DeviceActions::from_buffer(env.backend().upload_u32(&[0, 9, 1, 0]));
        let error = env.step_device(&bad).unwrap().to_host().unwrap_err();
        assert!(matches!(error, EnvError::InvalidDeviceAction), "{plan}: {error}");
    }
}

#[test]
fn paged_calls_still_read_in_one_round_trip() {
    if !counts_transfers() {
        return;
    }
    // Four steps a call, two a launch: the outputs lie in two pages each.
    let n = 3;
    let plan = StepPlan::Graph(Strategy::FusedSteps(4));
    let config = CartPoleConfig::default();
    let words_per_page = 2 * n * 4;
    let backend = util::backend().with_max_buffer_bytes(4 * words_per_page as u64);
    let mut env = VecEnv::build(backend, config.params, n, config.episode(), plan).unwrap();
    env.reset(Some(1)).unwrap();
    let actions = vec![0u32; 4 * n];
    env.step(&actions).unwrap();
    let before = env.backend().transfers();
    env.step(&actions).unwrap();
    let counted = env.backend().transfers().since(&before);
    // Four outputs of two pages each: eight copies, one wait.
    let expected = TransferCounts {
        writes: 1,
        reads: 1,
        copies: 8,
        ..TransferCounts::default()
    };
    assert_eq!(counted, expected);
}

#[test]
fn host_steps_write_from_host_memory_allocated_once() {
    let n = 64;
    let mut env = util::env_with(n, CartPoleConfig::default(), StepPlan::default(), 2);
    let actions: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    let mut owned = env.owned_outputs();
    let mut out = owned.as_host();
    env.step_into(&actions, &mut out).unwrap();
    let first = env.backend().staging();
    // CUDA keeps a write's bytes until two flushes of its pending-drop queue (64 writes
    // each): past that many steps the slots in use stop growing.
    for _ in 0..200 {
        env.step_into(&actions, &mut out).unwrap();
    }
    let warm = env.backend().staging();
    for _ in 0..100 {
        env.step_into(&actions, &mut out).unwrap();
    }
    let staging = env.backend().staging();
    assert_eq!(staging, warm, "100 host steps allocated host memory");
    match env.backend().runtime_name() {
        "cpu" => assert_eq!(staging, StagingStats::default(), "the CPU writes in place"),
        "cuda" => {
            // Page-locked, and no more slots than the pending-drop queue holds at once (two
            // batches of 64 writes, and the writes in flight).
            assert!(staging.pinned && (1..=160).contains(&staging.slots), "{staging:?}");
        }
        // wgpu copies a write into its own staging at once: the slots of the first step
        // (the actions' among them) serve every later one.
        _ => {
            assert_eq!(staging, first);
            assert!(staging.bytes >= 4 * n as u64 && !staging.pinned, "{staging:?}");
        }
    }
    assert_eq!(staging.writes_past_limits, 0);
}
