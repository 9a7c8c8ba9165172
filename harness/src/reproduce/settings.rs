//! What a reproduction measures and how hard: the default run (every section within about
//! ten minutes on a 2-core machine), `--full` (every size, more rounds) and `--quick`.

use crate::profile::ProfileSettings;
use crate::studies::burn::{BurnBackend, LaunchProbe};
use crate::studies::cpu::cpu_tasks;
use crate::studies::envs::env_tasks;
use crate::studies::policy::{PolicySettings, policy_tasks};
use crate::studies::roofline::DriverCopyMeter;
use crate::turns::TurnsSettings;

use super::probed_backends;

/// Which run: how many sizes and how long each is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReproduceMode {
    /// `--quick`: small sizes, three rounds.
    Quick,
    /// No flag: every section, fewer sizes, a time budget per size.
    Default,
    /// `--full`: every size of the study's sweep, more rounds, the whole policy section.
    Full,
}

/// What a reproduction measures, and how hard.
#[derive(Debug, Clone, PartialEq)]
pub struct ReproduceSettings {
    /// Which run these settings make.
    pub mode: ReproduceMode,
    /// Env counts of the ablation.
    pub ablation_sizes: Vec<usize>,
    /// Working-set sizes (input + output bytes of the fused kernel) of the elementwise sweep.
    pub workload_bytes: Vec<u64>,
    /// Rounds of the heavy workload's loop.
    pub heavy_loops: u32,
    /// `(rows, cols)` of the transformer tail.
    pub tail_shape: (usize, u32),
    /// Timing of the profiles outside the plan tables (workloads, tail, burn).
    pub profile: ProfileSettings,
    /// The device's plan tables (eager and the ablation), timed in turns at each size.
    pub turns: TurnsSettings,
    /// The CPU's plan table, timed in turns at each size.
    pub cpu_turns: TurnsSettings,
    /// burn's backends on the same step.
    pub burn_backends: Vec<BurnBackend>,
    /// Bytes moved by the roofline copy (at least 8 times `device_cache_bytes` where that
    /// is known).
    pub roofline_copy_bytes: u64,
    /// Launches per batch of the dispatch-tax measurement.
    pub dispatch_launches: usize,
    /// How burn's launches per step are counted; `None` leaves them unmeasured.
    pub launch_probe: Option<LaunchProbe>,
    /// Environments of the every-environment section (empty: no such section).
    pub env_ids: Vec<&'static str>,
    /// Env counts of the every-environment section.
    pub env_sizes: Vec<usize>,
    /// The every-environment section's plans, timed in turns at each size.
    pub env_turns: TurnsSettings,
    /// The policy-inside-the-rollout section on the native CPU.
    pub policy_cpu: PolicySettings,
    /// The same section on the device.
    pub policy_device: PolicySettings,
    /// The device's last-level cache in bytes, where the caller knows it (the rung model
    /// says when a step's bytes fit it).
    pub device_cache_bytes: Option<u64>,
    /// The driver's own device-to-device copy of the device's runtime, the roofline's
    /// reference (`None`: not measured; the report says so).
    pub driver_copy: Option<DriverCopyMeter>,
}

impl ReproduceSettings {
    /// The settings of `mode`.
    pub fn of(mode: ReproduceMode) -> Self {
        match mode {
            ReproduceMode::Quick => Self::quick(),
            ReproduceMode::Default => Self::default_run(),
            ReproduceMode::Full => Self::full(),
        }
    }

    /// The default run: every section at five of the full run's seven sizes, the plan
    /// tables in turns within a time budget per size, working sets up to 256 MB, PPO once
    /// per sample source (each measured section within about ten minutes on a 2-core
    /// machine, the first build excluded).
    pub fn default_run() -> Self {
        let full = Self::full();
        Self {
            mode: ReproduceMode::Default,
            ablation_sizes: vec![1, 64, 4096, 262_144, 1 << 20],
            workload_bytes: vec![1 << 20, 16 << 20, 256 << 20],
            profile: ProfileSettings {
                min_seconds_per_repeat: 0.2,
                repeats: 3,
                calls_per_repeat: None,
            },
            turns: TurnsSettings::default_report(),
            cpu_turns: TurnsSettings::default_report().with_budget(10.0),
            env_turns: TurnsSettings::default_report().with_budget(4.0),
            policy_cpu: PolicySettings::default_cpu(),
            policy_device: PolicySettings::default_device(),
            ..full
        }
    }

    /// The full run: the study's sizes and working sets up to 256 MB, the plan tables with
    /// more rounds, and PPO to the target from five seeds per sample source.
    pub fn full() -> Self {
        Self {
            mode: ReproduceMode::Full,
            // 4096: where issue 9 sets the CPU against burn NdArray (10x), and between the
            // study's sizes where the CPU's threads start to split a step.
            ablation_sizes: vec![1, 64, 1024, 4096, 16_384, 262_144, 1 << 20],
            workload_bytes: vec![1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20],
            heavy_loops: 8,
            tail_shape: (8 * 512, 4096),
            profile: ProfileSettings::default(),
            turns: TurnsSettings::full(),
            cpu_turns: TurnsSettings::full().with_budget(25.0),
            burn_backends: BurnBackend::ALL.to_vec(),
            roofline_copy_bytes: 256 << 20,
            dispatch_launches: 500,
            launch_probe: None,
            env_ids: Vec::new(),
            env_sizes: vec![4096, 1 << 20],
            env_turns: TurnsSettings::full().with_budget(10.0),
            policy_cpu: PolicySettings::full_cpu(),
            policy_device: PolicySettings::full_device(),
            device_cache_bytes: None,
            driver_copy: None,
        }
    }

    /// A quick run with the same structure and small sizes (about a minute here).
    pub fn quick() -> Self {
        Self {
            mode: ReproduceMode::Quick,
            ablation_sizes: vec![1, 1024, 16_384],
            workload_bytes: vec![1 << 20, 4 << 20],
            heavy_loops: 4,
            tail_shape: (2 * 128, 1024),
            profile: ProfileSettings {
                min_seconds_per_repeat: 0.05,
                repeats: 3,
                calls_per_repeat: None,
            },
            turns: TurnsSettings::quick(),
            cpu_turns: TurnsSettings::quick(),
            burn_backends: BurnBackend::ALL.to_vec(),
            roofline_copy_bytes: 64 << 20,
            dispatch_launches: 100,
            launch_probe: None,
            env_ids: Vec::new(),
            env_sizes: vec![1024],
            env_turns: TurnsSettings::quick(),
            policy_cpu: PolicySettings::quick(),
            policy_device: PolicySettings::quick_device(),
            device_cache_bytes: None,
            driver_copy: None,
        }
    }

    /// Number of measurements, for progress reporting.
    pub fn tasks(&self) -> usize {
        2 + (1 + self.burn_backends.len()) * self.ablation_sizes.len()
            + 6 * self.workload_bytes.len()
            + crate::studies::tail::TAIL_ROWS
            + self
                .launch_probe
                .as_ref()
                .map_or(0, |_| probed_backends(&self.burn_backends).count())
            + cpu_tasks(self.ablation_sizes.len())
            + 2 * env_tasks(self.env_ids.len(), self.env_sizes.len())
            + policy_tasks(&self.policy_cpu)
            + policy_tasks(&self.policy_device)
    }
}
