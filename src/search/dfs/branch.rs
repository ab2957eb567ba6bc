//! Branching at a node: edge finding, then its candidates (filtered, narrowed by zero-slack
//! reasoning and cover branching, in the policy's order) tried one after the other.

use super::backjump::Landing;
use super::cover::Cover;
use super::node::Node;
use super::{Flow, Searcher};
use crate::search::edge_finding::EdgeFinder;
use crate::search::policy::Candidate;

impl Searcher<'_> {
    /// Edge finding at `node` (with its switch), then its candidates in the policy's order;
    /// what edge finding proved is taken back on the way up. `min_height` is the lowest end of
    /// the node's `unplaced` buffers.
    pub(super) fn branch(&mut self, node: &Node, min_height: u64, unplaced: usize) -> Flow {
        let mark = self.edge.as_ref().map(EdgeFinder::mark);
        let flow = match self.edge_finding(node) {
            Err(s) => {
                self.conflict_in_section(s);
                Flow::Failed
            }
            Ok(()) => self.branch_candidates(node, min_height, unplaced),
        };
        if let (Some(edge), Some(mark)) = (self.edge.as_mut(), mark) {
            edge.undo(mark);
        }
        flow
    }

    /// Edge finding at `node`, with its switch (`Ok` without it): `Err(section)` when a section
    /// cannot hold its unplaced buffers.
    fn edge_finding(&mut self, node: &Node) -> Result<(), usize> {
        let Some(edge) = self.edge.as_mut() else {
            return Ok(());
        };
        let canonical = (self.options.canonical).then_some((
            node.bound,
            node.bound_rank,
            self.ranks.as_slice(),
        ));
        let stop = self.limiter.deadline();
        edge.propagate(
            self.instance,
            self.state,
            node.buffers,
            node.sections.clone(),
            canonical,
            &|| stop.cancelled(),
        )
    }

    /// Tries the candidates of `node` in the policy's order.
    fn branch_candidates(&mut self, node: &Node, min_height: u64, unplaced: usize) -> Flow {
        let mut candidates = self.scratch.pool.pop().unwrap_or_default();
        self.collect_candidates(node, min_height, &mut candidates);
        let flow = match self.narrow_candidates(node, unplaced, &mut candidates) {
            Err(s) => {
                self.conflict_in_section(s);
                Flow::Failed
            }
            Ok(kept_rank) => self.try_in_turn(node, unplaced, &mut candidates, kept_rank),
        };
        self.scratch.pool.push(candidates);
        flow
    }

    /// The unplaced buffers of `node` that may be placed at their lowest offset now, sorted by
    /// offset then rank: the canonical order, dominance (below `min_height`, the lowest end of
    /// an unplaced buffer), edge finding's bounds and twin symmetry leave the others out.
    fn collect_candidates(&self, node: &Node, min_height: u64, candidates: &mut Vec<Candidate>) {
        candidates.clear();
        for &b in node.buffers {
            let b_idx = b as usize;
            if self.state.is_placed(b_idx) {
                continue;
            }
            let offset = self.state.min_offsets[b_idx];
            let rank = self.ranks[b_idx];
            if self.options.canonical
                && (offset < node.bound || (offset == node.bound && rank < node.bound_rank))
            {
                continue;
            }
            if self.options.dominance && offset >= min_height {
                continue;
            }
            if self.edge.as_ref().is_some_and(|e| offset < e.lowest(b_idx)) {
                continue; // edge finding proved it starts higher
            }
            if self.options.twins {
                let twin = self.instance.twin_before[b_idx];
                if twin != u32::MAX && !self.state.is_placed(twin as usize) {
                    // Twins are interchangeable: place them in index order.
                    continue;
                }
            }
            candidates.push(Candidate {
                buffer: b,
                offset,
                rank,
            });
        }
        candidates.sort_unstable_by_key(|c| (c.offset, c.rank));
    }

    /// Zero-slack reasoning over `candidates` (sorted by offset), the policy's order, then cover
    /// branching. `Err(section)` when a section's floor must be covered and cannot be (the node
    /// fails); otherwise the rank bound the placements keep below them: a forced cover or a
    /// cover branch was not chosen by rank, so the placements after it at the same offset keep
    /// the node's bound (a forced cover resets it); `None` for the candidates' own ranks.
    fn narrow_candidates(
        &mut self,
        node: &Node,
        unplaced: usize,
        candidates: &mut Vec<Candidate>,
    ) -> Result<Option<u32>, usize> {
        // Zero slack: a section whose floor must be covered but cannot be fails the node; one
        // that a single candidate can cover forces it.
        let mut forced = false;
        if self.options.zero_slack {
            match self.zero_slack_cover(candidates, node) {
                Cover::Open => {}
                Cover::Impossible(s) => return Err(s),
                Cover::Forced(i) => {
                    candidates.swap(0, i);
                    candidates.truncate(1);
                    forced = true;
                }
            }
        }
        let low = candidates.first().map_or(0, |c| c.offset);
        self.order(node.depth, unplaced, candidates);
        let covering = self.options.cover_branching
            && self.options.zero_slack
            && !forced
            && self.cover_branch(candidates, &node.sections, low);
        Ok(if forced {
            Some(0)
        } else if covering {
            Some(if low == node.bound {
                node.bound_rank
            } else {
                0
            })
        } else {
            None
        })
    }

    /// Tries `candidates` in turn until one finds a solution or the run must stop; a major
    /// backtrack that lands here re-orders the candidates left.
    fn try_in_turn(
        &mut self,
        node: &Node,
        unplaced: usize,
        candidates: &mut [Candidate],
        kept_rank: Option<u32>,
    ) -> Flow {
        let depth = node.depth;
        let watched = self.watch_decision(depth, unplaced, candidates);
        let mut flow = Flow::Failed;
        let mut next = 0;
        while next < candidates.len() {
            let c = candidates[next];
            let before = watched.then(|| self.counts());
            self.note_placement(node, unplaced, &c);
            let child = self.try_candidate(node, c, kept_rank);
            if let Some(before) = before {
                self.report_try(&c, before, child);
            }
            let reorder = match child {
                Flow::Failed => {
                    // The candidate is refuted; a pending major backtrack either lands here
                    // (re-order what is left) or goes on up.
                    next += 1;
                    match self.majors.land(depth) {
                        Landing::Nowhere => false,
                        Landing::Here => true,
                        Landing::Above(target) => {
                            flow = Flow::Unwind(target);
                            break;
                        }
                    }
                }
                // Interrupted, not refuted: re-order with it included.
                Flow::Unwind(target) if target >= depth => true,
                other => {
                    flow = other;
                    break;
                }
            };
            if reorder {
                let rest = &mut candidates[next..];
                rest.sort_unstable_by_key(|c| (c.offset, c.rank));
                self.order(depth, unplaced, rest);
            }
        }
        if watched {
            self.end_decision();
        }
        flow
    }
}
