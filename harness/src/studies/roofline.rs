//! The device roofline: peak copy bandwidth from a read-plus-write kernel over at least
//! 256 MB (and 8 times the device's last-level cache where it is known), peak FLOP/s from a
//! chain of multiply-adds, and their ratio, the ridge point; beside the copy kernel, the
//! driver's own device-to-device copy of the same bytes, measured in the same run, which
//! the kernel's copy is held to.
//!
//! Each timing runs [`LAUNCHES_PER_TIMING`] launches back to back and synchronises once: a
//! synchronisation per launch would count its own latency against a copy that takes tens of
//! microseconds on a GPU (on an H200 the per-launch timing read 1,855-3,239 GB/s where the
//! driver copies 4,073-4,285).

use std::time::Instant;

use cartfuse_fusion::cube::driver_copy::DriverCopy;

use cartfuse_fusion::cube::buffers::upload;
use cartfuse_fusion::cube::kernel::elementwise_launch_shape;
use cartfuse_fusion::exec::{KernelLaunch, LaunchLedger};
use cubecl::prelude::*;

use cartfuse_fusion::cubecl;

/// Copies `input` to `output`, one vector per thread.
#[cube(launch_unchecked)]
fn copy_vectors<N: Size>(input: &Array<Vector<f32, N>>, output: &mut Array<Vector<f32, N>>) {
    if ABSOLUTE_POS < input.len() {
        output[ABSOLUTE_POS] = input[ABSOLUTE_POS];
    }
}

/// Four independent chains of `iterations` fused multiply-adds per vector lane, then one
/// store.
#[cube(launch_unchecked)]
fn fma_chains<N: Size>(output: &mut Array<Vector<f32, N>>, #[comptime] iterations: u32) {
    if ABSOLUTE_POS < output.len() {
        let seed = Vector::<f32, N>::new(f32::cast_from(ABSOLUTE_POS % 1024usize) * f32::new(1e-3));
        let m = Vector::<f32, N>::new(f32::new(0.999_9));
        let c = Vector::<f32, N>::new(f32::new(1e-4));
        let mut a = seed;
        let mut b = seed + c;
        let mut d = seed + c + c;
        let mut e = seed + c + c + c;
        // Explicit fused multiply-adds: kernels' own multiplies and adds are never contracted
        // (naga's NoContraction, NVRTC's --fmad=false; vendor/README.md), so `a * m + c`
        // would measure two instructions where the device issues one.
        for _ in 0..iterations {
            a = fma(a, m, c);
            b = fma(b, m, c);
            d = fma(d, m, c);
            e = fma(e, m, c);
        }
        output[ABSOLUTE_POS] = a + b + d + e;
    }
}

/// Lanes per thread of the roofline kernels.
const WIDTH: usize = 4;
/// Launches per timed run (one synchronisation at its end).
pub const LAUNCHES_PER_TIMING: usize = 10;
/// Multiply-add iterations of the FLOP kernel.
const FMA_ITERATIONS: u32 = 256;

/// The measured roofline of a device.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DeviceRoofline {
    /// Bytes read plus written by one copy launch.
    pub copy_bytes: u64,
    /// Peak copy bandwidth (GB/s, 1e9 bytes).
    pub copy_gbps: f64,
    /// FLOPs of one FMA-chain launch.
    pub fma_flops: u64,
    /// Peak arithmetic throughput (GFLOP/s).
    pub gflops: f64,
    /// FLOPs per byte where the two roofs meet (the copy roof: [`Self::roof_gbps`]).
    pub ridge_flops_per_byte: f64,
    /// The driver's own copy of the same bytes, or why it was not measured.
    pub driver_copy: Result<DriverCopy, String>,
}

impl DeviceRoofline {
    /// The copy roof: the faster of the copy kernel and the driver's copy (what the device
    /// can move; a kernel far below the driver's copy has room left, not a lower roof).
    pub fn roof_gbps(&self) -> f64 {
        self.driver_copy
            .as_ref()
            .map_or(self.copy_gbps, |driver| driver.gbps.max(self.copy_gbps))
    }

    /// The copy kernel's bandwidth over the driver's copy, where the driver's was measured.
    pub fn kernel_over_driver(&self) -> Option<f64> {
        self.driver_copy
            .as_ref()
            .ok()
            .map(|driver| self.copy_gbps / driver.gbps)
    }
}

/// Measures the driver's own copy of a number of bytes each way (see
/// [`cartfuse_fusion::cube::driver_copy`]); the CLI picks the one of the device's runtime.
#[derive(Debug, Clone, Copy)]
pub struct DriverCopyMeter {
    /// The runtime it copies on (`"wgpu"`, `"cuda"`): what two meters compare by.
    pub runtime: &'static str,
    /// Copies a number of bytes each way, timed.
    pub measure: fn(u64) -> Result<DriverCopy, String>,
}

impl PartialEq for DriverCopyMeter {
    fn eq(&self, other: &Self) -> bool {
        self.runtime == other.runtime
    }
}

/// Seconds a launch, from the best of `repeats` runs of [`LAUNCHES_PER_TIMING`] launches
/// and one synchronisation (after one untimed run).
fn best_of<R: Runtime>(client: &ComputeClient<R>, repeats: usize, mut launch: impl FnMut()) -> f64 {
    let mut run = || {
        for _ in 0..LAUNCHES_PER_TIMING {
            launch();
        }
        cubecl::future::block_on(client.sync()).ok();
    };
    run();
    let mut best = f64::MAX;
    for _ in 0..repeats {
        let start = Instant::now();
        run();
        best = best.min(start.elapsed().as_secs_f64());
    }
    best / LAUNCHES_PER_TIMING as f64
}

/// Measures the roofline with `copy_bytes` moved per copy (half read, half written) and
/// `fma_threads` threads of multiply-add chains, taking the best of `repeats` timings, and
/// the driver's copy of the same bytes with `driver_copy` (`None`: the runtime has none).
pub fn measure_roofline<R: Runtime>(
    client: &ComputeClient<R>,
    ledger: &LaunchLedger,
    copy_bytes: u64,
    fma_threads: usize,
    repeats: usize,
    driver_copy: Option<DriverCopyMeter>,
) -> DeviceRoofline {
    let max_binding = client.properties().memory.max_page_size;
    let buffer_bytes = (copy_bytes / 2).min(max_binding) / 16 * 16;
    let elements = (buffer_bytes / 4) as usize;
    let input = upload(client, &vec![1.0f32; elements]);
    let output = client.empty(buffer_bytes as usize);
    let (count, dim) = elementwise_launch_shape(client, elements / WIDTH);
    let copy_seconds = best_of(client, repeats, || {
        let record = KernelLaunch {
            kernel: "roofline_copy",
            elements: elements as u64,
            bytes_read: buffer_bytes,
            bytes_written: buffer_bytes,
        };
        ledger.launch(record, || unsafe {
            // SAFETY: both buffers hold `elements` f32, a multiple of WIDTH.
            copy_vectors::launch_unchecked::<R>(
                client,
                count.clone(),
                dim,
                WIDTH,
                ArrayArg::from_raw_parts(input.clone(), elements),
                ArrayArg::from_raw_parts(output.clone(), elements),
            )
        })
    });
    let fma_out = client.empty(fma_threads * WIDTH * 4);
    let (count, dim) = elementwise_launch_shape(client, fma_threads);
    let fma_flops = 2 * 4 * u64::from(FMA_ITERATIONS) * (fma_threads * WIDTH) as u64;
    let fma_seconds = best_of(client, repeats, || {
        let record = KernelLaunch {
            kernel: "roofline_fma",
            elements: (fma_threads * WIDTH) as u64,
            bytes_read: 0,
            bytes_written: (fma_threads * WIDTH * 4) as u64,
        };
        ledger.launch(record, || unsafe {
            // SAFETY: the output holds `fma_threads * WIDTH` f32.
            fma_chains::launch_unchecked::<R>(
                client,
                count.clone(),
                dim,
                WIDTH,
                ArrayArg::from_raw_parts(fma_out.clone(), fma_threads * WIDTH),
                FMA_ITERATIONS,
            )
        })
    });
    let copy_gbps = 2.0 * buffer_bytes as f64 / copy_seconds / 1e9;
    // The driver's copy after the kernels: the buffers above stay allocated meanwhile, as
    // they would in any run, and the driver copies the same bytes.
    let driver_copy = match driver_copy {
        Some(meter) => (meter.measure)(buffer_bytes),
        None => Err(format!("no driver copy is measured on {}", R::name(client))),
    };
    let gflops = fma_flops as f64 / fma_seconds / 1e9;
    let mut roofline = DeviceRoofline {
        copy_bytes: 2 * buffer_bytes,
        copy_gbps,
        fma_flops,
        gflops,
        ridge_flops_per_byte: 0.0,
        driver_copy,
    };
    roofline.ridge_flops_per_byte = gflops / roofline.roof_gbps();
    roofline
}
