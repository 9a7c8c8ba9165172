//! Observation and action spaces, described as gymnasium declares them for CartPole-v1.

/// A box of `f32` values with per-component bounds (gymnasium `Box`).
#[derive(Debug, Clone, PartialEq)]
pub struct BoxSpace {
    /// Shape, outermost first.
    pub shape: Vec<usize>,
    /// Lower bound per component of one row.
    pub low: Vec<f32>,
    /// Upper bound per component of one row.
    pub high: Vec<f32>,
}

/// A discrete space `{0, ..., n - 1}`, batched over `shape` (gymnasium `Discrete` /
/// `MultiDiscrete`).
#[derive(Debug, Clone, PartialEq)]
pub struct DiscreteSpace {
    /// Shape of a batch of actions (`[]` for one env).
    pub shape: Vec<usize>,
    /// Number of actions.
    pub n: u32,
}

/// The observation space of one CartPole env: gymnasium's
/// `Box(-high, high)` with `high = [2 x_threshold, f32::MAX, 2 theta_threshold, f32::MAX]`.
pub fn single_observation_space(x_threshold: f64, theta_threshold: f64) -> BoxSpace {
    let high = vec![
        (2.0 * x_threshold) as f32,
        f32::MAX,
        (2.0 * theta_threshold) as f32,
        f32::MAX,
    ];
    BoxSpace {
        shape: vec![4],
        low: high.iter().map(|h| -h).collect(),
        high,
    }
}

/// The action space of one CartPole env: `Discrete(2)`.
pub fn single_action_space() -> DiscreteSpace {
    DiscreteSpace {
        shape: vec![],
        n: 2,
    }
}

/// Prepends the batch dimension `num_envs` to a single-env space.
pub fn batched_box(single: BoxSpace, num_envs: usize) -> BoxSpace {
    let mut shape = vec![num_envs];
    shape.extend(single.shape);
    BoxSpace { shape, ..single }
}

/// Prepends the batch dimension `num_envs` to a single-env discrete space.
pub fn batched_discrete(single: DiscreteSpace, num_envs: usize) -> DiscreteSpace {
    let mut shape = vec![num_envs];
    shape.extend(single.shape);
    DiscreteSpace { shape, ..single }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observation_bounds_match_gymnasium() {
        let space = single_observation_space(2.4, 12.0 * 2.0 * std::f64::consts::PI / 360.0);
        assert_eq!(space.high[0], 4.8);
        assert_eq!(space.high[1], f32::MAX);
        assert!((space.high[2] - 0.418_879).abs() < 1e-6);
        assert_eq!(space.low[3], -f32::MAX);
        let batched = batched_box(space, 8);
        assert_eq!(batched.shape, vec![8, 4]);
        assert_eq!(batched_discrete(single_action_space(), 8).shape, vec![8]);
    }
}
