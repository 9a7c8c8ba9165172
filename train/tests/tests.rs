//! The trainer's single integration-test binary: burn, its NdArray backend and the trainer
//! are compiled and linked once for every suite (four binaries took four times the codegen).

/// The native learner against burn's autodiff, clip and Adam.
mod native_learner;
/// Populations on the native CPU env.
mod population;
/// PPO end to end on the native CPU env.
mod ppo;
/// The tensor learner against the native learner.
mod tensor_learner;
