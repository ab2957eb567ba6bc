//! Reading and writing: problem and solution files (CSV, JSON, MiniMalloc's columns), bad input,
//! the shipped examples, model importers, operator reordering and TFLite Micro plans.

#[path = "../common/mod.rs"]
mod common;

mod errors;
mod examples;
mod export_plan;
mod gaps;
mod import;
mod import_fuzz;
mod malformed_files;
mod plan_refusals;
mod reorder;
