//! Every op of `graph/op.rs` against the interpreter, at every level and awkward lane counts.

use super::*;
use crate::cpu::CpuEngine;
use crate::graph::{BinaryOp, CompareOp, DType, FloatUnary, GraphBuilder, ReduceOp};
use strum::IntoEnumIterator;

/// Runs `graph` under eager and fused at every level and lane count against the interpreter.
fn check(graph: &Graph, make: &dyn Fn(usize, &mut Gen) -> Inputs, params: &Params, tol: f32) {
    for n in LANES {
        let inputs = make(n, &mut Gen(n as u64 * 7919 + 1));
        let want = run_interpreter(graph, n, &inputs, params);
        for level in levels() {
            for strategy in [Strategy::Fused, Strategy::Eager] {
                for engine in [CpuEngine::Interpreted, CpuEngine::Compiled] {
                    let options = CpuOptions {
                        engine,
                        ..CpuOptions::single(level)
                    };
                    let got = run_cpu(graph, strategy, n, &inputs, params, options);
                    for (name, w) in &want {
                        let what = format!("{name} n={n} {level} {strategy} {engine}");
                        assert_close(&what, &got[name], w, tol);
                    }
                }
            }
        }
    }
}

fn f32_input(lo: f32, hi: f32) -> impl Fn(usize, &mut Gen) -> Inputs {
    move |n, g| Inputs::from([("x".into(), HostArray::F32(g.f32s(n, lo, hi)))])
}

#[test]
fn unary_float_ops_match_the_interpreter() {
    for op in FloatUnary::iter() {
        let (lo, hi, tol) = match op {
            FloatUnary::Sqrt | FloatUnary::Log => (1e-3, 100.0, 2e-7),
            FloatUnary::Exp => (-80.0, 80.0, 5e-7),
            FloatUnary::Sin | FloatUnary::Cos => (-20.0, 20.0, 2e-7),
            FloatUnary::Tanh | FloatUnary::Erf => (-5.0, 5.0, 3e-7),
            _ => (-20.0, 20.0, 0.0),
        };
        let b = GraphBuilder::new();
        let x = b.input("x", DType::F32);
        let y = x.unary(op);
        b.output("y", y);
        check(&b.build().unwrap(), &f32_input(lo, hi), &Params::new(), tol);
    }
}

#[test]
fn binary_float_ops_match_the_interpreter() {
    // `None` is pow, the one float-only binary op.
    for op in BinaryOp::iter().map(Some).chain([None]) {
        let b = GraphBuilder::new();
        let (x, y) = (b.input("x", DType::F32), b.input("y", DType::F32));
        let z = match op {
            Some(op) => x.binary(op, y),
            None => x.pow(y),
        };
        b.output("z", z);
        let (lo, tol) = if op.is_none() {
            (0.05, 2e-6)
        } else {
            (-50.0, 0.0)
        };
        let make = |n, g: &mut Gen| {
            Inputs::from([
                ("x".into(), HostArray::F32(g.f32s(n, lo, 10.0))),
                ("y".into(), HostArray::F32(g.f32s(n, -3.0, 3.0))),
            ])
        };
        check(&b.build().unwrap(), &make, &Params::new(), tol);
    }
}

#[test]
fn integer_bool_and_compare_ops_match_the_interpreter() {
    let b = GraphBuilder::new();
    let (i, j) = (b.input("i", DType::U32), b.input("j", DType::U32));
    let (x, y) = (b.input("x", DType::F32), b.input("y", DType::F32));
    let (p, q) = (b.input("p", DType::Bool), b.input("q", DType::Bool));
    for (k, op) in BinaryOp::iter().enumerate() {
        match op {
            BinaryOp::Add => b.output(&format!("u{k}"), i + j),
            BinaryOp::Sub => b.output(&format!("u{k}"), i - j),
            BinaryOp::Mul => b.output(&format!("u{k}"), i * j),
            BinaryOp::Div => b.output(&format!("u{k}"), i / j),
            BinaryOp::Min => b.output(&format!("u{k}"), i.min(j)),
            BinaryOp::Max => b.output(&format!("u{k}"), i.max(j)),
        }
    }
    for op in CompareOp::iter() {
        let cmp = |a, c| compare(op, a, c);
        b.output(&format!("cf_{}", op.name()), cmp(x, y));
        b.output(&format!("cu_{}", op.name()), cmp(i, j));
    }
    b.output("and", p.and(q));
    b.output("or", p.or(q));
    b.output("not", !p);
    b.output("self", b.select(p, x, y));
    b.output("selu", b.select(q, i, j));
    b.output("lane", b.lane_index() * b.u32(3));
    let make = |n, g: &mut Gen| {
        let mut x = g.f32s(n, -4.0, 4.0);
        let y = g.f32s(n, -4.0, 4.0);
        x.iter_mut().step_by(5).zip(&y).for_each(|(a, b)| *a = *b); // some equal pairs
        Inputs::from([
            ("i".into(), HostArray::U32(g.u32s(n, 9))),
            ("j".into(), HostArray::U32(g.u32s(n, 9))), // includes zero divisors
            ("x".into(), HostArray::F32(x)),
            ("y".into(), HostArray::F32(y)),
            ("p".into(), HostArray::U32(g.u32s(n, 2))),
            ("q".into(), HostArray::U32(g.u32s(n, 2))),
        ])
    };
    check(&b.build().unwrap(), &make, &Params::new(), 0.0);
}

fn compare<'g>(
    op: CompareOp,
    a: crate::graph::Var<'g>,
    c: crate::graph::Var<'g>,
) -> crate::graph::Var<'g> {
    match op {
        CompareOp::Lt => a.lt(c),
        CompareOp::Le => a.le(c),
        CompareOp::Gt => a.gt(c),
        CompareOp::Ge => a.ge(c),
        CompareOp::Eq => a.eq(c),
        CompareOp::Ne => a.ne(c),
    }
}

#[test]
fn casts_match_the_interpreter() {
    let b = GraphBuilder::new();
    let (x, i, p) = (
        b.input("x", DType::F32),
        b.input("i", DType::U32),
        b.input("p", DType::Bool),
    );
    b.output("f2u", x.cast(DType::U32));
    b.output("f2b", x.cast(DType::Bool));
    b.output("u2f", i.cast(DType::F32));
    b.output("u2b", i.cast(DType::Bool));
    b.output("b2f", p.cast(DType::F32));
    b.output("b2u", p.cast(DType::U32) + b.u32(0));
    let make = |n, g: &mut Gen| {
        let mut x = g.f32s(n, -10.0, 5e9);
        x.iter_mut()
            .step_by(7)
            .for_each(|v| *v = (*v).trunc().min(3.0));
        let i = g.u32s(n, u32::MAX).into_iter().map(|v| v | 1).collect();
        Inputs::from([
            ("x".into(), HostArray::F32(x)),
            ("i".into(), HostArray::U32(i)),
            ("p".into(), HostArray::U32(g.u32s(n, 2))),
        ])
    };
    check(&b.build().unwrap(), &make, &Params::new(), 0.0);
}

#[test]
fn random_pack_unpack_and_row_reductions_match_the_interpreter() {
    let b = GraphBuilder::new();
    let key = [b.param("k0", DType::U32), b.param("k1", DType::U32)];
    let draw = b.input("draw", DType::U32);
    let lane = b.lane_index();
    let r0 = b.random_uniform(key, [lane, draw], 0);
    let r1 = b.random_uniform(key, [lane, draw], 1);
    let packed = b.input_packed("state", 3);
    let sum = packed.unpack(0) + packed.unpack(2) * r0;
    b.output("rows", b.pack(&[sum, r1, packed.unpack(1)]));
    let v = b.input("v", DType::F32);
    let mean = v.row_reduce(ReduceOp::Mean, 4);
    let centered = v - mean;
    let var = (centered * centered).row_reduce(ReduceOp::Mean, 4);
    b.output("norm", centered / (var + 1e-5).sqrt());
    b.output(
        "max",
        v.row_reduce(ReduceOp::Max, 4) + v.row_reduce(ReduceOp::Sum, 4),
    );
    let graph = b.build().unwrap();
    let params = Params::from([
        ("k0".into(), Scalar::U32(0xDEAD_BEEF)),
        ("k1".into(), Scalar::U32(42)),
    ]);
    for n in [4, 12, 1000, 4100] {
        let mut g = Gen(n as u64);
        let inputs = Inputs::from([
            ("draw".into(), HostArray::U32(g.u32s(n, 1000))),
            ("state".into(), HostArray::F32(g.f32s(3 * n, -2.0, 2.0))),
            ("v".into(), HostArray::F32(g.f32s(n, -2.0, 2.0))),
        ]);
        let want = run_interpreter(&graph, n, &inputs, &params);
        for level in levels() {
            for strategy in [Strategy::Fused, Strategy::Eager, Strategy::Vertical] {
                for engine in [CpuEngine::Interpreted, CpuEngine::Compiled] {
                    let options = CpuOptions {
                        engine,
                        ..CpuOptions::single(level)
                    };
                    let got = run_cpu(&graph, strategy, n, &inputs, &params, options);
                    for (name, w) in &want {
                        assert_close(
                            &format!("{name} n={n} {level} {strategy} {engine}"),
                            &got[name],
                            w,
                            2e-6,
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn vector_threefry_is_bit_identical_to_the_host_generator() {
    use crate::cpu::interp::threefry;
    use crate::cpu::{Simd, WithSimd};
    struct Draw(Vec<[u32; 4]>);
    impl WithSimd for Draw {
        type Output = Vec<[u32; 2]>;
        fn with_simd<V: Simd>(self, s: V) -> Vec<[u32; 2]> {
            let mut out = Vec::new();
            for chunk in self.0.chunks_exact(V::LANES) {
                let col = |k: usize| chunk.iter().map(|c| c[k]).collect::<Vec<u32>>();
                let (a, b, c, d) = (col(0), col(1), col(2), col(3));
                let mut w = [vec![0u32; V::LANES], vec![0u32; V::LANES]];
                // SAFETY: every vector holds LANES words.
                unsafe {
                    let r = threefry::threefry2x32(
                        s,
                        s.load_u(a.as_ptr()),
                        s.load_u(b.as_ptr()),
                        s.load_u(c.as_ptr()),
                        s.load_u(d.as_ptr()),
                    );
                    s.store_u(w[0].as_mut_ptr(), r[0]);
                    s.store_u(w[1].as_mut_ptr(), r[1]);
                }
                out.extend((0..V::LANES).map(|i| [w[0][i], w[1][i]]));
            }
            out
        }
    }
    let mut g = Gen(3);
    let cases: Vec<[u32; 4]> = (0..4096)
        .map(|_| [0; 4].map(|_| (g.next() >> 32) as u32))
        .collect();
    let want: Vec<[u32; 2]> = cases
        .iter()
        .map(|c| crate::rng::threefry2x32([c[0], c[1]], [c[2], c[3]]))
        .collect();
    for level in levels() {
        assert_eq!(
            level.dispatch(Draw(cases.clone())).unwrap(),
            want,
            "{level}"
        );
    }
}

#[test]
fn store_rows4_interleaves_four_columns_at_every_level() {
    use crate::cpu::{Simd, WithSimd};
    struct Interleave;
    impl WithSimd for Interleave {
        type Output = Vec<f32>;
        fn with_simd<V: Simd>(self, s: V) -> Vec<f32> {
            let columns: Vec<Vec<f32>> = (0..4)
                .map(|c| (0..V::LANES).map(|k| (100 * c + k) as f32).collect())
                .collect();
            let mut rows = vec![f32::NAN; 4 * V::LANES];
            // SAFETY: each column holds LANES floats and `rows` 4 * LANES.
            unsafe {
                let load = |c: usize| s.load(columns[c].as_ptr());
                s.store_rows4(rows.as_mut_ptr(), [load(0), load(1), load(2), load(3)]);
            }
            rows
        }
    }
    for level in levels() {
        let want: Vec<f32> = (0..level.lanes())
            .flat_map(|k| (0..4).map(move |c| (100 * c + k) as f32))
            .collect();
        assert_eq!(level.dispatch(Interleave).unwrap(), want, "{level}");
    }
}
