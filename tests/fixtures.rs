//! The trajectories `scripts/record_fixtures.py` recorded from gymnasium 1.4.0 into
//! `tests/fixtures/gymnasium/`, loaded and checked against the environment's declaration.

use cartfuse::env::GraphEnv;
use serde::Deserialize;

/// One fixture file.
#[derive(Debug, Deserialize)]
pub struct Fixture {
    pub gymnasium_version: String,
    pub env_id: String,
    pub max_episode_steps: u32,
    pub episodes: Vec<Episode>,
}

/// One recorded episode (see `scripts/record_fixtures.py`).
#[derive(Debug, Deserialize)]
pub struct Episode {
    pub seed: u64,
    pub initial_state: Vec<f64>,
    pub initial_obs: Vec<f64>,
    pub actions: Vec<f64>,
    pub states: Vec<Vec<f64>>,
    pub obs: Vec<Vec<f64>>,
    pub rewards: Vec<f64>,
    pub terminated: Vec<bool>,
    pub truncated: Vec<bool>,
}

impl Fixture {
    /// Each episode's initial state, one lane each.
    pub fn initial_states(&self) -> Vec<Vec<f64>> {
        self.episodes
            .iter()
            .map(|e| e.initial_state.clone())
            .collect()
    }

    /// Steps of the longest episode.
    pub fn longest_episode(&self) -> usize {
        self.episodes
            .iter()
            .map(|e| e.actions.len())
            .max()
            .unwrap_or(0)
    }
}

impl Episode {
    /// gymnasium's state before step `t`.
    pub fn state_before(&self, t: usize) -> &[f64] {
        if t == 0 {
            &self.initial_state
        } else {
            &self.states[t - 1]
        }
    }
}

/// An action as the fixture records it (an int, or the f32 gymnasium was given).
pub trait Recorded: Copy {
    /// The action the fixture's number stands for.
    fn from_recorded(value: f64) -> Self;
}

impl Recorded for u32 {
    fn from_recorded(value: f64) -> Self {
        value as u32
    }
}

impl Recorded for f32 {
    fn from_recorded(value: f64) -> Self {
        value as f32
    }
}

/// Every environment's recorded episodes, compiled into the test binary, so that it runs
/// where it was not built (`scripts/gpu-check.sh` carries the binary alone to a GPU machine).
const RECORDED: [(&str, &str); 5] = [
    (
        "CartPole-v1",
        include_str!("fixtures/gymnasium/CartPole-v1.json"),
    ),
    (
        "MountainCar-v0",
        include_str!("fixtures/gymnasium/MountainCar-v0.json"),
    ),
    (
        "MountainCarContinuous-v0",
        include_str!("fixtures/gymnasium/MountainCarContinuous-v0.json"),
    ),
    (
        "Acrobot-v1",
        include_str!("fixtures/gymnasium/Acrobot-v1.json"),
    ),
    (
        "Pendulum-v1",
        include_str!("fixtures/gymnasium/Pendulum-v1.json"),
    ),
];

/// `E`'s fixture, checked against `E`'s id, the gymnasium version and the registered limit.
pub fn load<E: GraphEnv>() -> Fixture {
    let path = format!("tests/fixtures/gymnasium/{}.json", E::ID);
    let (_, text) = (RECORDED.iter())
        .find(|(id, _)| *id == E::ID)
        .unwrap_or_else(|| {
            panic!("no {path} in fixtures::RECORDED (run scripts/record_fixtures.py, then list it)")
        });
    let fixture: Fixture = serde_json::from_str(text).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(fixture.env_id, E::ID);
    assert_eq!(fixture.gymnasium_version, "1.4.0");
    assert_eq!(fixture.max_episode_steps, E::MAX_EPISODE_STEPS);
    fixture
}
