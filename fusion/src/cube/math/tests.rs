//! The kernels' scalar `exp`, `log` and `tanh` against the CPU runtime's, on every device
//! runtime of the build.

use cubecl::prelude::*;

use super::{exp_scalar, log_scalar, tanh_scalar};
use crate::cpu::Scalar;
use crate::cpu::interp::math as cpu;
use crate::cube::device::OpenedDevice;
use crate::cube::{Cube, buffers};
use crate::exec::{Backend, FloatAgreement};

/// A function's CPU definition.
type Reference = fn(f32) -> f32;

/// `exp`, `log` and `tanh` of every input, one after the other in `out`.
#[cube(launch_unchecked)]
fn scalar_functions(x: &Array<f32>, out: &mut Array<f32>) {
    let i = ABSOLUTE_POS;
    let n = x.len();
    if i < n {
        out[i] = exp_scalar(x[i]);
        out[n + i] = log_scalar(x[i]);
        out[2 * n + i] = tanh_scalar(x[i]);
    }
}

/// Sweeps over each function's range, every 2^19-th positive float (subnormals
/// included) and its negative, and the special values.
fn inputs() -> Vec<f32> {
    let sweep = |from: f32, to: f32, count: usize| {
        (0..count).map(move |k| from + (to - from) * k as f32 / (count - 1) as f32)
    };
    let mut x: Vec<f32> = sweep(-110.0, 95.0, 4096)
        .chain(sweep(-12.0, 12.0, 4096))
        .collect();
    for bits in (0..0x7F80_0000u32).step_by(1 << 19) {
        x.extend([f32::from_bits(bits), -f32::from_bits(bits)]);
    }
    x.extend([
        0.0,
        -0.0,
        1.0,
        -1.0,
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ]);
    x
}

/// The kernel's scalar functions against the CPU's: bit for bit where the device
/// agrees bitwise with the CPU, else within the bound other drivers are held to.
fn scalar_functions_agree_with_the_cpu<R: Runtime>(opened: &OpenedDevice<R>) {
    let agreement = Cube::new(opened).float_agreement();
    let client = &opened.client;
    let x = inputs();
    let n = x.len();
    let input = buffers::upload(client, &x);
    let out = buffers::upload(client, &vec![f32::from_bits(0x7FC0_DEAD); 3 * n]);
    let cube_dim = CubeDim::new_1d(256);
    let cubes = cubecl::calculate_cube_count_elemwise(client, n, cube_dim);
    // SAFETY: both arrays are bound with their true lengths; the kernel guards `i < n`.
    unsafe {
        scalar_functions::launch_unchecked::<R>(
            client,
            cubes,
            cube_dim,
            ArrayArg::from_raw_parts(input, n),
            ArrayArg::from_raw_parts(out.clone(), 3 * n),
        )
    };
    let got = buffers::download::<R, f32>(client, &out).expect("read back");
    let functions: [(&str, Reference); 3] = [
        ("exp", |x| cpu::exp(Scalar, x)),
        ("log", |x| cpu::log(Scalar, x)),
        ("tanh", |x| cpu::tanh(Scalar, x)),
    ];
    for (f, (name, reference)) in functions.iter().enumerate() {
        for (i, &x) in x.iter().enumerate() {
            let (want, got) = (reference(x), got[f * n + i]);
            let agrees = if want.is_nan() || agreement.is_bitwise() {
                want.to_bits() == got.to_bits() || (want.is_nan() && got.is_nan())
            } else {
                let scale = f64::from(want.abs()).max(1.0);
                (f64::from(want) - f64::from(got)).abs() <= FloatAgreement::BOUNDED_RELATIVE * scale
                    || want == got
            };
            assert!(
                agrees,
                "{name}({x:e}) = {got:e}, the CPU's {want:e} ({agreement:?})"
            );
        }
    }
}

#[cfg(feature = "wgpu")]
#[test]
fn scalar_functions_agree_with_the_cpu_on_wgpu() {
    let opened = crate::cube::device::wgpu_client()
        .expect("a wgpu adapter (lavapipe on machines without a GPU)");
    scalar_functions_agree_with_the_cpu(&opened);
}

/// Skipped (passes) on a machine without an NVIDIA driver.
#[cfg(feature = "cuda")]
#[test]
fn scalar_functions_agree_with_the_cpu_on_cuda() {
    match crate::cube::device::cuda_client() {
        Ok(opened) => scalar_functions_agree_with_the_cpu(&opened),
        Err(error) => eprintln!("skipped: {error}"),
    }
}
