//! A member of the portfolio that the search does not run itself: another solver (the front door
//! supplies CP-SAT with `--with cpsat`) that gets node budgets at its share of the search's work
//! and says whether it found a layout, proved there is none, or did not decide.
//!
//! The search knows nothing about what runs behind this seam: it grants the member its budgets
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

/// One more member of the portfolio rounds, before or after the node policies.
///
/// The member cannot be paused, so each run starts from scratch, with budgets that double (the
/// geometric schedule: twice the problem's free buffers, then four times, ...), which bounds its
/// repeated work by a factor of two. It runs in a round when its runs so far, with the next one,
/// stay within its [share](ExternalMember::share) of the node budgets the round's policies have
/// been given so far (their own schedules are untouched). To keep the search's answer the same
/// run to run and with any thread count, a run should depend only on its budget (not on the wall
/// clock), and stop soon after `stop()` turns true.
pub trait ExternalMember: Sync {
    /// Its name: the stats' `policy` when it decides, and the run's name in a solve log.
    fn name(&self) -> &str;

    /// Its share of the search's work, in policies: beside policies of total weight `W` (all 1:
    /// one per policy), its runs together are granted at most `share / W` times the node
    /// budgets given to the policies so far; 0: it never runs. Under a node limit a run's budget
    /// is granted from what the limit has left, like a policy's, and counted as spent in full
    /// when the member runs to it.
    fn share(&self) -> f64;

    /// The fixed cost of one run, in node equivalents, beyond its budget (building and
    /// presolving a model, say): counted against the member's share, so that small budgets do
    /// not run it more often than its share of the work allows. 0 unless a member says so.
    fn overhead(&self) -> u64 {
        0
    }

    /// Whether it runs before the policies of a round it runs in (else after them).
    /// Sequentially, the first run of a round that decides ends the search; on threads, the
    /// lowest index that decides is the answer, so the place also settles ties.
    fn runs_first(&self) -> bool;

    /// One run within `budget` node equivalents, until `stop()` turns true.
    fn run(&self, budget: u64, stop: &(dyn Fn() -> bool + Sync)) -> MemberEnd;
}
