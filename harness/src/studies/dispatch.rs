//! The dispatch tax: the time of an empty launch and of a 1-element launch, the cost of a
//! launch inside a step fitted across plans, and what it means for a plan: the busy
//! fraction and the compile break-even.

use std::time::Instant;

use cartfuse_fusion::cube::buffers::upload;
use cartfuse_fusion::exec::{KernelLaunch, LaunchLedger};
use cubecl::prelude::*;

use cartfuse_fusion::cubecl;

/// Does nothing (its guard is false for the single thread it runs): the cost of a launch
/// and nothing else. No scalar arguments, so nothing is uploaded per launch.
#[cube(launch_unchecked)]
fn empty_kernel(output: &mut Array<u32>) {
    if ABSOLUTE_POS > 1_000_000usize {
        output[0] = 1u32;
    }
}

/// Writes one element.
#[cube(launch_unchecked)]
fn one_element(input: &Array<f32>, output: &mut Array<f32>) {
    if ABSOLUTE_POS < input.len() {
        output[ABSOLUTE_POS] = input[ABSOLUTE_POS] * f32::new(0.5) + f32::new(1.0);
    }
}

/// Launch costs, seconds per launch (median of batches of back-to-back launches).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DispatchTax {
    /// One cube, no memory access.
    pub empty_launch_s: f64,
    /// One element read and written.
    pub one_element_launch_s: f64,
    /// The launch cost fitted from step time against launches per step across plans at
    /// one size ([`fit_launch_cost`]); `None` until the plans are measured, or when they
    /// do not determine a line.
    pub fitted: Option<LaunchFit>,
}

impl DispatchTax {
    /// The launch cost the models use: the fitted cost when there is one (a launch inside a
    /// step, queued behind others, is what a step pays), else the empty launch; and which.
    pub fn launch_cost(&self) -> (f64, &'static str) {
        match &self.fitted {
            Some(fit) if fit.per_launch_s > 0.0 => (fit.per_launch_s, "fitted launch cost"),
            _ => (self.empty_launch_s, "measured empty launch"),
        }
    }
}

/// `step = fixed + per_launch * launches`, least squares over measured plans at one size.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LaunchFit {
    /// Env count of the plans fitted.
    pub num_envs: usize,
    /// Plans (points) fitted.
    pub points: usize,
    /// Slope: seconds per launch.
    pub per_launch_s: f64,
    /// Intercept: seconds per step not explained by launches.
    pub fixed_s: f64,
    /// Root-mean-square residual, seconds.
    pub rms_residual_s: f64,
    /// The point farthest from the line.
    pub worst_plan: String,
    /// Its residual (measured minus fitted), seconds.
    pub worst_residual_s: f64,
}

/// Fits `step_s = fixed + per_launch * launches` to `(plan, launches per step, step
/// seconds)` points by least squares. `None` with fewer than 3 points or when every point
/// has the same launch count (the slope is then undetermined).
pub fn fit_launch_cost(num_envs: usize, plans: &[(&str, f64, f64)]) -> Option<LaunchFit> {
    let points: Vec<(f64, f64)> = plans.iter().map(|p| (p.1, p.2)).collect();
    let count = points.len() as f64;
    if points.len() < 3 {
        return None;
    }
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / count;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / count;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    if sxx <= f64::EPSILON * mean_x.abs().max(1.0) {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let per_launch_s = sxy / sxx;
    let fixed_s = mean_y - per_launch_s * mean_x;
    let residual = |p: &(f64, f64)| p.1 - (fixed_s + per_launch_s * p.0);
    let rms_residual_s = (points.iter().map(|p| residual(p).powi(2)).sum::<f64>() / count).sqrt();
    let worst = (0..points.len())
        .max_by(|&a, &b| {
            residual(&points[a])
                .abs()
                .total_cmp(&residual(&points[b]).abs())
        })
        .expect("at least 3 points");
    Some(LaunchFit {
        num_envs,
        points: points.len(),
        per_launch_s,
        fixed_s,
        rms_residual_s,
        worst_plan: plans[worst].0.to_string(),
        worst_residual_s: residual(&points[worst]),
    })
}

fn per_launch<R: Runtime>(
    client: &ComputeClient<R>,
    launches: usize,
    batches: usize,
    mut launch: impl FnMut(),
) -> f64 {
    // One untimed batch: the first launches compile the kernel and warm the queue.
    for _ in 0..launches {
        launch();
    }
    cubecl::future::block_on(client.sync()).ok();
    let mut times = Vec::with_capacity(batches);
    for _ in 0..batches {
        let start = Instant::now();
        for _ in 0..launches {
            launch();
        }
        cubecl::future::block_on(client.sync()).ok();
        times.push(start.elapsed().as_secs_f64() / launches as f64);
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Measures both launch costs with `launches` launches per batch, median of `batches`.
pub fn measure_dispatch_tax<R: Runtime>(
    client: &ComputeClient<R>,
    ledger: &LaunchLedger,
    launches: usize,
    batches: usize,
) -> DispatchTax {
    let flag = upload(client, &[0u32]);
    let one = CubeCount::Static(1, 1, 1);
    let dim = CubeDim::new_1d(1);
    let empty_launch_s = per_launch(client, launches, batches, || {
        let record = KernelLaunch {
            kernel: "empty",
            elements: 0,
            bytes_read: 0,
            bytes_written: 0,
        };
        ledger.launch(record, || unsafe {
            // SAFETY: the only access is guarded by a condition false for the one thread.
            empty_kernel::launch_unchecked::<R>(
                client,
                one.clone(),
                dim,
                ArrayArg::from_raw_parts(flag.clone(), 1),
            )
        })
    });
    let input = upload(client, &[2.0f32]);
    let output = client.empty(4);
    let one_element_launch_s = per_launch(client, launches, batches, || {
        let record = KernelLaunch {
            kernel: "one_element",
            elements: 1,
            bytes_read: 4,
            bytes_written: 4,
        };
        ledger.launch(record, || unsafe {
            // SAFETY: both buffers hold one f32 and the kernel guards its index.
            one_element::launch_unchecked::<R>(
                client,
                one.clone(),
                dim,
                ArrayArg::from_raw_parts(input.clone(), 1),
                ArrayArg::from_raw_parts(output.clone(), 1),
            )
        })
    });
    DispatchTax {
        empty_launch_s,
        one_element_launch_s,
        fitted: None,
    }
}

/// Fraction of a step the device spends computing rather than paying the launch tax:
/// `N * t_compute / (N * (t_compute + t_launch))` with `N` launches per step,
/// `t_compute = step / N - t_launch` (clamped at 0).
pub fn busy_fraction(step_s: f64, launches_per_step: f64, launch_s: f64) -> f64 {
    let per_launch = step_s / launches_per_step;
    let compute = (per_launch - launch_s).max(0.0);
    compute / (compute + launch_s)
}

/// Steps after which compiling the faster plan has paid for itself:
/// `t_compile / (t_step_slow - t_step_fast)`; `None` when the "fast" plan is not faster.
pub fn break_even_steps(compile_s: f64, slow_step_s: f64, fast_step_s: f64) -> Option<f64> {
    (slow_step_s > fast_step_s).then(|| compile_s / (slow_step_s - fast_step_s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_fraction_and_break_even_follow_their_formulas() {
        // 10 launches of 40 us each, 30 us of which is tax: 10 us compute per launch.
        assert!((busy_fraction(400e-6, 10.0, 30e-6) - 0.25).abs() < 1e-12);
        assert_eq!(busy_fraction(100e-6, 10.0, 30e-6), 0.0);
        let steps = break_even_steps(0.1, 2e-3, 1e-3).unwrap();
        assert!((steps - 100.0).abs() < 1e-9, "{steps}");
        assert_eq!(break_even_steps(0.1, 1e-3, 2e-3), None);
    }

    #[test]
    fn the_launch_fit_recovers_a_line_and_reports_its_residual() {
        // 30 us per launch plus 50 us fixed, exactly.
        let names = ["a", "b", "c", "d", "e"];
        let exact: Vec<(&str, f64, f64)> = [0.1, 1.0, 5.0, 15.0, 65.0]
            .iter()
            .zip(names)
            .map(|(&l, name)| (name, l, 50e-6 + 30e-6 * l))
            .collect();
        let fit = fit_launch_cost(64, &exact).unwrap();
        assert!((fit.per_launch_s - 30e-6).abs() < 1e-12, "{fit:?}");
        assert!((fit.fixed_s - 50e-6).abs() < 1e-12, "{fit:?}");
        assert!(fit.rms_residual_s < 1e-12 && fit.worst_residual_s.abs() < 1e-12);
        assert_eq!((fit.num_envs, fit.points), (64, 5));
        // One point 40 us above the line: it is the worst, and the RMS shows it.
        let mut noisy = exact.clone();
        noisy[2].2 += 40e-6;
        let fit = fit_launch_cost(64, &noisy).unwrap();
        assert!(fit.rms_residual_s > 10e-6, "{fit:?}");
        assert_eq!(fit.worst_plan, "c");
        assert!(fit.worst_residual_s > 20e-6, "{fit:?}");
        // Undetermined slopes.
        assert_eq!(fit_launch_cost(64, &exact[..2]), None);
        let flat = [("a", 1.0, 1e-4), ("b", 1.0, 2e-4), ("c", 1.0, 3e-4)];
        assert_eq!(fit_launch_cost(64, &flat), None);
        // The models use the fit when there is one.
        let mut tax = DispatchTax {
            empty_launch_s: 10e-6,
            one_element_launch_s: 12e-6,
            fitted: None,
        };
        assert_eq!(tax.launch_cost(), (10e-6, "measured empty launch"));
        tax.fitted = fit_launch_cost(64, &exact);
        assert!((tax.launch_cost().0 - 30e-6).abs() < 1e-12);
        assert_eq!(tax.launch_cost().1, "fitted launch cost");
    }
}
