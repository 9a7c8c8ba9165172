//! `scripts/cuda-compile-check.sh`, which compiles as CUDA C++ every kernel the device suites
//! generate, with clang and no GPU: what it refuses before it builds or runs anything.

use std::ffi::OsStr;
use std::process::Output;

use crate::cli::{run_script, stderr, stdout};

fn cuda_compile_check(args: &[&str], clang: &str) -> Output {
    run_script(
        "cuda-compile-check.sh",
        args,
        &[("CARTFUSE_CLANG", OsStr::new(clang))],
    )
}

/// `scripts/cuda-compile-check.sh` refuses what it cannot run, with status 2, before it
/// builds or runs anything.
#[test]
fn the_cuda_compile_check_refuses_bad_arguments_and_missing_tools() {
    // `true` stands in for clang: found, never run before the arguments are checked.
    for args in [&["--bogus"][..], &["--filter"], &["--binary"], &["--keep"]] {
        let run = cuda_compile_check(args, "true");
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", stderr(&run));
        assert!(
            stderr(&run).starts_with("cuda-compile-check: "),
            "{}",
            stderr(&run)
        );
    }
    let no_clang = cuda_compile_check(&[], "/nonexistent/clang++");
    assert_eq!(no_clang.status.code(), Some(2), "{}", stderr(&no_clang));
    assert!(
        stderr(&no_clang).contains("no clang++ found (CARTFUSE_CLANG=/nonexistent/clang++)"),
        "{}",
        stderr(&no_clang)
    );
    let which = cuda_compile_check(&["--which-clang"], "/nonexistent/clang++ true");
    assert!(which.status.success(), "{}", stderr(&which));
    assert_eq!(stdout(&which).trim(), "true");
    let none = cuda_compile_check(&["--which-clang"], "/nonexistent/clang++");
    assert_eq!(none.status.code(), Some(2), "{}", stderr(&none));
    let no_binary = cuda_compile_check(&["--binary", "/nonexistent/integration"], "true");
    assert_eq!(no_binary.status.code(), Some(2), "{}", stderr(&no_binary));
    assert!(
        stderr(&no_binary).contains("/nonexistent/integration is not an executable"),
        "{}",
        stderr(&no_binary)
    );
    let help = cuda_compile_check(&["--help"], "true");
    assert!(help.status.success());
    assert!(
        stdout(&help).contains("CARTFUSE_CUDA_SOURCES"),
        "{}",
        stdout(&help)
    );
}
