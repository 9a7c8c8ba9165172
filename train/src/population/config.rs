//! [`PopulationConfig`]: the settings a population shares (a [`PpoConfig`]) and the ones each
//! agent has for itself ([`AgentSettings`]: seed, learning rate, entropy coefficient and
//! clip range), so a small sweep is one run.

use crate::config::PpoConfig;
use crate::error::TrainError;

/// What one agent of a population has for itself.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct AgentSettings {
    /// Seed of its weights, envs, action draws and minibatch order.
    pub seed: u64,
    /// Adam's learning rate at the start (annealed as [`PpoConfig::anneal_lr`] says).
    pub learning_rate: f64,
    /// Weight of the entropy bonus.
    pub ent_coef: f32,
    /// PPO's ratio clip.
    pub clip_coef: f32,
}

impl AgentSettings {
    /// The agent `config` describes alone.
    pub fn of(config: &PpoConfig) -> Self {
        Self {
            seed: config.seed,
            learning_rate: config.learning_rate,
            ent_coef: config.ent_coef,
            clip_coef: config.clip_coef,
        }
    }

    /// `shared` with this agent's own settings: the run it would make alone.
    pub fn apply(&self, shared: &PpoConfig) -> PpoConfig {
        PpoConfig {
            seed: self.seed,
            learning_rate: self.learning_rate,
            ent_coef: self.ent_coef,
            clip_coef: self.clip_coef,
            ..shared.clone()
        }
    }
}

/// A population of PPO agents trained together.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PopulationConfig {
    /// Every shared setting (its seed, learning rate, entropy coefficient and clip range are
    /// the defaults [`Self::uniform`] gives each agent).
    pub shared: PpoConfig,
    /// One entry per agent.
    pub agents: Vec<AgentSettings>,
}

impl PopulationConfig {
    /// `count` agents seeded `shared.seed`, `shared.seed + 1`, ..., each with `shared`'s
    /// other settings.
    pub fn uniform(shared: PpoConfig, count: usize) -> Self {
        let base = AgentSettings::of(&shared);
        let agents = (0..count as u64)
            .map(|i| AgentSettings {
                seed: base.seed.wrapping_add(i),
                ..base
            })
            .collect();
        Self { shared, agents }
    }

    /// The config agent `agent` would train with alone.
    pub fn agent_config(&self, agent: usize) -> PpoConfig {
        self.agents[agent].apply(&self.shared)
    }

    /// Refuses an empty population and any agent's settings PPO cannot run with.
    pub fn validate(&self) -> Result<(), TrainError> {
        if self.agents.is_empty() {
            return Err(TrainError::InvalidConfig {
                setting: "agents",
                reason: "a population needs at least one agent".into(),
            });
        }
        self.shared.validate()?;
        for agent in 0..self.agents.len() {
            self.agent_config(agent).validate().map_err(|e| match e {
                TrainError::InvalidConfig { setting, reason } => TrainError::InvalidConfig {
                    setting,
                    reason: format!("agent {agent}: {reason}"),
                },
                other => other,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_take_consecutive_seeds_and_are_checked_one_by_one() {
        let shared = PpoConfig {
            seed: 7,
            ..PpoConfig::default()
        };
        let mut config = PopulationConfig::uniform(shared.clone(), 3);
        let seeds: Vec<u64> = config.agents.iter().map(|a| a.seed).collect();
        assert_eq!(seeds, [7, 8, 9]);
        assert_eq!(config.agent_config(0), shared);
        assert!(config.validate().is_ok());
        config.agents[2].clip_coef = -1.0;
        let err = config.validate().unwrap_err().to_string();
        assert!(
            err.contains("clip_coef") && err.contains("agent 2"),
            "{err}"
        );
        let empty = PopulationConfig::uniform(shared, 0);
        assert!(empty.validate().unwrap_err().to_string().contains("agents"));
    }
}
