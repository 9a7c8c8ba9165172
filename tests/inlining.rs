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
        .collect();
    assert!(
        out_of_line.is_empty(),
        "intrinsics compiled as functions of their own (a closure or helper escaped \
         inlining under #[target_feature]):\n{}",
        out_of_line.join("\n")
    );
}
