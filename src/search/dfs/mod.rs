//! The depth-first search: choose a candidate, place it at its lowest feasible offset, propagate;
//! minor backtracks try the next candidate, major backtracks jump back to the placements behind
//! the last conflict and re-explore from there with the new priorities.

use super::edge_finding::EdgeFinder;
use super::instance::Instance;
use super::observer::{RunObserver, TryCounts, TryEnd};
use super::options::SearchOptions;
use super::policy::{Candidate, NodePolicy, NodeView};
use super::state::State;
use super::stats::SearchStats;
use crate::analysis::{cut_sections, group_by_part};
use crate::outcome::Deadline;
use std::collections::HashSet;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Why a run stopped before finishing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The run's node budget is spent (a restart may follow).
    Budget,
    /// The deadline passed or someone cancelled the search.
    Deadline,
    /// A run before this one in the same portfolio round has decided, so this one's answer
    /// cannot be used.
    Outranked,
}

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

/// The limits of one run: its node budget and what else may stop it.
pub struct RunLimits<'a> {
    /// Nodes this run may expand.
    pub nodes: u64,
    /// The deadline and the cancellation flag.
    pub stop: Deadline<'a>,
    /// The lowest index of a run that decided in this round, and this run's index: the run
    /// stops once a run before it has decided.
    pub outranked: Option<(&'a AtomicUsize, usize)>,
}

/// The major-backtrack budget: after `budget` failures, jump back to the earliest placement
/// behind the last conflict; the budget doubles each time.
struct MajorBacktracks {
    failures_since: u64,
    budget: u64,
    /// Depth of the earliest placement involved in the last conflict.
    last_conflict_depth: u32,
    /// A major backtrack asked for by the last failure, to the frame at this depth.
    unwind_request: Option<u32>,
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
    limits: RunLimits<'a>,
    /// When the run next reads the clock.
    clock: ClockStride,
    majors: MajorBacktracks,
    scratch: Scratch,
    observer: Option<Box<dyn RunObserver>>,
    /// With the `node-cache` switch: the keys of the nodes refuted so far by this policy's
    /// runs (kept across its restarts).
    failed_nodes: &'a mut HashSet<u128>,
    /// With the `edge-finding` switch: the edge finder and its bounds.
    edge: Option<EdgeFinder>,
}

/// How often a run reads the clock (for the deadline, and whether an earlier run of its round
/// has decided): every `mask + 1` nodes, a power of two that adapts to how long nodes take.
/// A node's time ranges from microseconds (small problems) to tens of milliseconds (200,000
/// buffers), so no fixed stride suits all: the stride halves while reads are more than
/// [`CLOCK_GAP`] apart and doubles, up to 256 nodes, while they are less than a quarter of it.
/// A deadline is then overshot by about `CLOCK_GAP` plus one node. Only when the run stops
/// depends on it, never what the run does.
struct ClockStride {
    mask: u64,
    last: Option<Instant>,
}

/// The longest a run should go between two reads of the clock.
const CLOCK_GAP: Duration = Duration::from_millis(2);

/// The longest stride: 256 nodes.
const CLOCK_MASK_MAX: u64 = 255;

impl ClockStride {
    /// Reads at every node at first; the stride grows from there.
    fn new() -> ClockStride {
        ClockStride {
            mask: 0,
            last: None,
        }
    }

    /// Whether the run reads the clock at its node number `nodes`.
    fn due(&self, nodes: u64) -> bool {
        nodes & self.mask == 0
    }

    /// Reads the clock and adapts the stride to the time since the last read. Out of line, as it
    /// runs once a stride: inlined into the node loop, it cost 3% more instructions on the hard
    /// set's K.
    #[inline(never)]
    fn read(&mut self) -> Instant {
        let now = Instant::now();
        if let Some(gap) = self.last.map(|last| now.saturating_duration_since(last)) {
            if gap > CLOCK_GAP {
                self.mask >>= 1;
            } else if gap < CLOCK_GAP / 4 && self.mask < CLOCK_MASK_MAX {
                self.mask = self.mask * 2 + 1;
            }
        }
        self.last = Some(now);
        now
    }
}

/// The most refuted nodes a policy's node cache holds (about 20 MB).
const NODE_CACHE_LIMIT: usize = 1_000_000;

/// A 128-bit mix (two rounds of a multiply-xorshift), for order-free node keys.
fn mix(x: u128) -> u128 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834);
    z = (z ^ (z >> 67)).wrapping_mul(0xbf58_476d_1ce4_e5b9_94d0_49bb_1331_11eb);
    z = (z ^ (z >> 59)).wrapping_mul(0x94d0_49bb_1331_11eb_bf58_476d_1ce4_e5b9);
    z ^ (z >> 71)
}

/// What zero-slack reasoning concluded at a node.
enum Cover {
    /// Branch over the candidates as usual.
    Open,
    /// This section's floor must be covered and cannot be: the node fails.
    Impossible(usize),
    /// Only the candidate at this index can cover a floor that must be covered.
    Forced(usize),
}

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

impl<'a> Searcher<'a> {
    /// A run over `state` (left as it was found when the run returns), watched by `observer`.
    pub fn new(
        instance: &'a Instance,
        state: &'a mut State,
        options: &'a SearchOptions,
        policy: &'a mut dyn NodePolicy,
        limits: RunLimits<'a>,
        observer: Option<Box<dyn RunObserver>>,
        failed_nodes: &'a mut HashSet<u128>,
    ) -> Searcher<'a> {
        let n = instance.sizes.len();
        let counted = observer.is_some() || policy.reads_conflicts();
        Searcher {
            instance,
            state,
            options,
            policy,
            ranks: vec![0; n],
            conflicts: if counted { vec![0; n] } else { Vec::new() },
            stats: SearchStats::default(),
            limits,
            clock: ClockStride::new(),
            majors: MajorBacktracks {
                failures_since: 0,
                budget: (instance.free.len() as u64).max(32),
                last_conflict_depth: 0,
                unwind_request: None,
            },
            scratch: Scratch::default(),
            observer,
            failed_nodes,
            edge: options.edge_finding.then(|| EdgeFinder::new(instance)),
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
                self.majors.unwind_request = None;
                match flow {
                    Flow::Found => break,
                    Flow::Unwind(_) => continue, // Re-explore the partition from its root.
                    other => return other,
                }
            }
        }
        Flow::Found
    }

    /// Splits `sections` at the boundaries no unplaced buffer crosses; returns the unplaced
    /// buffers and the section range of each part (parts without unplaced buffers omitted).
    fn partitions(&self, buffers: &[u32], sections: Range<usize>) -> Vec<(Vec<u32>, Range<usize>)> {
        let parts = cut_sections(sections, &self.state.spanning);
        let unplaced = buffers
            .iter()
            .filter(|&&b| !self.state.is_placed(b as usize))
            .map(|&b| (b, self.instance.sections[b as usize].start));
        let groups = group_by_part(&parts, unplaced);
        parts
            .into_iter()
            .zip(groups)
            .filter(|(_, g)| !g.is_empty())
            .map(|(p, g)| (g, p))
            .collect()
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
        let flow = self.search(&buffers, sections, 0, 0, depth);
        if let (Some(edge), Some(mark)) = (self.edge.as_mut(), edge_mark) {
            edge.undo(mark);
        }
        for (&b, &rank) in buffers.iter().zip(&saved) {
            self.ranks[b as usize] = rank;
        }
        flow
    }

    /// Counts a node; stops on the budget, the deadline or cancellation.
    fn tick(&mut self) -> Option<Stop> {
        self.stats.nodes += 1;
        self.stats.deepest = self.stats.deepest.max(self.state.placed as u64);
        let limits = &mut self.limits;
        if limits.nodes == 0 {
            return Some(Stop::Budget);
        }
        limits.nodes -= 1;
        // The flag at every node (one load): a stride of nodes can take long (256 nodes of a
        // 450-buffer packing took up to 100 ms), and Ctrl-C should not wait for the clock.
        if limits.stop.cancelled() {
            return Some(Stop::Deadline);
        }
        if self.clock.due(self.stats.nodes) {
            if limits
                .outranked
                .is_some_and(|(decided, me)| decided.load(Ordering::Relaxed) < me)
            {
                return Some(Stop::Outranked);
            }
            if let Some(at) = limits.stop.at {
                if self.clock.read() >= at {
                    return Some(Stop::Deadline);
                }
            }
        }
        None
    }

    /// Records a conflict in section `s`: the policy hears about its unplaced buffers, and the
    /// earliest placement behind it becomes the target of the next major backtrack.
    fn conflict_in_section(&mut self, s: usize) {
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
        self.majors.last_conflict_depth = if earliest == u32::MAX { 0 } else { earliest };
        self.policy.on_conflict(involved);
        if let Some(observer) = self.observer.as_mut() {
            observer.on_conflict(involved);
        }
    }

    /// Records a conflict for an unplaced buffer that no longer fits under the capacity.
    fn conflict_for_buffer(&mut self, b: usize) {
        let earliest = match self.instance.neighbours.get(b) {
            Some(list) => earliest_placed(self.state, list),
            None => earliest_placed_neighbour(self.instance, self.state, b),
        };
        self.majors.last_conflict_depth = if earliest == u32::MAX { 0 } else { earliest };
        self.policy.on_conflict(&[b as u32]);
    }

    /// Counts a failure (a minor backtrack); when the failure budget is spent, asks for a major
    /// backtrack to the earliest placement behind the last conflict. The budget doubles each
    /// time, so every subtree is eventually explored in full and the search stays complete.
    fn after_failure(&mut self) {
        self.stats.minor_backtracks += 1;
        if !self.options.major_backtrack {
            return;
        }
        let majors = &mut self.majors;
        majors.failures_since += 1;
        if majors.failures_since < majors.budget {
            return;
        }
        majors.failures_since = 0;
        majors.budget = majors.budget.saturating_mul(2);
        self.stats.major_backtracks += 1;
        majors.unwind_request = Some(majors.last_conflict_depth);
    }

    /// The search below a node at `depth`, whose last placement was at `bound` with `bound_rank`.
    fn search(
        &mut self,
        buffers: &[u32],
        sections: Range<usize>,
        bound: u64,
        bound_rank: u32,
        depth: u32,
    ) -> Flow {
        if let Some(stop) = self.tick() {
            return Flow::Stop(stop);
        }
        let key = self
            .options
            .node_cache
            .then(|| self.node_key(buffers, bound, bound_rank));
        if let Some(key) = key {
            if self.failed_nodes.contains(&key) {
                self.stats.cache_hits += 1;
                self.after_failure();
                return Flow::Failed;
            }
        }
        let flow = self.search_node(buffers, sections, bound, bound_rank, depth);
        if flow == Flow::Failed {
            if let Some(key) = key {
                if self.failed_nodes.len() >= NODE_CACHE_LIMIT {
                    // Full: start again, keeping the memory bounded and the newest keys.
                    self.failed_nodes.clear();
                }
                self.failed_nodes.insert(key);
            }
        }
        flow
    }

    /// The key of a node: its part's unplaced buffers with their lowest offsets and ranks, the
    /// canonical bound and the rank of the last placement. These decide the search below the
    /// node (placed buffers act only through the lowest offsets; the ranks, which a part's
    /// policy may change between visits, through the canonical order). A 128-bit hash of the
    /// unordered set: two different nodes share a key with probability about 2^-128 per pair.
    fn node_key(&self, buffers: &[u32], bound: u64, bound_rank: u32) -> u128 {
        let mut key = mix(u128::from(bound) | u128::from(bound_rank) << 64);
        for &b in buffers {
            let b = b as usize;
            if !self.state.is_placed(b) {
                let rank_and_buffer = u128::from(self.ranks[b]) << 32 | b as u128;
                key ^= mix(rank_and_buffer << 64 | u128::from(self.state.min_offsets[b]));
            }
        }
        key
    }

    /// The search below a node (after the node cache).
    fn search_node(
        &mut self,
        buffers: &[u32],
        sections: Range<usize>,
        bound: u64,
        bound_rank: u32,
        depth: u32,
    ) -> Flow {
        let instance = self.instance;
        let canonical = self.options.canonical;
        // Forced placements of buffers no unplaced buffer overlaps, undone on return.
        let mut forced: Vec<(usize, usize)> = Vec::new();
        let mut min_height = u64::MAX;
        let mut unplaced = 0usize;
        let mut verdict = None;
        for &b in buffers {
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
                if canonical && offset < bound {
                    // Its normal position lies below the canonical bound: no canonical,
                    // normalised solution extends this node.
                    verdict = Some(Flow::Failed);
                    break;
                }
                let mark = self.state.mark();
                self.state
                    .place(instance, b, offset, depth, self.options.unplaced_floor);
                forced.push((b, mark));
                continue;
            }
            unplaced += 1;
            min_height = min_height.min(end);
        }
        let flow = match verdict {
            Some(flow) => flow,
            None if unplaced == 0 => Flow::Found,
            None => self.branch(
                buffers, sections, bound, bound_rank, depth, min_height, unplaced,
            ),
        };
        for &(b, mark) in forced.iter().rev() {
            self.state.undo(instance, b, mark);
        }
        if flow == Flow::Failed {
            self.after_failure();
        }
        flow
    }

    /// Edge finding at a node (with its switch), then its candidates in the policy's order;
    /// what edge finding proved is taken back on the way up.
    #[allow(clippy::too_many_arguments)]
    fn branch(
        &mut self,
        buffers: &[u32],
        sections: Range<usize>,
        bound: u64,
        bound_rank: u32,
        depth: u32,
        min_height: u64,
        unplaced: usize,
    ) -> Flow {
        let mark = self.edge.as_ref().map(EdgeFinder::mark);
        let flow = match self.edge_finding(buffers, sections.clone(), bound, bound_rank) {
            Err(s) => {
                self.conflict_in_section(s);
                Flow::Failed
            }
            Ok(()) => self.branch_candidates(
                buffers, sections, bound, bound_rank, depth, min_height, unplaced,
            ),
        };
        if let (Some(edge), Some(mark)) = (self.edge.as_mut(), mark) {
            edge.undo(mark);
        }
        flow
    }

    /// Edge finding at a node, with its switch (`Ok` without it): `Err(section)` when a section
    /// cannot hold its unplaced buffers.
    fn edge_finding(
        &mut self,
        buffers: &[u32],
        sections: Range<usize>,
        bound: u64,
        bound_rank: u32,
    ) -> Result<(), usize> {
        let Some(edge) = self.edge.as_mut() else {
            return Ok(());
        };
        let canonical =
            self.options
                .canonical
                .then_some((bound, bound_rank, self.ranks.as_slice()));
        let stop = self.limits.stop;
        edge.propagate(
            self.instance,
            self.state,
            buffers,
            sections,
            canonical,
            &|| stop.cancelled(),
        )
    }

    /// Tries the candidates of a node in the policy's order.
    #[allow(clippy::too_many_arguments)]
    fn branch_candidates(
        &mut self,
        buffers: &[u32],
        sections: Range<usize>,
        bound: u64,
        bound_rank: u32,
        depth: u32,
        min_height: u64,
        unplaced: usize,
    ) -> Flow {
        let mut candidates = self.scratch.pool.pop().unwrap_or_default();
        candidates.clear();
        for &b in buffers {
            let b_idx = b as usize;
            if self.state.is_placed(b_idx) {
                continue;
            }
            let offset = self.state.min_offsets[b_idx];
            let rank = self.ranks[b_idx];
            if self.options.canonical && (offset < bound || (offset == bound && rank < bound_rank))
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
        // Zero slack: a section whose floor must be covered but cannot be fails the node; one
        // that a single candidate can cover forces it.
        let mut forced = false;
        if self.options.zero_slack {
            match self.zero_slack_cover(&candidates, &sections, (bound, bound_rank)) {
                Cover::Open => {}
                Cover::Impossible(s) => {
                    self.scratch.pool.push(candidates);
                    self.conflict_in_section(s);
                    return Flow::Failed;
                }
                Cover::Forced(i) => {
                    candidates.swap(0, i);
                    candidates.truncate(1);
                    forced = true;
                }
            }
        }
        let low = candidates.first().map_or(0, |c| c.offset);
        self.order(depth, unplaced, &mut candidates);
        let covering = self.options.cover_branching
            && self.options.zero_slack
            && !forced
            && self.cover_branch(&mut candidates, &sections, low);
        // The rank bound below a placement: a forced cover or a cover branch was not chosen by
        // rank, so the placements after it at the same offset keep the node's bound (a forced
        // cover resets it).
        let kept_rank = if forced {
            Some(0)
        } else if covering {
            Some(if low == bound { bound_rank } else { 0 })
        } else {
            None
        };
        let watched = self.watch_decision(depth, unplaced, &candidates);
        let mut flow = Flow::Failed;
        let mut next = 0;
        while next < candidates.len() {
            let c = candidates[next];
            let before = watched.then(|| self.counts());
            let child = self.try_candidate(buffers, sections.clone(), c, depth, kept_rank);
            if let Some(before) = before {
                self.report_try(&c, before, child);
            }
            let reorder = match child {
                Flow::Failed => {
                    // The candidate is refuted; a pending major backtrack either lands here
                    // (re-order what is left) or goes on up.
                    next += 1;
                    match self.majors.unwind_request {
                        Some(target) if target >= depth => {
                            self.majors.unwind_request = None;
                            true
                        }
                        Some(target) => {
                            self.majors.unwind_request = None;
                            flow = Flow::Unwind(target);
                            break;
                        }
                        None => false,
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
        self.scratch.pool.push(candidates);
        if watched {
            if let Some(observer) = self.observer.as_mut() {
                observer.on_decision_end();
            }
        }
        flow
    }

    /// Tells the observer about a decision node; whether it watches this one. A node with
    /// fewer than two candidates offers no choice and is not reported.
    fn watch_decision(&mut self, depth: u32, unplaced: usize, candidates: &[Candidate]) -> bool {
        let Some(observer) = self.observer.as_mut().filter(|_| candidates.len() >= 2) else {
            return false;
        };
        let place = (depth, unplaced);
        let view = node_view(
            self.instance,
            self.state,
            &self.conflicts,
            &self.stats,
            place,
        );
        observer.on_decision(&view, candidates)
    }

    /// The run's counters that a try's report measures.
    fn counts(&self) -> TryCounts {
        TryCounts {
            nodes: self.stats.nodes,
            failures: self.stats.minor_backtracks,
            majors: self.stats.major_backtracks,
        }
    }

    /// Reports how the try of `candidate` ended, with the work done since `before`.
    fn report_try(&mut self, candidate: &Candidate, before: TryCounts, child: Flow) {
        let now = self.counts();
        let counts = TryCounts {
            nodes: now.nodes - before.nodes,
            failures: now.failures - before.failures,
            majors: now.majors - before.majors,
        };
        let end = match child {
            Flow::Found => TryEnd::Found,
            Flow::Failed => TryEnd::Failed,
            Flow::Unwind(_) => TryEnd::Unwound,
            Flow::Stop(_) => TryEnd::Stopped,
        };
        if let Some(observer) = self.observer.as_mut() {
            observer.on_try(candidate, counts, end);
        }
    }

    /// Places candidate `c` below the node at `depth`, checks it and searches on; undoes it.
    /// With `kept_rank` (a zero-slack cover, forced or branched on), the placement was not a
    /// choice by rank, so the search below it keeps that rank bound at the same offset instead
    /// of the candidate's own.
    fn try_candidate(
        &mut self,
        buffers: &[u32],
        sections: Range<usize>,
        c: Candidate,
        depth: u32,
        kept_rank: Option<u32>,
    ) -> Flow {
        let child_rank = kept_rank.unwrap_or(c.rank);
        let instance = self.instance;
        let b = c.buffer as usize;
        let (canonical, inference) = (self.options.canonical, self.options.section_inference);
        // The raised canonical bound alone may already break a section: decide that before
        // paying for the placement.
        let early = if canonical && inference {
            self.state
                .bound_fails_before(instance, b, c.offset, sections.clone())
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
                    depth + 1,
                    self.options.unplaced_floor,
                );
                let bound = if canonical { c.offset } else { 0 };
                let failing = self.state.failing_section_after(
                    instance,
                    b,
                    sections.clone(),
                    bound,
                    inference,
                );
                let flow = match failing {
                    Some(_) => Flow::Failed,
                    None if self.options.decomposition => {
                        self.decompose(buffers, sections, b, c.offset, child_rank, depth)
                    }
                    None => self.search(buffers, sections, c.offset, child_rank, depth + 1),
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

    /// Zero-slack reasoning at a node whose candidates are `candidates` (sorted by offset), after
    /// a placement at `bound` with rank `bound_rank`. Every later placement is at or above the
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
    fn zero_slack_cover(
        &mut self,
        candidates: &[Candidate],
        sections: &Range<usize>,
        (bound, bound_rank): (u64, u32),
    ) -> Cover {
        let Some(low) = candidates.first().map(|c| c.offset) else {
            return Cover::Open;
        };
        let tiling = self.options.floor_tiling;
        let mut reach = std::mem::take(&mut self.scratch.reach);
        reach.clear();
        if tiling {
            reach.resize(sections.len() + 1, false);
            reach[0] = true;
        }
        let mut must_covers = std::mem::take(&mut self.scratch.must_covers);
        must_covers.clear();
        if self.options.cover_branching {
            must_covers.resize(sections.len(), u32::MAX);
        }
        let cover = self.cover_sections(
            candidates,
            sections,
            (bound, bound_rank),
            low,
            (&mut reach, &mut must_covers),
        );
        self.scratch.reach = reach;
        self.scratch.must_covers = must_covers;
        cover
    }

    /// The sweep of [`Searcher::zero_slack_cover`] over `sections` at offset `low`; `reach` is
    /// empty without floor tiling, `must_covers` (set for the sections without slack) without
    /// cover branching.
    fn cover_sections(
        &self,
        candidates: &[Candidate],
        sections: &Range<usize>,
        (bound, bound_rank): (u64, u32),
        low: u64,
        (reach, must_covers): (&mut [bool], &mut [u32]),
    ) -> Cover {
        let (instance, state) = (self.instance, &*self.state);
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
                        self.cover_starts(s, low, (bound, bound_rank), sections, reach);
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
            let (mut covers, mut only, mut next) = (0u32, usize::MAX, u64::MAX);
            for &u in &instance.members[s] {
                let u = u as usize;
                if state.is_placed(u) {
                    continue;
                }
                if self.covers(u, low, (bound, bound_rank)) {
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
    fn cover_branch(
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
    /// canonical order still allows it there after a placement at `bound` with `bound_rank`.
    #[inline]
    fn covers(&self, u: usize, low: u64, (bound, bound_rank): (u64, u32)) -> bool {
        self.state.min_offsets[u] == low
            && !(self.options.canonical && low == bound && self.ranks[u] < bound_rank)
    }

    /// Marks in `reach` the ends of the covers of `low` that start at section `s`.
    fn cover_starts(
        &self,
        s: usize,
        low: u64,
        bound: (u64, u32),
        sections: &Range<usize>,
        reach: &mut [bool],
    ) {
        for &u in &self.instance.members[s] {
            let u = u as usize;
            let span = &self.instance.sections[u];
            if span.start == s && !self.state.is_placed(u) && self.covers(u, low, bound) {
                reach[span.end.min(sections.end) - sections.start] = true;
            }
        }
    }

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

    /// After placing `b`: if the placement cut the timeline, solve the parts independently.
    fn decompose(
        &mut self,
        buffers: &[u32],
        sections: Range<usize>,
        b: usize,
        bound: u64,
        bound_rank: u32,
        depth: u32,
    ) -> Flow {
        let span = self.instance.sections[b].clone();
        let cut = (span.start..span.end - 1).any(|k| self.state.spanning[k] == 0);
        if !cut {
            return self.search(buffers, sections, bound, bound_rank, depth + 1);
        }
        self.stats.decompositions += 1;
        for (part, range) in self.partitions(buffers, sections) {
            match self.sub_solve(part, range, depth + 1) {
                Flow::Found => {}
                other => return other,
            }
        }
        Flow::Found
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
