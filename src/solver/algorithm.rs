//! Which allocator a [`Solver`](crate::Solver) runs: the search, a baseline, or CP-SAT.

use crate::baselines::Baseline;

/// Which allocator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// The hybrid search (the default).
    #[default]
    Search,
    /// A production heuristic (no search).
    Baseline(Baseline),
    /// CP-SAT, Google OR-tools' constraint solver, loaded at run time (see [`crate::cpsat`]).
    CpSat,
}

impl Algorithm {
    /// Every name [`Algorithm::from_name`] accepts: `search`, `cpsat`, then the baselines'.
    pub fn names() -> Vec<&'static str> {
        let mut names = vec!["search", "cpsat"];
        names.extend(Baseline::ALL.iter().map(|b| b.name()));
        names
    }

    /// The algorithm with this command-line name.
    pub fn from_name(name: &str) -> Option<Algorithm> {
        match name {
            "search" => return Some(Algorithm::Search),
            "cpsat" => return Some(Algorithm::CpSat),
            _ => {}
        }
        Baseline::from_name(name).map(Algorithm::Baseline)
    }

    /// The command-line name of the algorithm.
    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::Baseline(b) => b.name(),
            Algorithm::Search => "search",
            Algorithm::CpSat => "cpsat",
        }
    }
}
