//! The comptime program of a generated kernel: a straight-line instruction list over
//! numbered registers, specialised into CubeCL IR at JIT time.
//!
//! A program is part of the compiled kernel's cache key (it derives `Hash` and `Eq`), so
//! each distinct kernel compiles once; params are read from buffers at run time and never
//! appear here.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::graph::ReduceOp;
use crate::plan::Slot;

mod instr;
mod params;

pub use instr::Instr;
pub use params::ParamLayout;

/// Register number. `f32` and `u32` registers live in separate files.
pub type Reg = u32;

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
