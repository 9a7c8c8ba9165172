//! Every float op of the graph on the runtime under test against the CPU runtime's own
//! definitions ([`cartfuse::fusion::cpu::interp::math`]), bit for bit where the backend says
//! its arithmetic is the CPU's ([`FloatAgreement::Bitwise`]: the CPU, lavapipe, CUDA) and
//! within [`FloatAgreement::BOUNDED_RELATIVE`] elsewhere (issue 51).
//!
//! Inputs cover each function's range and its awkward values: dense sweeps, arguments far
//! beyond sine's reduction range, `exp`'s overflow and subnormal results, logarithms of
//! subnormals, NaN, infinities, signed zeros, integer and half-integer powers of negative
//! bases, and casts past `u32`'s range.

use std::collections::HashMap;

use cartfuse::fusion::cpu::Scalar;
use cartfuse::fusion::cpu::interp::math;
use cartfuse::fusion::exec::{Backend, FloatAgreement};
use cartfuse::fusion::graph::{
    BinaryOp, CompareOp, DType, FloatUnary, Graph, GraphBuilder, HostArray,
};
use cartfuse::fusion::plan::{Plan, Strategy};

use super::util;

/// Lanes per launch: a multiple of four, so device runtimes vectorise.
const LANES: usize = 1 << 14;

/// Each op of the test graph and its CPU definition.
type Reference = fn(f32, f32) -> f32;

fn unary_ops() -> Vec<(&'static str, FloatUnary, Reference)> {
    vec![
        ("neg", FloatUnary::Neg, |x, _| math::neg(Scalar, x)),
        ("abs", FloatUnary::Abs, |x, _| math::abs(Scalar, x)),
        ("sqrt", FloatUnary::Sqrt, |x, _| x.sqrt()),
        ("exp", FloatUnary::Exp, |x, _| math::exp(Scalar, x)),
        ("log", FloatUnary::Log, |x, _| math::log(Scalar, x)),
        ("sin", FloatUnary::Sin, |x, _| math::sin(Scalar, x)),
        ("cos", FloatUnary::Cos, |x, _| math::cos(Scalar, x)),
        ("tanh", FloatUnary::Tanh, |x, _| math::tanh(Scalar, x)),
        ("erf", FloatUnary::Erf, |x, _| math::erf(Scalar, x)),
        ("square", FloatUnary::Square, |x, _| x * x),
        ("recip", FloatUnary::Recip, |x, _| 1.0 / x),
        ("floor", FloatUnary::Floor, |x, _| math::floor(Scalar, x)),
    ]
}

fn binary_ops() -> Vec<(&'static str, BinaryOp, Reference)> {
    vec![
        ("add", BinaryOp::Add, |x, y| x + y),
        ("sub", BinaryOp::Sub, |x, y| x - y),
        ("mul", BinaryOp::Mul, |x, y| x * y),
        ("div", BinaryOp::Div, |x, y| x / y),
        ("min", BinaryOp::Min, |x, y| math::min(Scalar, x, y)),
        ("max", BinaryOp::Max, |x, y| math::max(Scalar, x, y)),
    ]
}

/// Comparisons, which IEEE defines for NaN too (`!=` true, the others false).
type Comparison = fn(f32, f32) -> bool;

fn compare_ops() -> Vec<(&'static str, CompareOp, Comparison)> {
    vec![
        ("lt", CompareOp::Lt, |x, y| x < y),
        ("le", CompareOp::Le, |x, y| x <= y),
        ("gt", CompareOp::Gt, |x, y| x > y),
        ("ge", CompareOp::Ge, |x, y| x >= y),
        ("eq", CompareOp::Eq, |x, y| x == y),
        ("ne", CompareOp::Ne, |x, y| x != y),
    ]
}

/// Every unary and binary op, the comparisons, `x^y`, a multiply-add (which no runtime may contract) and the
/// cast to `u32`.
fn graph() -> Graph {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let y = g.input("y", DType::F32);
    for (name, op, _) in unary_ops() {
        g.output(name, x.unary(op));
    }
    for (name, op, _) in binary_ops() {
        g.output(name, x.binary(op, y));
    }
    g.output("pow", x.pow(y));
    g.output("mul_add", x * y + x);
    g.output("to_u32", x.cast(DType::U32));
    for (name, op, _) in compare_ops() {
        let test = match op {
            CompareOp::Lt => x.lt(y),
            CompareOp::Le => x.le(y),
            CompareOp::Gt => x.gt(y),
            CompareOp::Ge => x.ge(y),
            CompareOp::Eq => x.eq(y),
            CompareOp::Ne => x.ne(y),
        };
        g.output(name, test.cast(DType::U32));
    }
    g.build().expect("the test graph is valid")
}

/// `lo..hi` in `LANES` even steps.
fn sweep(lo: f32, hi: f32) -> Vec<f32> {
    (0..LANES)
        .map(|i| lo + (hi - lo) * (i as f32 / LANES as f32))
        .collect()
}

/// `10^lo..10^hi`, log-spaced.
fn log_sweep(lo: f32, hi: f32) -> Vec<f32> {
    (0..LANES)
        .map(|i| 10f32.powf(lo + (hi - lo) * (i as f32 / LANES as f32)))
        .collect()
}

/// Special values, repeated to `LANES`, paired with exponents of every kind.
fn awkward() -> (Vec<f32>, Vec<f32>) {
    let xs = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -2.5,
        -2.0,
        -8.0,
        f32::MIN_POSITIVE,
        1e-40,
        -1e-40,
        f32::MAX,
        -f32::MAX,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        4_294_967_296.0,
        4_294_967_040.0,
        3e9,
        88.72,
        -103.5,
        8192.0,
        1.5e9,
        -3.0e9,
    ];
    let ys = [
        0.0, -0.0, 1.0, -1.0, 2.0, 3.0, -3.0, 0.5, -0.5, 2.5, 1e7, 5e6, 4_194_305.0,
    ];
    let mut x = Vec::with_capacity(LANES);
    let mut y = Vec::with_capacity(LANES);
    for i in 0..LANES {
        x.push(xs[i % xs.len()]);
        y.push(ys[(i / xs.len()) % ys.len()]);
    }
    (x, y)
}

/// The domains: `(name, x, y)`.
fn domains() -> Vec<(&'static str, Vec<f32>, Vec<f32>)> {
    let (awkward_x, awkward_y) = awkward();
    vec![
        ("unit", sweep(-4.0, 4.0), sweep(-3.0, 3.0)),
        ("wide", sweep(-100.0, 100.0), sweep(0.25, 4.0)),
        ("exp range", sweep(-105.0, 90.0), sweep(-1.0, 1.0)),
        ("positive", log_sweep(-40.0, 38.0), sweep(-3.0, 3.0)),
        ("huge", log_sweep(3.0, 9.5), sweep(-0.5, 0.5)),
        ("awkward", awkward_x, awkward_y),
    ]
}

/// Whether `got` agrees with `want` as `agreement` promises.
fn agrees(got: f32, want: f32, agreement: FloatAgreement) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    match agreement {
        FloatAgreement::Bitwise => got.to_bits() == want.to_bits(),
        FloatAgreement::Bounded => {
            let (got, want) = (f64::from(got), f64::from(want));
            got == want
                || (got - want).abs() <= FloatAgreement::BOUNDED_RELATIVE * want.abs().max(1.0)
        }
    }
}

/// The first few disagreements of one output, for the failure message.
fn disagreements(
    name: &str,
    x: &[f32],
    y: &[f32],
    got: &[f32],
    want: impl Fn(usize) -> f32,
    agreement: FloatAgreement,
) -> Vec<String> {
    (0..got.len())
        .filter(|&i| !agrees(got[i], want(i), agreement))
        .take(4)
        .map(|i| {
            format!(
                "{name}({:e}, {:e}) = {:e} ({:#010x}), the CPU's {:e} ({:#010x})",
                x[i],
                y[i],
                got[i],
                got[i].to_bits(),
                want(i),
                want(i).to_bits()
            )
        })
        .collect()
}

/// Every op over every domain on `lanes` lanes of the runtime under test: the failures.
fn every_op_on(lanes: usize, agreement: FloatAgreement) -> Vec<String> {
    let graph = graph();
    let plan = Plan::build(&graph, Strategy::Fused, &util::plan_options()).expect("plan");
    let mut exec = util::runner(graph.clone(), plan, lanes);
    let mut failures = Vec::new();
    for (domain, mut x, mut y) in domains() {
        x.truncate(lanes);
        y.truncate(lanes);
        let inputs = HashMap::from([
            ("x".to_string(), HostArray::F32(x.clone())),
            ("y".to_string(), HostArray::F32(y.clone())),
        ]);
        exec.poison_outputs();
        for (name, values) in &inputs {
            exec.set_input(name, values).expect("input");
        }
        exec.run().expect("run");
        let domain = format!("{domain}, {lanes} lanes");
        let mut check = |name: &str, want: &dyn Fn(usize) -> f32| {
            let HostArray::F32(got) = exec.read_output(name).expect("read") else {
                panic!("{name} is a float output");
            };
            for line in disagreements(name, &x, &y, &got, want, agreement) {
                failures.push(format!("{domain}: {line}"));
            }
        };
        for (name, _, f) in unary_ops() {
            check(name, &|i| f(x[i], y[i]));
        }
        for (name, _, f) in binary_ops() {
            check(name, &|i| f(x[i], y[i]));
        }
        check("pow", &|i| math::pow(Scalar, x[i], y[i]));
        check("mul_add", &|i| x[i] * y[i] + x[i]);
        // Casts and comparisons are exact on every runtime.
        let mut check_u32 = |name: &str, want: &dyn Fn(usize) -> u32| {
            let HostArray::U32(got) = exec.read_output(name).expect("read") else {
                panic!("{name} is an integer output");
            };
            let wrong = (0..lanes).filter(|&i| got[i] != want(i));
            for i in wrong.take(4) {
                failures.push(format!(
                    "{domain}: {name}({:e}, {:e}) = {}, the CPU's {}",
                    x[i],
                    y[i],
                    got[i],
                    want(i)
                ));
            }
        };
        check_u32("to_u32", &|i| math::f32_to_u32(Scalar, x[i]));
        for (name, _, f) in compare_ops() {
            check_u32(name, &|i| u32::from(f(x[i], y[i])));
        }
    }
    failures
}

/// Every op over every domain, at a multiple of four lanes (devices run four a thread) and
/// at one lane fewer (one a thread).
#[test]
fn every_float_op_agrees_with_the_cpu_runtime_as_its_backend_promises() {
    let backend = util::backend();
    let agreement = backend.float_agreement();
    let failures: Vec<String> = [LANES, LANES - 1]
        .into_iter()
        .flat_map(|lanes| every_op_on(lanes, agreement))
        .collect();
    assert!(
        failures.is_empty(),
        "{} ({agreement:?}) disagrees with the CPU runtime:\n{}",
        backend.description(),
        failures.join("\n")
    );
}

/// The constants the second test applies every op to, infinities and NaN among them (a
/// kernel cannot print those as decimals, and cubecl's C++ backend cannot reinterpret a
/// literal's bits: `fusion::cube::math::from_bits`).
const CONSTANTS: [f32; 8] = [
    0.5,
    -0.0,
    -2.5,
    1e-40,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    88.8,
];

/// Every unary op of a constant, and binary ops of a lane's value and a constant, as graphs
/// write clips and powers: the constant operands reach the kernel as literals.
///
/// One exception, where the constant is a zero and so is the CPU's result: a zero of either
/// sign agrees. Mesa's NIR folds a product with a constant zero to `+0.0` even in exact
/// arithmetic, unless the SPIR-V declares `SignedZeroInfNanPreserve` (naga declares no
/// float controls), so on lavapipe `x * -0.0` and `erf(-0.0)` are `+0.0` where the CPU's
/// are `-0.0`.
#[test]
fn ops_of_constants_agree_with_the_cpu_runtime_as_its_backend_promises() {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    type Want = Box<dyn Fn(f32) -> f32>;
    let mut want: Vec<(String, f32, Want)> = Vec::new();
    for (c_index, &c) in CONSTANTS.iter().enumerate() {
        for (name, op, f) in unary_ops() {
            let output = format!("{name}_of_constant_{c_index}");
            g.output(&output, g.f32(c).unary(op));
            want.push((output, c, Box::new(move |_| f(c, 0.0))));
        }
        for (name, op, f) in binary_ops() {
            let output = format!("{name}_with_constant_{c_index}");
            g.output(&output, x.binary(op, g.f32(c)));
            want.push((output, c, Box::new(move |x| f(x, c))));
        }
        let output = format!("pow_of_constant_{c_index}");
        g.output(&output, g.f32(c).pow(x));
        want.push((output, c, Box::new(move |x| math::pow(Scalar, c, x))));
    }
    let graph = g.build().expect("the test graph is valid");
    let backend = util::backend();
    let agreement = backend.float_agreement();
    let plan = Plan::build(&graph, Strategy::Fused, &util::plan_options()).expect("plan");
    let mut failures = Vec::new();
    // Four lanes a thread on devices, and one.
    for lanes in [64, 63] {
    let x: Vec<f32> = (0..lanes).map(|i| i as f32 * 0.37 - 9.0).collect();
    let mut exec = util::runner(graph.clone(), plan.clone(), lanes);
    exec.set_input("x", &HostArray::F32(x.clone())).expect("input");
    exec.run().expect("run");
    for (name, c, f) in &want {
        let HostArray::F32(mut got) = exec.read_output(name).expect("read") else {
            panic!("{name} is a float output");
        };
        if *c == 0.0 {
            for (i, value) in got.iter_mut().enumerate() {
                if *value == 0.0 && f(x[i]) == 0.0 {
                    *value = f(x[i]);
                }
            }
        }
        let zeros = vec![0.0; lanes];
        failures.extend(disagreements(name, &x, &zeros, &got, |i| f(x[i]), agreement));
    }
    }
    assert!(
        failures.is_empty(),
        "{} ({agreement:?}) disagrees with the CPU runtime:\n{}",
        backend.description(),
        failures.join("\n")
    );
}
