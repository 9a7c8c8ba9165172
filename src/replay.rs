//! Replaying recorded episodes: each episode runs in its own lane from its initial state,
//! with autoreset off, following its actions, and stops at its first termination or
//! truncation (or when its actions run out).

use serde_json::Value;

use crate::{AutoresetMode, CartPoleConfig, CartPoleState, EnvError, StepPlan};
use cartfuse_env::{EnvBackend, VecEnv};

/// One episode to replay.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayEpisode {
    /// `[x, x_dot, theta, theta_dot]` before the first action.
    pub initial_state: CartPoleState,
    /// Actions, each 0 or 1.
    pub actions: Vec<u32>,
}

/// What one replayed episode produced, one entry per step taken.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct ReplayedEpisode {
    /// Observation after each step.
    pub observations: Vec<[f32; 4]>,
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
    /// Not JSON at all.
    #[error("replay input is not valid JSON: {0}")]
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

/// Parses `{"episodes":[{"initial_state":[x,x_dot,theta,theta_dot],"actions":[0,1,...]}]}`.
pub fn parse_replay_input(text: &str) -> Result<Vec<ReplayEpisode>, ReplayError> {
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
        .map(|(episode, value)| parse_episode(episode, value))
        .collect()
}

fn parse_episode(episode: usize, value: &Value) -> Result<ReplayEpisode, ReplayError> {
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
    let state = object
        .get("initial_state")
        .ok_or_else(|| field_error("initial_state", "missing".into()))?
        .as_array()
        .ok_or_else(|| field_error("initial_state", "must be an array of 4 numbers".into()))?;
    if state.len() != 4 {
        return Err(field_error(
            "initial_state",
            format!(
                "must hold 4 numbers [x, x_dot, theta, theta_dot], found {}",
                state.len()
            ),
        ));
    }
    let mut components = [0.0; 4];
    for (k, (slot, value)) in components.iter_mut().zip(state).enumerate() {
        *slot = value.as_f64().filter(|v| v.is_finite()).ok_or_else(|| {
            field_error(
                "initial_state",
                format!("element {k} is {value}, expected a finite number"),
            )
        })?;
    }
    let actions = object
        .get("actions")
        .ok_or_else(|| field_error("actions", "missing".into()))?
        .as_array()
        .ok_or_else(|| field_error("actions", "must be an array of 0s and 1s".into()))?
        .iter()
        .enumerate()
        .map(|(k, value)| match value.as_u64() {
            Some(action @ (0 | 1)) => Ok(action as u32),
            _ => Err(field_error(
                "actions",
                format!("element {k} is {value}, expected 0 or 1"),
            )),
        })
        .collect::<Result<_, _>>()?;
    Ok(ReplayEpisode {
        initial_state: CartPoleState::from_array(components),
        actions,
    })
}

/// Replays every episode in its own lane of one vector env on `backend`.
///
/// `config.autoreset` is forced to [`AutoresetMode::Disabled`]; `config.max_episode_steps`
/// still truncates.
pub fn replay<B: EnvBackend>(
    backend: B,
    config: CartPoleConfig,
    episodes: &[ReplayEpisode],
) -> Result<ReplayOutput, ReplayError> {
    let config = CartPoleConfig {
        autoreset: AutoresetMode::Disabled,
        ..config
    };
    let n = episodes.len();
    let mut env = VecEnv::build(
        backend,
        config.params,
        n,
        config.episode(),
        StepPlan::default(),
    )?;
    env.reset(Some(0))?;
    let initial: Vec<Vec<f64>> = episodes
        .iter()
        .map(|e| e.initial_state.to_array().to_vec())
        .collect();
    env.set_state(&initial)?;
    let mut outputs = vec![ReplayedEpisode::default(); n];
    let mut active: Vec<bool> = episodes.iter().map(|e| !e.actions.is_empty()).collect();
    let mut actions = vec![0u32; n];
    let mut t = 0;
    while active.iter().any(|a| *a) {
        for (i, episode) in episodes.iter().enumerate() {
            actions[i] = if active[i] { episode.actions[t] } else { 0 };
        }
        let out = env.step(&actions)?;
        for i in 0..n {
            if !active[i] {
                continue;
            }
            let record = &mut outputs[i];
            let row = out.obs_row(i);
            record.observations.push([row[0], row[1], row[2], row[3]]);
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

    fn error_of(text: &str) -> String {
        parse_replay_input(text).unwrap_err().to_string()
    }

    #[test]
    fn parses_a_valid_document() {
        let episodes = parse_replay_input(
            r#"{"episodes":[{"initial_state":[0.1,0,-0.02,0.5],"actions":[0,1,1]}]}"#,
        )
        .unwrap();
        assert_eq!(episodes.len(), 1);
        assert_eq!(episodes[0].actions, vec![0, 1, 1]);
        assert_eq!(episodes[0].initial_state.theta_dot, 0.5);
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
}
