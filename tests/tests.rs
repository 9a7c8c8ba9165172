//! The single integration-test binary (cubecl and wgpu are linked once).
//!
//! Tests that need a device open the default wgpu adapter through [`util::client`], which
//! fails the test with instructions when the machine has none: nothing is skipped silently.

mod util;

mod parity;
