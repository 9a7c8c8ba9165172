//! The single integration-test binary (cubecl and wgpu are linked once).
//!
//! Tests that need a device open the default wgpu adapter through [`util::client`], which
//! fails the test with instructions when the machine has none: nothing is skipped silently.

mod util;

/// Exact launch and byte counts.
mod accounting;
/// The burn-tensor step against the reference.
mod burn;
/// The binary end to end.
mod cli;
/// Autoreset modes, truncation and step counters, step by step against the reference.
mod episodes;
/// Every bad input gets its error.
mod errors;
/// One-step kernel parity with the f64 reference.
mod parity;
/// Every plan of a graph against the interpreter.
mod plans;
/// Random graphs under every strategy against the interpreter.
mod random_graphs;
/// Reset bounds, seeding and host/device RNG identity.
mod resets;
/// `fused-xK` against single fused steps.
mod steps;
