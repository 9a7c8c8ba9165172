//! The runtime suites on CUDA device 0 (built with `--features cuda`; a machine without an
//! NVIDIA driver fails these tests with the runtime's error).

/// The backend these suites run on.
pub type TestBackend = cartfuse::fusion::cube::Cube<cartfuse::fusion::cubecl::cuda::CudaRuntime>;

/// Opens CUDA device 0.
pub fn backend() -> TestBackend {
    match cartfuse::fusion::cube::device::cuda_client() {
        Ok(opened) => cartfuse::fusion::cube::Cube::new(&opened),
        Err(error) => panic!("this test needs a CUDA device and found none: {error}"),
    }
}

runtime_suites!();
