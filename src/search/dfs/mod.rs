//! The depth-first search: choose a candidate, place it at its lowest feasible offset, propagate;
//! minor backtracks try the next candidate, major backtracks jump back to the placements behind
//! the last conflict and re-explore from there with the new priorities.
//!
//! Laid out as: this file (a run, its (sub)problems and the node loop: the node cache's check,
//! forced placements, a candidate's placement), `branch` (a node's candidates and their tries),
//! `cover` (zero-slack reasoning and cover branching), `decompose` (independent parts),
//! `node_cache`, `limits` (budget, deadline, clock), `conflict` (recording conflicts),
//! `backjump` (major backtracks), `culprit` (the learned risk of placements, which chooses where
//! they go), `watch` (the observer's reports) and `node` (a node's value).

mod backjump;
mod branch;
mod checkpoint;
mod conflict;
mod cover;
mod culprit;
mod decompose;
mod limits;
mod node;
mod node_cache;
mod watch;

pub use limits::{RunLimits, Stop};

use super::edge_finding::EdgeFinder;
use super::features::run_features;
use super::instance::Instance;
use super::judge::RunHooks;
use super::observer::RunObserver;
use super::options::SearchOptions;
use super::policy::{Candidate, NodePolicy, NodeView};
use super::state::State;
use super::stats::SearchStats;
use backjump::MajorBacktracks;
use checkpoint::{Checkpoints, Counters};
use culprit::Culprits;
use limits::Limiter;
use node::Node;
use node_cache::{node_key, NodeCache};
use std::collections::HashSet;
use std::ops::Range;

/// How a subtree ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// A solution was found (its offsets are in `State::solution`).
    Found,
    /// The subtree holds no solution.
    Failed,
    /// The run must stop.
    Stop(Stop),
    /// A major backtrack: unwind to the frame at this depth and re-explore it.
    Unwind(u32),
}

/// Reused buffers, so that nodes do not allocate.
#[derive(Default)]
struct Scratch {
    /// Candidate lists, one per open node.
    pool: Vec<Vec<Candidate>>,
    /// The unplaced buffers of the last failing section.
    involved: Vec<u32>,
    /// The floor-tiling sweep's reachable section boundaries.
    reach: Vec<bool>,
    /// With cover branching, per section of the node (from its first): how many buffers can
    /// cover its floor when it has no slack left (so it must be covered), `u32::MAX` otherwise.
    must_covers: Vec<u32>,
}

/// One run of the search with one policy.
pub struct Searcher<'a> {
    instance: &'a Instance,
    state: &'a mut State,
    options: &'a SearchOptions,
    policy: &'a mut dyn NodePolicy,
    /// Static rank of each buffer in its current (sub)problem.
    ranks: Vec<u32>,
    /// How many conflicts each buffer was involved in during this run: the one count that the
    /// policies, the features and the solve logs see. Kept only when someone reads it (an
    /// observer, or a policy that asks for it); empty otherwise.
    conflicts: Vec<u32>,
    /// Statistics of the run.
    pub stats: SearchStats,
    /// The run's limits, and when it next reads the clock.
    limiter: Limiter<'a>,
    majors: MajorBacktracks,
    scratch: Scratch,
    observer: Option<Box<dyn RunObserver>>,
    /// With the `node-cache` switch: the nodes refuted so far by this policy's runs.
    node_cache: NodeCache<'a>,
    /// With the `edge-finding` switch: the edge finder and its bounds.
    edge: Option<EdgeFinder>,
    /// The run's checkpoints (for the observer and the restart model).
    checkpoints: Checkpoints<'a>,
    /// With `learned-backjump` and a model that sets `backjump_risk`: each placement's
    /// estimated risk (major backtracks are then on).
    culprits: Option<Culprits<'a>>,
}

impl<'a> Searcher<'a> {
    /// A run over `state` (left as it was found when the run returns), watched by `observer`;
    /// `failed_nodes` holds the keys of the nodes the policy's earlier runs refuted.
    pub fn new(
        instance: &'a Instance,
        state: &'a mut State,
        options: &'a SearchOptions,
        policy: &'a mut dyn NodePolicy,
        (limits, learned): (RunLimits<'a>, RunHooks<'a>),
        observer: Option<Box<dyn RunObserver>>,
        failed_nodes: &'a mut HashSet<u128>,
    ) -> Searcher<'a> {
        let n = instance.sizes.len();
        let culprits = (learned.placement_risk).map(|judge| Culprits::new(judge, n));
        // The risk head reads the conflict counts too.
        let counted = observer.is_some() || policy.reads_conflicts() || culprits.is_some();
        let checkpoints = Checkpoints::new(
            instance.free.len(),
            limits.nodes,
            learned.run_judge,
            observer.is_some(),
        );
        let edge = options.edge_finding.then(|| EdgeFinder::new(instance));
        if let Some(edge) = &edge {
            state.track_free_members(instance, edge.maximal_sections());
        }
        Searcher {
            instance,
            state,
            options,
            policy,
            ranks: vec![0; n],
            conflicts: if counted { vec![0; n] } else { Vec::new() },
            stats: SearchStats::default(),
            limiter: Limiter::new(limits),
            majors: MajorBacktracks::new(instance.free.len()),
            scratch: Scratch::default(),
            observer,
            node_cache: NodeCache::new(failed_nodes),
            edge,
            checkpoints,
            culprits,
        }
    }

    /// The observer, with what it saw.
    pub fn take_observer(&mut self) -> Option<Box<dyn RunObserver>> {
        self.observer.take()
    }

    /// Solves every independent partition of the free buffers in turn.
    pub fn run(&mut self) -> Flow {
        let all = 0..self.state.floors.len();
        if self.options.section_inference
            && self
                .state
                .failing_section(self.instance, all.clone(), 0, true)
                .is_some()
        {
            return Flow::Failed;
        }
        for (buffers, sections) in self.partitions(&self.instance.free_u32(), all) {
            loop {
                let flow = self.sub_solve(buffers.clone(), sections.clone(), 0);
                self.majors.drop_request();
                match flow {
                    Flow::Found => break,
                    Flow::Unwind(_) => continue, // Re-explore the partition from its root.
                    other => return other,
                }
            }
        }
        Flow::Found
    }

    /// Solves one independent (sub)problem: ranks its buffers by the policy, then searches.
    fn sub_solve(&mut self, mut buffers: Vec<u32>, sections: Range<usize>, depth: u32) -> Flow {
        let place = (depth, buffers.len());
        let view = node_view(
            self.instance,
            self.state,
            &self.conflicts,
            &self.stats,
            place,
        );
        self.policy.preorder(&view, &mut buffers);
        let saved: Vec<u32> = buffers.iter().map(|&b| self.ranks[b as usize]).collect();
        for (rank, &b) in buffers.iter().enumerate() {
            self.ranks[b as usize] = rank as u32;
        }
        // The part's canonical order starts again at 0: what edge finding proved under the
        // order above it is forgotten while the part is searched.
        let edge_mark = self.edge.as_mut().map(|edge| {
            let mark = edge.mark();
            edge.forget(self.instance, self.state, &buffers);
            mark
        });
        let flow = self.search(&Node::root(&buffers, sections, depth));
        if let (Some(edge), Some(mark)) = (self.edge.as_mut(), edge_mark) {
            edge.undo(mark);
        }
        for (&b, &rank) in buffers.iter().zip(&saved) {
            self.ranks[b as usize] = rank;
        }
        flow
    }

    /// Counts a node; stops on the budget, the deadline or cancellation, or at a checkpoint
    /// where the restart model ends the run.
    #[inline]
    fn tick(&mut self) -> Option<Stop> {
        self.stats.nodes += 1;
        let placed = self.state.placed as u64;
        self.stats.deepest = self.stats.deepest.max(placed);
        if let Some(stop) = self.limiter.spend_node(self.stats.nodes) {
            return Some(stop);
        }
        if self.checkpoints.due(self.stats.nodes, placed) {
            return self.checkpoint();
        }
        None
    }

    /// A checkpoint at the current node: tells the observer the run's features and stops the
    /// run (as if its budget were spent) when its judge ends it.
    #[inline(never)]
    fn checkpoint(&mut self) -> Option<Stop> {
        let progress = self.checkpoints.progress(Counters {
            free: self.instance.free.len() as u64,
            nodes: self.stats.nodes,
            placed: self.state.placed as u64,
            failures: self.stats.minor_backtracks,
            cache_hits: self.stats.cache_hits,
        });
        let features = run_features(&progress);
        if let Some(observer) = self.observer.as_mut() {
            observer.on_checkpoint(&features);
        }
        if self
            .checkpoints
            .judge()
            .is_some_and(|judge| judge.ends(&features))
        {
            self.stats.doomed_runs += 1;
            return Some(Stop::Budget);
        }
        None
    }

    /// Counts a failure (a minor backtrack); with major backtracks, the failure budget may ask
    /// for one to the earliest placement behind the last conflict.
    fn after_failure(&mut self) {
        self.stats.minor_backtracks += 1;
        let major = self.options.major_backtrack || self.culprits.is_some();
        if major && self.majors.count_failure() {
            self.stats.major_backtracks += 1;
        }
    }

    /// The search below `node`: fails at once on a node the node cache holds, remembers the
    /// node if it fails.
    fn search(&mut self, node: &Node) -> Flow {
        if let Some(stop) = self.tick() {
            return Flow::Stop(stop);
        }
        let key = (self.options.node_cache).then(|| node_key(self.state, &self.ranks, node));
        if let Some(key) = key {
            if self.node_cache.refuted(key) {
                self.stats.cache_hits += 1;
                self.after_failure();
                return Flow::Failed;
            }
        }
        let flow = self.search_node(node);
        if flow == Flow::Failed {
            if let Some(key) = key {
                self.node_cache.remember(key);
            }
        }
        flow
    }

    /// The search below a node (after the node cache): places the buffers no unplaced buffer
    /// overlaps at once (undone on return), fails if a buffer no longer fits, else branches.
    fn search_node(&mut self, node: &Node) -> Flow {
        let instance = self.instance;
        let canonical = self.options.canonical;
        // Forced placements of buffers no unplaced buffer overlaps, undone on return.
        let mut forced: Vec<(usize, usize)> = Vec::new();
        let mut min_height = u64::MAX;
        let mut unplaced = 0usize;
        let mut verdict = None;
        for &b in node.buffers {
            let b = b as usize;
            if self.state.is_placed(b) {
                continue;
            }
            let offset = self.state.min_offsets[b];
            let Some(end) = offset
                .checked_add(instance.sizes[b])
                .filter(|&end| end <= instance.capacity)
            else {
                self.conflict_for_buffer(b);
                verdict = Some(Flow::Failed);
                break;
            };
            if self.options.forced_isolated && self.state.unplaced_neighbours[b] == 0 {
                if canonical && offset < node.bound {
                    // Its normal position lies below the canonical bound: no canonical,
                    // normalised solution extends this node.
                    verdict = Some(Flow::Failed);
                    break;
                }
                let mark = self.state.mark();
                self.state
                    .place(instance, b, offset, node.depth, self.options.unplaced_floor);
                if let Some(culprits) = self.culprits.as_mut() {
                    culprits.note_forced(b);
                }
                forced.push((b, mark));
                continue;
            }
            unplaced += 1;
            min_height = min_height.min(end);
        }
        let flow = match verdict {
            Some(flow) => flow,
            None if unplaced == 0 => Flow::Found,
            None => self.branch(node, min_height, unplaced),
        };
        for &(b, mark) in forced.iter().rev() {
            self.state.undo(instance, b, mark);
        }
        if flow == Flow::Failed {
            self.after_failure();
        }
        flow
    }

    /// Places candidate `c` below `node`, checks it and searches on; undoes it. With
    /// `kept_rank` (a zero-slack cover, forced or branched on), the placement was not a choice
    /// by rank, so the search below it keeps that rank bound at the same offset instead of the
    /// candidate's own. Inlined into its one caller, the loop over a node's candidates: it is on
    /// every node's path.
    #[inline(always)]
    fn try_candidate(&mut self, node: &Node, c: Candidate, kept_rank: Option<u32>) -> Flow {
        let child_rank = kept_rank.unwrap_or(c.rank);
        let instance = self.instance;
        let b = c.buffer as usize;
        let (canonical, inference) = (self.options.canonical, self.options.section_inference);
        // The raised canonical bound alone may already break a section: decide that before
        // paying for the placement.
        let early = if canonical && inference {
            self.state
                .bound_fails_before(instance, b, c.offset, node.sections.clone())
        } else {
            None
        };
        let failing = match early {
            Some(s) => Some(s),
            None => {
                let mark = self.state.mark();
                self.state.place(
                    instance,
                    b,
                    c.offset,
                    node.depth + 1,
                    self.options.unplaced_floor,
                );
                let bound = if canonical { c.offset } else { 0 };
                let failing = self.state.failing_section_after(
                    instance,
                    b,
                    node.sections.clone(),
                    bound,
                    inference,
                );
                let flow = match failing {
                    Some(_) => Flow::Failed,
                    None if self.options.decomposition => {
                        self.decompose(&node.child(c.offset, child_rank), b)
                    }
                    None => self.search(&node.child(c.offset, child_rank)),
                };
                self.state.undo(instance, b, mark);
                if failing.is_none() {
                    return flow;
                }
                failing
            }
        };
        let s = failing.expect("a failing section");
        self.conflict_in_section(s);
        self.after_failure();
        Flow::Failed
    }

    /// With `learned-backjump`: estimates the risk of placing `c` at `node` (of `unplaced`
    /// unplaced buffers) before it is tried.
    #[inline]
    fn note_placement(&mut self, node: &Node, unplaced: usize, c: &Candidate) {
        if let Some(culprits) = self.culprits.as_mut() {
            let view = node_view(
                self.instance,
                self.state,
                &self.conflicts,
                &self.stats,
                (node.depth, unplaced),
            );
            culprits.note_placement(&view, c);
        }
    }

    /// Puts a node's `candidates` in the policy's order.
    fn order(&mut self, depth: u32, unplaced: usize, candidates: &mut [Candidate]) {
        let place = (depth, unplaced);
        let view = node_view(
            self.instance,
            self.state,
            &self.conflicts,
            &self.stats,
            place,
        );
        self.policy.order_candidates(&view, candidates);
    }
}

/// The view of a node at `(depth, unplaced)` from the run's parts (a free function, so that a
/// caller can hold it while it borrows the policy).
fn node_view<'v>(
    instance: &'v Instance,
    state: &'v State,
    conflicts: &'v [u32],
    stats: &SearchStats,
    (depth, unplaced): (u32, usize),
) -> NodeView<'v> {
    NodeView {
        instance,
        state,
        depth,
        unplaced,
        conflicts,
        nodes: stats.nodes,
        failures: stats.minor_backtracks,
    }
}
