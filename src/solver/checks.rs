//! What the front door checks before anything runs: the goal against the problem, the
//! problem's rules, and what the solver needs (its policy's model file, OR-tools' library).

use super::{Algorithm, Goal, SolveError, Solver};
use crate::cpsat::{self, CpSatError};
use crate::fit::PolicySource;
use crate::learned::Network;
use crate::problem::rules::RuleBreak;
use crate::problem::Problem;
use std::sync::Arc;

impl Solver {
    /// Whether what this solver needs is here: OR-tools' library when it runs CP-SAT
    /// ([`Algorithm::CpSat`] or the `cpsat` switch of the search). [`Solver::solve`] gives the
    /// same error; this lets a caller of many solves (e.g. an evaluation) stop before the first.
    pub fn check_available(&self) -> Result<(), SolveError> {
        self.load_policy_model()?;
        self.check_library()
    }

    /// OR-tools' library, when this solver runs CP-SAT.
    pub(super) fn check_library(&self) -> Result<(), SolveError> {
        let search_with_cpsat = self.algorithm == Algorithm::Search && self.options.cpsat;
        if self.algorithm == Algorithm::CpSat || search_with_cpsat {
            cpsat::library::shared()
                .map_err(|why| SolveError::CpSat(CpSatError::Unavailable(why)))?;
        }
        Ok(())
    }

    /// The network of the model file the search's policy names, read once per solve (`None`
    /// when it names none); an error when the file cannot be used.
    pub(super) fn load_policy_model(&self) -> Result<Option<Arc<Network>>, SolveError> {
        match &self.policy {
            PolicySource::Spec(spec) if self.algorithm == Algorithm::Search => spec
                .load_model()
                .map_err(|(path, error)| SolveError::Model { path, error }),
            _ => Ok(None),
        }
    }

    /// Checks `problem` ([`Problem::check`]) for `goal`: the capacity the goal fits (none for
    /// minimise and memories), or why the problem cannot be solved for it.
    pub(super) fn check(problem: &Problem, goal: Goal) -> Result<Option<u64>, SolveError> {
        let capacity = goal_capacity(goal)?;
        problem.check(None).map_err(SolveError::InvalidProblem)?;
        let with_memories = !problem.memories.is_empty();
        if with_memories != matches!(goal, Goal::Memories) && !matches!(goal, Goal::Spill(_)) {
            return Err(SolveError::InvalidProblem(RuleBreak {
                buffer: None,
                field: "memories",
                message: if with_memories {
                    "a problem with memories is solved for Goal::Memories (or Goal::Spill)".into()
                } else {
                    "Goal::Memories needs a problem with memories".into()
                },
                first_use: None,
            }));
        }
        Ok(capacity)
    }
}

/// The capacity `goal` fits (none for minimise and memories); an error for a spill into none.
fn goal_capacity(goal: Goal) -> Result<Option<u64>, SolveError> {
    match goal {
        Goal::Fit(c) => Ok(Some(c)),
        Goal::Minimize | Goal::Memories => Ok(None),
        Goal::Spill(0) => Err(SolveError::InvalidProblem(RuleBreak {
            buffer: None,
            field: "capacity",
            message: "capacity must be greater than 0".into(),
            first_use: None,
        })),
        Goal::Spill(c) => Ok(Some(c)),
    }
}
