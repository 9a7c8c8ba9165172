//! The host interpreter: runs any graph for one step, in `f32` or `f64`.
//!
//! It is the oracle every plan is checked against. `f32` arithmetic follows the device
//! kernels operation by operation; `f64` is the high-precision reference. Booleans are
//! `u32` 0/1, as in device buffers.

use std::collections::HashMap;

use crate::graph::{
    BinaryOp, CompareOp, Constant, DType, FloatBinary, FloatUnary, Graph, LogicBinary, LogicUnary,
    Op, ReduceOp,
};
use crate::graph::{BindError, HostArray, Scalar, check_bindings};
use crate::rng;

/// Float arithmetic the interpreter is generic over (`f32` and `f64`).
pub trait HostFloat: Copy + PartialOrd + std::fmt::Debug + 'static {
    /// From `f32`.
    fn from_f32(value: f32) -> Self;
    /// To `f32` (rounding).
    fn to_f32(self) -> f32;
    /// From a `u32` (exact for `f64`, rounding for `f32`).
    fn from_u32(value: u32) -> Self;
    /// Truncating conversion to `u32` (saturating, NaN to 0).
    fn to_u32(self) -> u32;
    /// Applies a float unary op.
    fn unary(op: FloatUnary, a: Self) -> Self;
    /// Applies an arithmetic binary op.
    fn binary(op: BinaryOp, a: Self, b: Self) -> Self;
    /// Applies a float-only binary op.
    fn float_binary(op: FloatBinary, a: Self, b: Self) -> Self;
}

macro_rules! host_float {
    ($t:ty, $erf:path) => {
        impl HostFloat for $t {
            fn from_f32(value: f32) -> Self {
                value as $t
            }
            fn to_f32(self) -> f32 {
                self as f32
            }
            fn from_u32(value: u32) -> Self {
                value as $t
            }
            fn to_u32(self) -> u32 {
                self as u32
            }
            fn unary(op: FloatUnary, a: Self) -> Self {
                match op {
                    FloatUnary::Neg => -a,
                    FloatUnary::Abs => a.abs(),
                    FloatUnary::Sqrt => a.sqrt(),
                    FloatUnary::Exp => a.exp(),
                    FloatUnary::Log => a.ln(),
                    FloatUnary::Sin => a.sin(),
                    FloatUnary::Cos => a.cos(),
                    FloatUnary::Tanh => a.tanh(),
                    FloatUnary::Erf => $erf(a),
                    FloatUnary::Square => a * a,
                    FloatUnary::Recip => 1.0 / a,
                    FloatUnary::Floor => a.floor(),
                }
            }
            fn binary(op: BinaryOp, a: Self, b: Self) -> Self {
                match op {
                    BinaryOp::Add => a + b,
                    BinaryOp::Sub => a - b,
                    BinaryOp::Mul => a * b,
                    BinaryOp::Div => a / b,
                    BinaryOp::Min => a.min(b),
                    BinaryOp::Max => a.max(b),
                }
            }
            fn float_binary(op: FloatBinary, a: Self, b: Self) -> Self {
                match op {
                    FloatBinary::Pow => a.powf(b),
                }
            }
        }
    };
}

host_float!(f32, libm::erff);
host_float!(f64, libm::erf);

/// A value during interpretation.
#[derive(Debug, Clone, PartialEq)]
pub enum Values<T> {
    /// Float lanes (or packed rows, flattened).
    Float(Vec<T>),
    /// Integer or boolean lanes.
    Int(Vec<u32>),
}

impl<T: HostFloat> Values<T> {
    fn float(&self) -> &[T] {
        match self {
            Values::Float(v) => v,
            Values::Int(_) => unreachable!("validated graph: float operand"),
        }
    }

    fn int(&self) -> &[u32] {
        match self {
            Values::Int(v) => v,
            Values::Float(_) => unreachable!("validated graph: integer operand"),
        }
    }

    /// To a host array (floats rounded to `f32`).
    pub fn to_host(&self) -> HostArray {
        match self {
            Values::Float(v) => HostArray::F32(v.iter().map(|x| x.to_f32()).collect()),
            Values::Int(v) => HostArray::U32(v.clone()),
        }
    }
}

/// Runs one step of `graph` over `n` lanes and returns every output by name.
pub fn interpret<T: HostFloat>(
    graph: &Graph,
    n: usize,
    inputs: &HashMap<String, HostArray>,
    params: &HashMap<String, Scalar>,
) -> Result<HashMap<String, Values<T>>, BindError> {
    check_bindings(graph, n, inputs, params)?;
    let mut values: Vec<Values<T>> = Vec::with_capacity(graph.nodes().len());
    for node in graph.nodes() {
        let value = evaluate(&node.op, n, &values, inputs, params);
        debug_assert_eq!(matches!(value, Values::Float(_)), node.dtype == DType::F32);
        values.push(value);
    }
    Ok(graph
        .outputs()
        .iter()
        .map(|o| (o.name.clone(), values[o.node.index()].clone()))
        .chain(graph.carries().iter().map(|c| {
            let name = graph.carry_name(c.input);
            (name, values[c.next.index()].clone())
        }))
        .collect())
}

fn evaluate<T: HostFloat>(
    op: &Op,
    n: usize,
    values: &[Values<T>],
    inputs: &HashMap<String, HostArray>,
    params: &HashMap<String, Scalar>,
) -> Values<T> {
    let v = |id: &crate::graph::NodeId| &values[id.index()];
    match op {
        Op::Input { name } => match &inputs[name] {
            HostArray::F32(a) => Values::Float(a.iter().map(|x| T::from_f32(*x)).collect()),
            HostArray::U32(a) => Values::Int(a.clone()),
        },
        Op::Param { name } => match params[name] {
            Scalar::F32(x) => Values::Float(vec![T::from_f32(x); n]),
            Scalar::U32(x) => Values::Int(vec![x; n]),
        },
        Op::Constant(c) => match c {
            Constant::F32(bits) => Values::Float(vec![T::from_f32(f32::from_bits(*bits)); n]),
            Constant::U32(x) => Values::Int(vec![*x; n]),
            Constant::Bool(b) => Values::Int(vec![u32::from(*b); n]),
        },
        Op::LaneIndex => Values::Int((0..n as u32).collect()),
        Op::LogicUnary(LogicUnary::Not, a) => {
            Values::Int(v(a).int().iter().map(|x| u32::from(*x == 0)).collect())
        }
        Op::LogicBinary(op, a, b) => Values::Int(zip_map(v(a).int(), v(b).int(), |x, y| {
            let (x, y) = (x != 0, y != 0);
            u32::from(match op {
                LogicBinary::And => x && y,
                LogicBinary::Or => x || y,
            })
        })),
        Op::FloatBinary(op, a, b) => Values::Float(zip_map(v(a).float(), v(b).float(), |x, y| {
            T::float_binary(*op, x, y)
        })),
        Op::Unary(op, a) => Values::Float(v(a).float().iter().map(|x| T::unary(*op, *x)).collect()),
        Op::Binary(op, a, b) => match (v(a), v(b)) {
            (Values::Float(a), Values::Float(b)) => {
                Values::Float(zip_map(a, b, |x, y| T::binary(*op, x, y)))
            }
            (Values::Int(a), Values::Int(b)) => {
                Values::Int(zip_map(a, b, |x, y| int_binary(*op, x, y)))
            }
            _ => unreachable!("validated graph: operands share a type"),
        },
        Op::Compare(op, a, b) => Values::Int(match (v(a), v(b)) {
            (Values::Float(a), Values::Float(b)) => {
                zip_map(a, b, |x, y| u32::from(compare(*op, x, y)))
            }
            (Values::Int(a), Values::Int(b)) => zip_map(a, b, |x, y| u32::from(compare(*op, x, y))),
            _ => unreachable!("validated graph: operands share a type"),
        }),
        Op::Select {
            cond,
            on_true,
            on_false,
        } => {
            let cond = v(cond).int();
            match (v(on_true), v(on_false)) {
                (Values::Float(t), Values::Float(f)) => Values::Float(select(cond, t, f)),
                (Values::Int(t), Values::Int(f)) => Values::Int(select(cond, t, f)),
                _ => unreachable!("validated graph: branches share a type"),
            }
        }
        Op::Cast(a, to) => cast(v(a), *to),
        Op::RandomUniform { key, counter, word } => {
            let [k0, k1, c0, c1] = [key[0], key[1], counter[0], counter[1]].map(|x| v(&x).int());
            Values::Float(
                (0..n)
                    .map(|i| {
                        let bits =
                            rng::threefry2x32([k0[i], k1[i]], [c0[i], c1[i]])[*word as usize];
                        T::from_f32(rng::symmetric_uniform(bits, 1.0))
                    })
                    .collect(),
            )
        }
        Op::Pack(items) => {
            let columns: Vec<&[T]> = items.iter().map(|item| v(item).float()).collect();
            Values::Float(
                (0..n)
                    .flat_map(|i| columns.iter().map(move |c| c[i]))
                    .collect(),
            )
        }
        Op::Unpack(a, index) => {
            let packed = v(a).float();
            let k = packed.len() / n;
            Values::Float((0..n).map(|i| packed[i * k + *index as usize]).collect())
        }
        Op::RowReduce(op, a, cols) => {
            let a = v(a).float();
            let cols = *cols as usize;
            let mut out = Vec::with_capacity(n);
            for row in a.chunks_exact(cols) {
                let reduced = reduce_row(*op, row);
                out.extend(std::iter::repeat_n(reduced, cols));
            }
            Values::Float(out)
        }
        Op::Affine {
            acc,
            weights,
            inputs,
        } => {
            let weights: Vec<&[T]> = weights.iter().map(|w| v(w).float()).collect();
            let inputs: Vec<&[T]> = inputs.iter().map(|x| v(x).float()).collect();
            let acc = acc.map(|a| v(&a).float());
            let product =
                |k: usize, i: usize| T::binary(BinaryOp::Mul, weights[k][i], inputs[k][i]);
            Values::Float(
                (0..n)
                    .map(|i| {
                        let (start, first) = match acc {
                            Some(acc) => (acc[i], 0),
                            None => (product(0, i), 1),
                        };
                        (first..inputs.len())
                            .fold(start, |sum, k| T::binary(BinaryOp::Add, sum, product(k, i)))
                    })
                    .collect(),
            )
        }
    }
}

/// Sequential row reduction, in the order the device kernels use.
pub fn reduce_row<T: HostFloat>(op: ReduceOp, row: &[T]) -> T {
    match op {
        ReduceOp::Sum | ReduceOp::Mean => {
            let sum = row
                .iter()
                .fold(T::from_f32(0.0), |acc, x| T::binary(BinaryOp::Add, acc, *x));
            match op {
                ReduceOp::Mean => T::binary(BinaryOp::Div, sum, T::from_u32(row.len() as u32)),
                _ => sum,
            }
        }
        ReduceOp::Max => row
            .iter()
            .copied()
            .fold(row[0], |m, x| T::binary(BinaryOp::Max, m, x)),
    }
}

fn int_binary(op: BinaryOp, a: u32, b: u32) -> u32 {
    match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Sub => a.wrapping_sub(b),
        BinaryOp::Mul => a.wrapping_mul(b),
        BinaryOp::Div => a.checked_div(b).unwrap_or(u32::MAX),
        BinaryOp::Min => a.min(b),
        BinaryOp::Max => a.max(b),
    }
}

/// `f` of each pair of lanes of `a` and `b`.
fn zip_map<A: Copy, B: Copy, R>(a: &[A], b: &[B], f: impl Fn(A, B) -> R) -> Vec<R> {
    a.iter().zip(b).map(|(x, y)| f(*x, *y)).collect()
}

/// `cond ? on_true : on_false`, lane by lane.
fn select<V: Copy>(cond: &[u32], on_true: &[V], on_false: &[V]) -> Vec<V> {
    cond.iter()
        .zip(on_true.iter().zip(on_false))
        .map(|(c, (t, f))| if *c != 0 { *t } else { *f })
        .collect()
}

fn compare<V: PartialOrd>(op: CompareOp, a: V, b: V) -> bool {
    match op {
        CompareOp::Lt => a < b,
        CompareOp::Le => a <= b,
        CompareOp::Gt => a > b,
        CompareOp::Ge => a >= b,
        CompareOp::Eq => a == b,
        CompareOp::Ne => a != b,
    }
}

fn cast<T: HostFloat>(a: &Values<T>, to: DType) -> Values<T> {
    match (a, to) {
        (Values::Float(a), DType::F32) => Values::Float(a.clone()),
        (Values::Float(a), DType::U32) => Values::Int(a.iter().map(|x| x.to_u32()).collect()),
        (Values::Float(a), DType::Bool) => {
            Values::Int(a.iter().map(|x| u32::from(x.to_f32() != 0.0)).collect())
        }
        (Values::Int(a), DType::F32) => Values::Float(a.iter().map(|x| T::from_u32(*x)).collect()),
        (Values::Int(a), DType::U32) => Values::Int(a.clone()),
        (Values::Int(a), DType::Bool) => {
            Values::Int(a.iter().map(|x| u32::from(*x != 0)).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::transform::random_as_inputs;
    use crate::graph::{DType, GraphBuilder, HostArray};

    #[test]
    fn random_ops_become_inputs_and_their_counters_go() {
        let g = GraphBuilder::new();
        let key = [g.param("k0", DType::U32), g.param("k1", DType::U32)];
        let x = g.input("x", DType::F32);
        let counter = g.input("c", DType::U32) * g.u32(2);
        let r = g.random_uniform(key, [g.lane_index(), counter], 0);
        g.output("y", x + r);
        let graph = g.build().unwrap();
        let drawn = random_as_inputs(&graph, "draw").unwrap();
        assert!(drawn.params().is_empty());
        assert_eq!(
            drawn.inputs().iter().map(|(_, n)| *n).collect::<Vec<_>>(),
            ["x", "draw0"]
        );
        let inputs = [
            ("x".to_string(), HostArray::F32(vec![1.0, 2.0])),
            ("draw0".to_string(), HostArray::F32(vec![0.5, -0.5])),
        ]
        .into_iter()
        .collect();
        let out = interpret::<f32>(&drawn, 2, &inputs, &Default::default()).unwrap();
        assert!(matches!(&out["y"], Values::Float(y) if y == &[1.5, 1.5]));
    }
}
