//! Random valid graphs for property tests: every op family (f32 math, u32 arithmetic,
//! compares, logic, select, casts, random numbers, pack/unpack, affines, row reductions) over two
//! f32 inputs, one u32 input, params and a loop-carried f32 input.

use cartfuse::fusion::graph::{
    BinaryOp, CompareOp, DType, FloatUnary, Graph, GraphBuilder, ReduceOp, Var,
};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

/// A proptest runner of `cases` cases from a fixed seed (the same graphs every run) that
/// writes no failure files.
pub fn deterministic_runner(cases: u32) -> TestRunner {
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
}

/// Columns of the row reductions.
pub const COLS: u32 = 8;

/// Builds a random valid graph from `seed` with about `ops` ops.
pub fn random_graph(seed: u64, ops: usize) -> Graph {
    let mut rng = StdRng::seed_from_u64(seed);
    let g = GraphBuilder::new();
    let carried = g.input("s", DType::F32);
    let mut floats: Vec<Var> = vec![
        g.input("a", DType::F32),
        g.input("b", DType::F32),
        carried,
        g.param("p", DType::F32),
    ];
    let mut ints: Vec<Var> = vec![
        g.input("k", DType::U32),
        g.param("q", DType::U32),
        g.lane_index(),
    ];
    let mut bools: Vec<Var> = Vec::new();
    for _ in 0..ops {
        let f = *floats.choose(&mut rng).unwrap();
        let f2 = *floats.choose(&mut rng).unwrap();
        let u = *ints.choose(&mut rng).unwrap();
        let u2 = *ints.choose(&mut rng).unwrap();
        match rng.random_range(0..12) {
            0 => {
                let op = *[
                    FloatUnary::Neg,
                    FloatUnary::Abs,
                    FloatUnary::Sin,
                    FloatUnary::Cos,
                    FloatUnary::Tanh,
                    FloatUnary::Erf,
                    FloatUnary::Square,
                ]
                .choose(&mut rng)
                .unwrap();
                floats.push(match op {
                    FloatUnary::Neg => -f,
                    FloatUnary::Abs => f.abs(),
                    FloatUnary::Sin => f.sin(),
                    FloatUnary::Cos => f.cos(),
                    FloatUnary::Tanh => f.tanh(),
                    FloatUnary::Erf => f.erf(),
                    _ => f.square(),
                });
            }
            1 => floats.push(match rng.random_range(0..4) {
                0 => (f.abs() + 1.0).sqrt(),
                1 => (f.abs() + 1.0).log(),
                2 => (f * 0.25).exp(),
                _ => (f.abs() + 1.0).recip(),
            }),
            2 | 3 => {
                let op = *[
                    BinaryOp::Add,
                    BinaryOp::Sub,
                    BinaryOp::Mul,
                    BinaryOp::Min,
                    BinaryOp::Max,
                ]
                .choose(&mut rng)
                .unwrap();
                floats.push(match op {
                    BinaryOp::Add => f + f2,
                    BinaryOp::Sub => f - f2,
                    BinaryOp::Mul => f * f2,
                    BinaryOp::Min => f.min(f2),
                    _ => f.max(f2),
                });
            }
            4 => floats.push(match rng.random_range(0..2) {
                0 => f / (f2.abs() + 1.0),
                _ => (f.abs() + 0.5).pow(f2.tanh()),
            }),
            5 => {
                let op = *[
                    CompareOp::Lt,
                    CompareOp::Le,
                    CompareOp::Gt,
                    CompareOp::Ge,
                    CompareOp::Eq,
                    CompareOp::Ne,
                ]
                .choose(&mut rng)
                .unwrap();
                let (x, y) = if rng.random_bool(0.5) {
                    (f, f2)
                } else {
                    (u, u2)
                };
                bools.push(match op {
                    CompareOp::Lt => x.lt(y),
                    CompareOp::Le => x.le(y),
                    CompareOp::Gt => x.gt(y),
                    CompareOp::Ge => x.ge(y),
                    CompareOp::Eq => x.eq(y),
                    _ => x.ne(y),
                });
            }
            6 if !bools.is_empty() => {
                let c = *bools.choose(&mut rng).unwrap();
                let c2 = *bools.choose(&mut rng).unwrap();
                match rng.random_range(0..5) {
                    0 => floats.push(g.select(c, f, f2)),
                    1 => ints.push(g.select(c, u, u2)),
                    2 => bools.push(c.and(c2)),
                    3 => bools.push(!c.or(c2)),
                    _ => floats.push(c.cast(DType::F32)),
                }
            }
            7 => {
                let op = *[
                    BinaryOp::Add,
                    BinaryOp::Sub,
                    BinaryOp::Mul,
                    BinaryOp::Min,
                    BinaryOp::Max,
                ]
                .choose(&mut rng)
                .unwrap();
                ints.push(match op {
                    BinaryOp::Add => u + u2,
                    BinaryOp::Sub => u - u2,
                    BinaryOp::Mul => u * u2,
                    BinaryOp::Min => u.min(u2),
                    _ => u.max(u2),
                });
            }
            8 => floats.push(match rng.random_range(0..2) {
                0 => g.random_uniform([u, u2], [g.lane_index(), u], rng.random_range(0..2)),
                _ => u.cast(DType::F32) * 0.001,
            }),
            9 => {
                let packed = g.pack(&[f, f2, *floats.choose(&mut rng).unwrap()]);
                floats.push(packed.unpack(rng.random_range(0..3)));
                if rng.random_bool(0.5) {
                    floats.push(packed.unpack(rng.random_range(0..3)) * 2.0);
                }
            }
            10 => {
                // A dense-layer output: up to 40 terms (two passes of the CPU kernel), with
                // weights all pinned (params and constants) or any values, and maybe a
                // running sum to continue.
                // (Per-lane weights are buffers of their own: few enough terms that an eager
                // kernel stays within the device's binding limit.)
                let pinned = rng.random_bool(0.5);
                let terms = rng.random_range(1..=if pinned { 40 } else { 12 });
                let weights: Vec<Var> = (0..terms)
                    .map(|i| match (pinned, i % 3) {
                        (true, 0) => g.param("p", DType::F32),
                        (true, _) => g.f32(rng.random_range(-1.0..1.0)),
                        (false, _) => *floats.choose(&mut rng).unwrap() * 0.5,
                    })
                    .collect();
                let inputs: Vec<Var> = (0..terms)
                    .map(|_| *floats.choose(&mut rng).unwrap())
                    .collect();
                let acc = rng.random_bool(0.5).then_some(f2);
                floats.push(g.affine(acc, &weights, &inputs) * 0.125);
            }
            _ => {
                let op = *[ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max]
                    .choose(&mut rng)
                    .unwrap();
                floats.push(f.row_reduce(op, COLS) * 0.125);
            }
        }
    }
    // The carry takes a value that depends on the state.
    let next = *floats
        .iter()
        .rev()
        .find(|v| v.id() != carried.id())
        .unwrap();
    g.carry(carried, next + carried * 0.5);
    // Every computed value, param and lane index is an output (inputs never are), and the
    // inputs all feed one more output, so nothing dangles.
    let [a, b, k] = [floats[0], floats[1], ints[0]];
    g.output("base", a * b + k.cast(DType::F32));
    let inputs = [a.id(), b.id(), carried.id(), k.id()];
    for (index, value) in floats.iter().chain(&ints).chain(&bools).enumerate() {
        if !inputs.contains(&value.id()) {
            g.output(&format!("o{index}"), *value);
        }
    }
    g.build().expect("random graphs are well-typed")
}
