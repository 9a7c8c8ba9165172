//! The report's sections in the order `reproduce` measures them, so that a report written
//! before the run ends says which of them hold numbers.
//!
//! `reproduce` hands its report over after every section (`checkpoint`), and the CLI writes
//! it each time: a run cut by a timeout or a failure keeps every section it finished, with
//! the section it was measuring named at the top ([`crate::reproduce::Report::stopped_at`]).
//! The device roofline and the dispatch tax come first and are in every report written.

/// A section of the report measured after the roofline and the dispatch tax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Section {
    /// The study's ladder and eager at every size, with what is derived from them: every
    /// plan against eager, the rungs' model, the busy fractions, the break-even, the fitted
    /// launch cost and `fused` against hand-written on the device.
    Ablation,
    /// burn's backends on the same step, and their launches counted from CubeCL's log.
    Burn,
    /// The elementwise workloads.
    Workloads,
    /// The transformer tail as 4, 2 and 1 kernels.
    Tail,
    /// The native CPU runtime's roofline and plans.
    Cpu,
    /// Every environment under every plan (when asked for).
    Envs,
    /// The policy inside the rollout, PPO and the populations.
    Policy,
}

impl Section {
    /// Every section, in the order measured.
    pub const ALL: [Section; 7] = [
        Section::Ablation,
        Section::Burn,
        Section::Workloads,
        Section::Tail,
        Section::Cpu,
        Section::Envs,
        Section::Policy,
    ];

    /// What the section measures, as a partial report names it.
    pub fn describe(self) -> &'static str {
        match self {
            Section::Ablation => "the study's ablation",
            Section::Burn => "burn's backends",
            Section::Workloads => "the elementwise workloads",
            Section::Tail => "the transformer tail",
            Section::Cpu => "the CPU side",
            Section::Envs => "every environment",
            Section::Policy => "the policy inside the rollout",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_the_order_measured() {
        assert!(Section::ALL.windows(2).all(|w| w[0] < w[1]));
    }
}
