//! What can go wrong while training.

use cartfuse_env::EnvError;

/// An error of [`crate::train`] or of a checkpoint.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// A setting of [`crate::PpoConfig`] is out of range.
    #[error("invalid PPO setting `{setting}`: {reason}")]
    InvalidConfig {
        /// The field's name.
        setting: &'static str,
        /// What it must be.
        reason: String,
    },
    /// The environment failed.
    #[error(transparent)]
    Env(#[from] EnvError),
    /// A tensor could not be read back from the learner's backend.
    #[error("reading a tensor back from the learner failed: {0}")]
    Tensor(String),
    /// A checkpoint could not be written or read.
    #[error("checkpoint {path}: {reason}")]
    Checkpoint {
        /// The checkpoint's path.
        path: String,
        /// What failed.
        reason: String,
    },
}
