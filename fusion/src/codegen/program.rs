//! The comptime program of a generated kernel: a straight-line instruction list over
//! numbered registers, specialised into CubeCL IR at JIT time.
//!
//! A program is part of the compiled kernel's cache key (it derives `Hash` and `Eq`), so
//! each distinct kernel compiles once; params are read from buffers at run time and never
//! appear here.

use crate::graph::{
    BinaryOp, CompareOp, DType, FloatBinary, FloatUnary, Graph, LogicBinary, LogicUnary, NodeId,
    ReduceOp,
};

/// Register number. `f32` and `u32` registers live in separate files.
pub type Reg = u32;

/// Which steps of a multi-step (`fused-xK`) launch a memory access happens in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepFilter {
    /// Every step (per-step inputs and outputs, or single-step kernels).
    Every,
    /// Only the first step: loads of loop-carried state.
    First,
    /// Only the last step: stores of loop-carried state.
    Last,
}

/// One instruction. Bool values are `u32` 0/1 registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Instr {
    /// `f[dst] = in_f[buffer][lane (+ step offset)]`.
    LoadF {
        /// Destination register.
        dst: Reg,
        /// Index into the kernel's `f32` input buffers.
        buffer: u32,
        /// Per-step input (`[steps, n]`): offset by `step * n`.
        per_step: bool,
        /// Steps in which the access happens.
        at: StepFilter,
    },
    /// `u[dst] = in_u[buffer][lane (+ step offset)]`.
    LoadU {
        /// Destination register.
        dst: Reg,
        /// Index into the kernel's `u32` input buffers.
        buffer: u32,
        /// Per-step input.
        per_step: bool,
        /// Steps in which the access happens.
        at: StepFilter,
    },
    /// `f[dst] = in_f[buffer][lane * k + column]` (a column of a packed input).
    LoadPackedF {
        /// Destination register.
        dst: Reg,
        /// Index into the `f32` input buffers.
        buffer: u32,
        /// Row width.
        k: u32,
        /// Column.
        column: u32,
        /// Per-step input.
        per_step: bool,
        /// Steps in which the access happens.
        at: StepFilter,
    },
    /// `f[dst] = params_f[index]`.
    ParamF {
        /// Destination register.
        dst: Reg,
        /// Index into the `f32` params buffer.
        index: u32,
    },
    /// `u[dst] = params_u[index]`.
    ParamU {
        /// Destination register.
        dst: Reg,
        /// Index into the `u32` params buffer.
        index: u32,
    },
    /// `f[dst] = constant` (bits of an `f32`).
    ConstF {
        /// Destination register.
        dst: Reg,
        /// The constant's bits.
        bits: u32,
    },
    /// `u[dst] = constant`.
    ConstU {
        /// Destination register.
        dst: Reg,
        /// The constant.
        value: u32,
    },
    /// `u[dst] = lane`.
    Lane {
        /// Destination register.
        dst: Reg,
    },
    /// `f[dst] = op(f[a])`.
    UnaryF {
        /// The op.
        op: FloatUnary,
        /// Destination register.
        dst: Reg,
        /// Operand register.
        a: Reg,
    },
    /// `u[dst] = op(u[a])` (bool).
    LogicUnary {
        /// The op.
        op: LogicUnary,
        /// Destination register.
        dst: Reg,
        /// Operand register.
        a: Reg,
    },
    /// `u[dst] = op(u[a], u[b])` (bool).
    LogicBinary {
        /// The op.
        op: LogicBinary,
        /// Destination register.
        dst: Reg,
        /// Left operand.
        a: Reg,
        /// Right operand.
        b: Reg,
    },
    /// `f[dst] = op(f[a], f[b])` (float-only ops).
    FloatBinary {
        /// The op.
        op: FloatBinary,
        /// Destination register.
        dst: Reg,
        /// Left operand.
        a: Reg,
        /// Right operand.
        b: Reg,
    },
    /// `f[dst] = op(f[a], f[b])`.
    BinaryF {
        /// The op.
        op: BinaryOp,
        /// Destination register.
        dst: Reg,
        /// Left operand.
        a: Reg,
        /// Right operand.
        b: Reg,
    },
    /// `u[dst] = op(u[a], u[b])` (integer).
    BinaryU {
        /// The op.
        op: BinaryOp,
        /// Destination register.
        dst: Reg,
        /// Left operand.
        a: Reg,
        /// Right operand.
        b: Reg,
    },
    /// `u[dst] = f[a] op f[b]`.
    CompareF {
        /// The comparison.
        op: CompareOp,
        /// Destination register.
        dst: Reg,
        /// Left operand.
        a: Reg,
        /// Right operand.
        b: Reg,
    },
    /// `u[dst] = u[a] op u[b]`.
    CompareU {
        /// The comparison.
        op: CompareOp,
        /// Destination register.
        dst: Reg,
        /// Left operand.
        a: Reg,
        /// Right operand.
        b: Reg,
    },
    /// `f[dst] = u[cond] != 0 ? f[a] : f[b]`.
    SelectF {
        /// Destination register.
        dst: Reg,
        /// Condition register (u32).
        cond: Reg,
        /// Value where the condition holds.
        a: Reg,
        /// Value elsewhere.
        b: Reg,
    },
    /// `u[dst] = u[cond] != 0 ? u[a] : u[b]`.
    SelectU {
        /// Destination register.
        dst: Reg,
        /// Condition register.
        cond: Reg,
        /// Value where the condition holds.
        a: Reg,
        /// Value elsewhere.
        b: Reg,
    },
    /// `f[dst] = f32(u[a])`.
    U32ToF32 {
        /// Destination register.
        dst: Reg,
        /// Source register.
        a: Reg,
    },
    /// `u[dst] = u32(f[a])` (truncating).
    F32ToU32 {
        /// Destination register.
        dst: Reg,
        /// Source register.
        a: Reg,
    },
    /// `u[dst] = f[a] != 0`.
    F32ToBool {
        /// Destination register.
        dst: Reg,
        /// Source register.
        a: Reg,
    },
    /// `u[dst] = u[a] != 0`.
    U32ToBool {
        /// Destination register.
        dst: Reg,
        /// Source register.
        a: Reg,
    },
    /// `f[dst] = uniform(threefry(u[key0], u[key1]; u[counter0], u[counter1])[word])`.
    Random {
        /// Destination register.
        dst: Reg,
        /// Key registers.
        key: [Reg; 2],
        /// Counter registers.
        counter: [Reg; 2],
        /// Output word.
        word: u8,
    },
    /// `out_f[buffer][lane (+ step offset)] = f[src]`.
    StoreF {
        /// Index into the `f32` output buffers.
        buffer: u32,
        /// Source register.
        src: Reg,
        /// Per-step output (`[steps, n]`).
        per_step: bool,
        /// Steps in which the access happens.
        at: StepFilter,
    },
    /// `out_u[buffer][lane (+ step offset)] = u[src]`.
    StoreU {
        /// Index into the `u32` output buffers.
        buffer: u32,
        /// Source register.
        src: Reg,
        /// Per-step output.
        per_step: bool,
        /// Steps in which the access happens.
        at: StepFilter,
    },
    /// `out_f[buffer][lane * k + column] = f[src]` (one column of a packed output).
    StorePackedF {
        /// Index into the `f32` output buffers.
        buffer: u32,
        /// Source register.
        src: Reg,
        /// Row width.
        k: u32,
        /// Column.
        column: u32,
        /// Per-step output.
        per_step: bool,
        /// Steps in which the access happens.
        at: StepFilter,
    },
}

/// A loop over the columns of a row that reduces one value (rows-domain kernels).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReducePhase {
    /// Instructions evaluated per element, ending with the value to reduce in `value`.
    pub body: Vec<Instr>,
    /// The register holding the per-element value.
    pub value: Reg,
    /// The reduction.
    pub op: ReduceOp,
    /// The register the row result lands in (visible to later phases).
    pub result: Reg,
}

/// What one kernel (or one part of a horizontal launch) computes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KernelProgram {
    /// One thread per lane, or one thread per row of `cols` lanes.
    pub rows_of: Option<u32>,
    /// Rows domain only: the reductions, in order, before the final element loop.
    pub phases: Vec<ReducePhase>,
    /// Instructions of one step (per element).
    pub body: Vec<Instr>,
    /// Steps per launch (`fused-xK`); the body runs this many times, unrolled.
    pub steps: u32,
    /// Between steps, `f[to] = f[from]` (loop-carried state kept in registers).
    pub carries_f: Vec<(Reg, Reg)>,
    /// Between steps, `u[to] = u[from]`.
    pub carries_u: Vec<(Reg, Reg)>,
}

/// A launch: one or more programs, each over its own range of cubes (horizontal fusion).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LaunchProgram {
    /// The parts, in cube-range order.
    pub parts: Vec<KernelProgram>,
}

/// Index of every param in its type's params buffer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParamLayout {
    /// `f32` params in buffer order.
    pub f32_params: Vec<NodeId>,
    /// `u32` params in buffer order.
    pub u32_params: Vec<NodeId>,
}

impl ParamLayout {
    /// The layout of `graph`'s params.
    pub fn of(graph: &Graph) -> Self {
        let mut layout = Self::default();
        for (id, _) in graph.params() {
            match graph.node(id).dtype {
                DType::F32 => layout.f32_params.push(id),
                _ => layout.u32_params.push(id),
            }
        }
        layout
    }

    /// Whether `id` is an `f32` param, and its index in its buffer.
    pub(super) fn index(&self, id: NodeId) -> (bool, u32) {
        match self.f32_params.iter().position(|p| *p == id) {
            Some(i) => (true, i as u32),
            None => (
                false,
                self.u32_params
                    .iter()
                    .position(|p| *p == id)
                    .expect("a param") as u32,
            ),
        }
    }
}
