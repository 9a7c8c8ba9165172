//! The named strategies: each variant of [`Strategy`] maps to one
//! [`StrategySpec`] (in [`strategies`](super::strategies)), from which names, parsing,
//! [`Strategy::ALL`], error messages and help text are derived.

use std::fmt;
use std::str::FromStr;

use super::error::PlanError;
use super::spec::StrategySpec;
use super::strategies::{eager, fused, fused_steps, horizontal, partition, vertical, xla_default};

/// How a graph is partitioned into kernels and launched; see each variant's spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// One kernel per op ([`eager`]).
    Eager,
    /// Producer-to-consumer fusion with XLA-style rules ([`vertical`]).
    Vertical,
    /// Vertical's kernels, one launch per dependency level ([`horizontal`]).
    Horizontal,
    /// Vertical plus sibling fusion ([`fused`]).
    Fused,
    /// `Fused` for K steps in one launch ([`fused_steps`]).
    FusedSteps(u32),
    /// The study's XLA baseline boundaries ([`xla_default`]).
    XlaDefault,
    /// Kernels given by the caller ([`partition`], [`Plan::from_partition`](super::Plan::from_partition)).
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
        Strategy::FusedSteps(fused_steps::SPEC.param.expect("parametrised").listed),
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
            Strategy::Eager => (&eager::SPEC, None),
            Strategy::Vertical => (&vertical::SPEC, None),
            Strategy::Horizontal => (&horizontal::SPEC, None),
            Strategy::Fused => (&fused::SPEC, None),
            Strategy::FusedSteps(k) => (&fused_steps::SPEC, Some(k)),
            Strategy::XlaDefault => (&xla_default::SPEC, None),
            Strategy::Partition => (&partition::SPEC, None),
        }
    }

    /// The same strategy with parameter `k` (itself when unparametrised).
    fn with_param(self, k: u32) -> Strategy {
        match self {
            Strategy::FusedSteps(_) => Strategy::FusedSteps(k),
            other => other,
        }
    }

    /// Names as help text writes them: `eager`, ..., `fused-x<K>`, ...
    pub fn names() -> Vec<String> {
        Self::ALL.iter().map(|s| s.spec().pattern()).collect()
    }

    /// The names as one phrase: `a, b or c`, parameter bounds included.
    pub fn expected() -> String {
        let names: Vec<String> = Self::ALL
            .iter()
            .map(|s| {
                let spec = s.spec();
                match spec.param {
                    Some(p) => format!(
                        "{} ({} <= {} <= {})",
                        spec.pattern(),
                        p.min,
                        p.placeholder,
                        p.max
                    ),
                    None => spec.pattern(),
                }
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
                let param = s.spec().parse(name)?;
                Some(param.map_or(*s, |k| s.with_param(k)))
            })
            .ok_or_else(|| PlanError::UnknownStrategy(name.into()))
    }
}
