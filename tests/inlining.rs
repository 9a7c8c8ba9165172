//! The optimised binary calls no SIMD intrinsic out of line.
//!
//! (Built by `scripts/test.sh` in the `release-tests` profile, where the CLI crate is at
//! opt-level 1 and the runtimes' crates, whose kernels these are, at 3 as in `--release`.)
//!
//! The CPU runtime's kernels are generic over a SIMD level and compiled under that level's
//! target features. Anything that escapes inlining, such as a closure the compiler kept as a
//! function of its own, is compiled without them, and each `_mm512_*` intrinsic inside it
//! becomes a call: the CPU plans ran about 3x slower that way. The symbols show it, so this
//! checks them rather than timing anything.
//!
//! x86-64's baseline (SSE, SSE2) is allowed out of line: every x86-64 CPU has it, so such a
//! copy loses no target feature, only its inlining, and dependencies' generic code
//! instantiated in a crate built at opt-level 0 leaves some (the harness in the tests'
//! profile: std's `HashMap` probing with SSE2, `half`'s f16c conversion).

use std::process::Command;

#[test]
#[cfg_attr(debug_assertions, ignore = "only an optimised build inlines")]
fn no_simd_intrinsic_is_left_out_of_line() {
    let binary = env!("CARGO_BIN_EXE_cartfuse");
    let nm = Command::new("nm")
        .args(["--demangle", binary])
        .output()
        .expect("`nm` (binutils, installed with the C toolchain cargo links with) runs");
    assert!(
        nm.status.success(),
        "nm failed: {}",
        String::from_utf8_lossy(&nm.stderr)
    );
    let symbols = String::from_utf8_lossy(&nm.stdout);
    assert!(
        symbols.contains("cartfuse_fusion"),
        "the binary lost its symbols (stripped?)"
    );
    let out_of_line: Vec<&str> = symbols
        .lines()
        .filter(|line| line.contains("core_arch::x86::") && !line.contains("_xgetbv"))
        .filter(|line| !baseline(line))
        .collect();
    assert!(
        out_of_line.is_empty(),
        "intrinsics compiled as functions of their own (a closure or helper escaped \
         inlining under #[target_feature]):\n{}",
        out_of_line.join("\n")
    );
}

/// Whether `symbol` (an `nm` line naming one of `core::core_arch::x86`'s functions) is of
/// x86-64's baseline: an SSE or SSE2 intrinsic, or a conversion of a 128-bit vector.
fn baseline(symbol: &str) -> bool {
    let Some((_, path)) = symbol.split_once("core_arch::x86") else {
        return false;
    };
    path.starts_with("::sse::")
        || path.starts_with("::sse2::")
        || path.starts_with("::__m128")
        || (path.starts_with("::<impl ") && path.contains(">>::as_m128"))
}

#[test]
fn only_x86_64s_baseline_may_stay_out_of_line() {
    for line in [
        "0000000002850450 t core::core_arch::x86::sse2::_mm_cmpeq_epi8",
        "0000000002326460 t core::core_arch::x86::__m128::as_f32x4",
        "0000000001b70720 t core::core_arch::x86::<impl core::core_arch::simd::Simd<i8,16_usize>>::as_m128i",
    ] {
        assert!(baseline(line), "{line}");
    }
    for line in [
        "0000000001c00000 t core::core_arch::x86::avx::_mm256_add_ps",
        "0000000001c00000 t core::core_arch::x86::avx512f::_mm512_mul_ps",
        "0000000001c00000 t core::core_arch::x86::fma::_mm256_fmadd_ps",
        "0000000001c00000 t core::core_arch::x86::<impl core::core_arch::simd::Simd<f32,8_usize>>::as_m256",
    ] {
        assert!(!baseline(line), "{line}");
    }
}
