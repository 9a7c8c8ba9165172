//! The native CPU runtime hosts vector envs: planned engines run through
//! the one [`Executor`](cartfuse_fusion::exec::Executor), an environment's hand-written step
//! is its [`HandWritten::native`] engine, device-resident actions are checked in place, and outputs are copied
//! to the caller's memory by every worker thread at once.

use std::sync::Arc;

use cartfuse_fusion::cpu::Cpu;
use cartfuse_fusion::cpu::CpuBuffer;
use cartfuse_fusion::cpu::spin_pool::on_threads;
use cartfuse_fusion::exec::{Backend, LaunchLedger};

use super::{EnvBackend, OutputPages, check_actions_record, read_outputs};
use crate::engine::{HandWritten, StepEngine};
use crate::environment::GraphEnv;
use crate::error::EnvError;
use crate::host_outputs::HostOutputs;
use crate::spaces::ActionSpace;

impl EnvBackend for Cpu {
    fn hand_written<K: HandWritten>(
        &self,
        kernels: &K,
        n: usize,
        ledger: Arc<LaunchLedger>,
    ) -> Option<Box<dyn StepEngine<Self>>> {
        kernels.native(self, n, ledger)
    }

    fn memory_available(&self) -> Option<(u64, String)> {
        Some((crate::memory::host_available(), "host memory".into()))
    }

    fn flag_invalid_actions<E: GraphEnv>(
        &self,
        env: &E,
        actions: &CpuBuffer,
        flag: &CpuBuffer,
        ledger: &LaunchLedger,
    ) -> Result<(), EnvError> {
        let invalid = match env.action_space() {
            ActionSpace::Discrete(space) => {
                let record = check_actions_record(self.buffer_len(actions));
                ledger.launch(record, || {
                    actions.lock()[..actions.len()]
                        .iter()
                        .any(|a| *a >= space.n)
                })
            }
            // Continuous actions are clipped to the box, as gymnasium does: any value is valid.
            ActionSpace::Box(_) => false,
        };
        Ok(self.write_u32(flag, &[u32::from(invalid)])?)
    }

    /// One pass split over the runtime's threads (as its launches are): the words of each
    /// output are copied, `u32` flags narrowed to `bool`. Paged outputs are read page by page.
    fn copy_outputs(
        &self,
        from: &OutputPages<'_, CpuBuffer>,
        out: &mut HostOutputs<'_>,
    ) -> Result<Option<u32>, EnvError> {
        fn one<'b>(pages: &[&'b CpuBuffer]) -> Option<&'b CpuBuffer> {
            match pages {
                [page] => Some(*page),
                _ => None,
            }
        }
        let final_obs = from.final_obs.as_deref().map(one);
        let (Some(obs), Some(reward), Some(terminated), Some(truncated), None | Some(Some(_))) = (
            one(&from.obs),
            one(&from.reward),
            one(&from.terminated),
            one(&from.truncated),
            final_obs,
        ) else {
            return read_outputs(self, from, out);
        };
        let (obs, reward) = (obs.lock(), reward.lock());
        let (terminated, truncated) = (terminated.lock(), truncated.lock());
        let final_obs = final_obs.flatten().map(CpuBuffer::lock);
        let n = out.reward.len();
        let dim = out.obs.len() / n.max(1);
        let threads = match n < self.options().parallel_min_lanes {
            true => 1,
            false => self.options().resolved_threads(),
        };
        let per = n.div_ceil(threads).max(1);
        let final_rows = out
            .final_obs
            .as_deref_mut()
            .map(|rows| rows.chunks_mut(per * dim));
        let mut final_rows = final_rows.into_iter().flatten();
        let mut parts: Vec<CopyPart<'_>> = (out.obs.chunks_mut(per * dim))
            .zip(out.reward.chunks_mut(per))
            .zip(
                out.terminated
                    .chunks_mut(per)
                    .zip(out.truncated.chunks_mut(per)),
            )
            .enumerate()
            .map(|(t, ((obs_out, reward_out), (term_out, trunc_out)))| {
                let (lanes, rows) = (t * per..t * per + reward_out.len(), t * per * dim..);
                let rows = rows.start..rows.start + obs_out.len();
                CopyPart {
                    obs: (obs_out, &obs[rows.clone()]),
                    reward: (reward_out, &reward[lanes.clone()]),
                    terminated: (term_out, &terminated[lanes.clone()]),
                    truncated: (trunc_out, &truncated[lanes]),
                    final_obs: (final_rows.next())
                        .zip(final_obs.as_ref().map(|words| &words[rows])),
                }
            })
            .collect();
        on_threads(&mut parts, |_, part| part.copy());
        Ok(None)
    }
}

/// One thread's share of [`Cpu::copy_outputs`]: destination and source words of each output.
struct CopyPart<'a> {
    obs: (&'a mut [f32], &'a [u32]),
    reward: (&'a mut [f32], &'a [u32]),
    terminated: (&'a mut [bool], &'a [u32]),
    truncated: (&'a mut [bool], &'a [u32]),
    final_obs: Option<(&'a mut [f32], &'a [u32])>,
}

impl CopyPart<'_> {
    fn copy(&mut self) {
        let floats = |(to, from): &mut (&mut [f32], &[u32])| {
            to.copy_from_slice(bytemuck::cast_slice(from));
        };
        let flags = |(to, from): &mut (&mut [bool], &[u32])| {
            for (flag, word) in to.iter_mut().zip(from.iter()) {
                *flag = *word != 0;
            }
        };
        floats(&mut self.obs);
        floats(&mut self.reward);
        flags(&mut self.terminated);
        flags(&mut self.truncated);
        if let Some(rows) = &mut self.final_obs {
            floats(rows);
        }
    }
}
