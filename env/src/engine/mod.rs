//! How a step runs: the planned engine (a graph under a fusion plan on any backend), the
//! choice of engine ([`StepPlan`]), and, re-exported from [`crate::step_engine`], the trait
//! every engine implements.

mod draw_ahead;
mod pages;
mod planned;
mod step_plan;

pub use crate::step_engine::{
    ActionFlag, HandWritten, LaneKeys, NoHandWritten, OutputArena, ResetRequest, Seeding,
    StepBuffer, StepEngine,
};
pub use draw_ahead::{MAX_STEPS_AHEAD, step_reading_draws, steps_ahead};
pub use planned::{PlannedEngine, RESET_KERNEL_PREFIX};
pub use step_plan::{RandomSource, StepPlan, layout_for};
