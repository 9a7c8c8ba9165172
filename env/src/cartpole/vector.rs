//! CartPole's vector env on CubeCL runtimes, as the first example of `docs/rust-api.md` builds it.

use cartfuse_fusion::cube::Cube;
use cartfuse_fusion::cube::device::{OpenedDevice, open_client};
use cubecl::prelude::*;

use super::{CartPoleConfig, CartPoleParams};
use crate::engine::StepPlan;
use crate::error::EnvError;
use crate::vec_env::VecEnv;

/// `num_envs` CartPole-v1 envs on CubeCL runtime `R`.
pub type CartPoleVecEnv<R> = VecEnv<CartPoleParams, Cube<R>>;

impl<R: Runtime> VecEnv<CartPoleParams, Cube<R>> {
    /// Builds `num_envs` envs of `config` on an opened device, running the default plan.
    pub fn on_device(
        opened: &OpenedDevice<R>,
        num_envs: usize,
        config: CartPoleConfig,
    ) -> Result<Self, EnvError> {
        Self::with_plan(Cube::new(opened), num_envs, config, StepPlan::default())
    }

    /// Builds `num_envs` envs of `config` on `backend`, running `plan`.
    pub fn with_plan(
        backend: Cube<R>,
        num_envs: usize,
        config: CartPoleConfig,
        plan: StepPlan,
    ) -> Result<Self, EnvError> {
        VecEnv::build(backend, config.params, num_envs, config.episode(), plan)
    }

    /// Opens `device` and builds `num_envs` envs on it.
    pub fn new(
        device: &R::Device,
        num_envs: usize,
        config: CartPoleConfig,
    ) -> Result<Self, EnvError> {
        let client = open_client::<R>(device)?;
        let description = R::name(&client);
        let backend = Cube::with_client(client, device, description);
        Self::with_plan(backend, num_envs, config, StepPlan::default())
    }

    /// The compute client every launch goes to.
    pub fn client(&self) -> &ComputeClient<R> {
        self.backend().client()
    }

    /// The configuration the envs were built with.
    pub fn config(&self) -> CartPoleConfig {
        CartPoleConfig {
            params: *self.env(),
            autoreset: self.episode().autoreset,
            max_episode_steps: self.episode().max_episode_steps,
        }
    }
}
