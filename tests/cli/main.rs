//! The `telamalloc` binary: exit codes, errors naming line and field, every subcommand, and the
//! installed binary from any directory.

#[path = "../common/mod.rs"]
mod common;

mod anywhere;
mod batch_inputs;
mod commands;
mod exit_codes;
mod full_disk;
mod round_trip;
