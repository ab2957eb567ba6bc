//! A member of every portfolio round that the search does not run itself: another solver (the
//! front door supplies CP-SAT with `--with cpsat`) that gets a node budget each round, like a
//! policy, and says whether it found a layout, proved there is none, or did not decide.
//!
//! The search knows nothing about what runs behind this seam: it grants the member its budget
//! (counted against a node limit like a policy's), hands it a stop check (the deadline, the
//! cancel flag, and, on threads, an earlier run of the round that decided), and keeps the
//! lowest-index-decisive rule, so a member that answers the same for the same budget keeps the
//! search's answer independent of the thread count.

use crate::outcome::Infeasibility;

/// How one run of an [`ExternalMember`] ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemberEnd {
    /// Offsets of every buffer, in problem order (validated by the front door like any answer).
    Found(Vec<u64>),
    /// Proven: no layout fits the capacity.
    Infeasible(Infeasibility),
    /// Neither, within the budget or before the stop check fired (the search tells which).
    Undecided,
}

/// One more member of every portfolio round, before or after the node policies.
///
/// A round's budget grows geometrically; the member runs once per round from scratch with
/// [`ExternalMember::budget`] of it. To keep the search's answer the same run to run and with
/// any thread count, a run should depend only on its budget (not on the wall clock), and stop
/// soon after `stop()` turns true.
pub trait ExternalMember: Sync {
    /// Its name: the stats' `policy` when it decides, and the run's name in a solve log.
    fn name(&self) -> &str;

    /// Its budget, in node equivalents, in a round that gives each policy `nodes`. Under a node
    /// limit it is granted from what the limit has left, like a policy's, and counted as spent
    /// in full when the member runs to it.
    fn budget(&self, nodes: u64) -> u64;

    /// Whether it runs before the policies in each round (else after them). Sequentially, the
    /// first run of a round that decides ends the search; on threads, the lowest index that
    /// decides is the answer, so the place also settles ties.
    fn runs_first(&self) -> bool;

    /// One run within `budget` node equivalents, until `stop()` turns true.
    fn run(&self, budget: u64, stop: &(dyn Fn() -> bool + Sync)) -> MemberEnd;
}
