//! State updated in place, bound once: a launch that updates a carry in place reads it from
//! the output binding that receives its next value, instead of binding the same buffer a
//! second time as an input.
//!
//! With the state in place ([`super::in_place`]) the executor bound the state's buffer as
//! the carry's input and as its next value, so CartPole's `fused` step bound 22 storage
//! buffers (cubecl's info buffer included) where the hand-written kernel binds 15; bound
//! once, it binds 15 too. On lavapipe every binding of a launch
//! costs host time (about 0.5 us each, measured from 4 to 30 bindings at n = 1), which at
//! small n is the step. Rewriting the carry's loads into [`Instr::LoadStateF`] /
//! [`Instr::LoadStateU`] of the output binding drops the input binding; the kernel reads
//! and writes the same elements as before.

use crate::graph::NodeId;
use crate::lir::program::{Instr, KernelProgram, LaunchProgram, LoweredLaunch};
use crate::plan::Slot;

/// Where `launch` binds carried input `input` and its next value, and every instruction
/// reads the input as a plain per-lane load: the input binding [`read_state_from_outputs`]
/// drops, as (whether it is `f32`, input index, output index).
fn rebindable(launch: &LoweredLaunch, input: NodeId) -> Option<(bool, u32, u32)> {
    let b = &launch.bindings;
    [true, false].into_iter().find_map(|float| {
        let from = (b.list(false, float).iter()).position(|s| *s == Slot::Input(input))? as u32;
        let to = (b.list(true, float).iter()).position(|s| *s == Slot::Next(input))? as u32;
        let plain = (launch.program.parts.iter())
            .all(|part| part.instrs().all(|i| !reads_otherwise(i, float, from)));
        plain.then_some((float, from, to))
    })
}

/// Whether, once [`read_state_from_outputs`] has run, `launch` binds the buffer of carried
/// input `input` at most once (it does not bind the input, or reads it from its next
/// value's binding). Runtimes whose bindings may not alias update only such carries in
/// place.
pub fn binds_once(launch: &LoweredLaunch, input: NodeId) -> bool {
    let b = &launch.bindings;
    let bound = b.in_f.contains(&Slot::Input(input)) || b.in_u.contains(&Slot::Input(input));
    !bound || rebindable(launch, input).is_some()
}

/// `launch` with each carried input of `in_place` that it loads and whose next value it
/// stores read from that output binding, and its input binding dropped. A carry some
/// instruction reads otherwise (packed columns, per-step offsets) keeps its input binding.
pub fn read_state_from_outputs(launch: &LoweredLaunch, in_place: &[NodeId]) -> LoweredLaunch {
    let mut launch = launch.clone();
    for &input in in_place {
        let Some((float, from, to)) = rebindable(&launch, input) else {
            continue;
        };
        let mut parts: Vec<KernelProgram> = launch.program.parts.to_vec();
        for instr in parts.iter_mut().flat_map(KernelProgram::instrs_mut) {
            rebind(instr, float, from, to);
        }
        launch.program = LaunchProgram::new(parts);
        let b = &mut launch.bindings;
        let ins = if float { &mut b.in_f } else { &mut b.in_u };
        ins.remove(from as usize);
    }
    launch
}

/// Whether `instr` reads input buffer `from` (of the `float` file) other than as a plain
/// per-lane load.
fn reads_otherwise(instr: &Instr, float: bool, from: u32) -> bool {
    let plain = match *instr {
        Instr::LoadF { per_step, .. } | Instr::LoadU { per_step, .. } => !per_step,
        _ => false,
    };
    instr.binding() == Some((false, float, from)) && !plain
}

/// Turns a load of input `from` into a load of output `to`, and renumbers later inputs of
/// the same file.
fn rebind(instr: &mut Instr, float: bool, from: u32, to: u32) {
    match *instr {
        Instr::LoadF { dst, buffer, .. } if float && buffer == from => {
            *instr = Instr::LoadStateF { dst, buffer: to };
        }
        Instr::LoadU { dst, buffer, .. } if !float && buffer == from => {
            *instr = Instr::LoadStateU { dst, buffer: to };
        }
        Instr::LoadF { ref mut buffer, .. } | Instr::LoadPackedF { ref mut buffer, .. }
            if float =>
        {
            *buffer -= u32::from(*buffer > from);
        }
        Instr::LoadU { ref mut buffer, .. } if !float => *buffer -= u32::from(*buffer > from),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lir::program::LaunchBindings;

    fn load_f(dst: u32, buffer: u32) -> Instr {
        Instr::LoadF {
            dst,
            buffer,
            per_step: false,
        }
    }

    fn store_f(buffer: u32, src: u32) -> Instr {
        Instr::StoreF {
            buffer,
            src,
            per_step: false,
        }
    }

    fn launch(body: Vec<Instr>, in_f: Vec<Slot>, out_f: Vec<Slot>) -> LoweredLaunch {
        LoweredLaunch {
            program: LaunchProgram::new(vec![KernelProgram::of_body(body)]),
            bindings: LaunchBindings {
                in_f,
                out_f,
                ..LaunchBindings::default()
            },
            name: "k".into(),
            rows_of: None,
            kernels: vec![0],
            vectorizable: true,
        }
    }

    #[test]
    fn a_carry_in_place_is_read_from_its_next_binding_and_later_inputs_move_down() {
        let (a, x, b) = (NodeId(1), NodeId(2), NodeId(3));
        let body = vec![
            load_f(0, 0),
            load_f(1, 1),
            load_f(2, 2),
            store_f(0, 1),
            store_f(1, 2),
        ];
        let before = launch(
            body,
            vec![Slot::Input(a), Slot::Input(x), Slot::Input(b)],
            vec![Slot::Next(a), Slot::Next(x)],
        );
        let after = read_state_from_outputs(&before, &[x]);
        assert_eq!(after.bindings.in_f, vec![Slot::Input(a), Slot::Input(b)]);
        assert_eq!(after.bindings.out_f, before.bindings.out_f);
        assert_eq!(
            after.program.parts[0].body,
            vec![
                load_f(0, 0),
                Instr::LoadStateF { dst: 1, buffer: 1 },
                load_f(2, 1),
                store_f(0, 1),
                store_f(1, 2),
            ]
        );
        // `a` is not in place: untouched.
        assert_eq!(read_state_from_outputs(&before, &[]), before);
    }

    #[test]
    fn a_carry_read_as_packed_columns_keeps_its_input_binding() {
        let x = NodeId(2);
        let body = vec![
            Instr::LoadPackedF {
                dst: 0,
                buffer: 0,
                k: 2,
                column: 1,
                per_step: false,
            },
            store_f(0, 0),
        ];
        let before = launch(body, vec![Slot::Input(x)], vec![Slot::Next(x)]);
        assert_eq!(read_state_from_outputs(&before, &[x]), before);
    }
}
