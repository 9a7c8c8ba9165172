//! The compiled engine against the interpreter, bit for bit: every op on awkward values
//! (NaN, infinities, signed zeros, denormals, huge and tiny magnitudes), at every level.

use super::*;
use crate::cpu::CpuEngine;
use crate::graph::{BinaryOp, DType, FloatUnary, GraphBuilder};
use strum::IntoEnumIterator;

/// Awkward `f32` values followed by a spread of ordinary ones, `n` in all.
fn awkward(n: usize, seed: u64) -> Vec<f32> {
    let specials = [
        0.0,
        -0.0,
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        1e-40,
        -1e-40,
        f32::MAX,
        f32::MIN,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.5,
        -2.5,
        3e9,
        -3e9,
        5e9,
        8388608.5,
        16777217.0,
        1e30,
        -1e30,
        88.7,
        -103.0,
        0.625,
        2.0,
        10.0,
    ];
    let mut g = Gen(seed);
    let mut out: Vec<f32> = specials.to_vec();
    let ranges = [(-1e4, 1e4), (-100.0, 100.0), (-3.0, 3.0), (1e-6, 1e-3)];
    let mut i = 0;
    while out.len() < n {
        let (lo, hi) = ranges[i % ranges.len()];
        out.extend(g.f32s(1, lo, hi));
        i += 1;
    }
    out.truncate(n);
    out
}

/// Runs `graph` interpreted and compiled at every level, under eager and fused, and asserts
/// identical bits.
fn same_bits(what: &str, graph: &Graph, inputs: &Inputs, n: usize) {
    for level in levels() {
        for strategy in [Strategy::Fused, Strategy::Eager] {
            let run = |engine| {
                let options = CpuOptions {
                    engine,
                    ..CpuOptions::single(level)
                };
                run_cpu(graph, strategy, n, inputs, &Params::new(), options)
            };
            let what = format!("{what} {level} {strategy}");
            assert_bits(
                &what,
                &run(CpuEngine::Compiled),
                &run(CpuEngine::Interpreted),
            );
        }
    }
}

#[test]
fn float_ops_give_the_interpreters_bits_when_compiled() {
    let n = 4099;
    let inputs = Inputs::from([
        ("x".into(), HostArray::F32(awkward(n, 3))),
        (
            "y".into(),
            HostArray::F32(awkward(n, 5).into_iter().rev().collect()),
        ),
    ]);
    let b = GraphBuilder::new();
    let (x, y) = (b.input("x", DType::F32), b.input("y", DType::F32));
    for op in FloatUnary::iter() {
        b.output(&format!("{op:?}"), x.unary(op));
    }
    for op in BinaryOp::iter() {
        b.output(&format!("{op:?}"), x.binary(op, y));
    }
    b.output("pow", x.pow(y));
    b.output("pow_small", (x * b.f32(1e-3)).abs().pow(y * b.f32(0.01)));
    b.output("to_u32", x.cast(DType::U32));
    b.output("to_bool", x.cast(DType::Bool));
    b.output("lt", x.lt(y));
    b.output("ge", x.ge(y));
    b.output("eq", x.eq(y));
    b.output("select", b.select(x.gt(y), x.sin(), y.exp()));
    same_bits("float ops", &b.build().unwrap(), &inputs, n);
}

#[test]
fn integer_ops_give_the_interpreters_bits_when_compiled() {
    let n = 1000;
    let mut g = Gen(17);
    let mut a = g.u32s(n, u32::MAX);
    let mut d = g.u32s(n, 7);
    a[..4].copy_from_slice(&[0, 1, u32::MAX, 1 << 31]);
    d[..4].copy_from_slice(&[0, 0, 1, u32::MAX]);
    let inputs = Inputs::from([
        ("a".into(), HostArray::U32(a)),
        ("d".into(), HostArray::U32(d)),
    ]);
    let b = GraphBuilder::new();
    let (x, y) = (b.input("a", DType::U32), b.input("d", DType::U32));
    for op in BinaryOp::iter() {
        b.output(&format!("{op:?}"), x.binary(op, y));
    }
    b.output("Lt", x.lt(y));
    b.output("Le", x.le(y));
    b.output("Ne", x.ne(y));
    b.output("to_f32", x.cast(DType::F32));
    b.output("not", (!x.lt(y)).and(y.eq(b.u32(0)).or(x.gt(y))));
    let key = [x, y];
    b.output("draw", b.random_uniform(key, [b.lane_index(), x], 1));
    same_bits("integer ops", &b.build().unwrap(), &inputs, n);
}
