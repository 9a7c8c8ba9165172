//! The device-resident sample source on wgpu: burn's `CubeBackend` policy and the env step
//! on one device, against the host source (burn's policy on host observations) with the
//! same learner, weights and draws; the device learner against the native one, and a
//! population whose samples stay on the device against the same rollout read to the host.

use burn::backend::Autodiff;
use burn::backend::wgpu::{WgpuDevice, WgpuRuntime};
use cartfuse::fusion::cube::Cube;
use cartfuse::fusion::cube::device::wgpu_client;
use cartfuse_env::{AutoresetMode, CartPole, EpisodeOptions, StepPlan, VecEnv};
use cartfuse_fusion::rng;
use cartfuse_train::collect::{BurnPolicy, Collector, HostCollector};
use cartfuse_train::device_collect::{DeviceCollector, DeviceLearner};
use cartfuse_train::rollout::{EpisodeReturns, Rollout};
use cartfuse_train::{ActorCritic, PpoConfig, train_device_from, train_from};

use crate::close::assert_close;

type Learner = DeviceLearner<WgpuRuntime>;

/// `n` `CartPole` envs on wgpu whose episodes are cut at 10 steps (truncations to bootstrap).
fn env(n: usize) -> VecEnv<CartPole, Cube<WgpuRuntime>> {
    let opened = wgpu_client().expect("a wgpu adapter (lavapipe on machines without a GPU)");
    let episode = EpisodeOptions {
        autoreset: AutoresetMode::SameStep,
        max_episode_steps: 10,
    };
    let backend = Cube::new(&opened);
    VecEnv::build(
        backend,
        CartPole::default(),
        n,
        episode,
        StepPlan::default(),
    )
    .expect("env")
}

#[test]
fn the_device_source_samples_what_the_host_source_samples() {
    let (n, steps, seed, gamma) = (6, 24, 9, 0.99);
    let device = WgpuDevice::DefaultDevice;
    let policy = BurnPolicy {
        model: ActorCritic::<Learner>::new(4, 2, 8, 3, &device),
        device: device.clone(),
    };
    let key = rng::seed_key(77);
    let mut samples = Vec::new();
    for on_device in [false, true] {
        let mut env = env(n);
        let mut rollout = Rollout::new(n, 4);
        let mut returns = EpisodeReturns::new(n, 100);
        let last_obs = if on_device {
            let mut collector = DeviceCollector::new(&mut env, seed, key, &device).unwrap();
            // Two collects: the second starts from the observations the first left on the
            // device.
            for _ in 0..2 {
                collector
                    .collect(&policy, (steps / 2, gamma), &mut rollout, &mut returns)
                    .unwrap();
            }
            collector.obs().to_vec()
        } else {
            let mut collector = HostCollector::new(&mut env, seed, key).unwrap();
            Collector::<BurnPolicy<Learner>>::collect(
                &mut collector,
                &policy,
                (steps, gamma),
                &mut rollout,
                &mut returns,
            )
            .unwrap();
            Collector::<BurnPolicy<Learner>>::obs(&collector).to_vec()
        };
        samples.push((rollout, returns.finished(), last_obs));
    }
    let [
        (host, host_episodes, host_last),
        (dev, dev_episodes, dev_last),
    ] = &samples[..]
    else {
        unreachable!("two sources");
    };
    assert_eq!(host.len(), n * steps);
    assert_eq!(dev.actions, host.actions, "actions");
    assert_eq!(dev.dones, host.dones, "dones");
    // Episodes of at most 10 steps in 24: every env finished at least two.
    assert!(*host_episodes >= 2 * n as u64, "{host_episodes} episodes");
    assert_eq!(dev_episodes, host_episodes);
    assert!(host.actions.contains(&0) && host.actions.contains(&1));
    assert_close("obs", &dev.obs, &host.obs, 1e-6);
    assert_close("last obs", dev_last, host_last, 1e-6);
    assert_close("log-probs", &dev.log_probs, &host.log_probs, 1e-5);
    assert_close("values", &dev.values, &host.values, 1e-5);
    // Rewards with the truncation bootstrap: some were bootstrapped (not exactly 1).
    assert_close("rewards", &dev.rewards, &host.rewards, 1e-5);
    assert!(
        host.rewards.iter().any(|r| *r != 1.0),
        "a truncation was bootstrapped"
    );
}

#[test]
fn a_device_sourced_update_learns_as_the_host_sourced_one() {
    let config = PpoConfig {
        num_envs: 4,
        num_steps: 16,
        total_env_steps: 64,
        num_minibatches: 2,
        update_epochs: 1,
        target_return: None,
        hidden: 8,
        seed: 5,
        ..PpoConfig::default()
    };
    let device = WgpuDevice::DefaultDevice;
    let model = || ActorCritic::<Autodiff<Learner>>::new(4, 2, 8, config.seed, &device);
    let mut host_env = env(config.num_envs);
    let host = train_from(&mut host_env, &config, model(), &device, |_| {}).unwrap();
    let mut device_env = env(config.num_envs);
    let on_device = train_device_from(&mut device_env, &config, model(), &device, |_| {}).unwrap();
    let (h, d) = (&host.report.history[0], &on_device.report.history[0]);
    assert_eq!(d.env_steps, 64);
    assert_eq!(d.episodes, h.episodes);
    assert!(
        (d.policy_loss - h.policy_loss).abs() < 1e-4,
        "{d:?} vs {h:?}"
    );
    assert!((d.value_loss - h.value_loss).abs() < 1e-3 * h.value_loss.abs().max(1.0));
    assert!((d.entropy - h.entropy).abs() < 1e-4);
}

/// The device learners' updates against the native learner's, from the same weights and
/// samples: burn tensor ops on wgpu (agents a batch dimension) on burn's fusion over
/// `CubeBackend` and on `CubeBackend` alone, and the hand-written kernels (one launch a
/// minibatch step, what `--learner device` learns on).
#[test]
fn the_device_learners_update_as_the_native_learner_on_wgpu() {
    use cartfuse_train::device_fusion::FusedLearner;
    use cartfuse_train::kernel_learner::{KernelLearner, Target};
    use cartfuse_train::tensor_learner::check::{
        difference_from_native, learner_difference_from_native,
    };
    wgpu_client().expect("a wgpu adapter (lavapipe on machines without a GPU)");
    let device = WgpuDevice::default();
    let fused = difference_from_native::<Autodiff<FusedLearner<WgpuRuntime>>>(4, 64, &device);
    let unfused = difference_from_native::<Autodiff<Learner>>(4, 64, &device);
    // The kernels with both layouts (4 groups of 3 rows, 1 of 15), and at a width that
    // is not a power of two nor a multiple of a plane (8 groups of 4 rows, 1 of 4).
    let kernels = |agents, hidden, target| {
        learner_difference_from_native(agents, hidden, |start| {
            KernelLearner::<WgpuRuntime>::new(start, &device, target)
        })
        .expect("kernel update")
    };
    for (name, d) in [
        ("burn fused", fused.expect("fused update")),
        ("burn unfused", unfused.expect("update")),
        ("kernels, GPU layout", kernels(4, 64, Target::Gpu)),
        ("kernels, CPU layout", kernels(4, 64, Target::CpuEmulated)),
        ("kernels, 12 units, GPU layout", kernels(3, 12, Target::Gpu)),
        (
            "kernels, 12 units, CPU layout",
            kernels(3, 12, Target::CpuEmulated),
        ),
    ] {
        eprintln!("{name}: {d:?}");
        assert!(d.weights < 1e-4 && d.losses < 1e-4, "{name}: {d:?}");
        assert!(d.stopped_agent_kept_its_weights, "{d:?}");
        assert!(d.moved > 100.0 * d.weights.max(1e-7), "{d:?}");
    }
}

/// A population's samples kept on the device (the fused rollout's buffers wrapped as burn
/// tensors; bootstrap, GAE and the update there) against the same rollout's samples read
/// to the host (GAE there, then uploaded), both learnt by the device learner: the same
/// episodes, losses and weights. Episodes are cut at 10 steps, so truncations are
/// bootstrapped.
#[test]
fn samples_kept_on_the_device_train_as_the_hosts() {
    use cartfuse_train::device_population::DeviceTensorLearner;
    use cartfuse_train::kernel_learner::KernelLearner;
    samples_kept_on_the_device_train_as_the_hosts_by(|host| {
        DeviceTensorLearner::<WgpuRuntime>::new(host, &WgpuDevice::default())
    });
    samples_kept_on_the_device_train_as_the_hosts_by(|host| {
        let target = cartfuse_train::kernel_learner::Target::Gpu;
        KernelLearner::<WgpuRuntime>::new(host, &WgpuDevice::default(), target)
            .expect("kernel learner")
    });
}

/// [`samples_kept_on_the_device_train_as_the_hosts`] with the learner `make` builds.
fn samples_kept_on_the_device_train_as_the_hosts_by<L>(
    make: impl Fn(cartfuse_train::learner::Learner) -> L,
) where
    L: cartfuse_train::device_population::DeviceResident<WgpuRuntime>,
{
    use cartfuse::fusion::exec::Backend as _;
    use cartfuse::fusion::plan::Strategy;
    use cartfuse_train::device_population::train_population_on_device;
    use cartfuse_train::learner::{Learner as Native, NetShape};
    use cartfuse_train::population::{
        AgentSettings, PopulationConfig, Rollouts, train_population_on,
    };
    let opened = wgpu_client().expect("a wgpu adapter (lavapipe on machines without a GPU)");
    let backend = Cube::new(&opened);
    let episode = EpisodeOptions {
        autoreset: AutoresetMode::SameStep,
        max_episode_steps: 10,
    };
    let shared = PpoConfig {
        num_envs: 4,
        num_steps: 16,
        total_env_steps: 2 * 64,
        num_minibatches: 2,
        update_epochs: 2,
        target_return: None,
        hidden: 16,
        return_window: 8,
        ..PpoConfig::default()
    };
    let base = AgentSettings::of(&shared);
    let agents = vec![
        AgentSettings { seed: 5, ..base },
        AgentSettings {
            seed: 9,
            learning_rate: 3e-3,
            ent_coef: 0.01,
            clip_coef: 0.1,
        },
        AgentSettings { seed: 2, ..base },
    ];
    let config = PopulationConfig { shared, agents };
    let seeds: Vec<u64> = config.agents.iter().map(|a| a.seed).collect();
    let learner = || make(Native::from_seeds(NetShape::new(4, 16, 2), &seeds));
    let strategy = Strategy::FusedSteps(8);
    let env = CartPole::default();
    let (host, host_report) = train_population_on(
        &backend,
        &env,
        &episode,
        Rollouts::Fused(strategy),
        &config,
        learner(),
        |_, _| {},
    )
    .expect("host samples");
    let on_device = |config: &PopulationConfig| {
        let before = backend.transfers();
        let trained = train_population_on_device(
            &backend,
            &env,
            &episode,
            strategy,
            config,
            learner(),
            |_, _| {},
        )
        .expect("device samples");
        (trained, backend.transfers().since(&before))
    };
    let ((device, device_report), counted) = on_device(&config);
    // Nothing crosses between the rollout's host and device per update (the weights go to
    // the rollout on the device; burn's reads of the episode record and loss sums are
    // burn's): one update costs what two do.
    let one_update = PopulationConfig {
        shared: PpoConfig {
            total_env_steps: 64,
            ..config.shared.clone()
        },
        ..config.clone()
    };
    let (_, counted_one) = on_device(&one_update);
    assert_eq!(counted, counted_one, "transfers of two updates and of one");
    let (host, device) = (host.into_host(), device.into_host());
    for agent in 0..seeds.len() {
        let (h, d) = (
            &host_report.agents[agent].history,
            &device_report.agents[agent].history,
        );
        assert_eq!(d.len(), 2, "agent {agent}");
        // Every env truncated at least once in 16 steps: bootstrapped rewards.
        assert!(h[0].episodes >= 4, "agent {agent}: {:?}", h[0]);
        for (u, (d, h)) in d.iter().zip(h).enumerate() {
            let what = format!("agent {agent}, update {u}");
            assert_eq!(
                (d.env_steps, d.episodes),
                (h.env_steps, h.episodes),
                "{what}"
            );
            assert_eq!(d.mean_return, h.mean_return, "{what}");
            for (a, b) in [
                (d.policy_loss, h.policy_loss),
                (d.value_loss, h.value_loss),
                (d.entropy, h.entropy),
            ] {
                assert!(
                    (a - b).abs() <= 1e-4 * b.abs().max(1.0),
                    "{what}: {a} vs {b}"
                );
            }
        }
        assert_close(
            &format!("agent {agent} weights"),
            device.params(agent),
            host.params(agent),
            1e-4,
        );
    }
    let first = Native::from_seeds(NetShape::new(4, 16, 2), &seeds);
    assert_ne!(
        device.params(0),
        first.params(0),
        "the updates moved the weights"
    );
}
