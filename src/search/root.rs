//! The root of a search, built outside the search: what a policy and a strategy ranker see before
//! the first placement. For testing and inspecting policies and features.

use super::instance::Instance;
use super::policy::{Candidate, NodeView};
use super::state::State;
use super::strategy::ProblemView;
use crate::problem::Problem;

/// The root of a search, built outside the search: the view a policy sees before the first
/// placement. For testing and inspecting policies and features.
///
/// ```
/// use telamalloc::{Buffer, Problem};
/// use telamalloc::search::RootNode;
/// let problem = Problem::new(vec![Buffer::new("a", 0, 2, 4), Buffer::new("b", 1, 3, 8)], None);
/// let root = RootNode::new(&problem, 16);
/// let view = root.view();
/// assert_eq!((view.unplaced(), view.largest_unplaced_total(0)), (2, 12));
/// ```
pub struct RootNode {
    instance: Instance,
    state: State,
    conflicts: Vec<u32>,
}

impl RootNode {
    /// The root of a search of `problem` (which must pass [`Problem::check`]) under `capacity`.
    pub fn new(problem: &Problem, capacity: u64) -> RootNode {
        let instance = Instance::new(problem, capacity);
        let state = State::new(&instance);
        RootNode {
            conflicts: vec![0; instance.sizes.len()],
            instance,
            state,
        }
    }

    /// The view of the root node.
    pub fn view(&self) -> NodeView<'_> {
        NodeView {
            instance: &self.instance,
            state: &self.state,
            depth: 0,
            unplaced: self.instance.free.len(),
            conflicts: &self.conflicts,
            nodes: 0,
            failures: 0,
        }
    }

    /// The candidates of the root as the search builds them before a policy orders them: each
    /// free buffer at its lowest feasible offset, sorted by (offset, buffer index as rank).
    pub fn candidates(&self) -> Vec<Candidate> {
        let mut candidates: Vec<Candidate> = self
            .instance
            .free
            .iter()
            .map(|&b| Candidate {
                buffer: b as u32,
                offset: self.state.min_offsets[b],
                rank: b as u32,
            })
            .collect();
        candidates.sort_unstable_by_key(|c| (c.offset, c.rank));
        candidates
    }

    /// The per-problem view of the problem (what a strategy ranker sees).
    pub fn problem_view(&self) -> ProblemView<'_> {
        ProblemView {
            instance: &self.instance,
        }
    }
}
