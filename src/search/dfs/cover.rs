//! Zero-slack reasoning and cover branching: which sections must have their floor covered at
//! the lowest candidate offset, and which buffers can cover it.

use super::node::Node;
use super::Searcher;
use crate::search::policy::Candidate;
use std::ops::Range;

/// What zero-slack reasoning concluded at a node.
pub(super) enum Cover {
    /// Branch over the candidates as usual.
    Open,
    /// This section's floor must be covered and cannot be: the node fails.
    Impossible(usize),
    /// Only the candidate at this index can cover a floor that must be covered.
    Forced(usize),
}

impl Searcher<'_> {
    /// Zero-slack reasoning at `node`, whose candidates are `candidates` (sorted by offset), after
    /// a placement at its `bound` with its `bound_rank`. Every later placement is at or above the
    /// lowest candidate offset `low`, so each section of `sections` whose floor is at most `low`
    /// must fit its unplaced buffers into `[low, capacity)`; its slack is what is left over. Only
    /// a buffer whose lowest offset is `low` can ever start there (lowest offsets only rise, and
    /// past `low` once a neighbour is placed), and the canonical order rules out those of lower
    /// rank than the last placement at the bound: these are the covers of `low`. Leaving `low`
    /// uncovered wastes at least the distance to the section's next possible start, so when
    /// that exceeds the slack, a section without covers fails the node, and a section without
    /// slack and with one cover forces it, if it is a candidate now (its index is returned).
    ///
    /// With floor tiling, the covers are also taken together: the buffers placed at `low` are
    /// live at disjoint times, so some of them, side by side in time, must cover every section
    /// that must be covered. A sweep over the sections finds whether such a choice exists
    /// (`reach[i]`: the sections before the `i`-th can be dealt with by covers ending there).
    pub(super) fn zero_slack_cover(&mut self, candidates: &[Candidate], node: &Node) -> Cover {
        let Some(low) = candidates.first().map(|c| c.offset) else {
            return Cover::Open;
        };
        let tiling = self.options.floor_tiling;
        let mut reach = std::mem::take(&mut self.scratch.reach);
        reach.clear();
        if tiling {
            reach.resize(node.sections.len() + 1, false);
            reach[0] = true;
        }
        let mut must_covers = std::mem::take(&mut self.scratch.must_covers);
        must_covers.clear();
        if self.options.cover_branching {
            must_covers.resize(node.sections.len(), u32::MAX);
        }
        let cover = self.cover_sections(candidates, node, low, (&mut reach, &mut must_covers));
        self.scratch.reach = reach;
        self.scratch.must_covers = must_covers;
        cover
    }

    /// The sweep of [`Searcher::zero_slack_cover`] over the node's sections at offset `low`; `reach` is
    /// empty without floor tiling, `must_covers` (set for the sections without slack) without
    /// cover branching.
    fn cover_sections(
        &self,
        candidates: &[Candidate],
        node: &Node,
        low: u64,
        (reach, must_covers): (&mut [bool], &mut [u32]),
    ) -> Cover {
        let (instance, state) = (self.instance, &*self.state);
        let (sections, bound) = (&node.sections, node.bound);
        let first = sections.start;
        let mut cover = Cover::Open;
        // The last section the tiling sweep reached, for the conflict it reports.
        let mut reached = first;
        for s in sections.clone() {
            let here = !reach.is_empty() && reach[s - first];
            if here {
                reached = s;
            }
            let total = state.totals[s];
            let floor = state.floors[s].max(bound);
            if total == 0 || floor > low || !instance.section_obstacles[s].is_empty() {
                if here {
                    // Not reasoned about (fixed buffers) or nothing to cover: it may stay
                    // uncovered, and a cover may still start here.
                    reach[s + 1 - first] = true;
                    if total > 0 && floor <= low {
                        self.cover_starts(s, low, node, reach);
                    }
                }
                continue;
            }
            // Nothing goes below `low` any more: the room left above it.
            let Some(slack) = instance.capacity.checked_sub(low.saturating_add(total)) else {
                return Cover::Impossible(s);
            };
            // Covers of the floor: buffers at it that the canonical order still allows there.
            // Any other buffer of the section starts above it (a lowest offset below `low`
            // jumps past it once a neighbour is placed), the nearest at `next`.
            // In any order (`only` counts when it is the only cover): the state's list of the
            // section's unplaced buffers where it keeps one.
            let (mut covers, mut only, mut next) = (0u32, usize::MAX, u64::MAX);
            let members = &instance.members[s];
            let unplaced = state.free_members(s);
            for &u in unplaced.unwrap_or(members) {
                let u = u as usize;
                if unplaced.is_none() && state.is_placed(u) {
                    continue;
                }
                if self.covers(u, low, node) {
                    covers += 1;
                    only = u;
                    let span = &instance.sections[u];
                    if here && span.start == s {
                        reach[span.end.min(sections.end) - first] = true;
                    }
                } else {
                    next = next.min(state.min_offsets[u].max(low + 1));
                }
            }
            // Leaving the floor uncovered wastes at least `next - low` bytes, and at least one
            // if a cover goes higher: the tiling must cover exactly the sections without slack.
            let must_cover = next.saturating_sub(low) > slack;
            if here && slack > 0 {
                reach[s + 1 - first] = true;
            }
            if !must_cover {
                continue;
            }
            if covers == 0 {
                return Cover::Impossible(s);
            }
            if covers == 1 && slack == 0 && matches!(cover, Cover::Open) {
                if let Some(i) = candidates.iter().position(|c| c.buffer as usize == only) {
                    cover = Cover::Forced(i);
                }
            }
            // A point of a section with slack may stay uncovered when a cover goes higher
            // instead (`next` counts only the other buffers): only a section without slack
            // must have a cover at `low` in every packing below the node.
            if slack == 0 {
                if let Some(count) = must_covers.get_mut(s - first) {
                    *count = covers;
                }
            }
        }
        if reach.last() == Some(&false) {
            return Cover::Impossible(reached);
        }
        cover
    }

    /// Cover branching at a node whose candidates are in the policy's order, after zero-slack
    /// reasoning found which sections have no slack left above `low`: when the first candidate
    /// starts at `low` and covers such a section, exactly one buffer of every packing below the node
    /// covers that section's floor, so the node branches over those covers alone (of its
    /// sections, the one with the fewest). The first choice stays the policy's; its
    /// alternatives are only the buffers that could take its place at that point. Returns
    /// whether the node branches on the point (its candidates may all cover it already).
    pub(super) fn cover_branch(
        &mut self,
        candidates: &mut Vec<Candidate>,
        sections: &Range<usize>,
        low: u64,
    ) -> bool {
        let Some(first) = candidates.first().filter(|c| c.offset == low) else {
            return false;
        };
        let span = &self.instance.sections[first.buffer as usize];
        let from = span.start.max(sections.start);
        let to = span.end.min(sections.end);
        let counts = &self.scratch.must_covers;
        let Some(point) = (from..to)
            .filter(|&s| counts[s - sections.start] != u32::MAX)
            .min_by_key(|&s| counts[s - sections.start])
        else {
            return false;
        };
        let instance = self.instance;
        let before = candidates.len();
        candidates
            .retain(|c| c.offset == low && instance.sections[c.buffer as usize].contains(&point));
        if candidates.len() < before {
            self.stats.cover_branches += 1;
        }
        true
    }

    /// Whether unplaced buffer `u` can cover offset `low`: its lowest offset is `low` and the
    /// canonical order still allows it there after the placement before `node`.
    #[inline]
    fn covers(&self, u: usize, low: u64, node: &Node) -> bool {
        self.state.min_offsets[u] == low
            && !(self.options.canonical && low == node.bound && self.ranks[u] < node.bound_rank)
    }

    /// Marks in `reach` the ends of the covers of `low` that start at section `s`.
    fn cover_starts(&self, s: usize, low: u64, node: &Node, reach: &mut [bool]) {
        let sections = &node.sections;
        for &u in &self.instance.members[s] {
            let u = u as usize;
            let span = &self.instance.sections[u];
            if span.start == s && !self.state.is_placed(u) && self.covers(u, low, node) {
                reach[span.end.min(sections.end) - sections.start] = true;
            }
        }
    }
}
