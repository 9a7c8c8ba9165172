//! burn's backends on the same CartPole step: throughput, what burn fused, warm-up.
//!
//! The step is [`burn_cartpole_step`]. On burn's fusion backend a
//! [`FusionInspector`] records every execution plan: the warm-up runs until the plans of
//! consecutive chunks of steps are identical (burn's fusion search has settled: it replays
//! the plans it found instead of exploring), and the fused blocks and unfused operations per
//! step are read from those plans. Launches as the CubeCL runtime saw them are counted by
//! [`launches_per_step_from_log`] in a child process whose `cubecl.toml` logs every
//! execution ([`LaunchProbe`] starts it), so the timed runs pay no logging.

use std::time::Instant;

use crate::studies::burn_step::{BurnCartPoleState, burn_cartpole_step};
use burn::tensor::Tensor;
use burn::tensor::backend::Backend;
use burn_fusion::inspect::{FusionInspector, FusionReport};
use burn_fusion::stream::StreamId;
use cartfuse_env::CartPoleConfig;
use cartfuse_env::reference::reset_state;

use crate::profile::ProfileSettings;

/// The burn backends compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum BurnBackend {
    /// `burn::backend::Wgpu`: CubeCL on wgpu with burn's fusion.
    #[cfg(feature = "wgpu")]
    WgpuFusion,
    /// burn's CubeCL backend on wgpu without fusion (`CubeBackend<WgpuRuntime>`).
    #[cfg(feature = "wgpu")]
    WgpuUnfused,
    /// `burn::backend::NdArray` on the CPU.
    NdArray,
    /// `burn::backend::Cuda` with fusion (the `cuda` feature; needs an NVIDIA GPU).
    #[cfg(feature = "cuda")]
    CudaFusion,
}

impl BurnBackend {
    /// The backends the report runs on any machine. `CudaFusion` (built with the `cuda`
    /// feature) needs an NVIDIA driver; `examples/burn_backends -- --cuda` runs it.
    pub const ALL: &[BurnBackend] = &[
        #[cfg(feature = "wgpu")]
        BurnBackend::WgpuFusion,
        #[cfg(feature = "wgpu")]
        BurnBackend::WgpuUnfused,
        BurnBackend::NdArray,
    ];

    /// The backends the report runs beside a device of `runtime` (`wgpu` or `cuda`): burn's
    /// CubeCL backends on that runtime (a CUDA machine may have no Vulkan driver), and
    /// NdArray.
    pub fn on(runtime: &str) -> Vec<BurnBackend> {
        match runtime {
            #[cfg(feature = "cuda")]
            "cuda" => vec![BurnBackend::CudaFusion, BurnBackend::NdArray],
            _ => Self::ALL.to_vec(),
        }
    }

    /// The name of burn's fusion backend on the runtime a report names (`wgpu<wgsl>`,
    /// `cuda`, ...), and of its unfused one where the report runs it.
    pub fn names_on(runtime: &str) -> (&'static str, &'static str) {
        if runtime.starts_with("cuda") {
            ("burn cuda fusion", "burn cuda unfused")
        } else {
            ("burn wgpu fusion", "burn wgpu unfused")
        }
    }

    /// The backend with this [`BurnBackend::probe_arg`].
    pub fn from_probe_arg(arg: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|b| b.probe_arg() == arg)
    }

    /// Its name as an argument of the launch-probe command.
    pub fn probe_arg(self) -> &'static str {
        match self {
            #[cfg(feature = "wgpu")]
            BurnBackend::WgpuFusion => "wgpu-fusion",
            #[cfg(feature = "wgpu")]
            BurnBackend::WgpuUnfused => "wgpu-unfused",
            BurnBackend::NdArray => "ndarray",
            #[cfg(feature = "cuda")]
            BurnBackend::CudaFusion => "cuda-fusion",
        }
    }

    /// Whether it launches CubeCL kernels (and so has launches to count).
    pub fn launches_kernels(self) -> bool {
        !matches!(self, BurnBackend::NdArray)
    }

    /// Name in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "wgpu")]
            BurnBackend::WgpuFusion => "burn wgpu fusion",
            #[cfg(feature = "wgpu")]
            BurnBackend::WgpuUnfused => "burn wgpu unfused",
            BurnBackend::NdArray => "burn ndarray",
            #[cfg(feature = "cuda")]
            BurnBackend::CudaFusion => "burn cuda fusion",
        }
    }
}

/// What benchmarking one backend at one size measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BurnProfile {
    /// Backend name.
    pub backend: String,
    /// Envs.
    pub num_envs: usize,
    /// Median seconds per step.
    pub step_s_median: f64,
    /// Fastest repeat.
    pub step_s_min: f64,
    /// Slowest repeat.
    pub step_s_max: f64,
    /// `num_envs / step_s_median`.
    pub env_steps_per_s: f64,
    /// The first step alone (kernel compiles, first allocations).
    pub first_step_s: f64,
    /// Steps run before timing (until fusion settled, for the fusion backend).
    pub warmup_steps: usize,
    /// Seconds of warm-up, first step included.
    pub warmup_s: f64,
    /// Whether the execution plans repeated before the warm-up limit.
    pub settled: bool,
    /// Fused blocks per step (fusion backend only): kernels burn generated.
    pub fused_blocks_per_step: Option<f64>,
    /// Operations run unfused per step (fusion backend only), each its own kernel.
    pub unfused_ops_per_step: Option<f64>,
    /// Operations fused per step (fusion backend only).
    pub fused_ops_per_step: Option<f64>,
    /// Kernel launches per step as the CubeCL runtime logged them, when measured.
    pub launches_per_step: Option<f64>,
    /// The operations burn ran unfused in one settled step (fusion backend only).
    pub unfused_ops: Vec<String>,
}

/// The operation's kind, e.g. `NumericFloat::MaskWhere`: the first two variant names of its
/// `Debug` text, skipping element types.
fn op_kind(op: &burn_ir::OperationIr) -> String {
    let text = format!("{op:?}");
    let is_dtype = |w: &str| {
        w.len() <= 4
            && w[1..].chars().all(|c| c.is_ascii_digit())
            && matches!(&w[..1], "F" | "I" | "U" | "B")
    };
    let words: Vec<&str> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && !is_dtype(w))
        .take(2)
        .collect();
    words.join("::")
}

/// The structure of the execution plans of a chunk: per report, the kind and size of each
/// block.
fn signature(reports: &[FusionReport]) -> Vec<Vec<(bool, usize)>> {
    reports
        .iter()
        .map(|r| {
            r.blocks
                .iter()
                .map(|b| (b.fuser_name().is_some(), b.operations.len()))
                .collect()
        })
        .collect()
}

/// Steps per warm-up chunk and the most chunks before giving up on settling.
const CHUNK: usize = 10;
const MAX_CHUNKS: usize = 60;

struct Stepper<B: Backend> {
    state: Option<BurnCartPoleState<B>>,
    action: Tensor<B, 1>,
    fresh: [Tensor<B, 1>; 4],
    config: CartPoleConfig,
    device: B::Device,
}

impl<B: Backend> Stepper<B> {
    fn new(n: usize, device: B::Device) -> Self {
        let config = CartPoleConfig::default();
        let rows: Vec<[f32; 4]> = (0..n as u32)
            .map(|i| reset_state(0, i, 0, &config.params).observation())
            .collect();
        let pool: Vec<[f32; 4]> = (0..n as u32)
            .map(|i| reset_state(0, i, 1, &config.params).observation())
            .collect();
        let column = |k: usize| {
            Tensor::<B, 1>::from_floats(
                pool.iter().map(|r| r[k]).collect::<Vec<_>>().as_slice(),
                &device,
            )
        };
        let actions: Vec<f32> = (0..n).map(|i| ((i * 7 + i / 3) % 2) as f32).collect();
        Self {
            state: Some(BurnCartPoleState::from_rows(&rows, &device)),
            action: Tensor::from_floats(actions.as_slice(), &device),
            fresh: [column(0), column(1), column(2), column(3)],
            config,
            device,
        }
    }

    fn step(&mut self) {
        let state = self.state.take().expect("state");
        let (next, _outputs) =
            burn_cartpole_step(state, self.action.clone(), &self.fresh, &self.config);
        self.state = Some(next);
    }

    fn sync(&self) {
        let _ = B::sync(&self.device);
    }

    fn timed(&mut self, steps: usize) -> f64 {
        self.sync();
        let start = Instant::now();
        for _ in 0..steps {
            self.step();
        }
        self.sync();
        start.elapsed().as_secs_f64()
    }
}

/// Benchmarks `B` at `num_envs`; `inspect` installs the fusion inspector (fusion backends).
pub fn bench_burn<B: Backend>(
    name: &str,
    device: B::Device,
    num_envs: usize,
    inspect: bool,
    settings: &ProfileSettings,
) -> BurnProfile {
    let inspector = inspect.then(|| FusionInspector::install(StreamId::current()));
    let mut stepper = Stepper::<B>::new(num_envs, device);
    let start = Instant::now();
    let first_step_s = stepper.timed(1);
    let (mut warmup_steps, mut settled) = (1, false);
    let mut previous = None;
    let mut per_step_counts = (None, None, None);
    let mut unfused_ops = Vec::new();
    for _ in 0..MAX_CHUNKS {
        if let Some(inspector) = &inspector {
            inspector.drain();
        }
        stepper.timed(CHUNK);
        warmup_steps += CHUNK;
        let Some(inspector) = &inspector else {
            // Without fusion there is nothing to settle: two chunks warm caches and pools.
            settled = warmup_steps > 2 * CHUNK;
            if settled {
                break;
            }
            continue;
        };
        let reports = inspector.drain();
        let shape = signature(&reports);
        if previous.as_ref() == Some(&shape) {
            let fused_blocks: usize = reports.iter().map(|r| r.fused_blocks().count()).sum();
            let unfused: usize = reports
                .iter()
                .flat_map(|r| r.unfused_blocks())
                .map(|b| b.operations.len())
                .sum();
            let fused_ops: usize = reports
                .iter()
                .flat_map(|r| r.fused_blocks())
                .map(|b| b.operations.len())
                .sum();
            per_step_counts = (
                Some(fused_blocks as f64 / CHUNK as f64),
                Some(unfused as f64 / CHUNK as f64),
                Some(fused_ops as f64 / CHUNK as f64),
            );
            unfused_ops = reports
                .iter()
                .flat_map(|r| r.unfused_blocks())
                .flat_map(|b| b.operations.iter().map(op_kind))
                .take(unfused / CHUNK)
                .collect();
            settled = true;
            break;
        }
        previous = Some(shape);
    }
    drop(inspector);
    let warmup_s = start.elapsed().as_secs_f64();
    let per_step = stepper.timed(CHUNK) / CHUNK as f64;
    let steps = settings
        .calls_per_repeat
        .map(|c| c as usize)
        .unwrap_or_else(|| {
            ((settings.min_seconds_per_repeat / per_step.max(1e-7)).ceil() as usize)
                .clamp(1, 100_000)
        });
    let mut times: Vec<f64> = (0..settings.repeats)
        .map(|_| stepper.timed(steps) / steps as f64)
        .collect();
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    BurnProfile {
        backend: name.into(),
        num_envs,
        step_s_median: median,
        step_s_min: times[0],
        step_s_max: *times.last().expect("repeats"),
        env_steps_per_s: num_envs as f64 / median,
        first_step_s,
        warmup_steps,
        warmup_s,
        settled,
        fused_blocks_per_step: per_step_counts.0,
        unfused_ops_per_step: per_step_counts.1,
        fused_ops_per_step: per_step_counts.2,
        launches_per_step: None,
        unfused_ops,
    }
}

/// Runs `backend` at `num_envs` (the backends this build has).
pub fn bench_backend(
    backend: BurnBackend,
    num_envs: usize,
    settings: &ProfileSettings,
) -> BurnProfile {
    #[cfg(feature = "wgpu")]
    type Unfused =
        burn::backend::wgpu::CubeBackend<burn::backend::wgpu::WgpuRuntime, f32, i32, u32>;
    match backend {
        #[cfg(feature = "wgpu")]
        BurnBackend::WgpuFusion => bench_burn::<burn::backend::Wgpu>(
            backend.name(),
            Default::default(),
            num_envs,
            true,
            settings,
        ),
        #[cfg(feature = "wgpu")]
        BurnBackend::WgpuUnfused => bench_burn::<Unfused>(
            backend.name(),
            Default::default(),
            num_envs,
            false,
            settings,
        ),
        BurnBackend::NdArray => bench_burn::<burn::backend::NdArray>(
            backend.name(),
            Default::default(),
            num_envs,
            false,
            settings,
        ),
        #[cfg(feature = "cuda")]
        BurnBackend::CudaFusion => bench_burn::<burn::backend::Cuda>(
            backend.name(),
            Default::default(),
            num_envs,
            true,
            settings,
        ),
    }
}

/// Launches per step counted from a CubeCL execution log: `steps` steps after warm-up.
/// Run this in a process whose `cubecl.toml` sets `[profiling] logger = { level = "minimal",
/// file = LOG }`; it waits for the runtime's asynchronous logger before counting.
#[cfg_attr(
    not(any(feature = "wgpu", feature = "cuda")),
    allow(unused_variables, dead_code)
)]
pub fn launches_per_step_from_log(
    backend: BurnBackend,
    num_envs: usize,
    steps: usize,
    log: &std::path::Path,
) -> f64 {
    #[cfg(feature = "wgpu")]
    type Unfused =
        burn::backend::wgpu::CubeBackend<burn::backend::wgpu::WgpuRuntime, f32, i32, u32>;
    fn count(log: &std::path::Path) -> usize {
        std::thread::sleep(std::time::Duration::from_millis(300));
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with("Executing "))
            .count()
    }
    fn run<B: Backend>(num_envs: usize, steps: usize, log: &std::path::Path) -> f64 {
        let mut stepper = Stepper::<B>::new(num_envs, Default::default());
        stepper.timed(CHUNK * 20);
        let before = count(log);
        stepper.timed(steps);
        (count(log) - before) as f64 / steps as f64
    }
    match backend {
        #[cfg(feature = "wgpu")]
        BurnBackend::WgpuFusion => run::<burn::backend::Wgpu>(num_envs, steps, log),
        #[cfg(feature = "wgpu")]
        BurnBackend::WgpuUnfused => run::<Unfused>(num_envs, steps, log),
        BurnBackend::NdArray => 0.0,
        #[cfg(feature = "cuda")]
        BurnBackend::CudaFusion => run::<burn::backend::Cuda>(num_envs, steps, log),
    }
}

/// How launches per step are counted for the report: a child process (the `cartfuse`
/// binary's hidden `burn-probe` command) runs [`launches_per_step_from_log`] in a scratch
/// directory whose `cubecl.toml` logs every kernel execution. A separate process because
/// cubecl reads its logging configuration once per process, and logging every launch of the
/// timed runs would slow them down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchProbe {
    /// The program to run.
    pub program: std::path::PathBuf,
    /// Arguments before the probe's own (`--backend B --envs N --steps S --log FILE`).
    pub args: Vec<String>,
    /// Envs of the counted steps.
    pub num_envs: usize,
    /// Steps counted after warm-up.
    pub steps: usize,
}

impl LaunchProbe {
    /// Runs the probe for `backend` and returns the launches per step it counted.
    pub fn run(&self, backend: BurnBackend) -> Result<f64, String> {
        let dir = std::env::temp_dir().join(format!(
            "cartfuse-burn-probe-{}-{}",
            std::process::id(),
            backend.probe_arg()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let result = self.run_in(&dir, backend);
        std::fs::remove_dir_all(&dir).ok();
        result
    }

    fn run_in(&self, dir: &std::path::Path, backend: BurnBackend) -> Result<f64, String> {
        std::fs::write(
            dir.join("cubecl.toml"),
            "[profiling]\nlogger = { level = \"minimal\", file = \"executions.log\", append = false }\n",
        )
        .map_err(|e| e.to_string())?;
        let output = std::process::Command::new(&self.program)
            .args(&self.args)
            .args(["--backend", backend.probe_arg()])
            .args(["--envs", &self.num_envs.to_string()])
            .args(["--steps", &self.steps.to_string()])
            .args(["--log", "executions.log"])
            .current_dir(dir)
            .output()
            .map_err(|e| e.to_string())?;
        if !output.status.success() {
            return Err(String::from_utf8_lossy(&output.stderr).into_owned());
        }
        String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .map_err(|e| format!("{e}"))
    }
}
