//! Codegen: turning a plan's kernels into comptime programs and launching them.
//!
//! - [`program`]: the comptime instruction list a kernel interprets.
//! - [`lower`]: plan kernels to programs and the buffers they bind.
//! - [`compact`]: dense layers as loops over the params buffer (generated kernels only).
//! - [`reroll`]: each dense layer's rows as one loop, outputs through the stash.
//! - [`loop_budget`]: run-time loop iterations per thread, against lavapipe's limit.
//! - [`kernel`]: the one interpreter kernel, generic over the vector width.
//! - [`instr`]: one instruction of it in CubeCL.
//! - [`in_place`]: which carried states a launch may update in place.
//! - [`state_reads`]: a carry updated in place read from its next value's binding.
//! - [`lazy`]: select branches run only where taken; Threefry words computed once.
//! - [`ops`]: its math, one `#[cube]` function per typed op family.
//! - `steps`: the prologue, loop body and epilogue of multi-step programs.
//! - [`vector`]: which programs may run with more than one lane per thread.

pub mod compact;
pub mod in_place;
pub mod instr;
pub mod kernel;
pub mod lazy;
pub mod loop_budget;
pub mod lower;
pub mod ops;
pub mod program;
pub mod reroll;
pub mod state_reads;
mod steps;
pub mod vector;
