//! The planned engine's resets: each lane's keys uploaded, the reset graph run on the lanes
//! asked (reseeded by bank for a population) and its new state handed to the step.

use cartfuse_fusion::exec::Backend;
use cartfuse_fusion::graph::HostArray;

use super::{COUNTERS, PlannedEngine};
use crate::error::EnvError;
use crate::graph::{KEYS, RESET_MASK, RESTART, reset_bound_params};
use crate::gym_args::check_bounds;

impl<B: Backend> PlannedEngine<B> {
    /// Bank `b` of the lanes reseeded from `seeds[b]` (each reset draws from its bank's
    /// seed: its `k`-th lane by `seeds[b] + k`, as a lone engine of its lanes), then every
    /// env reset: reset number 0
    /// on `restart`, else each lane's next.
    pub fn reset_banks(&mut self, seeds: &[u64], restart: bool) -> Result<(), EnvError> {
        if seeds.len() != self.banks {
            return Err(EnvError::InvalidRollout(format!(
                "{} banks of envs need one seed each, got {} seeds",
                self.banks,
                seeds.len()
            )));
        }
        let lanes = self.n / self.banks;
        for (bank, &seed) in seeds.iter().enumerate() {
            self.keys.set_batch(seed, bank * lanes..(bank + 1) * lanes);
        }
        self.upload_keys()?;
        self.set_reset_bounds(None)?;
        self.run_reset(&vec![restart; self.n], None)
    }

    /// Runs the reset graph on the current state (every lane where `mask` is `None`; lanes
    /// whose `restart` is set draw from reset number 0) and hands its new state to the step.
    pub(super) fn run_reset(
        &mut self,
        restart: &[bool],
        mask: Option<&[bool]>,
    ) -> Result<(), EnvError> {
        let carried: Vec<&'static str> = self.state_inputs().into_iter().chain(COUNTERS).collect();
        for name in &carried {
            if self.step.has_input(name) {
                let current = self.step.input(name)?.clone();
                self.reset.bind_input(name, &current)?;
            }
        }
        self.bind_lanes(RESTART, restart)?;
        match mask {
            Some(mask) => self.bind_lanes(RESET_MASK, mask)?,
            None => self.reset.bind_input(RESET_MASK, &self.all_lanes)?,
        }
        self.reset.run()?;
        for name in &carried {
            if self.step.has_input(name) {
                let next = self.reset.input(name)?.clone();
                self.step.bind_input(name, &next)?;
            }
        }
        self.showing_reset = true;
        Ok(())
    }

    /// Binds per-lane flags `lanes` to the reset runner's input `name`, without an upload
    /// when they are all set or all clear.
    fn bind_lanes(&mut self, name: &str, lanes: &[bool]) -> Result<(), EnvError> {
        if lanes.iter().all(|l| *l) {
            self.reset.bind_input(name, &self.all_lanes)?;
        } else if !lanes.iter().any(|l| *l) {
            self.reset.bind_input(name, &self.no_lanes)?;
        } else {
            let words = lanes.iter().map(|l| u32::from(*l)).collect();
            self.reset.set_input(name, &HostArray::U32(words))?;
        }
        Ok(())
    }

    /// Uploads every lane's key into the runners' key inputs (one buffer shared by both).
    pub(super) fn upload_keys(&mut self) -> Result<(), EnvError> {
        for (name, words) in KEYS.iter().zip([&self.keys.key0, &self.keys.key1]) {
            self.reset.set_input(name, &HostArray::U32(words.clone()))?;
            if self.step.has_input(name) {
                let buffer = self.reset.input(name)?.clone();
                self.step.bind_input(name, &buffer)?;
            }
        }
        Ok(())
    }

    /// Sets the bounds the reset runner draws in (the defaults where `None`); the step's
    /// autoresets keep the defaults.
    pub(super) fn set_reset_bounds(
        &mut self,
        bounds: Option<&[(f64, f64)]>,
    ) -> Result<(), EnvError> {
        let bounds = bounds.unwrap_or(&self.default_bounds).to_vec();
        check_bounds(&bounds, self.default_bounds.len()).map_err(EnvError::InvalidResetBounds)?;
        if bounds != self.reset_bounds {
            self.reset.set_params(&reset_bound_params(&bounds))?;
            self.reset_bounds = bounds;
        }
        Ok(())
    }
}
