//! What minimise's phases share: the portfolios its searches run, the size above which no
//! probe searches the whole problem, and the answer they build.

use super::bound::BoundSource;
use super::phase::MinimizePhase;
use crate::problem::Solution;
use crate::search::{PortfolioConfig, SearchStats};

/// The most buffers the search probes the whole problem for when the improvement phase follows
/// (the search's model of 100,000 buffers took about 760 MiB; the windows are small); above it,
/// a fit with the search lowers first-fit's layout to the capacity instead.
pub(crate) const WHOLE_SEARCH_MOST: usize = 100_000;

/// The portfolios of minimise's searches, by what a search is for (the solver decides them).
pub(crate) struct Portfolios<'a> {
    /// The solve's own: the probe at LOAD, window-first's windows and the bound phase's.
    pub(crate) own: &'a dyn Fn(usize) -> PortfolioConfig,
    /// The searches that lower a layout already found: the probes above LOAD and the windows
    /// of the improvement phase.
    pub(crate) lowering: &'a dyn Fn(usize) -> PortfolioConfig,
}

impl Portfolios<'_> {
    /// The portfolio of a probe of the whole problem: its own at LOAD, the lowering one above.
    pub(super) fn probe(&self, at_load: bool) -> &dyn Fn(usize) -> PortfolioConfig {
        match at_load {
            true => self.own,
            false => self.lowering,
        }
    }
}

/// The result of [`minimize`](super::minimize).
pub(crate) struct Minimized {
    /// The best layout found (not yet validated).
    pub(crate) solution: Solution,
    /// The phase that found it.
    pub(crate) phase: MinimizePhase,
    /// A proven lower bound on any peak (LOAD, or higher when capacities were proven infeasible).
    pub(crate) lower_bound: u64,
    /// Where the lower bound comes from.
    pub(crate) bound_source: BoundSource,
    /// Counters, summed over every probe.
    pub(crate) stats: SearchStats,
}
