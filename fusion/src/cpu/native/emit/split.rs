//! Guard blocks run over the lanes that take them, not under a mask in every lane.
//!
//! Inside one vectorised lane loop a guard block (a reset's Threefry draws) can only be
//! if-converted: the compiler evaluates it in every lane and blends, so a CartPole step
//! paid for two Threefry evaluations (20 rounds each) per lane while about one lane in
//! twenty resets. The hand-written step instead queues the lanes that reset and draws for
//! them alone. This pass gives generated code the same shape, per block of
//! [`super::BLOCK`] lanes:
//!
//! 1. a vectorised loop runs the guard's *cone* (the instructions its condition and
//!    inputs depend on) and writes the condition as one byte per lane;
//! 2. the lanes whose byte is set are compacted into an index list (a word of flags at a
//!    time, counting trailing zeros);
//! 3. a loop over that list runs the guard block for those lanes alone;
//! 4. a vectorised loop runs everything else, the selects reading the block's outputs.
//!
//! Values cross loops through per-block stack arrays (L1-resident): a register defined in
//! one loop and read in a later one is *spilled*, unless it is a load or the lane index,
//! which the later loop simply repeats. Every instruction outside a guard is pure and the
//! stores all stay in the last loop, so each lane still reads its inputs before it writes
//! its outputs (what [`crate::lir::in_place`] relies on). Lanes that skip a block hold
//! zeros in its outputs, as in the masked form: results are the same bits.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use super::{BLOCK, Part, c_expr, invariant, reg, ty};
use crate::lir::program::{GuardBlock, Instr, Reg};

/// One loop of a split body.
pub(super) enum Unit<'a> {
    /// A vectorised loop over every lane of the block.
    Lanes(Vec<&'a Instr>),
    /// A loop over the block's lanes where the guard's condition holds.
    Guard(&'a GuardBlock),
}

/// `body` cut at its guard blocks, in run order, or `None` when no block is worth a loop
/// of its own (none draws random numbers: a few blended instructions cost less than the
/// spills), or a block holds what the split does not handle (a store or a nested block).
pub(super) fn split<'a>(body: &'a [Instr], guards: &'a [GuardBlock]) -> Option<Vec<Unit<'a>>> {
    let guard_of = |instr: &Instr| match *instr {
        Instr::Guard { index } => Some(&guards[index as usize]),
        _ => None,
    };
    let blocks: Vec<&GuardBlock> = body.iter().filter_map(guard_of).collect();
    let splittable = |g: &GuardBlock| {
        g.body.iter().all(|i| {
            !matches!(
                i,
                Instr::Guard { .. }
                    | Instr::StoreF { .. }
                    | Instr::StoreU { .. }
                    | Instr::StorePackedF { .. }
                    | Instr::Stash { .. }
            )
        })
    };
    let draws = |g: &GuardBlock| g.body.iter().any(|i| matches!(i, Instr::Random { .. }));
    if !blocks.iter().any(|g| draws(g)) || !blocks.iter().all(|g| splittable(g)) {
        return None;
    }
    let mut units = Vec::new();
    let mut rest: Vec<&Instr> = body.iter().filter(|i| !invariant(i)).collect();
    while let Some(at) = rest.iter().position(|i| guard_of(i).is_some()) {
        let block = guard_of(rest[at]).expect("found above");
        let mut needed: HashSet<Reg> = block_reads(block).collect();
        needed.insert(block.cond);
        let mut in_cone = vec![false; at];
        for k in (0..at).rev() {
            if rest[k].defs().iter().any(|(r, _)| needed.contains(r)) {
                in_cone[k] = true;
                needed.extend(rest[k].operands());
            }
        }
        let (cone, after): (Vec<_>, Vec<_>) = rest.drain(..at).zip(in_cone).partition(|c| c.1);
        units.push(Unit::Lanes(cone.into_iter().map(|(i, _)| i).collect()));
        units.push(Unit::Guard(block));
        rest = (after.into_iter().map(|(i, _)| i))
            .chain(rest.drain(1..))
            .collect();
    }
    units.push(Unit::Lanes(rest));
    Some(units)
}

/// Registers `block` reads that it does not define.
fn block_reads(block: &GuardBlock) -> impl Iterator<Item = Reg> + '_ {
    let defined: HashSet<Reg> = block
        .body
        .iter()
        .flat_map(|i| i.defs())
        .map(|(r, _)| r)
        .collect();
    block
        .body
        .iter()
        .flat_map(|i| i.operands())
        .filter(move |r| !defined.contains(r))
}

/// How a loop gets a register defined outside it.
#[derive(Clone)]
enum Source<'a> {
    /// Read back from the block's spill array `sp_<reg>`.
    Spilled,
    /// Repeated: a load or the lane index.
    Repeated(&'a Instr),
    /// A loop-carried value, read from its state array `st_<reg>`.
    Carried,
}

/// Whether a later loop repeats `instr` rather than reading its spill.
fn repeatable(instr: &Instr) -> bool {
    matches!(
        instr,
        Instr::LoadF { .. } | Instr::LoadU { .. } | Instr::LoadPackedF { .. } | Instr::Lane { .. }
    )
}

/// What each loop reads from outside and writes for later loops.
struct Flow<'a> {
    /// Per unit: registers it reads from outside, with their file and source.
    imports: Vec<Vec<(Reg, bool, Source<'a>)>>,
    /// Per unit: registers it defines that a later unit reads from a spill.
    spills: Vec<Vec<(Reg, bool)>>,
}

impl<'a> Flow<'a> {
    /// `carries` (a multi-step body's `(to, from, float)`): each `to` is read from its
    /// state array, each `from` must be held by the last unit at its end.
    fn of(units: &[Unit<'a>], carries: &[(Reg, Reg, bool)]) -> Flow<'a> {
        let mut home: HashMap<Reg, (usize, bool, &'a Instr)> = HashMap::new();
        for (u, unit) in units.iter().enumerate() {
            for instr in instructions(unit) {
                for (r, float) in instr.defs() {
                    home.insert(r, (u, float, instr));
                }
            }
        }
        let mut imports: Vec<Vec<(Reg, bool, Source<'a>)>> = vec![vec![]; units.len()];
        let mut spills: Vec<Vec<(Reg, bool)>> = vec![vec![]; units.len()];
        for (u, unit) in units.iter().enumerate() {
            // What the unit defines itself is found at home below.
            let mut reads: Vec<Reg> = instructions(unit).flat_map(|i| i.operands()).collect();
            // The loop before a block writes its condition's flags.
            if let Some(Unit::Guard(block)) = units.get(u + 1) {
                reads.push(block.cond);
            }
            if u + 1 == units.len() {
                reads.extend(carries.iter().map(|c| c.1));
            }
            let mut seen = HashSet::new();
            for r in reads {
                let hoisted = home.get(&r).is_some_and(|h| invariant(h.2));
                if hoisted || !seen.insert(r) {
                    continue;
                }
                if let Some(&(_, _, float)) = carries.iter().find(|c| c.0 == r) {
                    imports[u].push((r, float, Source::Carried));
                    continue;
                }
                let Some(&(at, float, instr)) = home.get(&r).filter(|h| h.0 != u) else {
                    continue;
                };
                let source = if repeatable(instr) {
                    Source::Repeated(instr)
                } else {
                    if !spills[at].contains(&(r, float)) {
                        spills[at].push((r, float));
                    }
                    Source::Spilled
                };
                imports[u].push((r, float, source));
            }
        }
        Flow { imports, spills }
    }
}

/// The instructions a unit runs (a block's, for a guard).
fn instructions<'u, 'a>(unit: &'u Unit<'a>) -> Box<dyn Iterator<Item = &'a Instr> + 'u> {
    match unit {
        Unit::Lanes(list) => Box::new(list.iter().copied()),
        Unit::Guard(block) => Box::new(block.body.iter()),
    }
}

impl Part<'_> {
    /// One step of a split body over the lanes `[b0, b1)` of a block: `lane_header` opens
    /// every lane loop (the step index, for one-step launches), and each carry's `to` is read
    /// from its `st_` array and its `from` stored there at the end of the last loop.
    pub(super) fn split_step(
        &self,
        c: &mut String,
        units: &[Unit<'_>],
        lane_header: &str,
        carries: &[(Reg, Reg, bool)],
    ) -> Result<(), super::Unsupported> {
        let flow = Flow::of(units, carries);
        for (r, float) in flow.spills.iter().flatten() {
            let _ = writeln!(c, "{} sp_{}[{BLOCK}];", ty(*float), reg(*r, *float));
        }
        let _ = writeln!(c, "uint8_t flags[{BLOCK}];\nint32_t taken[{BLOCK}];");
        for (u, unit) in units.iter().enumerate() {
            // Units alternate, lanes first and last: a block is followed by lanes.
            if let Unit::Guard(_) = unit {
                c.push_str(
                    "{\nconst int64_t count = cf_compact(flags, b1 - b0, taken);\n\
                     #pragma omp simd\nfor (int64_t j = 0; j < count; j++) {\n\
                     const int64_t i = b0 + taken[j];\n",
                );
            } else {
                c.push_str("#pragma omp simd\nfor (int64_t i = b0; i < b1; i++) {\n");
            }
            let _ = writeln!(c, "{lane_header}");
            for (r, float, source) in &flow.imports[u] {
                match source {
                    Source::Spilled => c.push_str(&c_expr::load("sp", *r, *float)),
                    Source::Carried => c.push_str(&c_expr::load("st", *r, *float)),
                    Source::Repeated(instr) => self.instr(c, instr, true)?,
                }
            }
            for instr in instructions(unit).filter(|i| !invariant(i)) {
                self.instr(c, instr, true)?;
            }
            for (r, float) in &flow.spills[u] {
                let name = reg(*r, *float);
                let _ = writeln!(c, "sp_{name}[i - b0] = {name};");
            }
            if let Some(Unit::Guard(block)) = units.get(u + 1) {
                let cond = reg(block.cond, false);
                let _ = writeln!(c, "flags[i - b0] = (uint8_t)({cond} != 0u);");
                for (r, float) in &flow.spills[u + 1] {
                    let (r, zero) = (reg(*r, *float), c_expr::zero(*float));
                    let _ = writeln!(c, "sp_{r}[i - b0] = {zero};");
                }
            }
            if u + 1 == units.len() {
                c.push_str(&c_expr::store_state(carries));
            }
            c.push_str(if let Unit::Guard(_) = unit {
                "}\n}\n"
            } else {
                "}\n"
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_u(dst: Reg, buffer: u32) -> Instr {
        Instr::LoadU {
            dst,
            buffer,
            per_step: false,
        }
    }

    /// `u0 = load; u1 = load; f2 = load` then a block on `u0` drawing from `u1` into
    /// `f3`, then `f4 = select(u0, f3, f2)` stored.
    fn reset_like() -> (Vec<Instr>, Vec<GuardBlock>) {
        let body = vec![
            load_u(0, 0),
            load_u(1, 1),
            Instr::LoadF {
                dst: 2,
                buffer: 0,
                per_step: false,
            },
            Instr::UnaryF {
                dst: 5,
                op: crate::graph::FloatUnary::Sin,
                a: 2,
            },
            Instr::Guard { index: 0 },
            Instr::SelectF {
                dst: 4,
                cond: 0,
                a: 3,
                b: 5,
            },
            Instr::StoreF {
                buffer: 0,
                src: 4,
                per_step: false,
            },
        ];
        let block = GuardBlock {
            cond: 0,
            body: vec![Instr::Random {
                dst: [Some(3), None],
                key: [1, 1],
                counter: [1, 1],
            }],
            outputs_f: vec![3],
            outputs_u: vec![],
        };
        (body, vec![block])
    }

    #[test]
    fn the_cone_runs_before_the_block_and_the_rest_after() {
        let (body, guards) = reset_like();
        let units = split(&body, &guards).expect("the block draws");
        let [Unit::Lanes(cone), Unit::Guard(_), Unit::Lanes(rest)] = &units[..] else {
            panic!("three loops expected");
        };
        // The block reads u1 and its condition is u0: the sine and the float load wait.
        assert_eq!(cone.len(), 2);
        assert!(cone.iter().all(|i| matches!(i, Instr::LoadU { .. })));
        assert_eq!(rest.len(), 4);
        assert!(matches!(rest.last(), Some(Instr::StoreF { .. })));
    }

    #[test]
    fn loads_are_repeated_and_block_outputs_spilled() {
        let (body, guards) = reset_like();
        let units = split(&body, &guards).expect("the block draws");
        let flow = Flow::of(&units, &[]);
        // Nothing the cone computes is spilled: its loads are repeated.
        assert!(flow.spills[0].is_empty());
        assert!(matches!(
            flow.imports[1][..],
            [(1, false, Source::Repeated(_))]
        ));
        // The draw is spilled for the select, which also repeats the condition's load.
        assert_eq!(flow.spills[1], vec![(3, true)]);
        let imported: Vec<Reg> = flow.imports[2].iter().map(|(r, ..)| *r).collect();
        assert_eq!(imported, vec![0, 3]);
    }

    #[test]
    fn a_block_without_draws_stays_blended() {
        let (body, mut guards) = reset_like();
        guards[0].body = vec![Instr::ConstF { dst: 3, bits: 0 }];
        assert!(split(&body, &guards).is_none());
        let (body, mut guards) = reset_like();
        guards[0].body.push(Instr::StoreF {
            buffer: 0,
            src: 3,
            per_step: false,
        });
        assert!(split(&body, &guards).is_none());
    }
}
