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

/// Kernels index a buffer with `u32`: the largest buffer the backend allows is one such an
/// index reaches, though a CUDA page can be larger (a quarter of an H200's memory).
#[test]
fn the_largest_buffer_is_one_a_u32_index_reaches() {
    use cartfuse::fusion::exec::Backend;
    let max = backend().max_buffer_bytes();
    assert!(max <= 4 * u64::from(u32::MAX), "{max} bytes");
}
