//! What a measurement of the report can end in besides a number: [`ReproduceError`] (the
//! run stops) and [`Skipped`] (one cell is left out, with why).

use cartfuse_env::EnvError;
use cartfuse_fusion::exec::ExecError;
use cartfuse_fusion::plan::PlanError;

/// A measurement that could not be taken, with the reason (e.g. it does not fit).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Skipped {
    /// Why.
    pub reason: String,
}

/// Why a reproduction stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReproduceError {
    /// The env failed.
    #[error(transparent)]
    Env(#[from] EnvError),
    /// A workload failed.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// A plan could not be built.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// No environment has this id.
    #[error("{0}")]
    UnknownEnv(String),
}
