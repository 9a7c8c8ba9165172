//! C source to loaded machine code: the system C compiler, a disk cache, `dlopen`.
//!
//! The compiler is `CARTFUSE_CC`, else `CC`, else `cc` (the one Rust itself links with, so
//! every machine that builds cartfuse has it). Flags keep IEEE semantics: `-ffp-contract=off`
//! (no FMA), no fast-math; `-fno-math-errno` and `-fno-trapping-math` only let the compiler
//! use `sqrtps` and if-convert guarded code, which changes no result. The SIMD level picks
//! the target features, so every level's kernels are built for exactly that level.
//!
//! Shared objects are cached in `CARTFUSE_KERNEL_CACHE`, else `$XDG_CACHE_HOME/cartfuse/
//! kernels`, else `~/.cache/cartfuse/kernels`, named by a hash of the source, the flags and
//! the compiler's version line; the source is kept beside each object and compared before an
//! object is reused, so a hash collision recompiles instead of loading the wrong kernel.
//! Loaded libraries are shared within the process.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::cpu::SimdLevel;

/// Why a kernel could not be compiled or loaded.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    /// No C compiler could be started.
    #[error(
        "no C compiler: `{command}` failed to start ({source}); install gcc or clang, set CARTFUSE_CC, or set CARTFUSE_CPU_ENGINE=interpreted"
    )]
    NoCompiler {
        /// The command tried.
        command: String,
        /// Why it did not start.
        source: std::io::Error,
    },
    /// The compiler rejected the generated source (a bug in the emitter).
    #[error("`{command}` failed on a generated kernel ({source_path}):\n{stderr}")]
    Rejected {
        /// The compiler.
        command: String,
        /// Where the source was kept.
        source_path: String,
        /// The compiler's diagnostics (first lines).
        stderr: String,
    },
    /// The cache directory could not be written.
    #[error("kernel cache {path}: {source}")]
    Cache {
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The shared object did not load.
    #[error("loading compiled kernel {path}: {source}")]
    Load {
        /// The path.
        path: String,
        /// The loader's error.
        source: libloading::Error,
    },
}

impl From<NativeError> for crate::exec::ExecError {
    fn from(error: NativeError) -> Self {
        Self::backend(error)
    }
}

/// The C compiler in use: its command and version line.
#[derive(Debug, Clone)]
pub struct Compiler {
    /// The command run.
    pub command: String,
    /// The first line of `--version`.
    pub version: String,
}

/// The compiler, or why it did not answer and the command tried.
static COMPILER: OnceLock<Result<Compiler, (String, String)>> = OnceLock::new();
static LOADED: OnceLock<Mutex<HashMap<u64, Arc<libloading::Library>>>> = OnceLock::new();
static TEMP: AtomicU64 = AtomicU64::new(0);

/// The compiler, found once per process.
pub fn compiler() -> Result<Compiler, NativeError> {
    let found = COMPILER.get_or_init(|| {
        let command = ["CARTFUSE_CC", "CC"]
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|c| !c.trim().is_empty()))
            .unwrap_or_else(|| "cc".into());
        match Command::new(&command).arg("--version").output() {
            Ok(out) if out.status.success() => Ok(Compiler {
                version: String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_string(),
                command,
            }),
            Ok(out) => Err((
                format!("`{command} --version` exited with {}", out.status),
                command,
            )),
            Err(e) => Err((e.to_string(), command)),
        }
    });
    found
        .clone()
        .map_err(|(why, command)| NativeError::NoCompiler {
            command,
            source: std::io::Error::other(why),
        })
}

/// Compiler flags for kernels at `level`.
pub fn flags(level: SimdLevel) -> Vec<&'static str> {
    let mut flags = vec![
        "-std=c11",
        "-O3",
        "-shared",
        "-fPIC",
        "-ffp-contract=off",
        "-fno-math-errno",
        "-fno-trapping-math",
        "-fno-strict-aliasing",
        // Partial redundancy elimination turned a load in Acrobot's fused step into one the
        // vectoriser rejects ("no vectype for stmt"), leaving the loop scalar (15M against
        // the interpreter's 44M env-steps/s at n = 4096); without it the loop vectorises.
        "-fno-tree-pre",
        "-w",
        "-lm",
    ];
    match level {
        // x86's scalar level is asked for to measure scalar code; elsewhere (aarch64: NEON is
        // baseline) scalar is the only level and the compiler's own vectorisation stays on
        // (no fast-math, no contraction: the results are the same bits).
        SimdLevel::Scalar if cfg!(target_arch = "x86_64") => {
            flags.extend(["-fno-tree-vectorize", "-fno-tree-slp-vectorize"])
        }
        SimdLevel::Scalar => {}
        SimdLevel::Avx2 => flags.extend(["-fopenmp-simd", "-mavx2", "-mbmi", "-mbmi2", "-mno-fma"]),
        SimdLevel::Avx512 => flags.extend([
            "-fopenmp-simd",
            "-mavx512f",
            "-mavx512vl",
            "-mavx512dq",
            "-mavx512bw",
            "-mbmi",
            "-mbmi2",
            "-mno-fma",
            "-mprefer-vector-width=512",
        ]),
    }
    flags
}

fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARTFUSE_KERNEL_CACHE") {
        return dir.into();
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("cartfuse").join("kernels")
}

/// Compiles `source` at `level` (or reuses the cached object) and loads it.
pub fn build(source: &str, level: SimdLevel) -> Result<Arc<libloading::Library>, NativeError> {
    let compiler = compiler()?;
    let flags = flags(level);
    let mut hasher = DefaultHasher::new();
    (source, &flags, &compiler.version).hash(&mut hasher);
    let key = hasher.finish();
    let loaded =
        || (LOADED.get_or_init(Default::default).lock()).expect("no panics under the lock");
    if let Some(lib) = loaded().get(&key) {
        return Ok(lib.clone());
    }
    let dir = cache_dir();
    let cache_err = |path: &PathBuf| {
        let path = path.display().to_string();
        move |source| NativeError::Cache { path, source }
    };
    std::fs::create_dir_all(&dir).map_err(cache_err(&dir))?;
    let stem = format!("k{key:016x}");
    let c_path = dir.join(format!("{stem}.c"));
    let so_path = dir.join(format!("{stem}.{}", std::env::consts::DLL_EXTENSION));
    let cached =
        so_path.exists() && std::fs::read_to_string(&c_path).is_ok_and(|kept| kept == source);
    if !cached {
        // Unique temporaries, renamed into place: concurrent builds of one kernel (threads
        // or processes) never see a half-written file.
        let tag = format!(
            "{}.{}",
            std::process::id(),
            TEMP.fetch_add(1, Ordering::Relaxed)
        );
        let c_tmp = dir.join(format!("{stem}.{tag}.c"));
        let so_tmp = dir.join(format!("{stem}.{tag}.{}", std::env::consts::DLL_EXTENSION));
        std::fs::write(&c_tmp, source).map_err(cache_err(&c_tmp))?;
        let out = Command::new(&compiler.command)
            .args(&flags)
            .arg("-o")
            .arg(&so_tmp)
            .arg(&c_tmp)
            .output()
            .map_err(|source| NativeError::NoCompiler {
                command: compiler.command.clone(),
                source,
            })?;
        if !out.status.success() {
            let stderr: String = String::from_utf8_lossy(&out.stderr)
                .lines()
                .take(30)
                .collect::<Vec<_>>()
                .join("\n");
            return Err(NativeError::Rejected {
                command: compiler.command.clone(),
                source_path: c_tmp.display().to_string(),
                stderr,
            });
        }
        std::fs::rename(&so_tmp, &so_path).map_err(cache_err(&so_path))?;
        std::fs::rename(&c_tmp, &c_path).map_err(cache_err(&c_path))?;
    }
    // SAFETY: the object was built by this module from generated C that has no
    // initialisers and defines only the kernel functions.
    let lib =
        unsafe { libloading::Library::new(&so_path) }.map_err(|source| NativeError::Load {
            path: so_path.display().to_string(),
            source,
        })?;
    let lib = Arc::new(lib);
    loaded().insert(key, lib.clone());
    Ok(lib)
}
