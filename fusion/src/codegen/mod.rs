//! Codegen: turning a plan's kernels into comptime programs and launching them.

pub mod kernel;
pub mod lower;
pub mod program;
pub mod vector;
