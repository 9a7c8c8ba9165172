//! The driver's own device-to-device copy, timed: the reference a roofline's copy kernel is
//! held to (issue 51: a roof that sits below what the device measures explains nothing).
//!
//! - wgpu: `copy_buffer_to_buffer` between two buffers of a device opened on the same
//!   adapter cubecl uses (Vulkan's `vkCmdCopyBuffer`), a batch of copies per submission.
//! - CUDA: `cuMemcpyDtoDAsync` on a stream of the primary context of device 0, a batch of
//!   copies per synchronisation.
//!
//! Bytes moved count the read and the write, as the roofline's copy kernel counts them (so
//! a 1 GiB copy moves 2 GiB). Each measurement is the best of a few batches after a warm-up
//! batch; buffers are the caller's size, which should be far larger than the device's
//! last-level cache.

use std::time::Instant;

/// Copies per timed batch: one submission (or synchronisation) amortised over them.
const COPIES_PER_BATCH: usize = 8;
/// Timed batches; the best is kept.
const BATCHES: usize = 5;

/// One measured driver copy.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DriverCopy {
    /// The driver call that copied (`"vkCmdCopyBuffer (wgpu)"`, `"cuMemcpyDtoDAsync"`).
    pub call: String,
    /// Bytes read plus written by one copy.
    pub bytes: u64,
    /// Bandwidth of the best batch, GB/s (1e9 bytes), read plus write.
    pub gbps: f64,
}

/// The best of [`BATCHES`] timed runs of `batch` (after one untimed), as bandwidth.
fn best_bandwidth<E>(
    bytes_per_copy: u64,
    mut batch: impl FnMut() -> Result<(), E>,
) -> Result<f64, E> {
    batch()?;
    let mut best = f64::INFINITY;
    for _ in 0..BATCHES {
        let start = Instant::now();
        batch()?;
        best = best.min(start.elapsed().as_secs_f64());
    }
    Ok((bytes_per_copy * COPIES_PER_BATCH as u64) as f64 / best / 1e9)
}

/// Times `copy_buffer_to_buffer` of `buffer_bytes` (each way; rounded down to 4 bytes and
/// capped by the adapter's largest buffer) on the adapter cubecl's default device opens.
#[cfg(feature = "wgpu")]
pub fn wgpu_copy(buffer_bytes: u64) -> Result<DriverCopy, String> {
    let adapter = super::device::default_adapter().map_err(|error| error.to_string())?;
    let api = format!("{:?}", adapter.get_info().backend);
    let limits = adapter.limits();
    let size = buffer_bytes.min(limits.max_buffer_size) / 4 * 4;
    if size == 0 {
        return Err("the copy has no bytes".into());
    }
    let (device, queue) =
        cubecl::future::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("cartfuse driver copy"),
            required_limits: limits,
            ..Default::default()
        }))
        .map_err(|error| format!("cannot open the {api} device for the driver copy: {error}"))?;
    let buffer = |label, usage| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation: false,
        })
    };
    let source = buffer(
        "copy source",
        wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
    );
    let target = buffer("copy target", wgpu::BufferUsages::COPY_DST);
    // Touch both buffers first, as the copy kernel's are: a fresh buffer may be backed lazily.
    let mut touch = device.create_command_encoder(&Default::default());
    touch.clear_buffer(&source, 0, None);
    touch.clear_buffer(&target, 0, None);
    queue.submit([touch.finish()]);
    let gbps = best_bandwidth(2 * size, || {
        let mut encoder = device.create_command_encoder(&Default::default());
        for _ in 0..COPIES_PER_BATCH {
            encoder.copy_buffer_to_buffer(&source, 0, &target, 0, size);
        }
        queue.submit([encoder.finish()]);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|error| format!("the {api} copy did not finish: {error}"))
    })?;
    Ok(DriverCopy {
        call: format!("vkCmdCopyBuffer through wgpu ({api})"),
        bytes: 2 * size,
        gbps,
    })
}

/// Times `cuMemcpyDtoDAsync` of `buffer_bytes` (each way) on CUDA device 0.
#[cfg(feature = "cuda")]
pub fn cuda_copy(buffer_bytes: u64) -> Result<DriverCopy, String> {
    super::device::cuda_available().map_err(|error| error.to_string())?;
    let failed =
        |what: &'static str| move |error: cudarc::driver::DriverError| format!("{what}: {error}");
    let context = cudarc::driver::CudaContext::new(0).map_err(failed("cannot open device 0"))?;
    let stream = context.default_stream();
    let size = (buffer_bytes / 4 * 4) as usize;
    let source = stream
        .alloc_zeros::<u8>(size)
        .map_err(failed("cannot allocate the copy source"))?;
    let mut target = stream
        .alloc_zeros::<u8>(size)
        .map_err(failed("cannot allocate the copy target"))?;
    let gbps = best_bandwidth(2 * size as u64, || {
        for _ in 0..COPIES_PER_BATCH {
            stream
                .memcpy_dtod(&source, &mut target)
                .map_err(failed("the copy failed"))?;
        }
        stream
            .synchronize()
            .map_err(failed("the copy did not finish"))
    })?;
    Ok(DriverCopy {
        call: "cuMemcpyDtoDAsync".into(),
        bytes: 2 * size as u64,
        gbps,
    })
}
