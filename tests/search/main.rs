//! The hybrid search: known answers, agreement with brute force, pinned node counts, limits,
//! determinism, solve logs and CP-SAT beside it.

#[path = "../common/mod.rs"]
mod common;
#[path = "../search_support/mod.rs"]
mod support;

mod bound;
mod brute_force;
mod cover_branching;
mod cpsat;
mod deep_search;
mod diversity;
mod gaps;
mod hardset;
mod known;
mod large_fit;
mod log;
mod node_counts;
mod node_limits;
mod time_limits;
