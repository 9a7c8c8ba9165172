//! What a launch and a host step cost on CUDA below cubecl (issue 49, item 5): the driver's
//! own launch of an empty kernel, back to back and each followed by its wait, and the floor of
//! a host step (the actions up, one kernel, the outputs down, one wait), issued op by op and
//! replayed as a CUDA graph, at 1 and 4,096 envs, from page-locked host memory.
//!
//! ```text
//! cargo run --release --features cuda --example cuda_launch [ROUNDS] [CALLS]
//! ```
//!
//! Medians over ROUNDS rounds (default 11) of CALLS calls (default 1,000) of every block, the
//! blocks in turns within a round, microseconds per call; then the graph against the op-by-op
//! step and the step against a bare launch, as medians of per-round ratios with their spread. Read beside cubecl's launch
//! (`reproduce`'s dispatch tax) and cubecl's host step (`scripts/host-path.sh --device
//! cuda`): if a graph halves the floor of the one-env step, a host step replayed as a graph
//! is worth building. `scripts/gpu-check.sh` runs it as its `launch` step. Needs an NVIDIA
//! driver (loaded at run time); without one it says so and exits with status 1.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaGraph, CudaStream, LaunchConfig, PushKernelArg, result, sys,
};

/// An empty kernel, and one with a CartPole step's traffic: a word of actions in, a state of
/// four floats read and written, seven words out (observation, reward, two flags) per env.
const KERNELS: &str = r#"
extern "C" __global__ void empty() {}

extern "C" __global__ void step(const unsigned int* actions, float* state, float* out,
                                unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float force = actions[i] ? 10.0f : -10.0f;
    float x = state[4 * i] + 0.02f * state[4 * i + 1];
    float v = state[4 * i + 1] + 0.02f * force;
    state[4 * i] = x;
    state[4 * i + 1] = v;
    for (unsigned int k = 0; k < 4; ++k) out[7 * i + k] = state[4 * i + k];
    out[7 * i + 4] = 1.0f;
    out[7 * i + 5] = x > 2.4f || x < -2.4f;
    out[7 * i + 6] = 0.0f;
}
"#;

/// Words of outputs per env (observation, reward, terminated, truncated).
const OUT_WORDS: usize = 7;

/// Device buffers of one batch, allocated once, freed on drop. Raw driver calls rather than
/// cudarc's safe slices: those wait on and record an event around every copy and launch,
/// which is work a bare launch does not do and which a stream capture refuses.
struct Batch {
    n: usize,
    actions: sys::CUdeviceptr,
    state: sys::CUdeviceptr,
    out: sys::CUdeviceptr,
    host_actions: Vec<u32>,
    host_out: Vec<f32>,
}

impl Batch {
    fn new(stream: &CudaStream, n: usize) -> Result<Self> {
        stream.context().bind_to_thread()?;
        // SAFETY: plain allocations of the sizes given, freed in `drop`; the state is zeroed
        // before use.
        unsafe {
            let batch = Self {
                n,
                actions: result::malloc_sync(4 * n)?,
                state: result::malloc_sync(16 * n)?,
                out: result::malloc_sync(4 * OUT_WORDS * n)?,
                host_actions: (0..n as u32).map(|i| i & 1).collect(),
                host_out: vec![0.0; OUT_WORDS * n],
            };
            // On the timed stream, which does not wait for CUDA's legacy stream (where the
            // blocking `cuMemsetD8` would go: it is asynchronous for device memory).
            result::memset_d8_async(batch.state, 0, 16 * n, stream.cu_stream())?;
            stream.synchronize()?;
            // The host buffers stay page-locked for the run, as a host step's would.
            register(&batch.host_actions)?;
            register(&batch.host_out)?;
            Ok(batch)
        }
    }

    /// Enqueues one host step on `stream`: the actions up, the step, the outputs down.
    fn enqueue(&mut self, stream: &CudaStream, kernel: &CudaFunction) -> Result<()> {
        let n = self.n as u32;
        // SAFETY: the device buffers hold `n` actions, `4n` state and `7n` output words, the
        // host buffers `n` and `7n`, all alive until the stream has finished with them (every
        // caller waits on the stream before the batch is dropped).
        unsafe {
            result::memcpy_htod_async(self.actions, &self.host_actions, stream.cu_stream())?;
            stream
                .launch_builder(kernel)
                .arg(&self.actions)
                .arg(&self.state)
                .arg(&self.out)
                .arg(&n)
                .launch(LaunchConfig::for_num_elems(n))?;
            result::memcpy_dtoh_async(&mut self.host_out, self.out, stream.cu_stream())?;
        }
        Ok(())
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        // SAFETY: allocated in `new`, registered there; nothing uses them any more.
        unsafe {
            let hosts: [*const std::ffi::c_void; 2] = [
                self.host_actions.as_ptr().cast(),
                self.host_out.as_ptr().cast(),
            ];
            for host in hosts {
                let _ = sys::cuMemHostUnregister(host.cast_mut());
            }
            for device in [self.actions, self.state, self.out] {
                let _ = result::free_sync(device);
            }
        }
    }
}

/// Page-locks `host` (a step's host buffers are allocated once and stay registered).
///
/// # Safety
/// `host` must outlive the registration (unregistered in [`Batch`]'s drop).
unsafe fn register<T>(host: &[T]) -> Result<()> {
    // SAFETY: the caller keeps `host` alive while registered.
    unsafe {
        sys::cuMemHostRegister_v2(
            host.as_ptr().cast_mut().cast(),
            std::mem::size_of_val(host),
            sys::CU_MEMHOSTREGISTER_PORTABLE,
        )
        .result()?;
    }
    Ok(())
}

/// Captures one host step of `batch` on `stream` as a graph.
fn capture(
    stream: &Arc<CudaStream>,
    batch: &mut Batch,
    kernel: &CudaFunction,
) -> Result<CudaGraph> {
    stream.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
    let enqueued = batch.enqueue(stream, kernel);
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0))?;
    enqueued?;
    let graph = graph.context("the capture recorded nothing")?;
    graph.upload()?;
    Ok(graph)
}

/// Seconds per call of `call`, `calls` times.
fn per_call(calls: usize, mut call: impl FnMut() -> Result<()>) -> Result<f64> {
    let start = Instant::now();
    for _ in 0..calls {
        call()?;
    }
    Ok(start.elapsed().as_secs_f64() / calls as f64)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args
        .next()
        .map_or(Ok(11), |a| a.parse())
        .context("ROUNDS")?;
    let calls: usize = args
        .next()
        .map_or(Ok(1000), |a| a.parse())
        .context("CALLS")?;
    if rounds == 0 || calls == 0 {
        bail!("ROUNDS and CALLS must be positive");
    }
    // What is missing when CUDA cannot run here (the driver, a device, NVRTC), as the CLI says.
    cartfuse::fusion::cube::device::cuda_available()?;
    let ctx = CudaContext::new(0)?;
    // SAFETY: every buffer here is used on the one stream below, in order.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.new_stream()?;
    let ptx = cudarc::nvrtc::compile_ptx(KERNELS).context("NVRTC compiling the kernels")?;
    let module = ctx.load_module(ptx)?;
    let (empty, step) = (
        module.load_function("empty")?,
        module.load_function("step")?,
    );
    let one = LaunchConfig::for_num_elems(1);
    let launch_empty = || -> Result<()> {
        // SAFETY: the kernel takes no arguments.
        unsafe { stream.launch_builder(&empty).launch(one)? };
        Ok(())
    };

    let mut batches = [Batch::new(&stream, 1)?, Batch::new(&stream, 4096)?];
    let graphs = [
        capture(&stream, &mut batches[0], &step)?,
        capture(&stream, &mut batches[1], &step)?,
    ];
    stream.synchronize()?;

    let labels = [
        "empty kernel, back to back",
        "empty kernel + wait",
        "host step, n = 1: up, step, down, wait",
        "host step, n = 1, as a graph + wait",
        "host step, n = 4,096: up, step, down, wait",
        "host step, n = 4,096, as a graph + wait",
    ];
    let mut seconds = vec![Vec::new(); labels.len()];
    for round in 0..=rounds {
        let mut times = Vec::with_capacity(labels.len());
        // Back to back: `calls` launches, then one wait for them all.
        times.push(
            per_call(calls, launch_empty)? + {
                let start = Instant::now();
                stream.synchronize()?;
                start.elapsed().as_secs_f64() / calls as f64
            },
        );
        times.push(per_call(calls, || {
            launch_empty()?;
            Ok(stream.synchronize()?)
        })?);
        for (batch, graph) in batches.iter_mut().zip(&graphs) {
            times.push(per_call(calls, || {
                batch.enqueue(&stream, &step)?;
                Ok(stream.synchronize()?)
            })?);
            times.push(per_call(calls, || {
                graph.launch()?;
                Ok(stream.synchronize()?)
            })?);
        }
        // Round 0 warms up (module load, first launches, the graphs' first replays).
        if round > 0 {
            for (all, t) in seconds.iter_mut().zip(times) {
                all.push(t);
            }
        }
    }
    ctx.check_err()?;
    println!("| CUDA, the driver's own calls ({rounds} rounds of {calls}) | us per call |");
    println!("|---|---:|");
    for (label, all) in labels.iter().zip(&seconds) {
        println!("| {label} | {:.2} |", median(all.clone()) * 1e6);
    }
    // The comparisons, per round (the blocks ran in turns within each): median, then the
    // least and greatest round.
    println!();
    println!("| per round, in turns | median | least-greatest |");
    println!("|---|---:|---:|");
    for (label, over, under) in [
        ("host step as a graph / op by op, n = 1", 3, 2),
        ("host step as a graph / op by op, n = 4,096", 5, 4),
        ("op-by-op host step / empty kernel + wait, n = 1", 2, 1),
    ] {
        let ratios: Vec<f64> = seconds[over]
            .iter()
            .zip(&seconds[under])
            .map(|(a, b)| a / b)
            .collect();
        let (least, greatest) = ratios
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(l, g), &r| (l.min(r), g.max(r)));
        let median = median(ratios);
        println!("| {label} | {median:.2}x | {least:.2}-{greatest:.2}x |");
    }
    Ok(())
}
