//! The lowered launch IR and every backend-neutral decision made on it.
//!
//! A plan's launches are lowered once ([`lower`]) into straight-line instruction lists over
//! numbered registers ([`program`]); the passes here decide, for every backend, how they
//! run: which select branches run only where taken ([`guards`]), which carried states a
//! launch updates in place ([`in_place`], [`state_reads`]), how dense layers become loops
//! ([`compact`], [`reroll`]), how many loop iterations a thread runs ([`loop_budget`]) and
//! which programs may run several lanes per thread ([`vector`]). The backends (`cube`,
//! `cpu`) only emit and launch what these decided.
//!
//! - [`program`]: instructions, kernel and launch programs, the params layout.
//! - [`lower`]: plan kernels to programs and the buffers they bind.
//! - `steps`: the prologue, loop body and epilogue of multi-step (`fused-xK`) programs.
//! - [`guards`]: select branches guarded; Threefry words computed once.
//! - [`in_place`]: which carried states a launch may update in place.
//! - [`state_reads`]: a carry updated in place read from its next value's binding.
//! - [`compact`] and [`reroll`]: dense layers as loops over the params buffer.
//! - [`loop_budget`]: run-time loop iterations per thread, against lavapipe's limit.
//! - [`vector`]: which programs may run with more than one lane per thread.

pub mod compact;
pub mod guards;
pub mod in_place;
pub mod loop_budget;
pub mod lower;
pub mod program;
pub mod reroll;
pub mod state_reads;
mod steps;
pub mod vector;
