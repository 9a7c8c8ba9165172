//! What a strategy is: one [`StrategySpec`] table, read by the planner, the parser, the
//! error messages and the CLI help. Every strategy's table is in
//! [`strategies`](super::strategies).

/// How a graph is partitioned into kernels: XLA's instruction fusion, fusion merger and
/// multi-output fusion, as the partitioner or XLA's pipeline makes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FusionRules {
    /// One kernel per op.
    Eager,
    /// XLA-style producer-consumer fusion with the fusion merger ([`partition`](super::partition));
    /// a pack with several users is not fused into them.
    Vertical,
    /// Vertical plus sibling fusion: everything in one kernel where row reductions allow.
    Fused,
    /// XLA's fusion pipeline ([`xla`](super::xla)), under the options' `opaque_random` and
    /// `concat_rule` ([`PlanOptions`](super::PlanOptions)).
    Xla,
}

/// How kernels become launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    /// One launch per kernel.
    EachKernel,
    /// Kernels at the same dependency depth share one launch (horizontal fusion).
    ByLevel,
    /// XLA's horizontal loop fusion ([`xla::horizontal`](super::xla::horizontal)).
    HorizontalLoopFusion,
}

/// How loop-carried state reaches the next step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CarriedState {
    /// Double-buffered: the executor swaps the state buffers after each run (no launch).
    Swapped,
    /// XLA's while loop: a carry whose old value is still live when its next value is
    /// written is copied back into the input's own buffer by a launch of its own; the
    /// others are written over their old value or double-buffered, as XLA's copy removal
    /// lets them share the loop buffer ([`xla::copies`](super::xla::copies)).
    CopiedBack,
}

/// A parametrised strategy's name: `{name}{placeholder}`, for example `fused-x<K>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    /// Placeholder in help text (`K`).
    pub placeholder: &'static str,
    /// Smallest allowed value.
    pub min: u32,
    /// Largest allowed value.
    pub max: u32,
    /// The value listed in [`Strategy::ALL`](super::Strategy::ALL).
    pub listed: u32,
}

/// Everything that defines one strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrategySpec {
    /// Name on the command line; for parametrised strategies, the prefix before `K`.
    pub name: &'static str,
    /// `Some` for strategies named `{name}K`, which run `K` steps a run: the whole graph must
    /// fit one lanes kernel, whose body is repeated `K` times with carried state in registers.
    pub param: Option<ParamSpec>,
    /// One line for help text.
    pub summary: &'static str,
    /// Partition policy; `None`: kernels must be given (`Plan::from_partition`).
    pub rules: Option<FusionRules>,
    /// Rules to fall back to when a kernel would bind more buffers than the device allows.
    pub fallback: Option<FusionRules>,
    /// How kernels become launches.
    pub grouping: Grouping,
    /// How loop-carried state reaches the next step.
    pub carried: CarriedState,
    /// Whether environments carry their state as one packed array under this strategy
    /// (the study's baseline does), rather than structure of arrays.
    pub packed_state: bool,
}

impl StrategySpec {
    /// The name as help text writes it (`fused-x<K>`).
    pub fn pattern(&self) -> String {
        match self.param {
            Some(param) => format!("{}<{}>", self.name, param.placeholder),
            None => self.name.into(),
        }
    }

    /// The parameter of `name` if `name` names this strategy (`Some(None)` when
    /// unparametrised).
    pub fn parse(&self, name: &str) -> Option<Option<u32>> {
        match self.param {
            None => (name == self.name).then_some(None),
            Some(param) => name
                .strip_prefix(self.name)
                .and_then(|k| k.parse::<u32>().ok())
                .filter(|k| (param.min..=param.max).contains(k))
                .map(Some),
        }
    }
}
