//! The CUDA C++ of every kernel a process compiles on wgpu, written without a CUDA device.
//!
//! With [`VARIABLE`] (`CARTFUSE_CUDA_SOURCES=<directory>`) set, opening a wgpu device also
//! hands each kernel definition cubecl-wgpu compiles (through the observer of the patched
//! cubecl-wgpu in `vendor/`) to cubecl-cpp's CUDA compiler, configured as cubecl-cuda
//! configures it for an `sm_90` GPU (an H100 or H200), and writes the source NVRTC would get
//! to `<directory>/<kernel>-<hash>.cu`; a definition the CUDA compiler refuses is written as
//! `<kernel>-<hash>.error.txt` with its reason. `scripts/cuda-compile-check.sh` runs the
//! device suites on lavapipe with it and compiles every file with clang's CUDA front end:
//! what NVRTC would refuse shows on a machine without a GPU.
//!
//! The definitions are wgpu's: built with wgpu's device properties (vector widths, plane
//! size), so a kernel whose shape depends on the device can differ from what CUDA runs; the
//! math, the instructions and cubecl-cpp's rendering of them are the same. It needs a build
//! with both `wgpu` and `cuda`; elsewhere the variable is an error.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::exec::DeviceError;

/// The environment variable naming the directory the sources go to.
pub const VARIABLE: &str = "CARTFUSE_CUDA_SOURCES";

/// What [`VARIABLE`] needs, as the environment check says.
pub const NEEDS: &str = "a directory, in a build with the cuda and wgpu features";

static DIRECTORY: OnceLock<PathBuf> = OnceLock::new();

/// Starts writing sources when [`VARIABLE`] names a directory ([`write_to`]); does nothing
/// when it is unset or empty. Called when a wgpu device opens.
pub fn write_from_environment() -> Result<(), DeviceError> {
    match std::env::var_os(VARIABLE).filter(|v| !v.is_empty()) {
        Some(directory) => write_to(PathBuf::from(directory)),
        None => Ok(()),
    }
}

/// Writes the CUDA source of every kernel compiled on wgpu from now on to `directory`
/// (created when missing). An error without both the `wgpu` and `cuda` features, when the
/// directory cannot be created, or when the process already writes to another one.
pub fn write_to(directory: PathBuf) -> Result<(), DeviceError> {
    let failed = |reason: String| DeviceError::CudaSources {
        variable: VARIABLE,
        directory: directory.clone(),
        reason,
    };
    if !cfg!(all(feature = "wgpu", feature = "cuda")) {
        return Err(failed(
            "this build cannot translate kernels for CUDA: rebuild with `--features cuda` \
             (and wgpu, a default feature)"
                .into(),
        ));
    }
    std::fs::create_dir_all(&directory).map_err(|e| failed(e.to_string()))?;
    let first = DIRECTORY.get_or_init(|| directory.clone());
    if first != &directory {
        return Err(failed(format!(
            "this process already writes its sources to {}",
            first.display()
        )));
    }
    #[cfg(all(feature = "wgpu", feature = "cuda"))]
    cubecl::wgpu::observe_kernel_definitions(translation::write_source);
    Ok(())
}

/// The file a kernel's text goes to: its name and a hash of the text, so each distinct
/// kernel is one file however often it compiles.
#[cfg_attr(not(all(feature = "wgpu", feature = "cuda")), allow(dead_code))]
fn file_for(directory: &Path, kernel_name: &str, text: &str, extension: &str) -> PathBuf {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    let name: String = kernel_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    directory.join(format!("{name}-{:016x}.{extension}", hasher.finish()))
}

#[cfg(all(feature = "wgpu", feature = "cuda"))]
mod translation {
    use cubecl::Compiler;
    use cubecl::cuda::CudaCompiler;
    use cubecl::prelude::{ExecutionMode, KernelDefinition, StorageType};

    use super::{DIRECTORY, file_for};

    /// cubecl-cuda's options on an `sm_90` device with CUDA 12.8 or later
    /// (`vendor/cubecl-cuda/src/runtime.rs`): fast math, grid constants (`sm_70`+), the fast
    /// `tanh` (`sm_75`+), clusters and `elect.sync` (`sm_90`), and the default 32-wide warps.
    fn sm_90_options() -> <CudaCompiler as Compiler>::CompilationOptions {
        let mut options = <CudaCompiler as Compiler>::CompilationOptions::default();
        let features = &mut options.supports_features;
        features.fast_math = true;
        features.grid_constants = true;
        features.fast_tanh = true;
        features.clusters = true;
        features.elect_sync = true;
        options
    }

    /// The observer: the definition's CUDA source (or why there is none) into its file.
    pub(super) fn write_source(
        definition: &KernelDefinition,
        mode: ExecutionMode,
        addr_type: StorageType,
    ) {
        let Some(directory) = DIRECTORY.get() else {
            return;
        };
        let name = definition.options.kernel_name.clone();
        let compiled =
            CudaCompiler::default().compile(definition.clone(), &sm_90_options(), mode, addr_type);
        let (text, extension) = match compiled {
            Ok(kernel) => (kernel.to_string(), "cu"),
            Err(error) => (error.to_string(), "error.txt"),
        };
        let path = file_for(directory, &name, &text, extension);
        if let Err(error) = std::fs::write(&path, text) {
            tracing::warn!("could not write {}: {error}", path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_file_is_named_by_kernel_and_text() {
        let dir = Path::new("/d");
        let a = file_for(dir, "fused_array", "x", "cu");
        assert!(a.starts_with(dir));
        let name = a.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("fused_array-") && name.ends_with(".cu"),
            "{name}"
        );
        assert_eq!(a, file_for(dir, "fused_array", "x", "cu"));
        assert_ne!(a, file_for(dir, "fused_array", "y", "cu"));
        let odd = file_for(dir, "a/b c", "x", "cu");
        assert!(
            odd.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("a_b_c-")
        );
    }

    #[cfg(not(all(feature = "wgpu", feature = "cuda")))]
    #[test]
    fn without_cuda_writing_sources_is_an_error_that_says_how_to_build() {
        let directory = std::env::temp_dir().join("cartfuse-cuda-sources-refused");
        let message = write_to(directory.clone()).unwrap_err().to_string();
        assert!(message.starts_with("CARTFUSE_CUDA_SOURCES="), "{message}");
        assert!(message.contains("--features cuda"), "{message}");
        assert!(!directory.exists(), "nothing is created");
    }

    #[cfg(all(feature = "wgpu", feature = "cuda"))]
    #[test]
    fn one_directory_a_process() {
        let base =
            std::env::temp_dir().join(format!("cartfuse-cuda-sources-{}", std::process::id()));
        write_to(base.join("a")).unwrap();
        assert!(base.join("a").is_dir());
        write_to(base.join("a")).unwrap();
        let message = write_to(base.join("b")).unwrap_err().to_string();
        assert!(
            message.contains("already writes its sources to"),
            "{message}"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }
}
