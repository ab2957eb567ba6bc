//! What a solve returns: the [`Allocation`], or the [`SolveError`] that kept it from running.

use crate::cpsat::{CpSatError, CpSatStats};
use crate::learned::ModelError;
use crate::minimize::{BoundSource, MinimizePhase};
use crate::outcome::Status;
use crate::problem::rules::RuleBreak;
use crate::problem::{Assignment, Solution};
use crate::search::SearchStats;
use std::fmt;
use std::time::Duration;

/// The result of [`Solver::solve`](crate::Solver::solve).
#[derive(Clone, Debug)]
pub struct Allocation {
    /// How it ended.
    pub status: Status,
    /// The solution: present exactly when the status is `Solved`; always validated.
    pub solution: Option<Solution>,
    /// The peak of the best layout found, if any (also for `HeuristicExceeded`).
    pub peak: Option<u64>,
    /// LOAD of the problem (a lower bound on any peak).
    pub load: u64,
    /// Wall-clock time spent.
    pub elapsed: Duration,
    /// Search counters, when the algorithm searched.
    pub search: Option<SearchStats>,
    /// A proven lower bound on the peak (minimisation with the search: LOAD, or more when
    /// smaller capacities were proven infeasible); the solution is optimal when it equals the
    /// peak.
    pub lower_bound: Option<u64>,
    /// Where the lower bound comes from, when there is one.
    pub lower_bound_source: Option<BoundSource>,
    /// What the caller should be told (e.g. a learned model that could not be used).
    pub warnings: Vec<String>,
    /// CP-SAT's counters, when it ran ([`Algorithm::CpSat`](crate::Algorithm::CpSat)).
    pub cpsat: Option<CpSatStats>,
    /// The phase of minimisation with the search that produced the layout.
    pub found_by: Option<MinimizePhase>,
    /// Where each buffer went, for [`Goal::Spill`](crate::Goal::Spill) and
    /// [`Goal::Memories`](crate::Goal::Memories) (present with the
    /// solution, whose offsets are inside each buffer's memory); validated with it.
    pub assignment: Option<Assignment>,
    /// Greedy admission's assignment (see [`greedy_admission`](crate::greedy_admission)), for
    /// [`Goal::Spill`](crate::Goal::Spill) without
    /// memories: what the answer is compared with, computed within the limit.
    pub greedy: Option<Assignment>,
}

impl Allocation {
    /// An allocation with `status` and `load` and nothing found yet.
    pub(super) fn nothing_yet(status: Status, load: u64) -> Allocation {
        Allocation {
            status,
            solution: None,
            peak: None,
            load,
            elapsed: Duration::ZERO,
            search: None,
            lower_bound: None,
            lower_bound_source: None,
            warnings: Vec::new(),
            cpsat: None,
            assignment: None,
            found_by: None,
            greedy: None,
        }
    }
}

/// Why a problem could not be solved at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SolveError {
    /// The problem breaks a rule of the model (see [`Problem::check`](crate::Problem::check)).
    InvalidProblem(RuleBreak),
    /// CP-SAT was asked for but could not run (e.g. its library is not installed).
    CpSat(CpSatError),
    /// The policy names a model file that cannot be used (missing, unreadable, not a model, or
    /// made for other features): an error, never a silent change of policy.
    Model {
        /// The file named.
        path: std::path::PathBuf,
        /// Why it cannot be used.
        error: ModelError,
    },
}

impl fmt::Display for SolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SolveError::InvalidProblem(why) => write!(f, "invalid problem: {why}"),
            SolveError::CpSat(why) => write!(f, "{why}"),
            SolveError::Model { path, error } => {
                let why = error.to_string();
                let path = path.display().to_string();
                match error {
                    ModelError::Missing(_) => write!(f, "no policy model file at {path}"),
                    // Most reasons name the file already.
                    _ if why.contains(&path) => write!(f, "policy model: {why}"),
                    _ => write!(f, "policy model file {path}: {why}"),
                }
            }
        }
    }
}

impl std::error::Error for SolveError {}
