//! The runtime suites on wgpu's default adapter (Mesa lavapipe on a machine without a GPU).

/// The backend these suites run on.
pub type TestBackend = cartfuse::fusion::cube::Cube<cartfuse::fusion::cubecl::wgpu::WgpuRuntime>;

/// Opens the default adapter; fails the test with install instructions when there is none.
pub fn backend() -> TestBackend {
    match cartfuse::fusion::cube::device::wgpu_client() {
        Ok(opened) => cartfuse::fusion::cube::Cube::new(&opened),
        Err(error) => panic!("this test needs a compute device and found none: {error}"),
    }
}

runtime_suites!();

/// Vectorised launches against scalar ones.
mod vector;

/// Plans over the device's loop-iteration and binding limits.
mod loop_limit;

/// Carried state updated in place against double buffering.
mod in_place;

/// The driver's own copy, the roofline's reference.
mod driver_copy;

/// Row reductions with a cube per row against a thread per row.
mod row_reduction;

/// A host step's submissions to the queue.
mod submissions;
