//! The device roofline: peak copy bandwidth from a read-plus-write kernel over at least
//! 256 MB, peak FLOP/s from a chain of multiply-adds, and their ratio, the ridge point.

use std::time::Instant;

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

/// Four independent chains of `iterations` multiply-adds per vector lane, then one store.
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
        for _ in 0..iterations {
            a = a * m + c;
            b = b * m + c;
            d = d * m + c;
            e = e * m + c;
        }
        output[ABSOLUTE_POS] = a + b + d + e;
    }
}

/// Lanes per thread of the roofline kernels.
const WIDTH: usize = 4;
/// Multiply-add iterations of the FLOP kernel.
const FMA_ITERATIONS: u32 = 256;

/// The measured roofline of a device.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct DeviceRoofline {
    /// Bytes read plus written by one copy launch.
    pub copy_bytes: u64,
    /// Peak copy bandwidth (GB/s, 1e9 bytes).
    pub copy_gbps: f64,
    /// FLOPs of one FMA-chain launch.
    pub fma_flops: u64,
    /// Peak arithmetic throughput (GFLOP/s).
    pub gflops: f64,
    /// FLOPs per byte where the two roofs meet.
    pub ridge_flops_per_byte: f64,
}

fn best_of<R: Runtime>(client: &ComputeClient<R>, repeats: usize, mut launch: impl FnMut()) -> f64 {
    launch();
    cubecl::future::block_on(client.sync()).ok();
    let mut best = f64::MAX;
    for _ in 0..repeats {
        let start = Instant::now();
        launch();
        cubecl::future::block_on(client.sync()).ok();
        best = best.min(start.elapsed().as_secs_f64());
    }
    best
}

/// Measures the roofline with `copy_bytes` moved per copy (half read, half written) and
/// `fma_threads` threads of multiply-add chains, taking the best of `repeats` timings.
pub fn measure_roofline<R: Runtime>(
    client: &ComputeClient<R>,
    ledger: &LaunchLedger,
    copy_bytes: u64,
    fma_threads: usize,
    repeats: usize,
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
    let gflops = fma_flops as f64 / fma_seconds / 1e9;
    DeviceRoofline {
        copy_bytes: 2 * buffer_bytes,
        copy_gbps,
        fma_flops,
        gflops,
        ridge_flops_per_byte: gflops / copy_gbps,
    }
}
