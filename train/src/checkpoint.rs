//! Checkpoints: an [`ActorCritic`]'s weights in burn's named MessagePack record format.

use std::path::Path;

use burn::module::Module;
use burn::record::{FullPrecisionSettings, NamedMpkFileRecorder};
use burn::tensor::backend::Backend;

use crate::error::TrainError;
use crate::policy::ActorCritic;

fn recorder() -> NamedMpkFileRecorder<FullPrecisionSettings> {
    NamedMpkFileRecorder::<FullPrecisionSettings>::new()
}

fn failed(path: &Path, error: impl std::fmt::Display) -> TrainError {
    TrainError::Checkpoint {
        path: path.display().to_string(),
        reason: error.to_string(),
    }
}

/// Writes `model`'s weights to `path` (burn adds the `.mpk` extension).
pub fn save<B: Backend>(model: &ActorCritic<B>, path: &Path) -> Result<(), TrainError> {
    model
        .clone()
        .save_file(path, &recorder())
        .map_err(|e| failed(path, e))
}

/// Reads weights saved by [`save`] into `model` (a network of the same shape).
pub fn load<B: Backend>(
    model: ActorCritic<B>,
    path: &Path,
    device: &B::Device,
) -> Result<ActorCritic<B>, TrainError> {
    model
        .load_file(path, &recorder(), device)
        .map_err(|e| failed(path, e))
}
