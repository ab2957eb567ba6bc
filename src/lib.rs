//! # telamalloc
//!
//! Assigns on-chip memory offsets to the buffers of a compiled ML model so that no two buffers
//! live at the same time overlap and nothing exceeds the capacity.
//!
//! One front door, [`Solver`]: build it once from options, then [`Solver::solve`] a
//! [`Problem`] for a [`Goal`]. It checks the problem, runs the algorithm (the TelaMalloc hybrid
//! search by default, or a production heuristic) and validates the answer before returning it.
//!
//! ```
//! use std::time::Duration;
//! use telamalloc::{Buffer, Goal, Problem, Solver, Status};
//! let problem = Problem::new(vec![
//!     Buffer::new("input", 0, 2, 512),
//!     Buffer::new("conv1", 1, 3, 1024),
//!     Buffer::new("output", 2, 4, 512),
//! ], None);
//! let solver = Solver::new().timeout(Duration::from_secs(1));
//! let result = solver.solve(&problem, Goal::Fit(1536)).expect("a well-formed problem");
//! assert_eq!(result.status, Status::Solved);
//! let offsets = result.solution.expect("solved").offsets; // validated, in buffer order
//! assert_eq!(offsets.len(), 3);
//! ```
//!
//! Around it: one problem model ([`Problem`], [`Buffer`], [`Solution`], with its rules in
//! [`Problem::check`]), one independent validator ([`validate()`]), file formats ([`io`]),
//! problem analysis ([`analysis`]), the production heuristics ([`baselines`]) on one placement
//! core ([`placement`]), model importers ([`import`]), operator reordering for a smaller LOAD
//! ([`reorder`]), generators ([`generate`]), the search's
//! seams ([`search`]: node policies, strategy rankers, observers, switches), the learned
//! components ([`learned`]), solve logs ([`solve_log`]) and the contract with the offline
//! trainer ([`training`]).

mod assign;
mod error;
mod fit;
mod minimize;
mod outcome;
mod policy_spec;
mod problem;
mod report_text;
mod solver;

pub mod analysis;
pub mod baselines;
pub mod batch;
pub mod bench;
pub mod cpsat;
pub mod evaluate;
pub mod export;
pub mod generate;
pub mod import;
pub mod io;
pub mod learned;
pub mod placement;
pub mod plot;
pub mod reorder;
pub mod search;
pub mod solve_log;
pub mod training;
pub mod validate;

pub use error::{InputError, Location};
pub use outcome::{trivially_infeasible, Infeasibility, Limits, Status};
pub use policy_spec::{BuiltPortfolio, PolicySpec, UnknownPolicy};
pub use problem::rules::{RuleBreak, TimeColumns};
pub use problem::{align_up, Assignment, Buffer, Gap, Memory, Piece, Problem, Solution};
pub use report_text::{cpsat_share_line, solution_text, spill_line, summary_lines};
pub use search::{SearchOptions, SearchStats};
pub use solver::{
    greedy_admission, Algorithm, Allocation, BoundSource, Goal, MinimizePhase, PortfolioFactory,
    SolveError, Solver, DEFAULT_ASSIGN_TIMEOUT, DEFAULT_FIT_TIMEOUT, DEFAULT_MINIMIZE_TIMEOUT,
};
pub use validate::{validate, validate_assignment, Report, Violation};

/// The README's code examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
