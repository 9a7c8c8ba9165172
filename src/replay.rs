//! Replaying recorded episodes: each episode runs in its own lane from its initial state,
//! with autoreset off, following its actions, and stops at its first termination or
//! truncation (or when its actions run out). Any registered environment: the initial state
//! is its internal state in the order of gymnasium's `env.unwrapped.state`, the actions of
//! its action type.

use serde_json::Value;

use crate::{AutoresetMode, EnvError, StepPlan};
use cartfuse_env::spaces::{ActionSpace, describe_action_space};
use cartfuse_env::{EnvBackend, EpisodeOptions, GraphEnv, VecEnv};

/// One episode to replay.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayEpisode<A> {
    /// The environment's state before the first action ([`GraphEnv::STATE`] order).
    pub initial_state: Vec<f64>,
    /// Actions, each in the action space.
    pub actions: Vec<A>,
}

/// What one replayed episode produced, one entry per step taken.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct ReplayedEpisode {
    /// Observation after each step.
    pub observations: Vec<Vec<f32>>,
    /// Reward of each step.
    pub rewards: Vec<f32>,
    /// Termination flag of each step.
    pub terminated: Vec<bool>,
    /// Truncation flag of each step.
    pub truncated: Vec<bool>,
}

/// The replay output document.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct ReplayOutput {
    /// One entry per input episode, in input order.
    pub episodes: Vec<ReplayedEpisode>,
}

/// Malformed replay input, naming the episode and field.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// Not JSON at all (the parser's message is the source: `{:#}` prints it once).
    #[error("replay input is not valid JSON")]
    Json(#[from] serde_json::Error),
    /// The document's top level is wrong.
    #[error("replay input: {0}")]
    Document(String),
    /// One episode's field is wrong.
    #[error("episode {episode}, field `{field}`: {problem}")]
    Field {
        /// Index of the episode in `episodes`.
        episode: usize,
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// The env rejected the replay.
    #[error(transparent)]
    Env(#[from] EnvError),
}

/// An action as JSON writes it: an integer for discrete spaces, a number for boxes.
pub trait JsonAction: Sized {
    /// The action `value` holds, if it is of this type.
    fn from_json(value: &Value) -> Option<Self>;
}

impl JsonAction for u32 {
    fn from_json(value: &Value) -> Option<Self> {
        value.as_u64().and_then(|v| u32::try_from(v).ok())
    }
}

impl JsonAction for f32 {
    fn from_json(value: &Value) -> Option<Self> {
        value.as_f64().map(|v| v as f32)
    }
}

/// What an action of `space` must be, for error messages.
fn expected_action(space: &ActionSpace) -> String {
    match space {
        ActionSpace::Discrete(space) if space.n == 2 => "expected 0 or 1".into(),
        ActionSpace::Discrete(space) => {
            format!("expected an integer from 0 to {}", space.n - 1)
        }
        ActionSpace::Box(_) => format!(
            "expected a finite number (clipped into {})",
            describe_action_space(space)
        ),
    }
}

/// Parses `{"episodes":[{"initial_state":[...],"actions":[...]}]}` for `env`.
pub fn parse_replay_input<E: GraphEnv>(
    env: &E,
    text: &str,
) -> Result<Vec<ReplayEpisode<E::Action>>, ReplayError>
where
    E::Action: JsonAction,
{
    let document: Value = serde_json::from_str(text)?;
    let episodes = document
        .get("episodes")
        .ok_or_else(|| ReplayError::Document("missing top-level field `episodes`".into()))?
        .as_array()
        .ok_or_else(|| ReplayError::Document("`episodes` must be an array".into()))?;
    if episodes.is_empty() {
        return Err(ReplayError::Document(
            "`episodes` is empty: nothing to replay".into(),
        ));
    }
    episodes
        .iter()
        .enumerate()
        .map(|(episode, value)| parse_episode(env, episode, value))
        .collect()
}

fn parse_episode<E: GraphEnv>(
    env: &E,
    episode: usize,
    value: &Value,
) -> Result<ReplayEpisode<E::Action>, ReplayError>
where
    E::Action: JsonAction,
{
    let field_error = |field, problem: String| ReplayError::Field {
        episode,
        field,
        problem,
    };
    let object = value.as_object().ok_or_else(|| {
        ReplayError::Document(format!(
            "episode {episode} must be an object with `initial_state` and `actions`"
        ))
    })?;
    let k = E::STATE.len();
    let names = E::STATE.join(", ");
    let state = object
        .get("initial_state")
        .ok_or_else(|| field_error("initial_state", "missing".into()))?
        .as_array()
        .ok_or_else(|| field_error("initial_state", format!("must be an array of {k} numbers")))?;
    if state.len() != k {
        return Err(field_error(
            "initial_state",
            format!("must hold {k} numbers [{names}], found {}", state.len()),
        ));
    }
    let initial_state = state
        .iter()
        .enumerate()
        .map(|(i, value)| {
            value.as_f64().filter(|v| v.is_finite()).ok_or_else(|| {
                field_error(
                    "initial_state",
                    format!("element {i} is {value}, expected a finite number"),
                )
            })
        })
        .collect::<Result<_, _>>()?;
    let expected = expected_action(&env.action_space());
    let actions = object
        .get("actions")
        .ok_or_else(|| field_error("actions", "missing".into()))?
        .as_array()
        .ok_or_else(|| field_error("actions", format!("must be an array: {expected}")))?
        .iter()
        .enumerate()
        .map(|(i, value)| match E::Action::from_json(value) {
            Some(action) if env.action_is_valid(action) => Ok(action),
            _ => Err(field_error(
                "actions",
                format!("element {i} is {value}, {expected}"),
            )),
        })
        .collect::<Result<_, _>>()?;
    Ok(ReplayEpisode {
        initial_state,
        actions,
    })
}

/// Replays every episode in its own lane of one vector env of `env` on `backend`, with
/// autoreset off; episodes are truncated after `max_episode_steps`.
pub fn replay<E: GraphEnv, B: EnvBackend>(
    backend: B,
    env: E,
    max_episode_steps: u32,
    episodes: &[ReplayEpisode<E::Action>],
) -> Result<ReplayOutput, ReplayError> {
    let episode = EpisodeOptions {
        autoreset: AutoresetMode::Disabled,
        max_episode_steps,
    };
    let n = episodes.len();
    let mut env = VecEnv::build(backend, env, n, episode, StepPlan::default())?;
    env.reset(Some(0))?;
    let initial: Vec<Vec<f64>> = episodes.iter().map(|e| e.initial_state.clone()).collect();
    env.set_state(&initial)?;
    let mut outputs = vec![ReplayedEpisode::default(); n];
    let mut active: Vec<bool> = episodes.iter().map(|e| !e.actions.is_empty()).collect();
    let idle = env.env().pattern_action(0);
    let mut actions = vec![idle; n];
    let mut t = 0;
    while active.iter().any(|a| *a) {
        for (i, episode) in episodes.iter().enumerate() {
            actions[i] = if active[i] { episode.actions[t] } else { idle };
        }
        let out = env.step(&actions)?;
        for i in 0..n {
            if !active[i] {
                continue;
            }
            let record = &mut outputs[i];
            record.observations.push(out.obs_row(i).to_vec());
            record.rewards.push(out.reward[i]);
            record.terminated.push(out.terminated[i]);
            record.truncated.push(out.truncated[i]);
            active[i] =
                !(out.terminated[i] || out.truncated[i]) && t + 1 < episodes[i].actions.len();
        }
        t += 1;
    }
    Ok(ReplayOutput { episodes: outputs })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cartfuse_env::CartPole;
    use cartfuse_env::pendulum::Pendulum;

    fn error_of(text: &str) -> String {
        parse_replay_input(&CartPole::default(), text)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn parses_a_valid_document() {
        let episodes = parse_replay_input(
            &CartPole::default(),
            r#"{"episodes":[{"initial_state":[0.1,0,-0.02,0.5],"actions":[0,1,1]}]}"#,
        )
        .unwrap();
        assert_eq!(episodes.len(), 1);
        assert_eq!(episodes[0].actions, vec![0, 1, 1]);
        assert_eq!(episodes[0].initial_state, vec![0.1, 0.0, -0.02, 0.5]);
    }

    #[test]
    fn malformed_input_names_episode_and_field() {
        let ok = r#"{"initial_state":[0,0,0,0],"actions":[0]}"#;
        assert_eq!(
            error_of(&format!(
                r#"{{"episodes":[{ok},{{"initial_state":[0,0,0],"actions":[]}}]}}"#
            )),
            "episode 1, field `initial_state`: must hold 4 numbers [x, x_dot, theta, theta_dot], found 3"
        );
        assert_eq!(
            error_of(r#"{"episodes":[{"initial_state":[0,0,0,0],"actions":[0,2]}]}"#),
            "episode 0, field `actions`: element 1 is 2, expected 0 or 1"
        );
        assert_eq!(
            error_of(r#"{"episodes":[{"initial_state":[0,0,"a",0],"actions":[]}]}"#),
            "episode 0, field `initial_state`: element 2 is \"a\", expected a finite number"
        );
        assert_eq!(
            error_of(r#"{"episodes":[{"actions":[]}]}"#),
            "episode 0, field `initial_state`: missing"
        );
        assert!(error_of(r#"{"runs":[]}"#).contains("missing top-level field `episodes`"));
        assert!(error_of(r#"{"episodes":[]}"#).contains("nothing to replay"));
        assert!(error_of("not json").contains("not valid JSON"));
    }

    #[test]
    fn any_environment_takes_its_own_state_and_actions() {
        let episodes = parse_replay_input(
            &Pendulum::default(),
            r#"{"episodes":[{"initial_state":[3.0,-0.5],"actions":[2.5,-0.25]}]}"#,
        )
        .unwrap();
        assert_eq!(episodes[0].actions, vec![2.5f32, -0.25]);
        let error = parse_replay_input(
            &Pendulum::default(),
            r#"{"episodes":[{"initial_state":[3.0,-0.5,1.0],"actions":[]}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            error,
            "episode 0, field `initial_state`: must hold 2 numbers [theta, theta_dot], found 3"
        );
    }
}
