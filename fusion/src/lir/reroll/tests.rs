use super::*;

fn program(body: Vec<Instr>) -> KernelProgram {
    KernelProgram::of_body(body)
}

/// Row `j` of a layer over `len` inputs from `slot` with stride `len + 1` from param
/// `first` (registers from `base`): dot, bias, add; returns the sum's register.
fn row(out: &mut Vec<Instr>, base: Reg, first: u32, j: u32, slot: u32, len: u32) -> Reg {
    let stride = len + 1;
    let (dot, bias, sum) = (base + 3 * j, base + 3 * j + 1, base + 3 * j + 2);
    out.push(Instr::DotParams {
        dst: dot,
        acc: None,
        first_param: first + j * stride,
        slot,
        len,
    });
    out.push(Instr::ParamF {
        dst: bias,
        index: first + j * stride + len,
    });
    out.push(Instr::BinaryF {
        op: BinaryOp::Add,
        dst: sum,
        a: dot,
        b: bias,
    });
    sum
}

#[test]
fn a_hidden_layer_writes_the_next_layers_stash_and_the_last_unstashes() {
    // Inputs in slots 0..2; a 3-row tanh layer stashed to 2..5; a 2-row output layer.
    let mut body = vec![
        Instr::LoadF {
            dst: 1,
            buffer: 0,
            per_step: false,
        },
        Instr::Stash { slot: 0, src: 1 },
        Instr::Stash { slot: 1, src: 1 },
    ];
    let sums: Vec<Reg> = (0..3).map(|j| row(&mut body, 100, 0, j, 0, 2)).collect();
    for (j, &sum) in sums.iter().enumerate() {
        body.push(Instr::UnaryF {
            op: FloatUnary::Tanh,
            dst: 200 + j as Reg,
            a: sum,
        });
    }
    for j in 0..3 {
        body.push(Instr::Stash {
            slot: 2 + j,
            src: 200 + j as Reg,
        });
    }
    let logits: Vec<Reg> = (0..2).map(|j| row(&mut body, 300, 9, j, 2, 3)).collect();
    for (buffer, &src) in logits.iter().enumerate() {
        body.push(Instr::StoreF {
            buffer: buffer as u32,
            src,
            per_step: false,
        });
    }
    let rerolled = reroll(&program(body.clone()), 5);
    let expected = vec![
        body[0],
        body[1],
        body[2],
        Instr::DenseParams {
            out_slot: 2,
            in_slot: 0,
            rows: 3,
            len: 2,
            first_param: 0,
            bias_param: 2,
            stride: 3,
            activation: Some(FloatUnary::Tanh),
        },
        Instr::DenseParams {
            out_slot: 5,
            in_slot: 2,
            rows: 2,
            len: 3,
            first_param: 9,
            bias_param: 12,
            stride: 4,
            activation: None,
        },
        Instr::Unstash {
            dst: logits[0],
            slot: 5,
        },
        Instr::Unstash {
            dst: logits[1],
            slot: 6,
        },
        Instr::StoreF {
            buffer: 0,
            src: logits[0],
            per_step: false,
        },
        Instr::StoreF {
            buffer: 1,
            src: logits[1],
            per_step: false,
        },
    ];
    assert_eq!(rerolled.body, expected);
}

#[test]
fn rows_whose_values_are_read_elsewhere_or_broken_strides_stay_apart() {
    // Row 1's sum is read twice: no activation is absorbed, values come back unstashed.
    let mut body = Vec::new();
    let sums: Vec<Reg> = (0..2).map(|j| row(&mut body, 100, 0, j, 0, 4)).collect();
    body.push(Instr::UnaryF {
        op: FloatUnary::Tanh,
        dst: 200,
        a: sums[0],
    });
    body.push(Instr::UnaryF {
        op: FloatUnary::Tanh,
        dst: 201,
        a: sums[1],
    });
    body.push(Instr::StoreF {
        buffer: 0,
        src: sums[1],
        per_step: false,
    });
    let rerolled = reroll(&program(body.clone()), 4);
    assert_eq!(
        rerolled.body[..3],
        [
            Instr::DenseParams {
                out_slot: 4,
                in_slot: 0,
                rows: 2,
                len: 4,
                first_param: 0,
                bias_param: 4,
                stride: 5,
                activation: None,
            },
            Instr::Unstash {
                dst: sums[0],
                slot: 4,
            },
            Instr::Unstash {
                dst: sums[1],
                slot: 5,
            },
        ]
    );
    assert_eq!(rerolled.body[3..], body[6..]);

    // A bias that does not step with the weights ends the layer after row 0.
    let mut broken = Vec::new();
    row(&mut broken, 100, 0, 0, 0, 4);
    row(&mut broken, 110, 0, 1, 0, 4);
    if let Instr::ParamF { index, .. } = &mut broken[4] {
        *index += 1;
    }
    let rerolled = reroll(&program(broken.clone()), 4);
    let layers = rerolled
        .body
        .iter()
        .filter(|i| matches!(i, Instr::DenseParams { rows: 1, .. }))
        .count();
    assert_eq!(layers, 2);
}

#[test]
fn a_stash_slot_read_before_the_next_layer_is_not_overwritten_early() {
    // The layer's outputs are stashed to slot 4..6, but slot 4 is read by a dot in between.
    let mut body = Vec::new();
    let sums: Vec<Reg> = (0..2).map(|j| row(&mut body, 100, 0, j, 0, 4)).collect();
    body.push(Instr::DotParams {
        dst: 150,
        acc: None,
        first_param: 50,
        slot: 4,
        len: 4,
    });
    body.push(Instr::Stash {
        slot: 4,
        src: sums[0],
    });
    body.push(Instr::Stash {
        slot: 5,
        src: sums[1],
    });
    body.push(Instr::StoreF {
        buffer: 0,
        src: 150,
        per_step: false,
    });
    let rerolled = reroll(&program(body.clone()), 8);
    assert!(matches!(
        rerolled.body[0],
        Instr::DenseParams { out_slot: 8, .. }
    ));
    assert!(rerolled.body.contains(&Instr::Stash {
        slot: 4,
        src: sums[0]
    }));
}
