//! Carried state updated in place (XLA's input/output aliasing, the "donated" buffers of a
//! `while` loop), on the CPU's compiled engine and on devices.
//!
//! Double-buffered, a step reads the state from one buffer and writes the next state into
//! another, and the executor swaps the two after the run. Past the caches every line of
//! the written buffer is first read for ownership, so the state costs three transfers per
//! value instead of two; CartPole's fused step at n = 65536 on the CPU ran at 3.6e8
//! env-steps/s against the hand-written step's 4.9e8, which updates its state in place. A
//! launch may write the next state over the current one when, in the order its program
//! runs, every load of the carried input comes before the first store of its next value:
//! each lane then reads its own state before overwriting it, and no lane touches another's.
//!
//! The parts of a launch (horizontally fused kernels) run one after another over a block
//! of lanes on the CPU, but side by side in different threads on a device: there, a carry
//! updated in place must also be touched by one part only ([`PartOrder`]).

use crate::graph::Graph;
use crate::lir::program::{Instr, KernelProgram, LoweredLaunch};
use crate::plan::Slot;

/// How the parts of one launch run relative to each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartOrder {
    /// One after another over the same lanes (the CPU's compiled engine).
    Sequential,
    /// At the same time, in different threads (device kernels).
    Concurrent,
}

/// The carries (input and next slots) that one launch alone reads and writes, where that
/// launch may update state in place (`may_update(p)` for `launches[p]`) and reads the state
/// before writing it.
pub fn carries_in_place(
    graph: &Graph,
    launches: &[LoweredLaunch],
    steps: u32,
    order: PartOrder,
    may_update: impl Fn(usize) -> bool,
) -> Vec<(Slot, Slot)> {
    (graph.carries().iter())
        .map(|c| (Slot::Input(c.input), Slot::Next(c.input)))
        .filter(|&(input, next)| {
            let touching: Vec<usize> = (0..launches.len())
                .filter(|&p| {
                    let b = &launches[p].bindings;
                    [true, false].into_iter().any(|float| {
                        b.list(false, float).contains(&input) || b.list(true, float).contains(&next)
                    })
                })
                .collect();
            matches!(touching[..], [p] if may_update(p)
                && (order == PartOrder::Sequential || touched_by_one_part(&launches[p], input, next))
                && reads_before_writes(&launches[p], steps, input, next))
        })
        .collect()
}

/// Whether at most one part of `launch` loads `input` or stores `next`.
fn touched_by_one_part(launch: &LoweredLaunch, input: Slot, next: Slot) -> bool {
    let parts = launch.program.parts.iter().filter(|part| {
        let instrs = part.lists().into_iter().flatten();
        instrs.flat_map(|instr| expanded(part, instr)).any(|instr| {
            let slot = launch.bindings.slot(instr);
            slot == Some((false, input)) || slot == Some((true, next))
        })
    });
    parts.count() <= 1
}

/// Whether `launch`, run for `steps` steps per call in program order, loads
/// every element of `input` before it stores any element of `next`.
pub fn reads_before_writes(launch: &LoweredLaunch, steps: u32, input: Slot, next: Slot) -> bool {
    let mut written = false;
    for part in launch.program.parts.iter() {
        // A multi-step body runs again after its own stores: walk it twice.
        let passes = if steps > 1 { 2 } else { 1 };
        let body = (0..passes).flat_map(|_| part.body.iter());
        for instr in part.prologue.iter().chain(body).chain(&part.epilogue) {
            for instr in expanded(part, instr) {
                let slot = launch.bindings.slot(instr);
                if slot == Some((false, input)) && written {
                    return false;
                }
                written |= slot == Some((true, next));
            }
        }
    }
    true
}

/// `instr`, or the instructions of the guard block it runs (and of blocks they run), in
/// order.
fn expanded<'a>(part: &'a KernelProgram, instr: &'a Instr) -> Vec<&'a Instr> {
    match *instr {
        Instr::Guard { index } => part.guards[index as usize]
            .body
            .iter()
            .flat_map(|i| expanded(part, i))
            .collect(),
        _ => vec![instr],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::NodeId;
    use crate::lir::program::LaunchBindings;
    use crate::lir::program::{GuardBlock, LaunchProgram};

    const STATE: Slot = Slot::Input(NodeId(0));
    const NEXT: Slot = Slot::Next(NodeId(0));

    fn load() -> Instr {
        Instr::LoadF {
            dst: 0,
            buffer: 0,
            per_step: false,
        }
    }

    fn store() -> Instr {
        Instr::StoreF {
            buffer: 0,
            src: 0,
            per_step: false,
        }
    }

    /// One part over `STATE` -> `NEXT` running `body`, with `guarded` as guard block 0.
    fn launch(body: Vec<Instr>, guarded: Vec<Instr>) -> LoweredLaunch {
        let part = KernelProgram {
            guards: vec![GuardBlock {
                cond: 1,
                body: guarded,
                outputs_f: Vec::new(),
                outputs_u: Vec::new(),
            }],
            ..KernelProgram::of_body(body)
        };
        LoweredLaunch {
            program: LaunchProgram::new(vec![part]),
            bindings: LaunchBindings {
                in_f: vec![STATE],
                out_f: vec![NEXT],
                ..LaunchBindings::default()
            },
            name: "test".into(),
            rows_of: None,
            kernels: vec![0],
            vectorizable: true,
        }
    }

    #[test]
    fn a_state_read_before_it_is_written_may_be_written_in_place() {
        let ok = launch(vec![load(), store()], Vec::new());
        assert!(reads_before_writes(&ok, 1, STATE, NEXT));
        // Another carry's buffers are not this one's.
        let other = Slot::Next(NodeId(7));
        assert!(reads_before_writes(
            &launch(vec![store(), load()], Vec::new()),
            1,
            STATE,
            other
        ));
    }

    #[test]
    fn a_load_after_the_store_keeps_two_buffers() {
        let late = launch(vec![store(), load()], Vec::new());
        assert!(!reads_before_writes(&late, 1, STATE, NEXT));
        // Inside a guard block (a reset's lazy load) the order is the block's place.
        let guarded = launch(vec![store(), Instr::Guard { index: 0 }], vec![load()]);
        assert!(!reads_before_writes(&guarded, 1, STATE, NEXT));
        // A multi-step body loads again after the previous step's store.
        let looped = launch(vec![load(), store()], Vec::new());
        assert!(!reads_before_writes(&looped, 2, STATE, NEXT));
    }

    #[test]
    fn concurrent_parts_update_in_place_only_a_carry_one_part_touches() {
        let mut split = launch(vec![load()], Vec::new());
        let writer = KernelProgram::of_body(vec![store()]);
        split.program = LaunchProgram::new(vec![split.program.parts[0].clone(), writer]);
        // Run one after another, the first part's loads precede the second's stores...
        assert!(reads_before_writes(&split, 1, STATE, NEXT));
        // ...but side by side on a device they race.
        assert!(!touched_by_one_part(&split, STATE, NEXT));
        let whole = launch(vec![load(), store()], Vec::new());
        assert!(touched_by_one_part(&whole, STATE, NEXT));
        // A part touching another carry's buffers does not count.
        let mut other = whole.clone();
        let elsewhere = Instr::StoreF {
            buffer: 1,
            src: 0,
            per_step: false,
        };
        other.program = LaunchProgram::new(vec![
            whole.program.parts[0].clone(),
            KernelProgram::of_body(vec![elsewhere]),
        ]);
        other.bindings.out_f.push(Slot::Next(NodeId(7)));
        assert!(touched_by_one_part(&other, STATE, NEXT));
    }
}
