//! CartPole-v1 physical parameters and the environment configuration.

use crate::error::EnvError;
pub use crate::params::AutoresetMode;

/// Physical constants of CartPole-v1, with gymnasium's defaults.
///
/// Derived quantities (`total_mass`, `polemass_length`) are computed from these, as
/// gymnasium does, so changing a mass changes them consistently.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CartPoleParams {
    /// Gravitational acceleration (m/s^2).
    pub gravity: f64,
    /// Mass of the cart (kg).
    pub masscart: f64,
    /// Mass of the pole (kg).
    pub masspole: f64,
    /// Half the pole's length (m).
    pub length: f64,
    /// Magnitude of the push applied by an action (N).
    pub force_mag: f64,
    /// Seconds between state updates (Euler integration step).
    pub tau: f64,
    /// The episode terminates when `|x|` exceeds this (m).
    pub x_threshold: f64,
    /// The episode terminates when `|theta|` exceeds this (rad).
    pub theta_threshold_radians: f64,
    /// Resets draw every state component uniformly from `[-reset_bound, reset_bound)`.
    pub reset_bound: f64,
    /// gymnasium's `sutton_barto_reward`: 0 a step and -1 on termination, instead of 1 on
    /// every step.
    #[serde(default)]
    pub sutton_barto_reward: bool,
}

impl Default for CartPoleParams {
    fn default() -> Self {
        Self {
            gravity: 9.8,
            masscart: 1.0,
            masspole: 0.1,
            length: 0.5,
            force_mag: 10.0,
            tau: 0.02,
            x_threshold: 2.4,
            theta_threshold_radians: 12.0 * 2.0 * std::f64::consts::PI / 360.0,
            reset_bound: 0.05,
            sutton_barto_reward: false,
        }
    }
}

impl CartPoleParams {
    /// Cart plus pole mass.
    pub fn total_mass(&self) -> f64 {
        self.masspole + self.masscart
    }

    /// Pole mass times half its length.
    pub fn polemass_length(&self) -> f64 {
        self.masspole * self.length
    }

    /// The reward of a step that did not terminate, and of the step that did (gymnasium:
    /// 1 and 1; with `sutton_barto_reward`, 0 and -1).
    pub fn rewards(&self) -> (f64, f64) {
        match self.sutton_barto_reward {
            true => (0.0, -1.0),
            false => (1.0, 1.0),
        }
    }

    /// Checks that every value is finite and the physical ones are positive.
    pub fn validate(&self) -> Result<(), EnvError> {
        let fields = [
            ("gravity", self.gravity, false),
            ("masscart", self.masscart, true),
            ("masspole", self.masspole, true),
            ("length", self.length, true),
            ("force_mag", self.force_mag, true),
            ("tau", self.tau, true),
            ("x_threshold", self.x_threshold, true),
            (
                "theta_threshold_radians",
                self.theta_threshold_radians,
                true,
            ),
            ("reset_bound", self.reset_bound, true),
        ];
        for (name, value, must_be_positive) in fields {
            if !value.is_finite() || (must_be_positive && value <= 0.0) {
                let expected = if must_be_positive {
                    "a finite number > 0"
                } else {
                    "a finite number"
                };
                return Err(EnvError::InvalidParam {
                    name,
                    value,
                    expected,
                });
            }
        }
        Ok(())
    }
}

/// Everything a [`CartPoleVecEnv`](crate::CartPoleVecEnv) is built from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CartPoleConfig {
    /// Physical constants.
    pub params: CartPoleParams,
    /// How finished episodes restart.
    pub autoreset: AutoresetMode,
    /// An episode is truncated when it has run this many steps (gymnasium: 500).
    pub max_episode_steps: u32,
}

impl Default for CartPoleConfig {
    fn default() -> Self {
        Self {
            params: CartPoleParams::default(),
            autoreset: AutoresetMode::NextStep,
            max_episode_steps: 500,
        }
    }
}

impl CartPoleConfig {
    /// Validates the params and the episode limit.
    pub fn validate(&self) -> Result<(), EnvError> {
        self.params.validate()?;
        if self.max_episode_steps == 0 {
            return Err(EnvError::InvalidMaxEpisodeSteps);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_gymnasium_cartpole_v1() {
        let params = CartPoleParams::default();
        assert_eq!(params.total_mass(), 1.1);
        assert!((params.polemass_length() - 0.05).abs() < 1e-15);
        assert!((params.theta_threshold_radians - 0.209_439_510_239_319_5).abs() < 1e-15);
        assert_eq!(CartPoleConfig::default().max_episode_steps, 500);
        assert!(CartPoleConfig::default().validate().is_ok());
    }

    #[test]
    fn invalid_params_name_the_field() {
        let bad = CartPoleParams {
            masspole: 0.0,
            ..Default::default()
        };
        let error = bad.validate().unwrap_err().to_string();
        assert!(error.contains("masspole"), "{error}");
        let bad = CartPoleParams {
            gravity: f64::NAN,
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("gravity"));
        let negative_gravity = CartPoleParams {
            gravity: -9.8,
            ..Default::default()
        };
        assert!(negative_gravity.validate().is_ok());
        let bad = CartPoleConfig {
            max_episode_steps: 0,
            ..Default::default()
        };
        assert!(matches!(
            bad.validate(),
            Err(EnvError::InvalidMaxEpisodeSteps)
        ));
    }
}
