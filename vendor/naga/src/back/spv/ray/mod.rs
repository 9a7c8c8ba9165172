/*!
Module for code shared between ray queries and ray tracing pipeline code.
Ray tracing pipelines are not yet implemented, so this is empty.
*/

pub mod query;
