//! cartfuse's patch: which thread runs a device service's calls.
//!
//! Upstream runs every service (a runtime's compute server, burn's fusion server) on a
//! device thread of its own that callers feed through a channel; for wasm it runs them on the
//! calling thread under a reentrant mutex. Here the choice is made per service type when the
//! process first opens one:
//!
//! - [`VARIABLE`] `=caller`: every service on the calling thread;
//! - [`VARIABLE`] `=server`: every service on its device thread (upstream);
//! - unset: the services of wgpu (cubecl-wgpu's compute server, burn's fusion server over
//!   it: every service whose type names `cubecl_wgpu`) on the calling thread, every other
//!   (cubecl-cuda's server, burn's fusion server over it) on its device thread.
//!
//! On a 2-core machine with Mesa's lavapipe the calling thread made a device-resident
//! CartPole step 1.4-1.5x faster and a host step up to 1.2x, and burn's learners over wgpu
//! about 1.15x (cartfuse's `docs/results-log.md`, 2026-11-30): the device threads no longer
//! compete with lavapipe's own threads and a call costs no wake-up. CUDA has not been
//! measured both ways, so it keeps upstream's thread until it is.

use std::sync::OnceLock;

/// The environment variable that chooses the thread: `caller` or `server`.
pub const VARIABLE: &str = "CARTFUSE_DEVICE_THREAD";

/// The choice a value of [`VARIABLE`] names: `Some(true)` for `caller`, `Some(false)` for
/// `server` (any case, surrounding spaces ignored), `None` for anything else.
pub fn parse(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "caller" => Some(true),
        "server" => Some(false),
        _ => None,
    }
}

/// Whether services of type `S` run on the calling thread (see the module docs). Read once
/// per process, so every handle of a service agrees.
pub fn on_calling_thread<S: 'static>() -> bool {
    static CHOSEN: OnceLock<Option<bool>> = OnceLock::new();
    let chosen = *CHOSEN.get_or_init(|| std::env::var(VARIABLE).ok().as_deref().and_then(parse));
    chosen.unwrap_or_else(|| core::any::type_name::<S>().contains("cubecl_wgpu::"))
}
