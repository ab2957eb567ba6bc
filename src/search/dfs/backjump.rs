//! Major backtracks (backjumping, with the `major-backtrack` switch): after a growing number of
//! failures, unwind to the earliest placement behind the last conflict and re-explore from there.

/// The major-backtrack budget: after `budget` failures, jump back to the earliest placement
/// behind the last conflict; the budget doubles each time, so every subtree is eventually
/// explored in full and the search stays complete.
pub(super) struct MajorBacktracks {
    /// Failures since the last major backtrack.
    failures_since: u64,
    /// Failures allowed before the next one.
    budget: u64,
    /// Depth of the earliest placement involved in the last conflict.
    last_conflict_depth: u32,
    /// A major backtrack asked for by the last failure, to the frame at this depth.
    unwind_request: Option<u32>,
}

/// Where a pending major backtrack goes, seen from a node whose candidate just failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Landing {
    /// None is pending: go on with the next candidate.
    Nowhere,
    /// It lands at this node: re-order the candidates left.
    Here,
    /// It goes on up, to the frame at this depth.
    Above(u32),
}

impl MajorBacktracks {
    /// The budget for a problem of `free` free buffers: half as many failures, at least 32.
    pub fn new(free: usize) -> MajorBacktracks {
        MajorBacktracks {
            failures_since: 0,
            budget: (free as u64 / 2).max(32),
            last_conflict_depth: 0,
            unwind_request: None,
        }
    }

    /// Notes the decision depth of the earliest placement behind the last conflict
    /// (`u32::MAX`, none placed: the root).
    #[inline]
    pub fn note_conflict(&mut self, earliest: u32) {
        self.last_conflict_depth = if earliest == u32::MAX { 0 } else { earliest };
    }

    /// Counts a failure; when the budget is spent, asks for a major backtrack to the last
    /// conflict and doubles the budget. Whether it asked.
    pub fn count_failure(&mut self) -> bool {
        self.failures_since += 1;
        if self.failures_since < self.budget {
            return false;
        }
        self.failures_since = 0;
        self.budget = self.budget.saturating_mul(2);
        self.unwind_request = Some(self.last_conflict_depth);
        true
    }

    /// Where the pending major backtrack goes from the node at `depth` whose candidate just
    /// failed; one that lands here is done.
    #[inline]
    pub fn land(&mut self, depth: u32) -> Landing {
        match self.unwind_request {
            None => Landing::Nowhere,
            Some(target) => {
                self.unwind_request = None;
                if target >= depth {
                    Landing::Here
                } else {
                    Landing::Above(target)
                }
            }
        }
    }

    /// Drops a pending major backtrack (the run re-explores from its root).
    pub fn drop_request(&mut self) {
        self.unwind_request = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_of_failures_doubles_after_each_major_backtrack() {
        let mut majors = MajorBacktracks::new(10); // A budget of 32 failures.
        let asked: Vec<u64> = (1..=200).filter(|_| majors.count_failure()).collect();
        assert_eq!(asked, [32, 32 + 64]);
        assert_eq!(MajorBacktracks::new(100).budget, 50);
        assert_eq!(MajorBacktracks::new(63).budget, 32);
    }

    #[test]
    fn a_major_backtrack_lands_at_the_earliest_placement_behind_the_last_conflict() {
        let mut majors = MajorBacktracks::new(0);
        majors.note_conflict(3);
        assert_eq!(majors.land(7), Landing::Nowhere);
        while !majors.count_failure() {}
        // From deeper nodes it goes on up, to depth 3, where it lands (once).
        assert_eq!(majors.land(7), Landing::Above(3));
        majors.unwind_request = Some(3);
        assert_eq!(majors.land(3), Landing::Here);
        assert_eq!(majors.land(3), Landing::Nowhere);
        // A conflict with no placement behind it goes back to the root.
        majors.note_conflict(u32::MAX);
        while !majors.count_failure() {}
        assert_eq!(majors.land(0), Landing::Here);
        majors.unwind_request = Some(1);
        majors.drop_request();
        assert_eq!(majors.land(5), Landing::Nowhere);
    }
}
