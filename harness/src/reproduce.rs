//! `cartfuse reproduce`: every measurement of the report, in one run, on one device.

use cartfuse_fusion::cpu::Cpu;
use cartfuse_fusion::cube::Cube;
use cartfuse_fusion::exec::{Backend, LaunchLedger};
use cartfuse_fusion::plan::{Plan, Strategy};

pub use crate::cells::AblationCell;
use crate::cells::pairs_in_turns;
use crate::plan_profile::{PlanProfile, profile_plan};
use crate::profile::StepProfile;
use crate::studies::ablation::{ladder, ladder_cells};
use crate::studies::burn::{BurnBackend, BurnProfile, bench_backend};
use crate::studies::cpu::{CpuStudy, measure_cpu};
use crate::studies::dispatch::{
    DispatchTax, break_even_steps, busy_fraction, fit_launch_cost, measure_dispatch_tax,
};
use crate::studies::envs::{EnvStudy, measure_study};
use crate::studies::policy::{PolicyStudy, measure_policy};
use cartfuse_train::device_collect::CubeRuntime;

use crate::studies::population::{DEVICE_POPULATION_SOURCE, PopulationRun, measure_population_by};
use crate::studies::roofline::{DeviceRoofline, measure_roofline};
pub use crate::studies::tail::TailRow;
use crate::studies::tail::measure_tail;
use crate::studies::workloads::{Elementwise, elementwise_inputs};
use crate::turns::{InTurns, TurnsSettings};

mod build_info;
mod section;
mod settings;

pub use crate::error::{ReproduceError, Skipped};
pub use build_info::{adapter_name, build_versions};
pub use section::Section;
pub use settings::{ReproduceMode, ReproduceSettings};

/// One point of the elementwise sweep.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WorkloadPoint {
    /// Workload name.
    pub workload: String,
    /// Working set of the fused kernel (input + output bytes).
    pub size_bytes: u64,
    /// The profile.
    pub profile: PlanProfile,
}

/// Launch-tax accounting of one plan at one size.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BusyRow {
    /// Plan.
    pub plan: String,
    /// Env count.
    pub num_envs: usize,
    /// Launches per step.
    pub launches_per_step: f64,
    /// Measured time per step.
    pub step_s: f64,
    /// Busy fraction (model fed with measured values, see [`busy_fraction`]).
    pub busy_fraction: f64,
}

/// Compile time of a plan and the steps it takes to pay for itself against a slower plan.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BreakEven {
    /// The faster plan.
    pub plan: String,
    /// The plan it is compared with.
    pub against: String,
    /// Env count.
    pub num_envs: usize,
    /// Measured JIT compile time of `plan`.
    pub compile_s: f64,
    /// `compile_s / (t_against - t_plan)`; `None` if `plan` is not faster.
    pub steps: Option<f64>,
}

/// Everything `cartfuse reproduce` measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// Device description (adapter name, type, driver).
    pub device: String,
    /// The adapter's name, as the commentary names the device.
    pub device_name: String,
    /// Runtime name.
    pub runtime: String,
    /// Crate versions, from this build.
    pub versions: Vec<(String, String)>,
    /// Which run this was: `quick`, `default` or `full`.
    pub mode: ReproduceMode,
    /// How the device's plan tables were timed in turns (the ablation with eager).
    pub turns: TurnsSettings,
    /// How the CPU's plan table was timed in turns.
    pub cpu_turns: TurnsSettings,
    /// Seconds the whole measurement took (until this report was written, when partial).
    pub elapsed_s: f64,
    /// `None` in a finished report. In one written while the run went on (or left by a run
    /// that was stopped or failed), the section it was measuring: it and every later
    /// section hold no numbers.
    pub stopped_at: Option<Section>,
    /// The device's last-level cache in bytes, where known.
    pub cache_bytes: Option<u64>,
    /// The device roofline.
    pub roofline: DeviceRoofline,
    /// Launch costs.
    pub dispatch: DispatchTax,
    /// The ablation, row-major.
    pub ablation: Vec<AblationCell>,
    /// Eager CartPole per size (the reference of "every plan against eager").
    pub eager: Vec<AblationCell>,
    /// Elementwise workloads, eager and fused, over sizes.
    pub workloads: Vec<WorkloadPoint>,
    /// The transformer tail as 4, 2 and 1 kernels.
    pub tail: Vec<TailRow>,
    /// `(rows, cols)` of the tail.
    pub tail_shape: (usize, u32),
    /// Busy fractions of eager and fused CartPole.
    pub busy: Vec<BusyRow>,
    /// Compile break-even of every plan against eager.
    pub break_even: Vec<BreakEven>,
    /// burn's backends on the same step.
    pub burn: Vec<BurnProfile>,
    /// Envs of the steps whose launches were counted from CubeCL's log (when counted).
    pub launch_probe_envs: Option<usize>,
    /// Why launches of a backend could not be counted (`"backend: reason"`).
    pub launch_probe_failures: Vec<String>,
    /// The native CPU runtime over the same sizes (`None` until measured).
    pub cpu: Option<CpuStudy>,
    /// Every environment under every plan (`--env all`); `None` when not asked for.
    pub envs: Option<EnvStudy>,
    /// The policy inside the rollout: the native CPU, then the device.
    pub policy: Vec<PolicyStudy>,
    /// `fused` against the hand-written step, from the rounds of the plan tables: the device
    /// at every ablation size, then the native CPU.
    pub in_turns: Vec<InTurns>,
}

impl Report {
    /// The ablation cell of `row` at `n` (`"eager"` for the eager reference).
    pub fn cell(&self, row: &str, n: usize) -> Option<&AblationCell> {
        self.eager
            .iter()
            .chain(&self.ablation)
            .find(|c| c.row == row && c.num_envs == n)
    }

    /// The measured profile of `row` at `n`, if it ran.
    pub fn profile(&self, row: &str, n: usize) -> Option<&StepProfile> {
        self.cell(row, n).and_then(|c| c.profile.as_ref().ok())
    }

    /// Median time per step of `row` at `n`, if it ran.
    pub fn step_time(&self, row: &str, n: usize) -> Option<f64> {
        self.profile(row, n).map(|p| p.step_s_median)
    }

    /// burn backend `name` at `n`.
    pub fn burn_profile(&self, name: &str, n: usize) -> Option<&BurnProfile> {
        self.burn
            .iter()
            .find(|b| b.backend == name && b.num_envs == n)
    }

    /// Median time per step of burn backend `name` at `n`.
    pub fn burn_time(&self, name: &str, n: usize) -> Option<f64> {
        self.burn_profile(name, n).map(|b| b.step_s_median)
    }

    /// Whether `section` was measured (every section of a finished report).
    pub fn measured(&self, section: Section) -> bool {
        self.stopped_at.is_none_or(|next| section < next)
    }

    /// Env counts of the ablation, in order.
    pub fn sizes(&self) -> Vec<usize> {
        self.eager.iter().map(|c| c.num_envs).collect()
    }
}

/// `agents` agents trained by the device learner (the hand-written kernels on `backend`'s
/// device, one launch a minibatch step) on the fused rollout; not run on a CPU-emulated
/// device, where its kernels run as shaders on the CPU's own cores (`cartfuse train
/// --learner device` runs it there).
fn device_population<R: CubeRuntime>(
    backend: &Cube<R>,
    agents: usize,
    budget: u64,
) -> PopulationRun {
    use cartfuse_fusion::plan::Strategy;
    use cartfuse_train::device_population::train_population_on_device;
    use cartfuse_train::kernel_learner::{KernelLearner, Target};
    if cartfuse_fusion::cube::is_cpu_emulated(&backend.description()) {
        let why = "not run on a CPU-emulated device (the learner's kernels run as shaders on \
                   the CPU's own cores); `cartfuse train --learner device --agents K` runs it";
        return PopulationRun::failed(DEVICE_POPULATION_SOURCE, agents, why.into());
    }
    let device = backend.runtime_device();
    let strategy = Strategy::FusedSteps(8);
    measure_population_by(
        DEVICE_POPULATION_SOURCE,
        agents,
        budget,
        |config, episode, host| {
            let learner = KernelLearner::<R>::new(host, &device, Target::Gpu)?;
            let env = cartfuse_env::CartPole::default();
            train_population_on_device(backend, &env, episode, strategy, config, learner, |_, _| {})
                .map(|(_, report)| report)
        },
    )
}

/// Runs every measurement of the report. `progress(message)` is called before each one, and
/// `checkpoint(report)` after the device roofline and the dispatch tax and after every
/// [`Section`]: a report whose [`Report::stopped_at`] names the section measured next (and
/// `None` in the last call, with the finished report that is also returned).
pub fn reproduce<R: CubeRuntime>(
    backend: Cube<R>,
    settings: &ReproduceSettings,
    mut progress: impl FnMut(&str),
    mut checkpoint: impl FnMut(&Report),
) -> Result<Report, ReproduceError> {
    let started = std::time::Instant::now();
    let ledger = LaunchLedger::new();
    let client = backend.client().clone();
    let device = backend.description();
    progress("device roofline");
    let copy_bytes = settings
        .roofline_copy_bytes
        .max(8 * settings.device_cache_bytes.unwrap_or(0));
    let roofline = measure_roofline(
        &client,
        &ledger,
        copy_bytes,
        1 << 18,
        settings.profile.repeats.max(3),
        settings.driver_copy,
    );
    progress("dispatch tax");
    let dispatch = measure_dispatch_tax(&client, &ledger, settings.dispatch_launches, 5);
    let mut report = Report {
        policy: Vec::new(),
        envs: None,
        cpu: None,
        device_name: adapter_name(&device).to_string(),
        device: device.clone(),
        runtime: R::name(&client).to_string(),
        versions: build_versions(),
        mode: settings.mode,
        turns: settings.turns,
        cpu_turns: settings.cpu_turns,
        // Both set by `reached` at each checkpoint, the first just below.
        elapsed_s: 0.0,
        stopped_at: None,
        cache_bytes: settings.device_cache_bytes,
        roofline,
        dispatch,
        ablation: Vec::new(),
        eager: Vec::new(),
        workloads: Vec::new(),
        tail: Vec::new(),
        tail_shape: settings.tail_shape,
        busy: Vec::new(),
        break_even: Vec::new(),
        burn: Vec::new(),
        launch_probe_envs: settings.launch_probe.as_ref().map(|p| p.num_envs),
        launch_probe_failures: Vec::new(),
        in_turns: Vec::new(),
    };
    let mut reached = |report: &mut Report, next: Option<Section>| {
        report.stopped_at = next;
        report.elapsed_s = started.elapsed().as_secs_f64();
        checkpoint(report);
    };
    reached(&mut report, Some(Section::Ablation));

    for &n in &settings.ablation_sizes {
        progress(&format!(
            "ablation: eager and {} rows in turns, n = {n}",
            ladder().len()
        ));
        let (eager_cell, rows) = ladder_cells(&backend, n, &settings.turns)?;
        report.eager.push(eager_cell);
        report.ablation.extend(rows);
    }
    derive_from_ablation(&mut report, settings.ablation_sizes.first().copied());
    report.in_turns = pairs_in_turns(&report.ablation, ("fused", "hand-written"), &backend);
    reached(&mut report, Some(Section::Burn));

    for &n in &settings.ablation_sizes {
        for &backend in &settings.burn_backends {
            progress(&format!("{}, n = {n}", backend.name()));
            report
                .burn
                .push(bench_backend(backend, n, &settings.profile));
        }
    }
    if let Some(probe) = &settings.launch_probe {
        for backend in probed_backends(&settings.burn_backends) {
            progress(&format!("{} launches from CubeCL's log", backend.name()));
            let launches = probe.run(backend);
            if let Err(reason) = &launches {
                (report.launch_probe_failures).push(format!(
                    "{}: {}",
                    backend.name(),
                    reason.trim()
                ));
            }
            for profile in report
                .burn
                .iter_mut()
                .filter(|p| p.backend == backend.name())
            {
                profile.launches_per_step = launches.as_ref().ok().copied();
            }
        }
    }
    reached(&mut report, Some(Section::Workloads));

    for kind in [
        Elementwise::Light,
        Elementwise::Medium,
        Elementwise::Heavy {
            loops: settings.heavy_loops,
        },
    ] {
        let graph = kind.graph();
        for &bytes in &settings.workload_bytes {
            let lanes = (bytes / 8) as usize;
            let inputs = elementwise_inputs(lanes);
            for strategy in [Strategy::Eager, Strategy::Fused] {
                progress(&format!("{} {strategy}, {} MB", kind.name(), bytes >> 20));
                let plan = Plan::build(
                    &graph,
                    strategy,
                    &cartfuse_fusion::cube::backend::plan_options(&client),
                )?;
                let profile = profile_plan(
                    &backend,
                    &graph,
                    plan,
                    lanes,
                    (&inputs, &Default::default()),
                    true,
                    &settings.profile,
                )?;
                report.workloads.push(WorkloadPoint {
                    workload: kind.name(),
                    size_bytes: bytes,
                    profile,
                });
            }
        }
    }
    reached(&mut report, Some(Section::Tail));

    report.tail = measure_tail(
        &backend,
        settings.tail_shape,
        &settings.profile,
        &mut progress,
    )?;
    reached(&mut report, Some(Section::Cpu));

    let cpu = measure_cpu(
        &settings.ablation_sizes,
        settings.roofline_copy_bytes,
        &settings.cpu_turns,
        &mut progress,
    )?;
    (report.in_turns).extend(pairs_in_turns(
        &cpu.cells,
        ("fused", "hand-written"),
        &Cpu::default(),
    ));
    report.cpu = Some(cpu);
    reached(&mut report, Some(Section::Envs));

    report.envs = measure_study(
        &backend,
        R::name(&client),
        (&settings.env_ids, &settings.env_sizes),
        &settings.env_turns,
        &mut progress,
    )?;
    reached(&mut report, Some(Section::Policy));

    let mut on_device = measure_policy(&backend, &settings.policy_device, &mut progress);
    on_device.device = adapter_name(&device).to_string();
    if let Some(agents) = settings.policy_device.device_population {
        progress(&format!(
            "a population of {agents} agents with the device learner"
        ));
        let budget = settings.policy_device.training_budget;
        on_device.population = Some(device_population(&backend, agents, budget));
    }
    report.policy = vec![
        measure_policy(&Cpu::default(), &settings.policy_cpu, &mut progress),
        on_device,
    ];
    reached(&mut report, None);
    Ok(report)
}

/// What the ablation gives without another measurement: the launch cost fitted across every
/// plan at the `smallest` size, the busy fractions of eager and `fused`, and every plan's
/// compile break-even against eager.
fn derive_from_ablation(report: &mut Report, smallest: Option<usize>) {
    if let Some(smallest) = smallest {
        let points: Vec<(&str, f64, f64)> = (report.eager.iter())
            .chain(&report.ablation)
            .filter(|c| c.num_envs == smallest)
            .filter_map(|c| {
                let p = c.profile.as_ref().ok()?;
                Some((c.row.as_str(), p.launches_per_step, p.step_s_median))
            })
            .collect();
        report.dispatch.fitted = fit_launch_cost(smallest, &points);
    }
    let launch_cost = report.dispatch.launch_cost().0;
    for (i, eager) in report.eager.iter().enumerate() {
        let n = eager.num_envs;
        let fused = (report.ablation.iter()).find(|c| c.row == "fused" && c.num_envs == n);
        for cell in [Some(&report.eager[i]), fused].into_iter().flatten() {
            if let Ok(p) = &cell.profile {
                report.busy.push(BusyRow {
                    plan: cell.row.clone(),
                    num_envs: n,
                    launches_per_step: p.launches_per_step,
                    step_s: p.step_s_median,
                    busy_fraction: busy_fraction(p.step_s_median, p.launches_per_step, launch_cost),
                });
            }
        }
        let Some(eager_step) = eager.step_time() else {
            continue;
        };
        for cell in report.ablation.iter().filter(|c| c.num_envs == n) {
            if let Ok(p) = &cell.profile {
                // Compiled kernels are cached per program: the first size measured paid the
                // compile; later sizes hit the cache. Break-even uses the compile that was paid.
                let compile_s = (report.ablation.iter())
                    .filter(|c| c.row == cell.row)
                    .filter_map(|c| c.profile.as_ref().ok())
                    .map(|p| p.compile_s)
                    .fold(0.0, f64::max);
                report.break_even.push(BreakEven {
                    plan: cell.row.clone(),
                    against: "eager".into(),
                    num_envs: n,
                    compile_s,
                    steps: break_even_steps(compile_s, eager_step, p.step_s_median),
                });
            }
        }
    }
}

/// The burn backends of `backends` whose launches the probe counts.
fn probed_backends(backends: &[BurnBackend]) -> impl Iterator<Item = BurnBackend> + '_ {
    backends.iter().copied().filter(|b| b.launches_kernels())
}
