//! One plan of any graph profiled on a CubeCL device (the elementwise workloads and the
//! transformer tail): the JIT compile timed on its own, repeats of at least a minimum
//! duration, a device sync before every clock stop, and the ledger's launches and bytes.

use std::collections::HashMap;
use std::time::Instant;

use cartfuse_fusion::cube::Cube;
use cartfuse_fusion::cubecl::Runtime;
use cartfuse_fusion::exec::{Backend, ExecError, Executor};
use cartfuse_fusion::graph::{Graph, HostArray, Scalar};
use cartfuse_fusion::plan::Plan;

use crate::profile::ProfileSettings;
use crate::work::flops_per_lane;

/// What profiling one plan of one graph at one size measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PlanProfile {
    /// The plan's name.
    pub plan: String,
    /// Lanes.
    pub lanes: usize,
    /// Lanes per thread (vectorised launches: 4).
    pub vector_width: usize,
    /// Median seconds per graph step.
    pub step_s_median: f64,
    /// Fastest repeat's seconds per step.
    pub step_s_min: f64,
    /// Slowest repeat's seconds per step.
    pub step_s_max: f64,
    /// Launches per step (ledger).
    pub launches_per_step: f64,
    /// Compulsory bytes per step (ledger).
    pub bytes_per_step: f64,
    /// FLOPs per step, from the graph (see [`crate::work`]).
    pub flops_per_step: f64,
    /// Achieved bandwidth, GB/s.
    pub gbps: f64,
    /// Achieved arithmetic throughput, GFLOP/s.
    pub gflops: f64,
    /// First run minus a steady run: JIT compile of the plan's kernels.
    pub compile_s: f64,
}

/// Profiles one plan of `graph` over `lanes` lanes with the given inputs and params
/// (`vectorize`: whether launches may take several lanes a thread).
pub fn profile_plan<R: Runtime>(
    backend: &Cube<R>,
    graph: &Graph,
    plan: Plan,
    lanes: usize,
    bindings: (&HashMap<String, HostArray>, &HashMap<String, Scalar>),
    vectorize: bool,
    settings: &ProfileSettings,
) -> Result<PlanProfile, ExecError> {
    let name = plan.strategy.to_string();
    let (inputs, params) = bindings;
    let mut exec = Executor::new(backend.clone(), graph.clone(), plan, lanes)?;
    exec.set_vectorize(vectorize);
    for (name, values) in inputs {
        exec.set_input(name, values)?;
    }
    for (name, value) in params {
        exec.set_param(name, *value)?;
    }
    backend.sync()?;
    let timed = |exec: &mut Executor<_>| -> Result<f64, ExecError> {
        let start = Instant::now();
        exec.run()?;
        backend.sync()?;
        Ok(start.elapsed().as_secs_f64())
    };
    let first = timed(&mut exec)?;
    let mut warm = f64::MAX;
    for _ in 0..2 {
        warm = warm.min(timed(&mut exec)?);
    }
    let runs = settings.calls_per_repeat.unwrap_or_else(|| {
        ((settings.min_seconds_per_repeat / warm.max(1e-7)).ceil() as u64).clamp(1, 100_000)
    });
    let before = exec.ledger().totals();
    let mut times = Vec::with_capacity(settings.repeats);
    for _ in 0..settings.repeats {
        backend.sync()?;
        let start = Instant::now();
        for _ in 0..runs {
            exec.run()?;
        }
        backend.sync()?;
        times.push(start.elapsed().as_secs_f64() / runs as f64);
    }
    let totals = exec.ledger().totals().since(&before);
    let steps = (runs * settings.repeats as u64) as f64;
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let bytes_per_step = totals.bytes_moved() as f64 / steps;
    let flops_per_step = flops_per_lane(graph) * lanes as f64;
    Ok(PlanProfile {
        plan: name,
        lanes,
        vector_width: exec.vector_width(0),
        step_s_median: median,
        step_s_min: times[0],
        step_s_max: *times.last().expect("at least one repeat"),
        launches_per_step: totals.launches as f64 / steps,
        bytes_per_step,
        flops_per_step,
        gbps: bytes_per_step / median / 1e9,
        gflops: flops_per_step / median / 1e9,
        compile_s: (first - warm).max(0.0),
    })
}
