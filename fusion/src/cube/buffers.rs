//! Typed copies between host slices and device buffers.

use cubecl::prelude::*;
use cubecl::server::Handle;

use crate::exec::ReadError;

/// Uploads `values` into a new device buffer.
pub fn upload<R: Runtime, E: CubeElement>(client: &ComputeClient<R>, values: &[E]) -> Handle {
    client.create_from_slice(E::as_bytes(values))
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
    let handles = handles.iter().map(|handle| (*handle).clone()).collect();
    let bytes = cubecl::future::block_on(client.read_async(handles))
        .map_err(|error| ReadError(format!("{error:?}")))?;
    Ok(bytes
        .iter()
        .map(|bytes| E::from_bytes(bytes).to_vec())
        .collect())
}
