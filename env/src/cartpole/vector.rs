//! CartPole's vector env on CubeCL runtimes, as the first example of `docs/rust-api.md` builds it.

use cartfuse_fusion::cube::Cube;
use cartfuse_fusion::cube::device::open_client;
use cubecl::prelude::*;

use super::{CartPoleConfig, CartPoleParams};
use crate::engine::StepPlan;
use crate::error::EnvError;
use crate::vec_env::VecEnv;

/// `num_envs` CartPole-v1 envs on CubeCL runtime `R`.
pub type CartPoleVecEnv<R> = VecEnv<CartPoleParams, Cube<R>>;

impl<R: Runtime> VecEnv<CartPoleParams, Cube<R>> {
    /// Builds `num_envs` envs of `config` on an open client, running the default plan.
    pub fn with_client(
        client: ComputeClient<R>,
        num_envs: usize,
        config: CartPoleConfig,
    ) -> Result<Self, EnvError> {
        Self::with_plan(client, num_envs, config, StepPlan::default())
    }

    /// Builds `num_envs` envs of `config` on an open client, running `plan`.
    pub fn with_plan(
        client: ComputeClient<R>,
        num_envs: usize,
        config: CartPoleConfig,
        plan: StepPlan,
    ) -> Result<Self, EnvError> {
        let description = R::name(&client);
        VecEnv::build(
            Cube::new(client, description),
            config.params,
            num_envs,
            config.episode(),
            plan,
        )
    }

    /// Opens `device` and builds `num_envs` envs on it.
    pub fn new(
        device: &R::Device,
        num_envs: usize,
        config: CartPoleConfig,
    ) -> Result<Self, EnvError> {
        Self::with_client(open_client::<R>(device)?, num_envs, config)
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
