//! The comptime program of a generated kernel: a straight-line instruction list over
//! numbered registers, specialised into CubeCL IR at JIT time.
//!
//! A program is part of the compiled kernel's cache key (it derives `Hash` and `Eq`), so
//! each distinct kernel compiles once; params are read from buffers at run time and never
//! appear here.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::graph::{
    BinaryOp, CompareOp, FloatBinary, FloatUnary, LogicBinary, LogicUnary, ReduceOp,
};
use crate::plan::Slot;

mod params;

pub use params::ParamLayout;

/// Register number. `f32` and `u32` registers live in separate files.
pub type Reg = u32;

/// One instruction. Each variant's doc is its meaning over its fields: `f[r]` and `u[r]`
/// are register `r` of the `f32` and `u32` files (bools are `u32` 0/1); `buffer` indexes the
/// launch's bindings of the kind named (`in_f`, `out_u`, ...); a `per_step` buffer holds
/// `[steps, n]` lanes and is addressed at `lane + step * n`; `k` and `column` address a
/// packed `[n, k]` row.
#[allow(missing_docs)] // every field is named in its variant's formula
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Instr {
    /// `f[dst] = in_f[buffer][lane]` (`per_step`: plus `step * n`).
    LoadF {
        dst: Reg,
        buffer: u32,
        per_step: bool,
    },
    /// `u[dst] = in_u[buffer][lane]` (`per_step`: plus `step * n`).
    LoadU {
        dst: Reg,
        buffer: u32,
        per_step: bool,
    },
    /// `f[dst] = in_f[buffer][lane * k + column]`: a column of a packed input.
    LoadPackedF {
        dst: Reg,
        buffer: u32,
        k: u32,
        column: u32,
        per_step: bool,
    },
    /// `f[dst] = out_f[buffer][lane]`: a carried input updated in place, read from the
    /// output binding that also receives its next value (see [`super::state_reads`]).
    LoadStateF { dst: Reg, buffer: u32 },
    /// `u[dst] = out_u[buffer][lane]` (see [`Instr::LoadStateF`]).
    LoadStateU { dst: Reg, buffer: u32 },
    /// `f[dst] = params_f[index]`.
    ParamF { dst: Reg, index: u32 },
    /// `u[dst] = params_u[index]`.
    ParamU { dst: Reg, index: u32 },
    /// `f[dst] = f32::from_bits(bits)`.
    ConstF { dst: Reg, bits: u32 },
    /// `u[dst] = value`.
    ConstU { dst: Reg, value: u32 },
    /// `u[dst] = lane`.
    Lane { dst: Reg },
    /// `f[dst] = op(f[a])`.
    UnaryF { op: FloatUnary, dst: Reg, a: Reg },
    /// `u[dst] = op(u[a])` (bool).
    LogicUnary { op: LogicUnary, dst: Reg, a: Reg },
    /// `u[dst] = op(u[a], u[b])` (bool).
    LogicBinary {
        op: LogicBinary,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `f[dst] = op(f[a], f[b])` (float-only ops).
    FloatBinary {
        op: FloatBinary,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `f[dst] = op(f[a], f[b])`.
    BinaryF {
        op: BinaryOp,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `u[dst] = op(u[a], u[b])` (integer).
    BinaryU {
        op: BinaryOp,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `f[dst] = f[acc] + f[a] * f[b]`, or `f[a] * f[b]` without `acc`: one term of an
    /// [`Op::Affine`](crate::graph::Op::Affine), rounded twice (never a fused multiply-add).
    /// Lowering emits an affine's terms as one unbroken chain, each reading the last.
    MulAdd {
        dst: Reg,
        acc: Option<Reg>,
        a: Reg,
        b: Reg,
    },
    /// `stash[slot] = f[src]`: an input of [`Instr::DotParams`] in the thread's local array
    /// (see [`super::compact`]).
    Stash { slot: u32, src: Reg },
    /// `f[dst] = f[acc] + sum_k params_f[first_param + k] * stash[slot + k]` over
    /// `k < len`, left to right, each product and sum rounded (without `acc` the sum starts
    /// at the first product): an affine chain as a run-time loop (see [`super::compact`]).
    DotParams {
        dst: Reg,
        acc: Option<Reg>,
        first_param: u32,
        slot: u32,
        len: u32,
    },
    /// A dense layer as a run-time loop over its rows (see [`super::reroll`]): for every
    /// `j < rows`, `stash[out_slot + j] = activation(dot_j + params_f[bias_param + j
    /// stride])`, where `dot_j` is [`Instr::DotParams`]'s sum over `len` weights from
    /// `params_f[first_param + j stride]` and the inputs from `stash[in_slot]`, with the
    /// same rounding as the row's `DotParams`, `BinaryF` add and `UnaryF`.
    DenseParams {
        out_slot: u32,
        in_slot: u32,
        rows: u32,
        len: u32,
        first_param: u32,
        bias_param: u32,
        stride: u32,
        activation: Option<FloatUnary>,
    },
    /// `f[dst] = stash[slot]`: an output of [`Instr::DenseParams`] back in a register.
    Unstash { dst: Reg, slot: u32 },
    /// `u[dst] = f[a] op f[b]`.
    CompareF {
        op: CompareOp,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `u[dst] = u[a] op u[b]`.
    CompareU {
        op: CompareOp,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `f[dst] = u[cond] != 0 ? f[a] : f[b]`.
    SelectF { dst: Reg, cond: Reg, a: Reg, b: Reg },
    /// `u[dst] = u[cond] != 0 ? u[a] : u[b]`.
    SelectU { dst: Reg, cond: Reg, a: Reg, b: Reg },
    /// `f[dst] = f32(u[a])`.
    U32ToF32 { dst: Reg, a: Reg },
    /// `u[dst] = u32(f[a])` (truncating).
    F32ToU32 { dst: Reg, a: Reg },
    /// `u[dst] = f[a] != 0`.
    F32ToBool { dst: Reg, a: Reg },
    /// `u[dst] = u[a] != 0`.
    U32ToBool { dst: Reg, a: Reg },
    /// `f[dst[w]] = uniform(threefry(u[key[0]], u[key[1]]; u[counter[0]], u[counter[1]])[w])`
    /// for each word `w` with a destination: one Threefry evaluation serves both words.
    Random {
        dst: [Option<Reg>; 2],
        key: [Reg; 2],
        counter: [Reg; 2],
    },
    /// Runs [`KernelProgram::guards`]`[index]` here: its instructions execute only in
    /// lanes whose condition register is non-zero.
    Guard { index: u32 },
    /// `out_f[buffer][lane] = f[src]` (`per_step`: plus `step * n`).
    StoreF {
        buffer: u32,
        src: Reg,
        per_step: bool,
    },
    /// `out_u[buffer][lane] = u[src]` (`per_step`: plus `step * n`).
    StoreU {
        buffer: u32,
        src: Reg,
        per_step: bool,
    },
    /// `out_f[buffer][lane * k + column] = f[src]`: one column of a packed output.
    StorePackedF {
        buffer: u32,
        src: Reg,
        k: u32,
        column: u32,
        per_step: bool,
    },
}

impl Instr {
    /// The register the instruction defines, and whether it is an `f32` register.
    pub fn def(&self) -> Option<(Reg, bool)> {
        match *self {
            Instr::LoadF { dst, .. }
            | Instr::LoadPackedF { dst, .. }
            | Instr::LoadStateF { dst, .. }
            | Instr::ParamF { dst, .. }
            | Instr::ConstF { dst, .. }
            | Instr::UnaryF { dst, .. }
            | Instr::FloatBinary { dst, .. }
            | Instr::BinaryF { dst, .. }
            | Instr::SelectF { dst, .. }
            | Instr::MulAdd { dst, .. }
            | Instr::DotParams { dst, .. }
            | Instr::Unstash { dst, .. }
            | Instr::U32ToF32 { dst, .. } => Some((dst, true)),
            Instr::LoadU { dst, .. }
            | Instr::LoadStateU { dst, .. }
            | Instr::ParamU { dst, .. }
            | Instr::ConstU { dst, .. }
            | Instr::Lane { dst }
            | Instr::LogicUnary { dst, .. }
            | Instr::LogicBinary { dst, .. }
            | Instr::BinaryU { dst, .. }
            | Instr::CompareF { dst, .. }
            | Instr::CompareU { dst, .. }
            | Instr::SelectU { dst, .. }
            | Instr::F32ToU32 { dst, .. }
            | Instr::F32ToBool { dst, .. }
            | Instr::U32ToBool { dst, .. } => Some((dst, false)),
            // Random defines up to two registers: see [`Instr::defs`].
            Instr::Random { .. }
            | Instr::Guard { .. }
            | Instr::StoreF { .. }
            | Instr::StoreU { .. }
            | Instr::StorePackedF { .. }
            | Instr::Stash { .. }
            | Instr::DenseParams { .. } => None,
        }
    }

    /// Every register the instruction defines, with its file (`true`: `f32`).
    pub fn defs(&self) -> Vec<(Reg, bool)> {
        match *self {
            Instr::Random { dst, .. } => dst.iter().flatten().map(|r| (*r, true)).collect(),
            _ => self.def().into_iter().collect(),
        }
    }

    /// The registers the instruction reads (guards: none; their blocks list their own).
    pub fn operands(&self) -> Vec<Reg> {
        match *self {
            Instr::LoadF { .. }
            | Instr::LoadU { .. }
            | Instr::LoadPackedF { .. }
            | Instr::LoadStateF { .. }
            | Instr::LoadStateU { .. }
            | Instr::ParamF { .. }
            | Instr::ParamU { .. }
            | Instr::ConstF { .. }
            | Instr::ConstU { .. }
            | Instr::Lane { .. }
            | Instr::Guard { .. }
            | Instr::DenseParams { .. }
            | Instr::Unstash { .. } => vec![],
            Instr::UnaryF { a, .. }
            | Instr::LogicUnary { a, .. }
            | Instr::U32ToF32 { a, .. }
            | Instr::F32ToU32 { a, .. }
            | Instr::F32ToBool { a, .. }
            | Instr::U32ToBool { a, .. } => vec![a],
            Instr::LogicBinary { a, b, .. }
            | Instr::FloatBinary { a, b, .. }
            | Instr::BinaryF { a, b, .. }
            | Instr::BinaryU { a, b, .. }
            | Instr::CompareF { a, b, .. }
            | Instr::CompareU { a, b, .. } => vec![a, b],
            Instr::SelectF { cond, a, b, .. } | Instr::SelectU { cond, a, b, .. } => {
                vec![cond, a, b]
            }
            Instr::MulAdd { acc, a, b, .. } => acc.into_iter().chain([a, b]).collect(),
            Instr::DotParams { acc, .. } => acc.into_iter().collect(),
            Instr::Random { key, counter, .. } => vec![key[0], key[1], counter[0], counter[1]],
            Instr::Stash { src, .. }
            | Instr::StoreF { src, .. }
            | Instr::StoreU { src, .. }
            | Instr::StorePackedF { src, .. } => vec![src],
        }
    }

    /// The binding a load or store addresses, as (whether it is an output, whether it is
    /// `f32`, its index): `in_f`, `in_u`, `out_f` or `out_u`. State loads
    /// ([`Instr::LoadStateF`]) are not counted: only [`super::state_reads`] makes them.
    pub fn binding(&self) -> Option<(bool, bool, u32)> {
        match *self {
            Instr::LoadF { buffer, .. } | Instr::LoadPackedF { buffer, .. } => {
                Some((false, true, buffer))
            }
            Instr::LoadU { buffer, .. } => Some((false, false, buffer)),
            Instr::StoreF { buffer, .. } | Instr::StorePackedF { buffer, .. } => {
                Some((true, true, buffer))
            }
            Instr::StoreU { buffer, .. } => Some((true, false, buffer)),
            _ => None,
        }
    }
}

/// Instructions that run only where a condition holds: the exclusive inputs of one side of
/// the selects on that condition (a reset branch's random draws), see [`super::guards`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GuardBlock {
    /// The condition register (a bool, `u32` 0 or 1).
    pub cond: Reg,
    /// The guarded instructions, in order.
    pub body: Vec<Instr>,
    /// `f32` registers read after the block (the selects' operands).
    pub outputs_f: Vec<Reg>,
    /// `u32` registers read after the block.
    pub outputs_u: Vec<Reg>,
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct KernelProgram {
    /// One thread per lane, or one thread per row of `cols` lanes.
    pub rows_of: Option<u32>,
    /// Rows domain only: the reductions, in order, before the final element loop.
    pub phases: Vec<ReducePhase>,
    /// Multi-step programs only: loads of loop-carried state, before the first step.
    pub prologue: Vec<Instr>,
    /// Instructions of one step (per element).
    pub body: Vec<Instr>,
    /// Multi-step programs only: stores of the final state (from the carried registers),
    /// after the last step.
    pub epilogue: Vec<Instr>,
    /// Blocks the body runs through [`Instr::Guard`].
    pub guards: Vec<GuardBlock>,
    /// Steps per launch (`fused-xK`): the body runs this many times in a loop (not
    /// unrolled, so compile time does not grow with K).
    pub steps: u32,
    /// Between steps, `f[to] = f[from]` (loop-carried state kept in registers).
    pub carries_f: Vec<(Reg, Reg)>,
    /// Between steps, `u[to] = u[from]`.
    pub carries_u: Vec<(Reg, Reg)>,
}

impl KernelProgram {
    /// Every register the program reads: instruction operands (guard blocks included),
    /// reduction phases' values, carried `f32` values and guard outputs, once per read.
    pub fn reads(&self) -> impl Iterator<Item = Reg> + '_ {
        self.instrs()
            .flat_map(Instr::operands)
            .chain(self.phases.iter().map(|p| p.value))
            .chain(self.carries_f.iter().map(|c| c.1))
            .chain((self.guards.iter()).flat_map(|g| g.outputs_f.iter().copied()))
    }

    /// The prologue, body and epilogue.
    pub fn lists(&self) -> [&Vec<Instr>; 3] {
        [&self.prologue, &self.body, &self.epilogue]
    }

    /// [`Self::lists`], to rewrite.
    pub fn lists_mut(&mut self) -> [&mut Vec<Instr>; 3] {
        [&mut self.prologue, &mut self.body, &mut self.epilogue]
    }

    /// Every instruction: the phases, prologue, body, epilogue, then the guard blocks.
    pub fn instrs(&self) -> impl Iterator<Item = &Instr> {
        let phases = self.phases.iter().flat_map(|p| &p.body);
        let guards = self.guards.iter().flat_map(|g| &g.body);
        phases
            .chain(self.lists().into_iter().flatten())
            .chain(guards)
    }

    /// [`Self::instrs`], to rewrite in place.
    pub fn instrs_mut(&mut self) -> impl Iterator<Item = &mut Instr> {
        let phases = self.phases.iter_mut().flat_map(|p| p.body.iter_mut());
        let guards = self.guards.iter_mut().flat_map(|g| g.body.iter_mut());
        let lists = [&mut self.prologue, &mut self.body, &mut self.epilogue];
        phases.chain(lists.into_iter().flatten()).chain(guards)
    }
}

/// The end of the affine chain starting at `list[start]`, if one starts there: the
/// [`Instr::MulAdd`]s lowering emits for one [`Op::Affine`](crate::graph::Op::Affine), each
/// continuing the last. Every backend takes its chains from here (a device kernel as loops,
/// [`super::compact`]; the CPU interpreter as one affine op).
pub fn affine_chain(list: &[Instr], start: usize) -> Option<usize> {
    let Instr::MulAdd { mut dst, .. } = list[start] else {
        return None;
    };
    let mut end = start + 1;
    while let Some(Instr::MulAdd { dst: next, acc, .. }) = list.get(end) {
        if *acc != Some(dst) {
            break;
        }
        dst = *next;
        end += 1;
    }
    Some(end)
}

/// The buffers one launch binds, by kind and position in its sequences.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchBindings {
    /// `f32` inputs.
    pub in_f: Vec<Slot>,
    /// `u32`/bool inputs.
    pub in_u: Vec<Slot>,
    /// `f32` outputs.
    pub out_f: Vec<Slot>,
    /// `u32`/bool outputs.
    pub out_u: Vec<Slot>,
}

impl LaunchBindings {
    /// The outputs (`output`) or inputs of the `f32` (`float`) or `u32` kind.
    pub fn list(&self, output: bool, float: bool) -> &Vec<Slot> {
        match (output, float) {
            (false, true) => &self.in_f,
            (false, false) => &self.in_u,
            (true, true) => &self.out_f,
            (true, false) => &self.out_u,
        }
    }

    /// The slot a load or store of this launch addresses, and whether it is an output.
    pub fn slot(&self, instr: &Instr) -> Option<(bool, Slot)> {
        let (output, float, buffer) = instr.binding()?;
        Some((output, self.list(output, float)[buffer as usize]))
    }
}

/// A lowered launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoweredLaunch {
    /// The comptime program.
    pub program: LaunchProgram,
    /// Its buffers.
    pub bindings: LaunchBindings,
    /// Ledger name.
    pub name: String,
    /// Row width when the launch is one rows-domain kernel (threads = lanes / cols).
    pub rows_of: Option<u32>,
    /// Kernel indices (into the plan) it runs.
    pub kernels: Vec<usize>,
    /// Whether every part can run with vector loads and stores (see [`super::vector`]).
    pub vectorizable: bool,
}

#[cfg(test)]
impl KernelProgram {
    /// A one-step elementwise program of `body` alone (tests of the passes over it).
    pub(crate) fn of_body(body: Vec<Instr>) -> Self {
        Self {
            body,
            steps: 1,
            ..Self::default()
        }
    }
}

/// A launch: one or more programs, each over its own range of cubes (horizontal fusion).
///
/// CubeCL clones, hashes and compares a kernel's comptime arguments on every launch to find
/// its compiled kernel; a program of a few hundred instructions made that a deep copy and a
/// hash of all of it per launch (`perf` showed the copy and xxh3 hashing on the generated
/// `fused` step; at n = 1 on lavapipe it took 45.5 us against the hand-written kernel's
/// 34.6, and 32-37 against 30 with the digest). So the parts are shared behind an `Arc`,
/// the hash is the digest taken once when the program is built, and equality checks the
/// pointer before the contents.
#[derive(Debug, Clone)]
pub struct LaunchProgram {
    /// The parts, in cube-range order.
    pub parts: Arc<Vec<KernelProgram>>,
    digest: u64,
}

impl LaunchProgram {
    /// A launch of `parts`, in cube-range order.
    pub fn new(parts: Vec<KernelProgram>) -> Self {
        let mut hasher = std::hash::DefaultHasher::new();
        parts.hash(&mut hasher);
        Self {
            parts: Arc::new(parts),
            digest: hasher.finish(),
        }
    }
}

impl PartialEq for LaunchProgram {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.parts, &other.parts)
            || (self.digest == other.digest && self.parts == other.parts)
    }
}

impl Eq for LaunchProgram {}

impl Hash for LaunchProgram {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.digest);
    }
}
