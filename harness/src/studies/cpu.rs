//! The CPU side of the study: the host roofline and CartPole under every plan on the native
//! CPU runtime, over the same sizes as the device ablation, in the same run.
//!
//! The study ran XLA's CPU backend beside the GPU and found the CPU faster below about 70
//! simulations; [`CpuStudy::crossover`] finds the size at which this run's device starts to
//! beat this run's CPU.

use cartfuse_env::StepPlan;
use cartfuse_fusion::cpu::roofline::measure_roofline;
use cartfuse_fusion::plan::Strategy;
use cartfuse_fusion::{cpu::Cpu, exec::Backend};

use crate::cells::{AblationCell, cartpole_cells, set_over_eager};
use crate::error::ReproduceError;
use crate::turns::TurnsSettings;

/// The plans measured on the CPU, with their row labels.
pub fn cpu_plans() -> Vec<(&'static str, StepPlan)> {
    vec![
        ("eager", StepPlan::Graph(Strategy::Eager)),
        ("vertical", StepPlan::Graph(Strategy::Vertical)),
        ("horizontal", StepPlan::Graph(Strategy::Horizontal)),
        ("xla-default", StepPlan::Graph(Strategy::XlaDefault)),
        ("fused", StepPlan::Graph(Strategy::Fused)),
        ("fused-x10", StepPlan::Graph(Strategy::FusedSteps(10))),
        ("hand-written", StepPlan::HandWritten),
    ]
}

/// What the CPU side measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CpuStudy {
    /// The CPU, its SIMD level and thread count.
    pub device: String,
    /// SIMD level of the runtime and of the FLOP roof.
    pub simd: String,
    /// Threads of every measurement.
    pub threads: usize,
    /// Host copy bandwidth (bytes read + written per second), in GB/s: the faster of
    /// `memcpy` and the streaming copy.
    pub copy_gbps: f64,
    /// The platform `memcpy`'s copy bandwidth, GB/s.
    pub memcpy_gbps: f64,
    /// The copy with non-temporal stores, GB/s.
    pub streaming_gbps: f64,
    /// Bytes read plus written by one copy pass.
    pub copy_bytes: u64,
    /// The host's last-level cache, where the system reports it.
    pub cache_bytes: Option<u64>,
    /// Host peak `f32` multiply+add throughput (not fused), in GFLOP/s.
    pub gflops: f64,
    /// Every plan at every size, size-major; `speedup_over_eager` is against CPU eager.
    pub cells: Vec<AblationCell>,
}

impl CpuStudy {
    /// The cell of `row` at `n`.
    pub fn cell(&self, row: &str, n: usize) -> Option<&AblationCell> {
        self.cells.iter().find(|c| c.row == row && c.num_envs == n)
    }

    /// The fastest measured plan at `n`: `(row, env-steps/s)`.
    pub fn best(&self, n: usize) -> Option<(&str, f64)> {
        fastest(&self.cells, n)
    }

    /// The smallest of `sizes` from which on `device_rate(n)` beats the CPU's best plan at
    /// every larger measured size; `None` when the device never does.
    pub fn crossover(
        &self,
        sizes: &[usize],
        device_rate: impl Fn(usize) -> Option<f64>,
    ) -> Option<usize> {
        crossover(sizes, device_rate, |n| self.best(n).map(|b| b.1))
    }
}

/// The smallest of `sizes` from which on `device_rate(n)` beats `cpu_rate(n)` at every
/// larger size where both were measured; `None` when the device never does.
pub fn crossover(
    sizes: &[usize],
    device_rate: impl Fn(usize) -> Option<f64>,
    cpu_rate: impl Fn(usize) -> Option<f64>,
) -> Option<usize> {
    let wins: Vec<(usize, bool)> = sizes
        .iter()
        .filter_map(|&n| Some((n, device_rate(n)? > cpu_rate(n)?)))
        .collect();
    let last_loss = wins.iter().rposition(|(_, win)| !win);
    match last_loss {
        None => wins.first().map(|(n, _)| *n),
        Some(i) => wins.get(i + 1).map(|(n, _)| *n),
    }
}

/// The fastest measured cell of `cells` at `n`: `(row, env-steps/s)`.
pub fn fastest<'a>(
    cells: impl IntoIterator<Item = &'a AblationCell>,
    n: usize,
) -> Option<(&'a str, f64)> {
    cells
        .into_iter()
        .filter(|c| c.num_envs == n)
        .filter_map(|c| {
            c.profile
                .as_ref()
                .ok()
                .map(|p| (c.row.as_str(), p.env_steps_per_s))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// Measures the host roofline, then every CPU plan at each size, timed in turns;
/// `progress(message)` before each measurement.
pub fn measure_cpu(
    sizes: &[usize],
    roofline_copy_bytes: u64,
    settings: &TurnsSettings,
    mut progress: impl FnMut(&str),
) -> Result<CpuStudy, ReproduceError> {
    let cpu = Cpu::default();
    progress("host roofline");
    let roofline = measure_roofline(cpu.options().threads, roofline_copy_bytes as usize);
    let mut cells: Vec<AblationCell> = Vec::new();
    for &n in sizes {
        progress(&format!(
            "CPU: {} plans in turns, n = {n}",
            cpu_plans().len()
        ));
        let mut at_n = cartpole_cells(&cpu, &cpu_plans(), n, settings)?;
        set_over_eager(&mut at_n);
        cells.extend(at_n);
    }
    Ok(CpuStudy {
        device: cpu.description(),
        simd: roofline.simd.to_string(),
        threads: roofline.threads,
        copy_gbps: roofline.copy_bytes_per_s / 1e9,
        memcpy_gbps: roofline.memcpy_bytes_per_s / 1e9,
        streaming_gbps: roofline.streaming_bytes_per_s / 1e9,
        copy_bytes: roofline.copy_bytes as u64,
        cache_bytes: roofline.cache_bytes,
        gflops: roofline.flops_per_s / 1e9,
        cells,
    })
}

/// Measurements [`measure_cpu`] takes for `sizes`.
pub fn cpu_tasks(sizes: usize) -> usize {
    1 + sizes
}

/// A study of made-up numbers on `device` holding `cells`, for the tests of what reads it.
#[cfg(test)]
impl CpuStudy {
    pub(crate) fn made_up(device: &str, cells: Vec<AblationCell>) -> Self {
        CpuStudy {
            device: device.into(),
            simd: "avx2".into(),
            threads: 2,
            copy_gbps: 10.0,
            memcpy_gbps: 8.0,
            streaming_gbps: 10.0,
            copy_bytes: 1 << 30,
            cache_bytes: Some(32 << 20),
            gflops: 100.0,
            cells,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(row: &str, n: usize, rate: f64) -> AblationCell {
        let mut profile = crate::profile::test_profile(row, n, n as f64 / rate, 1.0);
        profile.env_steps_per_s = rate;
        AblationCell::new(row, n, Ok(profile), vec![n as f64 / rate])
    }

    #[test]
    fn crossover_is_the_first_size_from_which_the_device_always_wins() {
        let study = CpuStudy::made_up(
            "cpu",
            vec![
                cell("fused", 1, 10.0),
                cell("fused", 64, 100.0),
                cell("fused", 4096, 1000.0),
            ],
        );
        let sizes = [1, 64, 4096];
        // The device wins at 4096 only.
        assert_eq!(
            study.crossover(&sizes, |n| Some(n as f64 * 0.3)),
            Some(4096)
        );
        // A win at 1 followed by a loss at 64 is not a crossover at 1.
        let rates = |n: usize| Some(if n == 64 { 50.0 } else { 1e9 });
        assert_eq!(study.crossover(&sizes, rates), Some(4096));
        assert_eq!(study.crossover(&sizes, |_| Some(1e9)), Some(1));
        assert_eq!(study.crossover(&sizes, |_| Some(1.0)), None);
        // Plan against plan: sizes where either side is missing are skipped.
        let cpu = |n: usize| (n != 64).then_some(n as f64);
        assert_eq!(crossover(&sizes, |n| Some(n as f64 * 2.0), cpu), Some(1));
        assert_eq!(
            crossover(&sizes, |n| Some(if n < 4096 { 0.5 } else { 5e3 }), cpu),
            Some(4096)
        );
        assert_eq!(crossover(&sizes, |_| None, cpu), None);
        assert_eq!(study.best(64), Some(("fused", 100.0)));
    }
}
