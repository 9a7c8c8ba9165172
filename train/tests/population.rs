//! Populations on the native CPU env: agent `i` of a population follows the run it makes
//! alone, per-agent settings are its own, the native learner learns as burn's does, and bad
//! populations are refused by name.

use burn::backend::{Autodiff, NdArray};
use cartfuse_env::{AutoresetMode, CartPole, EpisodeOptions, GraphEnv, StepPlan, VecEnv};
use cartfuse_fusion::cpu::Cpu;
use cartfuse_fusion::plan::Strategy;
use cartfuse_train::learner::{Learner, NetShape};
use cartfuse_train::population::{
    AgentSettings, PopulationConfig, PopulationLearner, PopulationReport, Rollouts,
    train_population_on,
};
use cartfuse_train::tensor_learner::TensorLearner;
use cartfuse_train::{PpoConfig, TrainError, UpdateStats, train};

fn episode() -> EpisodeOptions {
    EpisodeOptions {
        autoreset: AutoresetMode::SameStep,
        ..EpisodeOptions::default_for::<CartPole>()
    }
}

/// `updates` updates of the default settings, no target.
fn shared(updates: u64) -> PpoConfig {
    let config = PpoConfig {
        target_return: None,
        ..PpoConfig::default()
    };
    PpoConfig {
        total_env_steps: updates * config.batch_size() as u64,
        ..config
    }
}

fn run(config: &PopulationConfig, rollouts: Rollouts) -> (Learner, PopulationReport) {
    run_with(config, rollouts, |learner| learner)
}

/// `config`'s population trained by the learner `learner` makes of its agents' first
/// weights.
fn run_with<L: PopulationLearner>(
    config: &PopulationConfig,
    rollouts: Rollouts,
    learner: impl FnOnce(Learner) -> L,
) -> (Learner, PopulationReport) {
    let seeds: Vec<u64> = config.agents.iter().map(|a| a.seed).collect();
    let shape = NetShape::new(CartPole::OBS_DIM, config.shared.hidden, 2);
    let learner = learner(Learner::from_seeds(shape, &seeds));
    let (learner, report) = train_population_on(
        &Cpu::default(),
        &CartPole::default(),
        &episode(),
        rollouts,
        config,
        learner,
        |_, _| {},
    )
    .expect("train");
    (learner.into_host(), report)
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-5 * b.abs().max(1.0)
}

fn assert_same_history(got: &[UpdateStats], want: &[UpdateStats], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want) {
        let update = w.update;
        assert_eq!(
            (g.env_steps, g.episodes, g.mean_return),
            (w.env_steps, w.episodes, w.mean_return),
            "{what}, update {update}"
        );
        for (a, b) in [
            (g.policy_loss, w.policy_loss),
            (g.value_loss, w.value_loss),
            (g.entropy, w.entropy),
        ] {
            assert!(close(a, b), "{what}, update {update}: {a} vs {b}");
        }
    }
}

/// Three agents, the second with its own learning rate, entropy coefficient and clip range.
fn three_agents(updates: u64) -> PopulationConfig {
    let shared = shared(updates);
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
    PopulationConfig { shared, agents }
}

/// The tensor learner (here on NdArray; on a device with `--learner device`) on the host
/// rollouts of three agents.
fn run_tensor(config: &PopulationConfig) -> (Learner, PopulationReport) {
    let host = Rollouts::Host(StepPlan::default());
    run_with(config, host, |learner| {
        TensorLearner::<Autodiff<NdArray>>::new(learner, &Default::default())
    })
}

#[test]
fn the_tensor_learner_trains_each_agent_as_alone_and_as_the_native_learner() {
    let config = three_agents(3);
    let (population, report) = run_tensor(&config);
    let (native, native_report) = run(&config, Rollouts::Host(StepPlan::default()));
    for (i, settings) in config.agents.iter().enumerate() {
        let alone = PopulationConfig {
            shared: config.agent_config(i),
            agents: vec![*settings],
        };
        let (single, single_report) = run_tensor(&alone);
        let what = format!("tensor learner, agent {i}");
        let history = &report.agents[i].history;
        assert_same_history(history, &single_report.agents[0].history, &what);
        assert_same_history(history, &native_report.agents[i].history, &what);
        for (want, of) in [(single.params(0), "alone"), (native.params(i), "native")] {
            let largest = population
                .params(i)
                .iter()
                .zip(want)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(largest < 1e-4, "{what}: weights {largest} from {of}");
        }
    }
    assert_ne!(population.params(0), population.params(2));
}

#[test]
fn agent_i_of_a_population_follows_its_run_alone() {
    let config = three_agents(3);
    for rollouts in [
        Rollouts::Host(StepPlan::default()),
        Rollouts::Fused(Strategy::FusedSteps(8)),
    ] {
        let (population, report) = run(&config, rollouts);
        for (i, settings) in config.agents.iter().enumerate() {
            let alone = PopulationConfig {
                shared: config.agent_config(i),
                agents: vec![*settings],
            };
            let (single, single_report) = run(&alone, rollouts);
            let what = format!("{rollouts:?}, agent {i}");
            assert_same_history(
                &report.agents[i].history,
                &single_report.agents[0].history,
                &what,
            );
            let (got, want) = (population.params(i), single.params(0));
            assert!(
                got.iter().zip(want).all(|(a, b)| close(*a, *b)),
                "{what}: weights differ"
            );
        }
        // The agents are not one agent three times.
        let first = |i: usize| report.agents[i].history[0].policy_loss;
        assert!(first(0) != first(1) && first(0) != first(2) && first(1) != first(2));
        assert_ne!(population.params(0), population.params(2));
    }
}

#[test]
fn the_native_learner_learns_as_burns_does() {
    // The first update of seed 3 from both learners: the same samples (the policies agree
    // to ~1e-7, so they draw the same actions), and losses within float rounding.
    let config = shared(1);
    let population = PopulationConfig::uniform(
        PpoConfig {
            seed: 3,
            ..config.clone()
        },
        1,
    );
    let (_, native) = run(&population, Rollouts::Host(StepPlan::default()));
    let mut env = VecEnv::build(
        Cpu::default(),
        CartPole::default(),
        config.num_envs,
        episode(),
        StepPlan::default(),
    )
    .expect("env");
    let burn = train::<Autodiff<NdArray>, _, _>(
        &mut env,
        &population.agent_config(0),
        &Default::default(),
        |_| {},
    )
    .expect("train")
    .report;
    let (n, b) = (&native.agents[0].history[0], &burn.history[0]);
    assert_eq!((n.episodes, n.mean_return), (b.episodes, b.mean_return));
    for (x, y) in [
        (n.policy_loss, b.policy_loss),
        (n.value_loss, b.value_loss),
        (n.entropy, b.entropy),
    ] {
        assert!((x - y).abs() <= 1e-4 * y.abs().max(1.0), "{x} vs {y}");
    }

    // 120 updates: far beyond a random policy (~22 steps an episode), as burn's test asks.
    let (_, long) = run(
        &PopulationConfig::uniform(shared(120), 1),
        Rollouts::Host(StepPlan::default()),
    );
    let last = long.agents[0].final_mean_return.expect("episodes finished");
    assert!(last > 120.0, "mean return after 120 updates: {last}");
}

#[test]
fn a_population_stops_each_agent_at_its_target() {
    // A target every agent reaches within a few updates: each stops at its own update.
    let config = PopulationConfig {
        shared: PpoConfig {
            target_return: Some(30.0),
            return_window: 10,
            ..shared(40)
        },
        ..three_agents(40)
    };
    let (_, report) = run(&config, Rollouts::Host(StepPlan::default()));
    assert_eq!(report.reached_target(), 3);
    let summary = report.summary();
    assert_eq!(summary.agents, 3);
    assert_eq!(summary.seeds, [5, 9, 2]);
    for (i, agent) in report.agents.iter().enumerate() {
        let solved = agent.solved.as_ref().expect("solved");
        assert_eq!(agent.env_steps, solved.env_steps, "agent {i} stopped there");
        assert_eq!(summary.env_steps_to_target[i], Some(solved.env_steps));
        let last = agent.history.last().unwrap();
        assert!(last.mean_return.unwrap() >= 30.0);
        assert_eq!(agent.history.len() as u64 * 256, agent.env_steps);
    }
    assert!(summary.seconds_total >= summary.seconds_to_target[0].unwrap());
}

#[test]
fn bad_populations_are_refused_by_name() {
    let refused = |config: &PopulationConfig, learner: Learner, episode: EpisodeOptions| {
        match train_population_on(
            &Cpu::default(),
            &CartPole::default(),
            &episode,
            Rollouts::Host(StepPlan::default()),
            config,
            learner,
            |_, _| {},
        ) {
            Err(TrainError::InvalidConfig { setting, reason }) => format!("{setting}: {reason}"),
            Err(other) => panic!("expected a refusal, got {other}"),
            Ok(_) => panic!("expected a refusal"),
        }
    };
    let shape = NetShape::new(4, 64, 2);
    let config = three_agents(1);
    let learner = || Learner::from_seeds(shape, &[5, 9, 2]);
    let empty = PopulationConfig {
        agents: Vec::new(),
        ..config.clone()
    };
    assert!(refused(&empty, learner(), episode()).starts_with("agents"));
    let mut bad_lr = config.clone();
    bad_lr.agents[1].learning_rate = -1.0;
    let why = refused(&bad_lr, learner(), episode());
    assert!(
        why.starts_with("learning_rate") && why.contains("agent 1"),
        "{why}"
    );
    let two = Learner::from_seeds(shape, &[5, 9]);
    assert!(refused(&config, two, episode()).starts_with("agents"));
    let next_step = EpisodeOptions {
        autoreset: AutoresetMode::NextStep,
        ..episode()
    };
    assert!(refused(&config, learner(), next_step).starts_with("env"));
    let wrong_obs = Learner::from_seeds(NetShape::new(6, 64, 2), &[5, 9, 2]);
    assert!(refused(&config, wrong_obs, episode()).starts_with("env"));
}
