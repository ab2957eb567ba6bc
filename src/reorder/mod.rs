//! Operator reordering: the execution order of a model's operators with the smallest LOAD.
//!
//! LOAD, the peak over time of the bytes of the buffers live at once, is a floor no offset
//! assignment can beat, and it depends on the order the operators run in. [`reorder`] searches
//! the topological orders of an [`OpGraph`] for one with the smallest LOAD.
//!
//! # The cost of an order
//!
//! The lifetimes are those of [`crate::import`]: with `S` the operators run before operator `v`,
//! the bytes live while `v` runs are
//!
//! - every graph input that is a graph output or has a reader outside `S` (the graph inputs
//!   nobody reads and that are not outputs only at the first step);
//! - (an operator marked [`Operation::folded`] computes constants at load time and takes no
//!   step; it only orders its readers after it);
//! - every tensor an operator of `S` produced that is a graph output or has a reader outside
//!   `S` (`v` included);
//! - every tensor `v` produces.
//!
//! So the bytes that stay after `v` (the *resident* bytes) depend only on the set of operators
//! run, not on their order, and the LOAD of an order is the largest of its steps' costs.
//!
//! # What the runtime needs
//!
//! An order is valid when every operator comes after the producers of the tensors it reads, and
//! the operators marked [`Operation::pinned`] (side effects: state, calls, custom code) keep
//! their relative order. Graph inputs are there from the start and graph outputs stay to the
//! end in every order; tensors without a producer (weights, constants) cost nothing.
//!
//! # The search
//!
//! Exact for small graphs, anytime for large ones, with a time limit and a state limit:
//!
//! 1. The model's own order is the first candidate, and `max(over operators v, the bytes that
//!    must be live while v runs in every order)` a lower bound; an order at the bound is proven
//!    minimal.
//! 2. Beam searches over the sets of operators run (width 1 is the greedy order: the cheapest
//!    step, then the fewest resident bytes), widths 1, 4, 16.
//! 3. An exact best-first search over the same sets, memoised (an order's future depends only on
//!    the set run, so each set is expanded once, with the smallest peak that reaches it),
//!    pruned by the best order known, with a dominance rule: an available operator that frees
//!    at least what it keeps and costs no more than the peak already paid runs next without
//!    branching. When it ends, the answer is proven minimal.
//! 4. If it runs out of states or time first: windows of the best order around its most
//!    expensive steps, each reordered exactly with the rest fixed, while that helps; then wider
//!    beams (64, 128, ... up to [`ReorderOptions::max_beam_width`]), each new best order
//!    improved by windows in turn, until the limit.
//!
//! Everything is deterministic except where the clock cuts a phase short; without a time limit
//! ([`ReorderOptions::timeout`] `None`) the result depends only on the graph and the options.
//! The order returned is never worse than the model's own order.

mod exact;
mod graph;
mod heuristic;
mod search;

pub use graph::{GraphError, OpGraph, Operation};
pub use search::{reorder, ReorderOptions, Reordering};
