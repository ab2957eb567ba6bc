//! How the assignment search fits one memory (a closure over the single-capacity fit) and the
//! limits it shares across fits.

use super::slots::Slots;
use crate::outcome::Deadline;
use crate::problem::Problem;
use std::cell::Cell;

/// What fitting one memory's buffers gave.
#[derive(Clone, Debug)]
pub(crate) enum Fitted {
    /// Their offsets, in the order given.
    Fits(Vec<u64>),
    /// Proven not to fit.
    DoesNot,
    /// A limit came first, or no proof is possible (gaps).
    Unknown,
}

/// Fits a problem in a capacity (its buffers, the capacity, a node limit) with the
/// single-capacity fit, run by the caller: what it gave, and the search nodes it spent.
pub(crate) type FitOne<'a> = dyn Fn(&Problem, u64, Option<u64>) -> (Fitted, u64) + 'a;

/// What [`solve`] works with: the problem, its slots, the limits and the fit.
pub(super) struct Run<'a> {
    pub(super) problem: &'a Problem,
    pub(super) slots: &'a Slots,
    pub(super) deadline: &'a Deadline<'a>,
    pub(super) fit_one: &'a FitOne<'a>,
    /// Search nodes left (fits and the branch and bound together); `None`: no node limit.
    pub(super) nodes_left: Cell<Option<u64>>,
}

impl Run<'_> {
    /// Whether a limit has come: the deadline, the cancel flag, or the node limit.
    pub(super) fn stopped(&self) -> bool {
        self.nodes_left.get() == Some(0) || self.deadline.passed()
    }

    /// Takes `spent` nodes off the node limit.
    pub(super) fn spend(&self, spent: u64) {
        if let Some(left) = self.nodes_left.get() {
            self.nodes_left.set(Some(left.saturating_sub(spent)));
        }
    }

    /// The buffers `members` alone in a problem of `capacity` (their hints, memory lists and
    /// benefits dropped: a hint may lie outside this memory).
    pub(super) fn subproblem(&self, members: &[usize], capacity: u64) -> Problem {
        let buffers = members
            .iter()
            .map(|&i| {
                let mut b = self.problem.buffers[i].clone();
                b.hint = None;
                b.memories.clear();
                b.benefit = None;
                b
            })
            .collect();
        Problem::new(buffers, Some(capacity))
    }

    /// Fits `members` in `capacity` with the single-capacity fit, under `nodes` and the limits.
    pub(super) fn fit(&self, members: &[usize], capacity: u64, nodes: Option<u64>) -> Fitted {
        if members.is_empty() {
            return Fitted::Fits(Vec::new());
        }
        if self.stopped() {
            return Fitted::Unknown;
        }
        let sub = self.subproblem(members, capacity);
        if crate::analysis::load(&sub) > capacity {
            return Fitted::DoesNot;
        }
        let nodes = match (nodes, self.nodes_left.get()) {
            (Some(wanted), Some(left)) => Some(wanted.min(left)),
            (wanted, left) => wanted.or(left),
        };
        let (fitted, spent) = (self.fit_one)(&sub, capacity, nodes);
        self.spend(spent);
        fitted
    }
}
