//! Compiling a lowered launch into a chunk program: a flat op list over value locations.
//!
//! The input is the device's own lowering ([`crate::lir::lower`]), so the CPU runs the
//! same instruction list the GPU kernels run, with the same semantics for packed columns,
//! multi-step (`fused-xK`) loads and stores and row-reduction phases. Compilation decides
//! everything once, at build time:
//!
//! - `fused-xK` is unrolled: step `s` reads per-step inputs at offset `s n` and writes
//!   per-step outputs step-major; carried inputs are loaded at step 0 and the carries
//!   (`input <- next`) become renamings, so state stays in the chunk buffers between steps
//!   at no copy, and `Next` buffers are written at the last step only.
//! - Every value gets a [`Loc`]: a lane slice of an input buffer (loads cost nothing), a
//!   pinned slot holding a constant or param, or a scratch slot reused once the value is
//!   dead ([`super::alloc`]).
//! - The lowered IR's guard blocks ([`crate::lir::guards`]) become [`Op::Guard`]s, its
//!   affine chains ([`crate::lir::program::affine_chain`]) one [`Op::Affine`] each: the
//!   interpreter follows the schedule every backend shares.

use std::collections::HashMap;

use super::alloc;
use super::ops::{ChunkProgram, L, Loc, Op};
use crate::cpu::binder::Binder;
use crate::graph::NodeId;
use crate::lir::program::{GuardBlock, Instr, KernelProgram, LoweredLaunch, affine_chain};

/// Translates `launch` into a [`ChunkProgram`], its buffers and pinned values found by
/// `binder`.
pub fn compile(
    launch: &LoweredLaunch,
    steps: u32,
    binder: &Binder<'_>,
    lazy_selects: bool,
) -> ChunkProgram {
    let mut t = Translator {
        launch,
        binder,
        ops: Vec::new(),
        vals: Vec::new(),
        def: HashMap::new(),
        guard: lazy_selects && launch.rows_of.is_none(),
    };
    for part in launch.program.parts.iter() {
        t.part(part, steps);
    }
    let (ops, locs, scratch_slots) = alloc::place(&t.ops, &t.vals);
    ChunkProgram {
        ops,
        locs,
        scratch_slots,
        rows_of: launch.rows_of,
        name: launch.name.clone(),
    }
}

struct Translator<'a> {
    launch: &'a LoweredLaunch,
    binder: &'a Binder<'a>,
    /// Ops whose operands are indices into `vals`.
    ops: Vec<Op>,
    /// Value table (`L` during translation indexes this): temps are `Loc::Scratch` until
    /// [`alloc::place`] gives them their slot.
    vals: Vec<Loc>,
    /// Current value of each register of the running part.
    def: HashMap<u32, L>,
    /// Whether guard blocks run guarded (else inline, every lane).
    guard: bool,
}

impl Translator<'_> {
    fn val(&mut self, v: Loc) -> L {
        self.vals.push(v);
        (self.vals.len() - 1) as L
    }

    fn get(&self, reg: u32) -> L {
        *self
            .def
            .get(&reg)
            .unwrap_or_else(|| panic!("lowering reads register {reg} before defining it"))
    }

    /// The executor buffer of binding `index` of `list`.
    fn buffer(&self, load_or_store: &Instr) -> u32 {
        let (_, slot) = self
            .launch
            .bindings
            .slot(load_or_store)
            .expect("a load or store");
        (self.binder.buffer)(slot)
    }

    /// Emits the chain of [`Instr::MulAdd`]s `chain` as one [`Op::Affine`] with its terms.
    fn affine(&mut self, chain: &[Instr]) {
        let terms: Vec<(L, L)> = (chain.iter())
            .map(|instr| match *instr {
                Instr::MulAdd { a, b, .. } => (self.get(a), self.get(b)),
                _ => unreachable!("a chain holds multiply-adds only"),
            })
            .collect();
        let (Instr::MulAdd { acc, .. }, Instr::MulAdd { dst: tail, .. }) =
            (chain[0], chain[chain.len() - 1])
        else {
            unreachable!("a chain holds multiply-adds only")
        };
        let acc = acc.map(|r| self.get(r));
        let pinned_weights =
            (terms.iter()).all(|(w, _)| matches!(self.vals[*w as usize], Loc::Pinned(_)));
        self.emit(tail, |_, dst| Op::Affine {
            dst,
            acc,
            len: terms.len() as u32,
            pinned_weights,
        });
        self.ops.extend(terms.iter().map(|(w, x)| Op::Term(*w, *x)));
    }

    fn emit(&mut self, dst_reg: u32, make: impl FnOnce(&Self, L) -> Op) {
        let dst = self.val(Loc::Scratch(0));
        let op = make(self, dst);
        self.ops.push(op);
        self.def.insert(dst_reg, dst);
    }

    /// Emits `make(op, dst, a, b)` for the values of registers `a` and `b`.
    fn binary<O>(&mut self, make: fn(O, L, L, L) -> Op, op: O, dst: u32, a: u32, b: u32) {
        let (a, b) = (self.get(a), self.get(b));
        self.emit(dst, |_, d| make(op, d, a, b));
    }

    fn part(&mut self, part: &KernelProgram, steps: u32) {
        self.def.clear();
        for phase in &part.phases {
            self.list(&phase.body, &[], 0);
            let cols = part.rows_of.expect("phases only in rows kernels");
            let src = self.get(phase.value);
            let op = phase.op;
            self.emit(phase.result, |_, dst| Op::RowReduce(op, src, dst, cols));
        }
        self.list(&part.prologue, &[], 0);
        for step in 0..steps {
            self.list(&part.body, &part.guards, step);
            let carries: Vec<(u32, L)> = (part.carries_f.iter().chain(&part.carries_u))
                .map(|(to, from)| (*to, self.get(*from)))
                .collect();
            self.def.extend(carries);
        }
        self.list(&part.epilogue, &[], steps - 1);
    }

    /// Translates `body`: each affine chain as one op, each guard block behind an
    /// [`Op::Guard`] (or inline, when not guarding).
    fn list(&mut self, body: &[Instr], guards: &[GuardBlock], step: u32) {
        let mut i = 0;
        while i < body.len() {
            if let Some(end) = affine_chain(body, i) {
                self.affine(&body[i..end]);
                i = end;
                continue;
            }
            match body[i] {
                Instr::Guard { index } => {
                    let block = &guards[index as usize];
                    let at = self.ops.len();
                    if self.guard {
                        let cond = self.get(block.cond);
                        self.ops.push(Op::Guard {
                            cond,
                            when: true,
                            len: 0,
                        });
                    }
                    self.list(&block.body, &[], step);
                    let guarded = (self.ops.len() - at).saturating_sub(1) as u32;
                    if let Some(Op::Guard { len, .. }) = self.ops.get_mut(at) {
                        *len = guarded;
                    }
                }
                ref instr => self.instr(instr, step),
            }
            i += 1;
        }
    }

    fn instr(&mut self, instr: &Instr, step: u32) {
        let at_step = |per_step: bool| if per_step { step } else { 0 };
        match *instr {
            Instr::LoadF { dst, per_step, .. } | Instr::LoadU { dst, per_step, .. } => {
                let l = self.val(Loc::Input {
                    buffer: self.buffer(instr),
                    step: at_step(per_step),
                });
                self.def.insert(dst, l);
            }
            Instr::LoadPackedF {
                dst,
                k,
                column,
                per_step,
                ..
            } => {
                let buffer = self.buffer(instr);
                let step = at_step(per_step);
                self.emit(dst, |_, dst| Op::LoadPacked {
                    dst,
                    buffer,
                    k,
                    column,
                    step,
                });
            }
            Instr::LoadStateF { .. } | Instr::LoadStateU { .. } => {
                unreachable!("only device executors read state from its output binding")
            }
            Instr::ParamF { dst, .. }
            | Instr::ParamU { dst, .. }
            | Instr::ConstF { dst, .. }
            | Instr::ConstU { dst, .. } => {
                let l = self.val(Loc::Pinned((self.binder.pin)(NodeId(dst))));
                self.def.insert(dst, l);
            }
            Instr::Lane { dst } => self.emit(dst, |_, d| Op::Lane(d)),
            Instr::UnaryF { op, dst, a } => self.emit(dst, |t, d| Op::UnaryF(op, d, t.get(a))),
            Instr::LogicUnary { op, dst, a } => {
                self.emit(dst, |t, d| Op::LogicUnary(op, d, t.get(a)))
            }
            Instr::LogicBinary { op, dst, a, b } => self.binary(Op::LogicBinary, op, dst, a, b),
            Instr::FloatBinary { op, dst, a, b } => self.binary(Op::FloatBinary, op, dst, a, b),
            Instr::BinaryF { op, dst, a, b } => self.binary(Op::BinaryF, op, dst, a, b),
            Instr::BinaryU { op, dst, a, b } => self.binary(Op::BinaryU, op, dst, a, b),
            Instr::CompareF { op, dst, a, b } => self.binary(Op::CompareF, op, dst, a, b),
            Instr::CompareU { op, dst, a, b } => self.binary(Op::CompareU, op, dst, a, b),
            Instr::SelectF { dst, cond, a, b } | Instr::SelectU { dst, cond, a, b } => {
                self.emit(dst, |t, d| Op::Select(d, t.get(cond), t.get(a), t.get(b)))
            }
            Instr::U32ToF32 { dst, a } => self.emit(dst, |t, d| Op::U32ToF32(d, t.get(a))),
            Instr::F32ToU32 { dst, a } => self.emit(dst, |t, d| Op::F32ToU32(d, t.get(a))),
            Instr::F32ToBool { dst, a } => self.emit(dst, |t, d| Op::F32ToBool(d, t.get(a))),
            Instr::U32ToBool { dst, a } => self.emit(dst, |t, d| Op::U32ToBool(d, t.get(a))),
            Instr::Random { dst, key, counter } => {
                for (word, dst) in dst.iter().enumerate() {
                    if let Some(dst) = *dst {
                        self.emit(dst, |t, d| {
                            let args = [
                                t.get(key[0]),
                                t.get(key[1]),
                                t.get(counter[0]),
                                t.get(counter[1]),
                            ];
                            Op::Random(d, args, word as u8)
                        });
                    }
                }
            }
            Instr::Guard { .. } | Instr::MulAdd { .. } => {
                unreachable!("chains and guard blocks are translated by `list`")
            }
            Instr::Stash { .. }
            | Instr::DotParams { .. }
            | Instr::DenseParams { .. }
            | Instr::Unstash { .. } => {
                unreachable!("the CPU runs affine chains itself (`lir::compact` is for kernels)")
            }
            Instr::StoreF { src, per_step, .. }
            | Instr::StoreU { src, per_step, .. }
            | Instr::StorePackedF { src, per_step, .. } => {
                let (k, column) = match *instr {
                    Instr::StorePackedF { k, column, .. } => (k, column),
                    _ => (0, 0),
                };
                let op = Op::Store {
                    src: self.get(src),
                    buffer: self.buffer(instr),
                    step: at_step(per_step),
                    k,
                    column,
                };
                self.ops.push(op);
            }
        }
    }
}
