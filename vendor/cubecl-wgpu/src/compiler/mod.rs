pub mod base;
pub mod observer;
pub mod wgsl;
