//! Options every environment shares: how a vector env restarts finished episodes.

/// What happens when an episode ends inside a vector env.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum AutoresetMode {
    /// gymnasium 1.x vector default: the step after a done resets that env, ignores its
    /// action and returns reward 0 with `terminated = truncated = false`.
    #[default]
    NextStep,
    /// gymnax: a done env is reset in the same step; its last observation is returned as
    /// the final observation beside the new one.
    SameStep,
    /// No automatic reset: a done env keeps integrating until the caller resets or
    /// overwrites it (used by replay, where each lane stops at its first done).
    Disabled,
}

impl AutoresetMode {
    /// Every mode with its name and what it does: the one list the CLI's `--autoreset`
    /// offers (the Python package speaks gymnasium's `AutoresetMode` names, which
    /// [`str::parse`] also accepts).
    pub const CHOICES: [(&'static str, &'static str); 3] = [
        (
            "next-step",
            "gymnasium 1.x: reset on the step after done (reward 0, action ignored)",
        ),
        (
            "same-step",
            "gymnax: reset in the same step, final observation returned beside the new one",
        ),
        (
            "disabled",
            "no automatic reset: a done env keeps integrating until it is reset",
        ),
    ];

    /// The mode's name in [`Self::CHOICES`].
    pub fn name(self) -> &'static str {
        match self {
            AutoresetMode::NextStep => "next-step",
            AutoresetMode::SameStep => "same-step",
            AutoresetMode::Disabled => "disabled",
        }
    }
}

impl std::fmt::Display for AutoresetMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for AutoresetMode {
    type Err = String;

    /// A name of [`AutoresetMode::CHOICES`] or gymnasium's (`NextStep`, `NEXT_STEP`, ...):
    /// case, `-` and `_` are ignored.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let key: String = (name.chars())
            .filter(|c| *c != '-' && *c != '_')
            .flat_map(char::to_lowercase)
            .collect();
        match key.as_str() {
            "nextstep" => Ok(AutoresetMode::NextStep),
            "samestep" => Ok(AutoresetMode::SameStep),
            "disabled" => Ok(AutoresetMode::Disabled),
            _ => Err(format!(
                "unknown autoreset mode {name:?}: expected one of \"next-step\", \"same-step\" \
                 or \"disabled\" (gymnasium's NEXT_STEP, SAME_STEP, DISABLED)"
            )),
        }
    }
}

/// Checks that every named param is finite, naming the first that is not.
pub fn check_finite(params: &[(&'static str, f64)]) -> Result<(), crate::error::EnvError> {
    match params.iter().find(|(_, value)| !value.is_finite()) {
        Some(&(name, value)) => Err(crate::error::EnvError::InvalidParam {
            name,
            value,
            expected: "a finite number",
        }),
        None => Ok(()),
    }
}

/// Checks that `value` (the param `name`) is above 0.
pub fn check_positive(name: &'static str, value: f64) -> Result<(), crate::error::EnvError> {
    if value > 0.0 {
        return Ok(());
    }
    Err(crate::error::EnvError::InvalidParam {
        name,
        value,
        expected: "a finite number > 0",
    })
}

/// Named params as the graphs read them (`f32`).
pub fn f32_graph_params(
    params: &[(&'static str, f64)],
) -> Vec<(&'static str, cartfuse_fusion::graph::Scalar)> {
    params
        .iter()
        .map(|&(name, value)| (name, cartfuse_fusion::graph::Scalar::F32(value as f32)))
        .collect()
}
