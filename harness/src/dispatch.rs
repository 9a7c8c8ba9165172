//! The dispatch tax: the time of an empty launch and of a 1-element launch, and what it
//! means for a plan: the busy fraction and the compile break-even.

use std::time::Instant;

use cartfuse_fusion::buffers::upload;
use cartfuse_fusion::launch::{KernelLaunch, LaunchLedger};
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
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct DispatchTax {
    /// One cube, no memory access.
    pub empty_launch_s: f64,
    /// One element read and written.
    pub one_element_launch_s: f64,
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
}
