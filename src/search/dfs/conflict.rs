//! Recording a conflict: the policy and the observer hear of the buffers involved, and the
//! earliest placement behind it becomes the target of the next major backtrack.

use super::Searcher;
use crate::search::instance::Instance;
use crate::search::state::State;

/// The lowest decision depth among the placed buffers of `buffers` (`u32::MAX` if none).
fn earliest_placed(state: &State, buffers: &[u32]) -> u32 {
    let mut earliest = u32::MAX;
    for &u in buffers {
        if state.is_placed(u as usize) {
            earliest = earliest.min(state.levels[u as usize]);
        }
    }
    earliest
}

/// [`earliest_placed`] over the neighbours of `b` when the instance stores no neighbour lists
/// (kept out of line: the search's hot code reads the lists).
#[inline(never)]
fn earliest_placed_neighbour(instance: &Instance, state: &State, b: usize) -> u32 {
    // `live` holds `b` itself, which is unplaced: `earliest_placed` passes it by.
    let (live, starting) = instance.neighbour_slices(b);
    if instance.has_gaps() {
        // Only the buffers whose pieces meet `b`'s are its neighbours.
        return (live.iter().chain(starting))
            .filter(|&&u| state.is_placed(u as usize))
            .filter(|&&u| instance.separation(b, u as usize).is_some())
            .map(|&u| state.levels[u as usize])
            .fold(u32::MAX, u32::min);
    }
    earliest_placed(state, live).min(earliest_placed(state, starting))
}

impl Searcher<'_> {
    /// Records a conflict in section `s`: the policy hears about its unplaced buffers, and the
    /// earliest placement behind it becomes the target of the next major backtrack.
    pub(super) fn conflict_in_section(&mut self, s: usize) {
        let involved = &mut self.scratch.involved;
        involved.clear();
        let mut earliest = u32::MAX;
        for &b in &self.instance.members[s] {
            let b_idx = b as usize;
            if self.state.is_placed(b_idx) {
                earliest = earliest.min(self.state.levels[b_idx]);
            } else {
                involved.push(b);
            }
        }
        if !self.conflicts.is_empty() {
            for &b in involved.iter() {
                self.conflicts[b as usize] += 1;
            }
        }
        if let Some(culprits) = self.culprits.as_ref() {
            let members = self.instance.members[s].iter().copied();
            earliest = culprits.culprit(self.state, members);
        }
        self.majors.note_conflict(earliest);
        self.policy.on_conflict(involved);
        if let Some(observer) = self.observer.as_mut() {
            observer.on_conflict(involved);
        }
    }

    /// Records a conflict for an unplaced buffer that no longer fits under the capacity.
    pub(super) fn conflict_for_buffer(&mut self, b: usize) {
        let earliest = match (self.instance.neighbours.get(b), self.culprits.as_ref()) {
            (Some(list), Some(culprits)) => culprits.culprit(self.state, list.iter().copied()),
            (Some(list), None) => earliest_placed(self.state, list),
            (None, _) => earliest_placed_neighbour(self.instance, self.state, b),
        };
        self.majors.note_conflict(earliest);
        self.policy.on_conflict(&[b as u32]);
    }
}
