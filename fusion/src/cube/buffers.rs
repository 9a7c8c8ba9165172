//! Typed copies between host slices and device buffers: new buffers, writes into buffers
//! that exist (from [`UploadStaging`]'s reused host memory), reads (several buffers in one round trip), and [`Arena`]s of buffers laid out
//! in one allocation so that one copy brings them all back.

use cubecl::bytes::Bytes;
use cubecl::device::DeviceId;
use cubecl::device_handle::DeviceHandle;
use cubecl::prelude::*;
use cubecl::server::{ComputeServer, CopyDescriptor, Handle};
use cubecl::stream_id::StreamId;

use super::staging::UploadStaging;
use crate::exec::{Arena, ReadError};

/// Uploads `values` into a new device buffer.
pub fn upload<R: Runtime, E: CubeElement>(client: &ComputeClient<R>, values: &[E]) -> Handle {
    client.create_from_slice(E::as_bytes(values))
}

/// Writes `values` into `handle`, which already exists and holds exactly as many bytes,
/// on the calling thread's stream: after every launch enqueued before, before every launch
/// enqueued after, without allocating device memory or waiting. The values go out from a
/// slot of `staging` (allocated once; page-locked on CUDA).
///
/// `ComputeClient` 0.10 offers no write into an existing buffer, but its server does, through
/// the same channel the client uses (so the write keeps its place among the launches).
pub fn write_into<R: Runtime, E: CubeElement>(
    device: DeviceId,
    handle: &Handle,
    values: &[E],
    staging: &UploadStaging,
) {
    let bytes = staging.stage(E::as_bytes(values), |capacity| {
        staging_memory::<R>(device, capacity)
    });
    submit_write::<R>(device, handle, bytes);
}

/// [`write_into`] from a new `Vec` (pageable memory), as every write went before
/// [`UploadStaging`]: the reference `examples/host_step.rs` times the staged write against.
pub fn write_into_unstaged<R: Runtime, E: CubeElement>(
    device: DeviceId,
    handle: &Handle,
    values: &[E],
) {
    let bytes = Bytes::from_bytes_vec(E::as_bytes(values).to_vec());
    submit_write::<R>(device, handle, bytes);
}

/// Hands `bytes` to `device`'s server as a write of the whole of `handle`.
fn submit_write<R: Runtime>(device: DeviceId, handle: &Handle, bytes: Bytes) {
    let len = bytes.len();
    let descriptor = CopyDescriptor::new(handle.clone().binding(), [len].into(), [1].into(), 1);
    let stream = StreamId::current();
    DeviceHandle::<R::Server>::new(device)
        .submit(move |server| server.write(vec![(descriptor, bytes)], stream));
}

/// `capacity` bytes of host memory for uploads to `device`: the runtime's own staging where
/// it has any (CUDA: page-locked, from cubecl's pinned pool), else ordinary memory (wgpu,
/// which copies every write into its own staging at once).
fn staging_memory<R: Runtime>(device: DeviceId, capacity: usize) -> Bytes {
    let stream = StreamId::current();
    let staged = DeviceHandle::<R::Server>::new(device)
        .submit_blocking(move |server| server.staging(&[capacity], stream));
    match staged {
        Ok(Ok(mut memory)) if memory.len() == 1 => memory.remove(0),
        _ => Bytes::from_bytes_vec(vec![0; capacity]),
    }
}

/// Copies a whole device buffer of `E` back to the host (blocks until the device is done).
pub fn download<R: Runtime, E: CubeElement>(
    client: &ComputeClient<R>,
    handle: &Handle,
) -> Result<Vec<E>, ReadError> {
    let bytes = client
        .read_one(handle.clone())
        .map_err(|error| ReadError(format!("{error:?}")))?;
    Ok(E::from_bytes(&bytes).to_vec())
}

/// Copies several device buffers of `E` back to the host in one round trip.
pub fn download_many<R: Runtime, E: CubeElement>(
    client: &ComputeClient<R>,
    handles: &[&Handle],
) -> Result<Vec<Vec<E>>, ReadError> {
    let bytes = read_bytes(client, handles)?;
    Ok(bytes
        .iter()
        .map(|bytes| E::from_bytes(bytes).to_vec())
        .collect())
}

/// The bytes of `handles`, read in one round trip (one copy each).
fn read_bytes<R: Runtime>(
    client: &ComputeClient<R>,
    handles: &[&Handle],
) -> Result<Vec<Bytes>, ReadError> {
    let handles = handles.iter().map(|handle| (*handle).clone()).collect();
    cubecl::future::block_on(client.read_async(handles))
        .map_err(|error| ReadError(format!("{error:?}")))
}

/// Buffers of `words[i]` 32-bit words in one allocation of `client`'s, each part starting at
/// a multiple of `align` bytes (storage offsets must be aligned).
pub fn alloc_arena<R: Runtime>(
    client: &ComputeClient<R>,
    words: &[usize],
    align: usize,
) -> Arena<Handle> {
    let spans: Vec<usize> = (words.iter())
        .map(|w| (4 * w.max(&1)).next_multiple_of(align))
        .collect();
    let total: usize = spans.iter().sum();
    let whole = client.empty(total);
    let mut starts = Vec::with_capacity(words.len());
    let mut at = 0;
    let parts = (words.iter().zip(&spans))
        .map(|(&w, &span)| {
            starts.push(at / 4);
            let part =
                (whole.clone().offset_start(at as u64)).offset_end((total - at - 4 * w) as u64);
            at += span;
            part
        })
        .collect();
    Arena {
        parts,
        whole: Some((whole, starts)),
    }
}

/// Reads every part of `arena` in one round trip: one copy of the whole allocation where it
/// has one, else one copy per part. Hands part `i`'s words to `sink(i, words)`; returns the
/// copies made.
pub fn read_arena<R: Runtime>(
    client: &ComputeClient<R>,
    arena: &Arena<Handle>,
    sink: &mut dyn FnMut(usize, &[u32]),
) -> Result<u64, ReadError> {
    match &arena.whole {
        Some((whole, starts)) => {
            let bytes = read_bytes(client, &[whole])?;
            let words = u32::from_bytes(&bytes[0]);
            for (i, (part, &start)) in arena.parts.iter().zip(starts).enumerate() {
                let len = (part.size_in_used() / 4) as usize;
                sink(i, &words[start..start + len]);
            }
            Ok(1)
        }
        None => {
            let parts: Vec<&Handle> = arena.parts.iter().collect();
            let bytes = read_bytes(client, &parts)?;
            for (i, bytes) in bytes.iter().enumerate() {
                sink(i, u32::from_bytes(bytes));
            }
            Ok(parts.len() as u64)
        }
    }
}
