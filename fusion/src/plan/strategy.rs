//! The named strategies: each variant of [`Strategy`] maps to one [`StrategySpec`] (in
//! [`strategies`]), from which names, parsing, [`Strategy::ALL`], error messages and help
//! text are derived.

use std::fmt;
use std::str::FromStr;

use super::error::PlanError;
use super::spec::StrategySpec;
use super::strategies;

/// How a graph is partitioned into kernels and launched; see each variant's spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// One kernel per op ([`strategies::EAGER`]).
    Eager,
    /// Producer-to-consumer fusion with XLA-style rules ([`strategies::VERTICAL`]).
    Vertical,
    /// Vertical's kernels, one launch per dependency level ([`strategies::HORIZONTAL`]).
    Horizontal,
    /// Vertical plus sibling fusion ([`strategies::FUSED`]).
    Fused,
    /// `Fused` for K steps in one launch ([`strategies::FUSED_STEPS`]).
    FusedSteps(u32),
    /// The study's XLA baseline boundaries ([`strategies::XLA_DEFAULT`]).
    XlaDefault,
    /// Kernels given by the caller ([`strategies::PARTITION`], [`Plan::from_partition`](super::Plan::from_partition)).
    Partition,
}

impl Strategy {
    /// Every strategy buildable by name (parametrised ones with their listed parameter),
    /// in help-text order.
    pub const ALL: [Strategy; 6] = [
        Strategy::Eager,
        Strategy::Vertical,
        Strategy::Horizontal,
        Strategy::Fused,
        Strategy::FusedSteps(strategies::FUSED_STEPS.param.expect("parametrised").listed),
        Strategy::XlaDefault,
    ];

    /// The strategy's spec and parameter.
    pub fn spec(self) -> &'static StrategySpec {
        self.parts().0
    }

    /// The parameter of a parametrised strategy (`K` of `fused-xK`).
    pub fn param(self) -> Option<u32> {
        self.parts().1
    }

    fn parts(self) -> (&'static StrategySpec, Option<u32>) {
        match self {
            Strategy::Eager => (&strategies::EAGER, None),
            Strategy::Vertical => (&strategies::VERTICAL, None),
            Strategy::Horizontal => (&strategies::HORIZONTAL, None),
            Strategy::Fused => (&strategies::FUSED, None),
            Strategy::FusedSteps(k) => (&strategies::FUSED_STEPS, Some(k)),
            Strategy::XlaDefault => (&strategies::XLA_DEFAULT, None),
            Strategy::Partition => (&strategies::PARTITION, None),
        }
    }

    /// Names as help text writes them: `eager`, ..., `fused-x<K>`, ...
    pub fn names() -> Vec<String> {
        Self::ALL.iter().map(|s| s.spec().pattern()).collect()
    }

    /// The error for `name`, which names no strategy.
    pub fn unknown(name: impl Into<String>) -> PlanError {
        PlanError::UnknownStrategy {
            name: name.into(),
            expected: Self::expected(),
        }
    }

    /// The names as one phrase: `a, b or c`, parameter bounds included.
    pub fn expected() -> String {
        let names: Vec<String> = (Self::ALL.iter().map(|s| s.spec()))
            .map(|spec| match spec.param {
                Some(p) => format!(
                    "{} ({} <= {} <= {})",
                    spec.pattern(),
                    p.min,
                    p.placeholder,
                    p.max
                ),
                None => spec.pattern(),
            })
            .collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.concat(),
        }
    }

    /// One line per strategy: name and summary (for CLI help).
    pub fn help() -> String {
        Self::ALL
            .iter()
            .map(|s| format!("{}: {}", s.spec().pattern(), s.spec().summary))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.spec().name)?;
        match self.param() {
            Some(k) => write!(f, "{k}"),
            None => Ok(()),
        }
    }
}

impl FromStr for Strategy {
    type Err = PlanError;

    fn from_str(name: &str) -> Result<Self, PlanError> {
        Self::ALL
            .iter()
            .find_map(|s| {
                // `fused-x<K>` is the one parametrised strategy.
                Some(s.spec().parse(name)?.map_or(*s, Strategy::FusedSteps))
            })
            .ok_or_else(|| Self::unknown(name))
    }
}
