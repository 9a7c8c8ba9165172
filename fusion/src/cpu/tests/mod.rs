//! CPU runtime tests: ops and plans against the interpreter, bit identity across levels and
//! thread counts, ledger counts, transcendental accuracy, and an ignored throughput probe.

mod accuracy;
mod cartpole;
mod engines;
mod ops;
mod plans;

use std::collections::HashMap;

use super::{Cpu, CpuBuffer, CpuOptions, SimdLevel};
use crate::exec::{ExecError, Executor};
use crate::graph::Graph;
use crate::graph::{HostArray, Scalar};
use crate::interpret::interpret;
use crate::plan::{Plan, PlanOptions, Strategy};

/// An executor of `plan` of `graph` over `n` lanes on the CPU with `options`.
fn cpu_executor(
    graph: Graph,
    plan: Plan,
    n: usize,
    options: CpuOptions,
) -> Result<Executor<Cpu>, ExecError> {
    Executor::new(Cpu::new(options)?, graph, plan, n)
}

/// Lane counts that are not multiples of the vector width or chunk size.
const LANES: [usize; 5] = [1, 3, 17, 1000, 4099];

/// Levels this CPU supports.
fn levels() -> Vec<SimdLevel> {
    SimdLevel::ALL
        .into_iter()
        .filter(|l| l.is_supported())
        .collect()
}

/// Deterministic pseudo-random numbers (xorshift64*).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn f32s(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n)
            .map(|_| lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32))
            .collect()
    }
    fn u32s(&mut self, n: usize, below: u32) -> Vec<u32> {
        (0..n).map(|_| (self.next() >> 32) as u32 % below).collect()
    }
}

type Inputs = HashMap<String, HostArray>;
type Params = HashMap<String, Scalar>;

/// Builds an executor with `inputs` and `params` bound.
fn executor(
    graph: &Graph,
    plan: Plan,
    n: usize,
    inputs: &Inputs,
    params: &Params,
    options: CpuOptions,
) -> Executor<Cpu> {
    let mut exec = cpu_executor(graph.clone(), plan, n, options).expect("executor");
    for (name, value) in inputs {
        exec.set_input(name, value).expect("input");
    }
    for (name, value) in params {
        exec.set_param(name, *value).expect("param");
    }
    exec
}

/// Outputs and next states (`next:<input>`) after one run.
fn results(exec: &Executor<Cpu>) -> HashMap<String, HostArray> {
    let graph = exec.graph().clone();
    let mut out: HashMap<String, HostArray> = graph
        .outputs()
        .iter()
        .map(|o| (o.name.clone(), exec.read_output(&o.name).unwrap()))
        .collect();
    for carry in graph.carries() {
        let name = graph.carry_name(carry.input);
        let input = name.trim_start_matches("next:").to_string();
        out.insert(name, exec.read_input(&input).unwrap());
    }
    out
}

/// Runs `graph` under `strategy` on the CPU once.
fn run_cpu(
    graph: &Graph,
    strategy: Strategy,
    n: usize,
    inputs: &Inputs,
    params: &Params,
    options: CpuOptions,
) -> HashMap<String, HostArray> {
    let plan = Plan::build(graph, strategy, &PlanOptions::default()).expect("plan");
    let mut exec = executor(graph, plan, n, inputs, params, options);
    exec.run().unwrap();
    results(&exec)
}

/// The interpreter's outputs in `f32`.
fn run_interpreter(
    graph: &Graph,
    n: usize,
    inputs: &Inputs,
    params: &Params,
) -> HashMap<String, HostArray> {
    interpret::<f32>(graph, n, inputs, params)
        .expect("interpret")
        .into_iter()
        .map(|(name, values)| (name, values.to_host()))
        .collect()
}

/// `f32` within `tol * max(1, |want|)` (NaN equals NaN); integers exact.
fn assert_close(what: &str, got: &HostArray, want: &HostArray, tol: f32) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    match (got, want) {
        (HostArray::F32(g), HostArray::F32(w)) => {
            for (i, (a, b)) in g.iter().zip(w).enumerate() {
                let ok =
                    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * b.abs().max(1.0);
                assert!(ok, "{what}[{i}]: got {a:e}, want {b:e} (tol {tol:e})");
            }
        }
        (HostArray::U32(g), HostArray::U32(w)) => {
            if let Some(i) = (0..g.len()).find(|i| g[*i] != w[*i]) {
                panic!("{what}[{i}]: got {}, want {}", g[i], w[i]);
            }
        }
        _ => panic!("{what}: types differ"),
    }
}

/// Bitwise equality of two result maps.
fn assert_bits(what: &str, a: &HashMap<String, HostArray>, b: &HashMap<String, HostArray>) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (name, x) in a {
        let y = &b[name];
        let bits = |h: &HostArray| match h {
            HostArray::F32(v) => v.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
            HostArray::U32(v) => v.clone(),
        };
        assert!(bits(x) == bits(y), "{what}: `{name}` differs bitwise");
    }
}
