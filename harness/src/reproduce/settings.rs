//! What a reproduction measures and how hard: the full run and `--quick`.

use crate::ablation::ladder;
use crate::burn_bench::{BurnBackend, LaunchProbe};
use crate::cpu_study::cpu_tasks;
use crate::env_study::env_tasks;
use crate::policy_study::{PolicySettings, policy_tasks};
use crate::profile::ProfileSettings;
use crate::turns::TurnsSettings;

use super::probed_backends;

/// What a reproduction measures, and how hard.
#[derive(Debug, Clone, PartialEq)]
pub struct ReproduceSettings {
    /// Env counts of the ablation.
    pub ablation_sizes: Vec<usize>,
    /// Working-set sizes (input + output bytes of the fused kernel) of the elementwise sweep.
    pub workload_bytes: Vec<u64>,
    /// Rounds of the heavy workload's loop.
    pub heavy_loops: u32,
    /// `(rows, cols)` of the transformer tail.
    pub tail_shape: (usize, u32),
    /// Timing of every profile.
    pub profile: ProfileSettings,
    /// Bytes moved by the roofline copy.
    pub roofline_copy_bytes: u64,
    /// Launches per batch of the dispatch-tax measurement.
    pub dispatch_launches: usize,
    /// How burn's launches per step are counted; `None` leaves them unmeasured.
    pub launch_probe: Option<LaunchProbe>,
    /// Environments of the every-environment section (empty: no such section).
    pub env_ids: Vec<&'static str>,
    /// Env counts of the every-environment section.
    pub env_sizes: Vec<usize>,
    /// Timing of the every-environment section's profiles.
    pub env_profile: ProfileSettings,
    /// The policy-inside-the-rollout section on the native CPU.
    pub policy_cpu: PolicySettings,
    /// The same section on the device.
    pub policy_device: PolicySettings,
    /// `fused` against the hand-written step in turns, on the device and the CPU.
    pub turns: TurnsSettings,
}

impl ReproduceSettings {
    /// The full run: the study's sizes and working sets up to 256 MB, and PPO to the target
    /// from five seeds per sample source (11 min 44 s on a 2-core lavapipe machine).
    pub fn full() -> Self {
        Self {
            // 4096: where issue 9 sets the CPU against burn NdArray (10x), and between the
            // study's sizes where the CPU's threads start to split a step.
            ablation_sizes: vec![1, 64, 1024, 4096, 16_384, 262_144, 1 << 20],
            workload_bytes: vec![1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20],
            heavy_loops: 8,
            tail_shape: (8 * 512, 4096),
            profile: ProfileSettings::default(),
            roofline_copy_bytes: 256 << 20,
            dispatch_launches: 500,
            launch_probe: None,
            env_ids: Vec::new(),
            env_sizes: vec![4096, 1 << 20],
            env_profile: ProfileSettings {
                min_seconds_per_repeat: 0.2,
                repeats: 3,
                calls_per_repeat: None,
            },
            policy_cpu: PolicySettings::full_cpu(),
            policy_device: PolicySettings::full_device(),
            turns: TurnsSettings::full(),
        }
    }

    /// A quick run with the same structure and small sizes (well under 2 minutes here).
    pub fn quick() -> Self {
        Self {
            ablation_sizes: vec![1, 1024, 16_384],
            workload_bytes: vec![1 << 20, 4 << 20],
            heavy_loops: 4,
            tail_shape: (2 * 128, 1024),
            profile: ProfileSettings {
                min_seconds_per_repeat: 0.05,
                repeats: 3,
                calls_per_repeat: None,
            },
            roofline_copy_bytes: 64 << 20,
            dispatch_launches: 100,
            launch_probe: None,
            env_ids: Vec::new(),
            env_sizes: vec![1024],
            env_profile: ProfileSettings {
                min_seconds_per_repeat: 0.05,
                repeats: 3,
                calls_per_repeat: None,
            },
            policy_cpu: PolicySettings::quick(),
            policy_device: PolicySettings::quick_device(),
            turns: TurnsSettings::quick(),
        }
    }

    /// Number of measurements, for progress reporting.
    pub fn tasks(&self) -> usize {
        2 + (ladder().len() + 1 + BurnBackend::ALL.len()) * self.ablation_sizes.len()
            + 6 * self.workload_bytes.len()
            + 3
            + self
                .launch_probe
                .as_ref()
                .map_or(0, |_| probed_backends().count())
            + cpu_tasks(self.ablation_sizes.len())
            + 2 * self.ablation_sizes.len()
            + 2 * env_tasks(self.env_ids.len(), self.env_sizes.len())
            + policy_tasks(&self.policy_cpu)
            + policy_tasks(&self.policy_device)
    }
}
