//! The CPU against the device over n (`cartfuse crossover`): the study found XLA's CPU
//! backend ahead of the GPU below about 70 simulations. At each size the same CartPole plan
//! runs on the native CPU runtime and on the device, both built and warmed, then timed in
//! turns; the crossover is the smallest size from which the device's median round wins at
//! every larger size.
//!
//! Each side is timed twice in the same rounds: device-resident calls (actions and outputs
//! stay where the step runs: the kernels' speed) and host steps (host actions in, every
//! output copied out, one call after the other: what a user's loop sees). The host
//! crossover is the one the automatic device choice uses; the device's host step over its
//! device-resident step is the price of the round trip.

use cartfuse_env::{EnvBackend, EnvError, StepPlan};
use cartfuse_fusion::{cpu::Cpu, exec::Backend};

use crate::cells::too_big;
use crate::profile::TimedEnv;
use crate::studies::cpu::crossover;
use crate::turns::{RoundRatio, Turn, TurnsSettings, cartpole_next_step, run_rounds};

/// The study's crossover: XLA's CPU backend beat the GPU below about this many simulations.
pub const STUDY_CROSSOVER: usize = 70;

/// One plan at one size on both sides.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CrossoverPoint {
    /// The plan, on both.
    pub plan: String,
    /// Env count.
    pub num_envs: usize,
    /// Seconds per step on the CPU, one per round (empty when it did not fit).
    pub cpu_step_s: Vec<f64>,
    /// Seconds per step on the device, one per round (empty when it did not fit).
    pub device_step_s: Vec<f64>,
    /// Seconds per host step on the CPU, one per round.
    pub cpu_host_step_s: Vec<f64>,
    /// Seconds per host step on the device, one per round.
    pub device_host_step_s: Vec<f64>,
    /// Why a side was not measured.
    pub skipped: Option<String>,
}

impl CrossoverPoint {
    /// CPU time / device time round by round (above 1: the device is faster).
    pub fn device_speedup(&self) -> Option<RoundRatio> {
        RoundRatio::of(&self.cpu_step_s, &self.device_step_s)
    }

    /// The same for host steps on both sides.
    pub fn host_speedup(&self) -> Option<RoundRatio> {
        RoundRatio::of(&self.cpu_host_step_s, &self.device_host_step_s)
    }

    /// The device's host step over its device-resident step, round by round (1: the round
    /// trip costs nothing).
    pub fn round_trip(&self) -> Option<RoundRatio> {
        RoundRatio::of(&self.device_host_step_s, &self.device_step_s)
    }
}

/// Every plan at every size.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Crossover {
    /// The device, as its backend describes itself.
    pub device: String,
    /// The device's runtime.
    pub runtime: String,
    /// The CPU runtime's description.
    pub cpu: String,
    /// How each size was timed.
    pub turns: TurnsSettings,
    /// Every point, plan by plan.
    pub points: Vec<CrossoverPoint>,
}

impl Crossover {
    /// The sizes measured, in order.
    pub fn sizes(&self) -> Vec<usize> {
        let mut sizes: Vec<usize> = Vec::new();
        for p in &self.points {
            if !sizes.contains(&p.num_envs) {
                sizes.push(p.num_envs);
            }
        }
        sizes
    }

    /// The smallest size from which the device's median round beats the CPU under `plan`
    /// at every larger measured size, device-resident; `None` when it never does.
    pub fn from(&self, plan: &str) -> Option<usize> {
        self.crossover(plan, CrossoverPoint::device_speedup)
    }

    /// As [`Self::from`], for host steps on both sides (what the automatic choice uses).
    pub fn host_from(&self, plan: &str) -> Option<usize> {
        self.crossover(plan, CrossoverPoint::host_speedup)
    }

    fn crossover(
        &self,
        plan: &str,
        speedup: fn(&CrossoverPoint) -> Option<RoundRatio>,
    ) -> Option<usize> {
        let point = |n: usize| {
            self.points
                .iter()
                .find(|p| p.plan == plan && p.num_envs == n)
                .and_then(speedup)
        };
        // Rates in a common unit: the CPU at 1, the device at its speedup.
        crossover(
            &self.sizes(),
            |n| point(n).map(|r| r.median),
            |n| point(n).map(|_| 1.0),
        )
    }
}

/// Sizes `from` to `to` in powers of `step` (and `to` itself).
pub fn sizes(from: usize, to: usize, step: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut n = from.max(1);
    while n < to {
        out.push(n);
        n = n.saturating_mul(step.max(2));
    }
    out.push(to.max(1));
    out
}

/// `plan` over `n` envs on `backend`, timed device-resident and by host steps.
fn timed<B: EnvBackend + 'static>(
    backend: &B,
    plan: StepPlan,
    n: usize,
) -> Result<[Box<dyn Turn>; 2], EnvError> {
    let config = cartpole_next_step();
    let timed = || TimedEnv::new(backend.clone(), config.params, config.episode(), plan, n);
    Ok([Box::new(timed()?), Box::new(timed()?.host_steps()?)])
}

/// Each of `plans` at each of `sizes` on the native CPU and on `device`, in turns;
/// `progress(message)` before each point.
pub fn measure_crossover<B: EnvBackend + 'static>(
    device: &B,
    plans: &[StepPlan],
    sizes: &[usize],
    settings: &TurnsSettings,
    mut progress: impl FnMut(&str),
) -> Result<Crossover, EnvError> {
    let cpu = Cpu::default();
    let mut points = Vec::new();
    for &plan in plans {
        for &n in sizes {
            progress(&format!(
                "{plan} on the CPU and on the device in turns, n = {n}"
            ));
            let mut point = CrossoverPoint {
                plan: plan.to_string(),
                num_envs: n,
                cpu_step_s: Vec::new(),
                device_step_s: Vec::new(),
                cpu_host_step_s: Vec::new(),
                device_host_step_s: Vec::new(),
                skipped: None,
            };
            match (timed(&cpu, plan, n), timed(device, plan, n)) {
                (Ok([mut cpu, mut cpu_host]), Ok([mut device, mut device_host])) => {
                    let mut turns: Vec<&mut dyn Turn> =
                        vec![&mut *cpu, &mut *device, &mut *cpu_host, &mut *device_host];
                    let mut step_s = run_rounds(&mut turns, settings, |_| {})?.step_s.into_iter();
                    let mut next = || step_s.next().unwrap_or_default();
                    point.cpu_step_s = next();
                    point.device_step_s = next();
                    point.cpu_host_step_s = next();
                    point.device_host_step_s = next();
                }
                (Err(error), _) | (_, Err(error)) => match too_big(&error) {
                    Some(skipped) => point.skipped = Some(skipped.reason),
                    None => return Err(error),
                },
            }
            points.push(point);
        }
    }
    Ok(Crossover {
        device: device.description(),
        runtime: device.runtime_name().into(),
        cpu: cpu.description(),
        turns: *settings,
        points,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(n: usize, cpu: f64, device: f64) -> CrossoverPoint {
        CrossoverPoint {
            plan: "fused".into(),
            num_envs: n,
            cpu_step_s: vec![cpu, cpu],
            device_step_s: vec![device, device * 1.1],
            // Host steps: the CPU's cost the same, the device's add 3 units of round trip.
            cpu_host_step_s: vec![cpu, cpu],
            device_host_step_s: vec![device + 3.0, device * 1.1 + 3.0],
            skipped: None,
        }
    }

    #[test]
    fn the_crossover_is_where_the_device_wins_from_on() {
        assert_eq!(sizes(1, 1 << 20, 4).len(), 11);
        assert_eq!(sizes(1, 100, 4), [1, 4, 16, 64, 100]);
        let study = |points| Crossover {
            device: "GPU".into(),
            runtime: "cuda".into(),
            cpu: "CPU".into(),
            turns: TurnsSettings::quick(),
            points,
        };
        // The CPU is faster at 1 and 4, the device from 16 on.
        let c = study(vec![
            point(1, 1.0, 2.0),
            point(4, 1.0, 1.5),
            point(16, 2.0, 1.0),
            point(64, 8.0, 1.0),
        ]);
        assert_eq!(c.from("fused"), Some(16));
        assert_eq!(c.from("hand-written"), None);
        // With the round trip the device wins only from 64 envs (8 against 4).
        assert_eq!(c.host_from("fused"), Some(64));
        let trip = c.points[0].round_trip().unwrap();
        assert_eq!(
            (trip.slowest_round, trip.fastest_round),
            (5.2 / 2.2, 5.0 / 2.0)
        );
        let r = c.points[2].device_speedup().unwrap();
        assert_eq!((r.slowest_round, r.fastest_round), (2.0 / 1.1, 2.0));
        assert_eq!(study(vec![point(1, 1.0, 2.0)]).from("fused"), None);
    }
}
