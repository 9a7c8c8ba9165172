//! A population's weights from a buffer on the device.
//!
//! The fused step reads its `f32` params (every agent's weights, then the env's constants
//! where the graph puts them) from one buffer, a row per agent. A learner on the same
//! device makes that buffer from its new weights ([`PolicyRollout::weight_slots`] says
//! where each weight goes, [`PolicyRollout::f32_params`] gives the rows to start from) and
//! hands it over ([`PolicyRollout::set_f32_params_buffer`]): no weight crosses the bus,
//! where [`PolicyRollout::set_agent_weights`] writes the host's copy into the step's
//! table and uploads it.

use cartfuse_fusion::exec::Backend;

use super::PolicyRollout;
use crate::error::EnvError;

impl<B: Backend> PolicyRollout<B> {
    /// Where each weight of the policy ([`crate::policy::PolicyWeights`] order: the
    /// actor's, then the critic's) sits in an agent's row of [`Self::f32_params`].
    pub fn weight_slots(&self) -> Result<Vec<usize>, EnvError> {
        let step = self.engine.step_executor();
        (self.weight_names.iter())
            .map(|name| Ok(step.f32_param_slot(name)?))
            .collect()
    }

    /// The width of an agent's row of [`Self::f32_params`].
    pub fn f32_params_per_agent(&self) -> usize {
        self.engine.step_executor().f32_param_count()
    }

    /// Every agent's `f32` params as the next call reads them, agent-major (`[agents,
    /// f32_params_per_agent]`): its weights at [`Self::weight_slots`], the env's
    /// constants elsewhere.
    pub fn f32_params(&self) -> Result<Vec<f32>, EnvError> {
        Ok(self.engine.step_executor().f32_params()?)
    }

    /// Every agent's `f32` params (weights and constants) from `buffer`, laid out as
    /// [`Self::f32_params`], from the next call on. On a device the step binds the buffer
    /// as it is, in order with the work enqueued before (a learner's update); the values
    /// are not checked (a non-finite weight acts as it is), unlike the host's weights. A
    /// later host write of weights ([`Self::set_agent_weights`]) first reads the buffer
    /// back, so the other agents keep its values.
    pub fn set_f32_params_buffer(&mut self, buffer: B::Buffer) -> Result<(), EnvError> {
        Ok(self
            .engine
            .step_executor_mut()
            .set_f32_params_buffer(buffer)?)
    }
}
