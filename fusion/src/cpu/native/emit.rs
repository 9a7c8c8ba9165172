//! C source for one lowered launch: a function over a range of lanes.
//!
//! The input is the device's lowering ([`crate::lir::lower`]), the same instruction
//! list the interpreter and the GPU kernels run. Every register becomes a C local (`fN`
//! for the `f32` file, `uN` for `u32`), every instruction one statement, and the lane loop
//! carries `#pragma omp simd`: lanes are independent, so the compiler vectorises the whole
//! step at the SIMD level's width with every intermediate in registers. Guard blocks that
//! draw random numbers (a reset's) run in a loop of their own over the lanes that take
//! them ([`split`]); other guard blocks become `if`s, which the vectoriser turns into
//! masked code.
//!
//! `fused-xK` programs run over blocks of [`BLOCK`] lanes: the carried state of a block
//! lives in stack arrays between steps (one L1-resident load and store per value per step),
//! and each step is one vectorised loop over the block.

mod c_expr;
mod split;

use std::fmt::Write;

use super::prelude::float_literal;
use crate::cpu::binder::Binder;
use crate::graph::{LogicBinary, LogicUnary, NodeId};
use crate::lir::program::LoweredLaunch;
use crate::lir::program::{GuardBlock, Instr, KernelProgram, Reg};
use c_expr::{binary, compare, file, load, reg, store_state, ty, unary, zero};

/// Lanes per block of a multi-step program (its state arrays: 1 KiB per carried value).
pub const BLOCK: usize = 256;

/// The signature every compiled launch has: executor buffer bases, pinned constants and
/// params (bits) of the range's bank, lane count, the lane range `[begin, end)` to run, and
/// the first lane of its bank (lane indices count from it).
pub type KernelFn = unsafe extern "C" fn(*const *mut u32, *const u32, i64, i64, i64, i64);

/// Lane ranges shorter than this run a split body ([`split`]) as one masked loop: at one
/// lane the extra loops cost more than the draws they save.
pub const SPLIT_MIN_LANES: usize = 32;

/// Lanes from which a one-step launch moving `bytes_per_lane` per lane runs its guard
/// blocks masked: where one call's traffic exceeds the last-level cache
/// (`cache_bytes`), the step streams from memory, and the split form's loops that touch
/// one array (the guard's condition) or none (compaction, the draws) leave the memory
/// idle between the blocks' main loops. `CARTFUSE_CPU_LAZY_SELECTS` on and off, in turns
/// against the hand-written step on the 2-core AVX2 VM (32 MiB L3; CartPole's step moves
/// 88 bytes a lane): at n = 1M split 0.88 and 0.91x, masked 1.07 and 1.09x; at 262144
/// (23 MB a call) split 0.995x, masked 0.94x; at 65536 split 1.08x, masked 0.91x.
/// Multi-step launches keep their state in L1 between steps and stay split (`fused-x10`
/// at 1M: split 1.14x, masked 1.08x).
pub fn masked_from(cache_bytes: Option<u64>, bytes_per_lane: f64) -> Option<u64> {
    let cache = cache_bytes? as f64;
    (bytes_per_lane > 0.0).then(|| (cache / bytes_per_lane).ceil() as u64)
}

/// Launches with more instructions than this run on the interpreter. The fused rollout
/// step with a 4-64-64 policy (18,690 instructions, 9k of them weights) took gcc 12 7.8
/// minutes at `-O3` on the 2-core development VM, and ran at 1.9e6 env-steps/s at n = 4096,
/// no faster than the interpreter, whose affine op already keeps its sums in registers.
/// CartPole's fused step has about 150 instructions and compiles in about 0.3 s.
pub const MAX_INSTRUCTIONS: usize = 4096;

/// Why a launch has no C form (it then runs on the interpreter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsupported {
    /// More than [`MAX_INSTRUCTIONS`].
    TooLarge(usize),
    /// A rows-domain kernel (row reductions): a loop nest the emitter does not write.
    Rows,
    /// An instruction only the device's compaction pass emits.
    Compacted,
}

/// Whether the emitter writes `launch` as C (else it runs on the interpreter): not a rows
/// kernel, at most [`MAX_INSTRUCTIONS`] instructions.
pub fn emittable(launch: &LoweredLaunch) -> Result<(), Unsupported> {
    if launch.rows_of.is_some() || launch.program.parts.iter().any(|p| p.rows_of.is_some()) {
        return Err(Unsupported::Rows);
    }
    let instructions = launch
        .program
        .parts
        .iter()
        .map(|p| p.instrs().count())
        .sum();
    if instructions > MAX_INSTRUCTIONS {
        return Err(Unsupported::TooLarge(instructions));
    }
    Ok(())
}

/// The C function `name` running `launch` for `steps` steps per call.
/// `split_guards`: guard blocks that draw run over the lanes that take them ([`split`]),
/// else every block is blended under a mask. `masked_from`: a one-step launch over this
/// many lanes or more (`n`) runs its guard blocks masked anyway (see [`masked_from`]).
pub fn emit_launch(
    launch: &LoweredLaunch,
    steps: u32,
    name: &str,
    binder: &Binder<'_>,
    split_guards: bool,
    masked_from: Option<u64>,
) -> Result<String, Unsupported> {
    emittable(launch)?;
    let mut c = String::new();
    let _ = writeln!(
        c,
        "void {name}(uint32_t *const *bufs, const uint32_t *pins, int64_t n, int64_t begin, \
         int64_t end, int64_t lane0) {{\n(void)n; (void)pins; (void)lane0;"
    );
    let b = &launch.bindings;
    for (kind, list, ty, cv) in [
        ("in_f", &b.in_f, "float", "const "),
        ("in_u", &b.in_u, "uint32_t", "const "),
        ("out_f", &b.out_f, "float", ""),
        ("out_u", &b.out_u, "uint32_t", ""),
    ] {
        for (i, slot) in list.iter().enumerate() {
            let _ = writeln!(
                c,
                "{cv}{ty} *{kind}{i} = ({cv}{ty} *)bufs[{}];",
                (binder.buffer)(*slot)
            );
        }
    }
    for part in launch.program.parts.iter() {
        c.push_str("{\n");
        Part {
            part,
            binder,
            split_guards,
            masked_from,
            draws: Default::default(),
        }
        .emit(&mut c, steps)?;
        c.push_str("}\n");
    }
    c.push_str("}\n");
    Ok(c)
}

struct Part<'a> {
    part: &'a KernelProgram,
    binder: &'a Binder<'a>,
    /// Whether guard blocks that draw get loops of their own.
    split_guards: bool,
    /// Lanes from which a one-step launch runs them masked anyway.
    masked_from: Option<u64>,
    /// Threefry evaluations so far (names their two words).
    draws: std::cell::Cell<u32>,
}

/// Whether `instr` reads no lane: a constant or param, declared once before the lane loops.
/// (Left in the loop, a policy's 9k weights are 9k memory references per iteration, past
/// the vectoriser's dependence-analysis limit, and the loop stays scalar.)
fn invariant(instr: &Instr) -> bool {
    matches!(
        instr,
        Instr::ParamF { .. } | Instr::ParamU { .. } | Instr::ConstF { .. } | Instr::ConstU { .. }
    )
}

impl Part<'_> {
    fn emit(&self, c: &mut String, steps: u32) -> Result<(), Unsupported> {
        let p = self.part;
        for instr in p.instrs().filter(|i| invariant(i)) {
            self.instr(c, instr, true)?;
        }
        let split = self
            .split_guards
            .then(|| split::split(&p.body, &p.guards))
            .flatten();
        let carries: Vec<(Reg, Reg, bool)> = p
            .carries_f
            .iter()
            .map(|(to, from)| (*to, *from, true))
            .chain(p.carries_u.iter().map(|(to, from)| (*to, *from, false)))
            .collect();
        let blocks = format!(
            "for (int64_t b0 = begin; b0 < end; b0 += {BLOCK}) {{\n\
             const int64_t b1 = end - b0 < {BLOCK} ? end : b0 + {BLOCK};\n"
        );
        if steps <= 1 {
            const ONE_STEP: &str = "const int64_t s = 0; (void)s;\n";
            let Some(units) = split else {
                return self.masked_step(c, ("begin", "end"), ONE_STEP, &[]);
            };
            let past_cache = (self.masked_from).map_or(String::new(), |m| format!(" || n >= {m}"));
            let _ = writeln!(c, "if (end - begin < {SPLIT_MIN_LANES}{past_cache}) {{");
            self.masked_step(c, ("begin", "end"), ONE_STEP, &[])?;
            c.push_str("} else {\n");
            c.push_str(&blocks);
            self.split_step(c, &units, ONE_STEP, &[])?;
            c.push_str("}\n}\n");
            return Ok(());
        }
        c.push_str(&blocks);
        for (to, _, float) in &carries {
            let _ = writeln!(c, "{} st_{}[{BLOCK}];", ty(*float), reg(*to, *float));
        }
        c.push_str("#pragma omp simd\nfor (int64_t i = b0; i < b1; i++) {\nconst int64_t s = 0; (void)s;\n");
        self.list(c, &p.prologue)?;
        for (to, _, float) in &carries {
            let r = reg(*to, *float);
            let _ = writeln!(c, "st_{r}[i - b0] = {r};");
        }
        let _ = writeln!(c, "}}\nfor (int64_t s = 0; s < {steps}; s++) {{");
        match split {
            None => self.masked_step(c, ("b0", "b1"), "", &carries)?,
            Some(units) => {
                let _ = writeln!(c, "if (b1 - b0 < {SPLIT_MIN_LANES}) {{");
                self.masked_step(c, ("b0", "b1"), "", &carries)?;
                c.push_str("} else {\n");
                self.split_step(c, &units, "", &carries)?;
                c.push_str("}\n");
            }
        }
        let _ = writeln!(
            c,
            "}}\n#pragma omp simd\nfor (int64_t i = b0; i < b1; i++) {{\n\
             const int64_t s = {}; (void)s;",
            steps - 1
        );
        for (to, _, float) in &carries {
            c.push_str(&load("st", *to, *float));
        }
        self.list(c, &p.epilogue)?;
        c.push_str("}\n}\n");
        Ok(())
    }

    /// One step over the lanes `[range.0, range.1)` as one vectorised loop, guard blocks
    /// under masks: `header` opens the loop, `carries` are read from and written back to
    /// their `st_` arrays.
    fn masked_step(
        &self,
        c: &mut String,
        (lo, hi): (&str, &str),
        header: &str,
        carries: &[(Reg, Reg, bool)],
    ) -> Result<(), Unsupported> {
        let _ = writeln!(
            c,
            "#pragma omp simd\nfor (int64_t i = {lo}; i < {hi}; i++) {{"
        );
        c.push_str(header);
        for (to, _, float) in carries {
            c.push_str(&load("st", *to, *float));
        }
        self.list(c, &self.part.body)?;
        c.push_str(&store_state(carries));
        c.push_str("}\n");
        Ok(())
    }

    fn list(&self, c: &mut String, body: &[Instr]) -> Result<(), Unsupported> {
        for instr in body {
            match *instr {
                Instr::Guard { index } => self.guard(c, &self.part.guards[index as usize])?,
                _ if invariant(instr) => {}
                _ => self.instr(c, instr, true)?,
            }
        }
        Ok(())
    }

    /// The block's outputs are declared before the `if` (zero where the block does not
    /// run: only the selects' untaken side reads them there); everything else is local.
    fn guard(&self, c: &mut String, block: &GuardBlock) -> Result<(), Unsupported> {
        let outputs: Vec<(Reg, bool)> = (block.outputs_f.iter().map(|r| (*r, true)))
            .chain(block.outputs_u.iter().map(|r| (*r, false)))
            .collect();
        let hoisted =
            |out: &(Reg, bool)| (block.body.iter()).any(|i| invariant(i) && i.def() == Some(*out));
        for &(r, float) in outputs.iter().filter(|out| !hoisted(out)) {
            let _ = writeln!(c, "{} {} = {};", ty(float), reg(r, float), zero(float));
        }
        let _ = writeln!(c, "if ({}) {{", reg(block.cond, false));
        for instr in block.body.iter().filter(|i| !invariant(i)) {
            let declared = instr.defs().iter().any(|out| outputs.contains(out));
            self.instr(c, instr, !declared)?;
        }
        c.push_str("}\n");
        Ok(())
    }

    /// One statement. `declare`: the destination is a new local (else it was declared
    /// before a guard block and is assigned here).
    fn instr(&self, c: &mut String, instr: &Instr, declare: bool) -> Result<(), Unsupported> {
        let f = |r: Reg| reg(r, true);
        let u = |r: Reg| reg(r, false);
        // The file of the registers the instruction defines (a store's: of the one stored).
        let float = instr
            .def()
            .map_or(!matches!(instr, Instr::StoreU { .. }), |d| d.1);
        let x = |r: Reg| reg(r, float);
        let prefix = if declare {
            format!("const {} ", ty(float))
        } else {
            String::new()
        };
        // A load's or store's element of its binding: row `k` wide, at `column`, if packed.
        let element = |per_step: bool, packed: Option<(u32, u32)>| {
            let (output, float, buffer) = instr.binding().expect("a load or store");
            let index = if per_step { "(s * n + i)" } else { "i" };
            let side = if output { "out" } else { "in" };
            match packed {
                Some((k, column)) => {
                    format!("{side}_{}{buffer}[{index} * {k} + {column}]", file(float))
                }
                None => format!("{side}_{}{buffer}[{index}]", file(float)),
            }
        };
        let value = match *instr {
            Instr::LoadF { per_step, .. } | Instr::LoadU { per_step, .. } => {
                element(per_step, None)
            }
            Instr::LoadPackedF {
                k,
                column,
                per_step,
                ..
            } => element(per_step, Some((k, column))),
            Instr::LoadStateF { buffer, .. } | Instr::LoadStateU { buffer, .. } => {
                format!("out_{}{buffer}[i]", file(float))
            }
            Instr::ParamF { dst, .. } => {
                format!("cf_float(pins[{}])", (self.binder.pin)(NodeId(dst)))
            }
            Instr::ParamU { dst, .. } => format!("pins[{}]", (self.binder.pin)(NodeId(dst))),
            Instr::ConstF { bits, .. } => float_literal(f32::from_bits(bits)),
            Instr::ConstU { value, .. } => format!("{value}u"),
            Instr::Lane { .. } => "(uint32_t)(i - lane0)".into(),
            Instr::UnaryF { op, a, .. } => unary(op, &f(a)),
            Instr::LogicUnary { op, a, .. } => match op {
                LogicUnary::Not => format!("(uint32_t)({} == 0u)", u(a)),
            },
            Instr::LogicBinary { op, a, b, .. } => {
                let join = match op {
                    LogicBinary::And => "&",
                    LogicBinary::Or => "|",
                };
                format!("(uint32_t)(({} != 0u) {join} ({} != 0u))", u(a), u(b))
            }
            Instr::FloatBinary { op, a, b, .. } => format!("cf_{}({}, {})", op.name(), f(a), f(b)),
            Instr::BinaryF { op, a, b, .. } | Instr::BinaryU { op, a, b, .. } => {
                binary(op, float, &x(a), &x(b))
            }
            Instr::MulAdd { acc, a, b, .. } => match acc {
                Some(acc) => format!("{} + {} * {}", f(acc), f(a), f(b)),
                None => format!("{} * {}", f(a), f(b)),
            },
            Instr::CompareF { op, a, b, .. } | Instr::CompareU { op, a, b, .. } => {
                let r = |r: Reg| reg(r, matches!(instr, Instr::CompareF { .. }));
                format!("(uint32_t)({} {} {})", r(a), compare(op), r(b))
            }
            Instr::SelectF { cond, a, b, .. } | Instr::SelectU { cond, a, b, .. } => {
                format!("{} != 0u ? {} : {}", u(cond), x(a), x(b))
            }
            Instr::U32ToF32 { a, .. } => format!("(float){}", u(a)),
            Instr::F32ToU32 { a, .. } => format!("cf_f32_to_u32({})", f(a)),
            Instr::F32ToBool { a, .. } => format!("(uint32_t)({} != 0.0f)", f(a)),
            Instr::U32ToBool { a, .. } => format!("(uint32_t)({} != 0u)", u(a)),
            Instr::Random { dst, key, counter } => {
                let id = self.draws.get();
                self.draws.set(id + 1);
                let [k0, k1, c0, c1] = [key[0], key[1], counter[0], counter[1]].map(u);
                let _ = writeln!(
                    c,
                    "uint32_t w0_{id}, w1_{id};\ncf_threefry({k0}, {k1}, {c0}, {c1}, &w0_{id}, &w1_{id});"
                );
                for (word, d) in dst.iter().enumerate() {
                    if let Some(d) = d {
                        let _ = writeln!(c, "{prefix}{} = cf_uniform(w{word}_{id});", f(*d));
                    }
                }
                return Ok(());
            }
            Instr::StoreF { src, .. }
            | Instr::StoreU { src, .. }
            | Instr::StorePackedF { src, .. } => x(src),
            Instr::Guard { .. } => unreachable!("guards are expanded by `list`"),
            Instr::Stash { .. }
            | Instr::DotParams { .. }
            | Instr::DenseParams { .. }
            | Instr::Unstash { .. } => return Err(Unsupported::Compacted),
        };
        let target = match *instr {
            Instr::StoreF { per_step, .. } | Instr::StoreU { per_step, .. } => {
                element(per_step, None)
            }
            Instr::StorePackedF {
                k,
                column,
                per_step,
                ..
            } => element(per_step, Some((k, column))),
            _ => {
                let (dst, _) = instr
                    .def()
                    .expect("every other instruction defines a register");
                format!("{prefix}{}", x(dst))
            }
        };
        let _ = writeln!(c, "{target} = {value};");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::masked_from;

    #[test]
    fn steps_past_the_last_level_cache_run_masked() {
        // CartPole's step moves 88 bytes a lane: past 32 MiB from 381,301 lanes.
        assert_eq!(masked_from(Some(32 << 20), 88.0), Some(381_301));
        assert_eq!(masked_from(None, 88.0), None);
        assert_eq!(masked_from(Some(32 << 20), 0.0), None);
    }
}
