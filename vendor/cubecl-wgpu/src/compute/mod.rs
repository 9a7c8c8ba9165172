pub(crate) mod controller;

mod storage;

pub(super) mod mem_manager;
pub(super) mod poll;
pub(super) mod schedule;
mod server;
pub(super) mod stream;
pub(super) mod timings;

pub use server::*;
pub use stream::thread_submissions;
pub use storage::*;
