//! The immutable search instance of a problem: buffers, sections, time-overlap lists, fixed obstacles.

use crate::analysis::Timeline;
use crate::outcome::Deadline;
use crate::problem::{align_up, for_each_overlap, separation, Buffer, Piece, Problem};
use std::ops::Range;

/// Everything the search needs to know about a problem that does not change while searching:
/// the problem's numbers for one capacity, with time cut into sections.
pub struct Instance {
    /// Capacity the search must fit.
    pub capacity: u64,
    /// Buffer sizes.
    pub sizes: Vec<u64>,
    /// Buffer alignments (powers of two).
    pub alignments: Vec<u64>,
    /// Buffer lifetimes `upper - lower`.
    pub lifetimes: Vec<u64>,
    /// Whether the caller set the buffer's offset (such buffers are obstacles, never searched;
    /// the problem files call them fixed buffers).
    pub preset: Vec<bool>,
    /// The offsets the caller set (0 for free buffers).
    pub preset_offsets: Vec<u64>,
    /// For each buffer, its range of sections.
    pub sections: Vec<Range<usize>>,
    /// For each section, the free buffers live in it.
    pub members: Vec<Vec<u32>>,
    /// For each free buffer, its free neighbours (the free buffers overlapping it in time; with
    /// gaps, those whose pieces meet its own), sorted, when the instance stores them: while they
    /// hold at most [`NEIGHBOUR_LISTS_PER_MEMBER`] times the entries of [`Instance::members`]
    /// and at most [`NEIGHBOUR_LISTS_MAX`] (with gaps, counting every free buffer overlapping
    /// in time). Empty otherwise (many buffers live at once, few sections): the search then
    /// reads the neighbours from [`Instance::neighbour_slices`] (with gaps, those whose pieces
    /// meet: see [`Instance::separation`]).
    pub neighbours: Vec<Vec<u32>>,
    /// The free buffers in order of the first section of their range (ties by index): with
    /// [`Instance::first_at`], the free buffers whose range starts in a run of sections form
    /// one slice. With [`Instance::members`] this lists every buffer's neighbours (see
    /// [`Instance::neighbour_slices`]) in memory linear in the input.
    pub by_start: Vec<u32>,
    /// For each section `s` (and one past the last), the position in [`Instance::by_start`] of
    /// the first free buffer whose range starts at `s` or later.
    pub first_at: Vec<u32>,
    /// For each free buffer, the union of the address ranges of the fixed buffers overlapping
    /// it in time, as disjoint ranges sorted by offset (overlapping or touching ones joined).
    pub obstacles: Vec<Vec<(u64, u64)>>,
    /// For each section, the address ranges of the fixed buffers live in it.
    pub section_obstacles: Vec<Vec<(u64, u64)>>,
    /// The sections that hold fixed buffers.
    pub obstacle_sections: Vec<u32>,
    /// Total free size per section at the start.
    pub totals: Vec<u64>,
    /// Free buffers crossing each boundary between section k and k + 1.
    pub spanning: Vec<u32>,
    /// Indices of the free buffers.
    pub free: Vec<usize>,
    /// Time-section boundaries, for features: section start times.
    pub section_starts: Vec<u64>,
    /// Section end times (exclusive).
    pub section_ends: Vec<u64>,
    /// The problem's largest `upper`.
    pub horizon: u64,
    /// For each free buffer, the free buffer of lower index just before it among its twins
    /// (same lifetime, size and alignment, and no gaps: interchangeable in any layout), or
    /// `u32::MAX`.
    pub twin_before: Vec<u32>,
    /// Only for a problem with gaps whose neighbour lists are stored (empty otherwise): for each
    /// free buffer `b`, parallel to `neighbours[b]`, the least distance a neighbour placed above
    /// `b` keeps from `b`'s offset (MiniMalloc's effective size, at least 1; see
    /// [`Instance::separation`]). Without gaps it would be `b`'s size, which the search reads
    /// instead.
    pub separations: Vec<Vec<u64>>,
    /// Only for a problem with gaps (empty otherwise): for each buffer with gaps and each section
    /// of its range, the bytes it occupies there (its size, a window's width, or 0 in a gap);
    /// empty for a buffer without gaps (its size throughout).
    pub widths: Vec<Vec<u64>>,
    /// Only for a problem with gaps (empty otherwise): the pieces of each buffer with gaps, in
    /// time order; `None` for a buffer without gaps (one piece: its whole range over its
    /// lifetime).
    pub pieces: Vec<Option<Box<[Piece]>>>,
    /// Only for a problem with gaps (empty otherwise): for each free buffer, how many of the
    /// free buffers overlapping it in time have no piece live at a common time with its own
    /// (they are not its neighbours).
    pub apart: Vec<u32>,
    /// Whether "the neighbour at the higher offset lies wholly above the other" (the search's
    /// model, with [`Instance::separations`]) loses no layout: true without windows. With
    /// windows two buffers can interleave (a piece of each above a piece of the other), which
    /// the search does not place, so its exhausted search proves nothing.
    pub exact: bool,
}

/// The twin lists of [`Instance::twin_before`]: each free buffer's previous twin by index.
fn twins(problem: &Problem) -> Vec<u32> {
    let mut last: std::collections::HashMap<(u64, u64, u64, u64), u32> =
        std::collections::HashMap::new();
    problem
        .buffers
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if b.offset.is_some() || !b.gaps.is_empty() {
                return u32::MAX;
            }
            let class = (b.lower, b.upper, b.size, b.alignment);
            last.insert(class, i as u32).unwrap_or(u32::MAX)
        })
        .collect()
}

/// For buffer `i`, the address range (relative to its offset) it occupies in each section of
/// its range: `(0, 0)` in a gap without a window.
fn occupied(problem: &Problem, timeline: &Timeline, i: usize) -> Vec<(u64, u64)> {
    let range = timeline.buffer_sections[i].clone();
    let mut out = vec![(0, 0); range.len()];
    for piece in problem.buffers[i].pieces() {
        // Sections are cut at every piece boundary: those starting inside the piece.
        let first =
            range.start + timeline.starts[range.clone()].partition_point(|&t| t < piece.lower);
        for s in first..range.end {
            if timeline.starts[s] >= piece.upper {
                break;
            }
            out[s - range.start] = (piece.low, piece.high);
        }
    }
    out
}

/// The address ranges free buffer `u` must avoid for fixed buffer `f` (see
/// [`crate::problem::Piece::shadow`]): `f`'s range when neither has gaps.
fn shadows(f: &Buffer, u: &Buffer, out: &mut Vec<(u64, u64)>) {
    let o = f.offset.unwrap_or(0);
    if f.gaps.is_empty() && u.gaps.is_empty() {
        out.push((o, o + f.size));
        return;
    }
    for_each_overlap(f, u, |p, q| out.push(p.shadow(o, &q, u.size)));
}

/// Whether, for two free buffers whose pieces meet in time, the only layouts are one wholly
/// above the other at distance at least 1 (the search's model): the offset differences their
/// piece pairs forbid form one run of integers with 0 inside it.
fn orders_exactly(a: &Buffer, b: &Buffer) -> bool {
    if a.gaps.iter().chain(&b.gaps).all(|g| g.window.is_none()) {
        return true; // Every piece spans the whole range: one forbidden run, (-b.size, a.size).
    }
    // `d = b.offset - a.offset` is forbidden in the open interval (p.low - q.high, p.high - q.low).
    let mut forbidden: Vec<(i128, i128)> = Vec::new();
    for_each_overlap(a, b, |p, q| {
        forbidden.push((
            p.low as i128 - q.high as i128,
            p.high as i128 - q.low as i128,
        ))
    });
    forbidden.sort_unstable();
    let Some(&(first, mut reach)) = forbidden.first() else {
        return true;
    };
    for &(low, high) in &forbidden[1..] {
        if low >= reach {
            return false; // The integer `reach` is allowed: a hole between two runs.
        }
        reach = reach.max(high);
    }
    first < 0 && reach > 0
}

/// Without gaps, the instance stores the neighbour lists (see [`Instance::neighbours`]) while
/// they hold at most this many times the entries of the members lists (and at most
/// [`NEIGHBOUR_LISTS_MAX`] entries): on ordinary problems (the hard set's hold 3.2 to 3.8
/// times as many), the search reads one sorted list per placement; where many buffers start at
/// the same time steps, the lists grow with the square of the buffers live at once (40 times
/// the members lists on 200,000 random buffers with about 10,000 live at once), and the search
/// reads the sections instead.
pub const NEIGHBOUR_LISTS_PER_MEMBER: usize = 8;

/// The most entries of stored neighbour lists (64 MiB): larger problems read the sections.
pub const NEIGHBOUR_LISTS_MAX: usize = 1 << 24;

/// One empty list per section with room for exactly the free buffers live in it (the largest
/// structure of the instance: growing the lists by doubling would hold up to twice as much).
fn members_allocated(problem: &Problem, timeline: &Timeline) -> Vec<Vec<u32>> {
    let mut delta = vec![0i64; timeline.len() + 1];
    for (i, b) in problem.buffers.iter().enumerate() {
        if b.offset.is_none() {
            let range = &timeline.buffer_sections[i];
            delta[range.start] += 1;
            delta[range.end] -= 1;
        }
    }
    let mut live = 0i64;
    delta[..timeline.len()]
        .iter()
        .map(|d| {
            live += d;
            Vec::with_capacity(live as usize)
        })
        .collect()
}

/// Checks the deadline every [`WORK_PER_CHECK`] units of work of a loop whose single steps are
/// too quick to read the clock at each (building the pairs of buffers of a large problem).
struct Watch<'a> {
    stop: &'a Deadline<'a>,
    work: u64,
}

/// Units of work (pairs of buffers looked at) between two looks at the clock: a few tens of
/// microseconds.
const WORK_PER_CHECK: u64 = 1 << 12;

impl<'a> Watch<'a> {
    fn new(stop: &'a Deadline<'a>) -> Watch<'a> {
        Watch { stop, work: 0 }
    }

    /// Counts `work` units; `None` once the deadline has passed (or the solve was cancelled).
    #[inline]
    fn spend(&mut self, work: u64) -> Option<()> {
        self.work += work;
        if self.work >= WORK_PER_CHECK {
            self.work = 0;
            if self.stop.passed() {
                return None;
            }
        }
        Some(())
    }
}

/// Drops from `active` the buffers that end at or before `time`.
fn expire(active: &mut Vec<usize>, problem: &Problem, time: u64) {
    active.retain(|&j| problem.buffers[j].upper > time);
}

/// The fixed obstacles of each free buffer (see [`Instance::obstacles`]), by a sweep over start
/// times: the free buffers against the fixed ones overlapping them in time. Each list of live
/// buffers is pruned only before it is read, so the sweep costs the pairs it finds (plus
/// `O(n log n)`): without fixed buffers, nothing. `None` once `watch`'s deadline has passed.
fn obstacles(problem: &Problem, watch: &mut Watch<'_>) -> Option<Vec<Vec<(u64, u64)>>> {
    let n = problem.buffers.len();
    let mut obstacles = vec![Vec::new(); n];
    if problem.buffers.iter().all(|b| b.offset.is_none()) {
        return Some(obstacles);
    }
    // Held buffers packed below a window touch, so their union stays a few ranges where the
    // pairs run to billions of bytes (a window of a million-buffer problem).
    let mut limits = vec![JOIN_AT; n];
    let add = |list: &mut Vec<(u64, u64)>, limit: &mut usize, f: &Buffer, u: &Buffer| {
        shadows(f, u, list);
        join_when_full(list, limit);
    };
    let mut by_start: Vec<usize> = (0..n).collect();
    by_start.sort_by_key(|&i| problem.buffers[i].lower);
    let (mut free, mut fixed): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
    for &i in &by_start {
        let b = &problem.buffers[i];
        if b.offset.is_some() {
            expire(&mut free, problem, b.lower);
            watch.spend(1 + free.len() as u64)?;
            for &j in &free {
                add(&mut obstacles[j], &mut limits[j], b, &problem.buffers[j]);
            }
            fixed.push(i);
            continue;
        }
        expire(&mut fixed, problem, b.lower);
        watch.spend(1 + fixed.len() as u64)?;
        for &j in &fixed {
            add(&mut obstacles[i], &mut limits[i], &problem.buffers[j], b);
        }
        free.push(i);
    }
    for list in &mut obstacles {
        join_ranges(list);
    }
    Some(obstacles)
}

/// The lowest offset at or above `base`, a multiple of `alignment`, where `size` bytes meet
/// none of `ranges` (sorted by their low ends); `u64::MAX` when there is none.
fn lowest_clear(ranges: &[(u64, u64)], base: u64, size: u64, alignment: u64) -> u64 {
    let mut offset = align_up(base, alignment).unwrap_or(u64::MAX);
    for &(low, high) in ranges {
        let Some(end) = offset.checked_add(size) else {
            return u64::MAX;
        };
        if high <= offset || end <= low {
            continue; // Obstacle entirely below or above the candidate range.
        }
        offset = align_up(high, alignment).unwrap_or(u64::MAX);
    }
    offset
}

/// The most entries the sections' member lists may hold for a search's instance
/// ([`Instance::within`]): 2^28, a gibibyte of `u32`s, and as much again in the search's
/// other tables. idealloc's Y_1 needs 193 million; 50,000 buffers each living through a third
/// of 50,000 steps would need 663 million, and the memory would grow with the time limit.
pub(crate) const MEMBER_ENTRIES_MOST: u64 = 1 << 28;

/// The entries of the sections' member lists: each free buffer once in every section of its
/// range.
pub(crate) fn member_entries(problem: &Problem, timeline: &Timeline) -> u64 {
    (0..problem.buffers.len())
        .filter(|&i| problem.buffers[i].offset.is_none())
        .map(|i| timeline.buffer_sections[i].len() as u64)
        .sum()
}

/// Length of a list of ranges before its first join by [`join_when_full`].
pub(crate) const JOIN_AT: usize = 64;

/// After ranges were added to `list`: joins it ([`join_ranges`]) once it has reached `limit`,
/// and sets the next limit to twice what the join left (at least [`JOIN_AT`]), so a list
/// built range by range stays within twice its union's length and each range is sorted
/// O(log) times.
pub(crate) fn join_when_full(list: &mut Vec<(u64, u64)>, limit: &mut usize) {
    if list.len() >= *limit {
        join_ranges(list);
        *limit = (2 * list.len()).max(JOIN_AT);
    }
}

/// Sorts `ranges` and joins those that overlap or touch. [`Instance::lowest_fit`] gives the
/// same offsets for the joined list: a range meeting the union meets one of its parts, and
/// passing two touching parts one after the other ends where passing their join does.
pub(crate) fn join_ranges(ranges: &mut Vec<(u64, u64)>) {
    ranges.sort_unstable();
    let mut kept = 0;
    for i in 0..ranges.len() {
        let (low, high) = ranges[i];
        if kept > 0 && low <= ranges[kept - 1].1 {
            ranges[kept - 1].1 = ranges[kept - 1].1.max(high);
        } else {
            ranges[kept] = (low, high);
            kept += 1;
        }
    }
    ranges.truncate(kept);
}

/// The free buffers ordered by the first section of their range (ties by index), and for each
/// section (and one past the last) where those starting there or later begin: a counting sort.
fn by_first_section(problem: &Problem, timeline: &Timeline) -> (Vec<u32>, Vec<u32>) {
    let mut first_at = vec![0u32; timeline.len() + 1];
    let free = || (0..problem.buffers.len()).filter(|&i| problem.buffers[i].offset.is_none());
    for i in free() {
        first_at[timeline.buffer_sections[i].start + 1] += 1;
    }
    for s in 1..first_at.len() {
        first_at[s] += first_at[s - 1];
    }
    let mut next = first_at.clone();
    let mut by_start = vec![0u32; first_at[timeline.len()] as usize];
    for i in free() {
        let slot = &mut next[timeline.buffer_sections[i].start];
        by_start[*slot as usize] = i as u32;
        *slot += 1;
    }
    (by_start, first_at)
}

impl Instance {
    /// Builds the instance of `problem` for `capacity`.
    pub fn new(problem: &Problem, capacity: u64) -> Instance {
        Instance::with_timeline(problem, &Timeline::new(problem), capacity)
    }

    /// [`Instance::new`] with the problem's timeline already built.
    pub fn with_timeline(problem: &Problem, timeline: &Timeline, capacity: u64) -> Instance {
        Instance::build(problem, timeline, capacity, &Deadline::none())
            .expect("no deadline to pass")
    }

    /// [`Instance::with_timeline`] by `stop`, for a search: `None` when the sections' member
    /// lists would hold more than [`MEMBER_ENTRIES_MOST`] entries, or once `stop` has passed
    /// (or the solve was cancelled) while they, the neighbour lists or the pairs of buffers are
    /// built (the fixed buffers against the free ones and, with gaps, the free buffers with
    /// gaps against those overlapping them in time), which on a large problem can take long:
    /// 2.2 s for idealloc's Y_1, 62,000 buffers, thousands of them live in each section.
    pub fn within(
        problem: &Problem,
        timeline: &Timeline,
        capacity: u64,
        stop: &Deadline<'_>,
    ) -> Option<Instance> {
        Instance::within_most(problem, timeline, capacity, (stop, MEMBER_ENTRIES_MOST))
    }

    /// [`Instance::within`] with at most `most` member entries.
    fn within_most(
        problem: &Problem,
        timeline: &Timeline,
        capacity: u64,
        (stop, most): (&Deadline<'_>, u64),
    ) -> Option<Instance> {
        if member_entries(problem, timeline) > most {
            return None;
        }
        Instance::build(problem, timeline, capacity, stop)
    }

    /// The instance, `None` once `stop` has passed while it is built.
    fn build(
        problem: &Problem,
        timeline: &Timeline,
        capacity: u64,
        stop: &Deadline<'_>,
    ) -> Option<Instance> {
        let n = problem.buffers.len();
        let mut watch = Watch::new(stop);
        let preset: Vec<bool> = problem.buffers.iter().map(|b| b.offset.is_some()).collect();
        let gapped = problem.has_gaps();
        let occupied = if gapped {
            occupied_by_gapped(problem, timeline)
        } else {
            Vec::new()
        };
        let SectionContents {
            members,
            section_obstacles,
            totals,
            spanning,
        } = section_contents(problem, timeline, &occupied, &mut watch)?;
        let obstacles = obstacles(problem, &mut watch)?;
        let (by_start, first_at) = by_first_section(problem, timeline);
        let obstacle_sections = (0..section_obstacles.len())
            .filter(|&s| !section_obstacles[s].is_empty())
            .map(|s| s as u32)
            .collect();
        let mut instance = Instance {
            capacity,
            obstacle_sections,
            sizes: problem.buffers.iter().map(|b| b.size).collect(),
            alignments: problem.buffers.iter().map(|b| b.alignment).collect(),
            lifetimes: problem.buffers.iter().map(|b| b.lifetime()).collect(),
            preset_offsets: problem
                .buffers
                .iter()
                .map(|b| b.offset.unwrap_or(0))
                .collect(),
            preset,
            sections: timeline.buffer_sections.clone(),
            members,
            neighbours: Vec::new(),
            by_start,
            first_at,
            obstacles,
            section_obstacles,
            totals,
            spanning,
            free: (0..n)
                .filter(|&i| problem.buffers[i].offset.is_none())
                .collect(),
            section_starts: timeline.starts.clone(),
            section_ends: timeline.ends.clone(),
            horizon: problem.horizon(),
            twin_before: twins(problem),
            separations: Vec::new(),
            widths: occupied
                .into_iter()
                .map(|w| w.into_iter().map(|(low, high)| high - low).collect())
                .collect(),
            pieces: if gapped {
                let pieces = |b: &Buffer| b.pieces().collect::<Vec<_>>().into_boxed_slice();
                (problem.buffers.iter())
                    .map(|b| (!b.gaps.is_empty()).then(|| pieces(b)))
                    .collect()
            } else {
                Vec::new()
            },
            apart: if gapped { vec![0; n] } else { Vec::new() },
            exact: true,
        };
        if gapped {
            instance.count_apart(problem, &mut watch)?;
        }
        if instance.neighbour_lists_fit() {
            if gapped {
                instance.store_gapped_neighbour_lists(&mut watch)?;
            } else {
                instance.store_neighbour_lists(&mut watch)?;
            }
        }
        Some(instance)
    }

    /// Whether the instance is of a problem with gaps (then the search reads the distances
    /// between neighbours from [`Instance::separations`] or [`Instance::separation`]).
    #[inline]
    pub fn has_gaps(&self) -> bool {
        !self.pieces.is_empty()
    }

    /// With gaps, for every pair of free buffers overlapping in time of which one has gaps:
    /// counts the pairs whose pieces never meet in [`Instance::apart`], and clears
    /// [`Instance::exact`] when a pair's windows can interleave. Costs those pairs (the buffers
    /// without gaps among themselves always meet and are always exact); `None` once `watch`'s
    /// deadline has passed.
    fn count_apart(&mut self, problem: &Problem, watch: &mut Watch<'_>) -> Option<()> {
        let mut apart = std::mem::take(&mut self.apart);
        let mut exact = true;
        for &g in &self.free {
            if self.pieces[g].is_none() {
                continue;
            }
            let (live, starting) = self.neighbour_slices(g);
            watch.spend(1 + (live.len() + starting.len()) as u64)?;
            for &u in live.iter().chain(starting) {
                let u = u as usize;
                // A pair of two buffers with gaps is counted once, from the lower index.
                if u == g || (u < g && self.pieces[u].is_some()) {
                    continue;
                }
                if self.separation(g, u).is_none() {
                    apart[g] += 1;
                    apart[u] += 1;
                } else if exact {
                    exact = orders_exactly(&problem.buffers[g], &problem.buffers[u]);
                }
            }
        }
        self.apart = apart;
        self.exact = exact;
        Some(())
    }

    /// Whether the neighbour lists hold at most [`NEIGHBOUR_LISTS_PER_MEMBER`] times the entries
    /// of the members lists and at most [`NEIGHBOUR_LISTS_MAX`] entries (with gaps, counting
    /// every free buffer overlapping in time, pieces meeting or not).
    fn neighbour_lists_fit(&self) -> bool {
        let entries: usize = self.free.iter().map(|&b| self.overlapping(b)).sum();
        let members: usize = self.members.iter().map(Vec::len).sum();
        entries <= NEIGHBOUR_LISTS_PER_MEMBER.saturating_mul(members)
            && entries <= NEIGHBOUR_LISTS_MAX
    }

    /// Without gaps, stores the neighbour lists; `None` once `watch`'s deadline has passed.
    fn store_neighbour_lists(&mut self, watch: &mut Watch<'_>) -> Option<()> {
        let mut lists = vec![Vec::new(); self.sizes.len()];
        for &b in &self.free {
            let (live, starting) = self.neighbour_slices(b);
            watch.spend(1 + (live.len() + starting.len()) as u64)?;
            let mut list = Vec::with_capacity(live.len() - 1 + starting.len());
            list.extend(live.iter().copied().filter(|&u| u as usize != b));
            list.extend_from_slice(starting);
            list.sort_unstable();
            lists[b] = list;
        }
        self.neighbours = lists;
        Some(())
    }

    /// With gaps, stores the neighbour lists and their separations; `None` once `watch`'s
    /// deadline has passed.
    fn store_gapped_neighbour_lists(&mut self, watch: &mut Watch<'_>) -> Option<()> {
        let n = self.sizes.len();
        let (mut lists, mut separations) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        let mut overlapping = Vec::new();
        for &b in &self.free {
            let (live, starting) = self.neighbour_slices(b);
            watch.spend(1 + (live.len() + starting.len()) as u64)?;
            overlapping.clear();
            overlapping.extend(live.iter().copied().filter(|&u| u as usize != b));
            overlapping.extend_from_slice(starting);
            overlapping.sort_unstable();
            let (list, distances): (Vec<u32>, Vec<u64>) = overlapping
                .iter()
                .filter_map(|&u| Some((u, self.separation(b, u as usize)?)))
                .unzip();
            lists[b] = list;
            separations[b] = distances;
        }
        self.neighbours = lists;
        self.separations = separations;
        Some(())
    }

    /// Drops the neighbour lists (and with gaps their separations), so that the search reads
    /// the neighbours from the sections (for tests: both ways must decide alike).
    #[cfg(test)]
    pub(crate) fn drop_neighbour_lists(&mut self) {
        self.neighbours = Vec::new();
        self.separations = Vec::new();
    }

    /// The bytes `buffer` occupies in section `s` (of its range): its size without gaps.
    #[inline]
    pub fn width(&self, buffer: usize, s: usize) -> u64 {
        match self.widths.get(buffer) {
            Some(list) if !list.is_empty() => list[s - self.sections[buffer].start],
            _ => self.sizes[buffer],
        }
    }

    /// The pieces of free `buffer` (see [`Instance::pieces`]).
    fn pieces_of(&self, buffer: usize) -> impl Iterator<Item = Piece> + '_ {
        let whole = match &self.pieces[buffer] {
            Some(_) => None,
            None => {
                let range = &self.sections[buffer];
                Some(Piece {
                    lower: self.section_starts[range.start],
                    upper: self.section_ends[range.end - 1],
                    low: 0,
                    high: self.sizes[buffer],
                })
            }
        };
        let own = self.pieces[buffer].as_deref().unwrap_or(&[]);
        own.iter().copied().chain(whole)
    }

    /// For two free buffers overlapping in time, `below` and `above`, with `above` placed higher:
    /// the least distance it keeps from `below`'s offset (MiniMalloc's effective size, at least
    /// 1; see [`crate::problem::separation`]), `below`'s size when neither has gaps. `None` when
    /// their pieces never meet in time (they are not neighbours).
    #[inline]
    pub fn separation(&self, below: usize, above: usize) -> Option<u64> {
        let gap_free = |b: usize| self.pieces.get(b).is_none_or(Option::is_none);
        if gap_free(below) && gap_free(above) {
            return Some(self.sizes[below]);
        }
        separation(self.pieces_of(below), self.pieces_of(above)).map(|d| d.max(1) as u64)
    }

    /// Without gaps, the free neighbours of free `buffer` as two slices: the free buffers live
    /// in its first section (`buffer` among them), and those whose range starts inside its own
    /// (a buffer overlaps `buffer` in time if and only if it is live when `buffer` starts or
    /// starts while `buffer` is live). Each neighbour appears once, and nothing is stored per
    /// pair of buffers.
    #[inline]
    pub fn neighbour_slices(&self, buffer: usize) -> (&[u32], &[u32]) {
        let range = &self.sections[buffer];
        let starting = self.first_at[range.start + 1] as usize..self.first_at[range.end] as usize;
        (&self.members[range.start], &self.by_start[starting])
    }

    /// How many free buffers overlap free `buffer` in time (see
    /// [`Instance::neighbour_slices`]).
    fn overlapping(&self, buffer: usize) -> usize {
        let range = &self.sections[buffer];
        let starting = self.first_at[range.end] - self.first_at[range.start + 1];
        self.members[range.start].len() - 1 + starting as usize
    }

    /// How many free neighbours free `buffer` has (see [`Instance::neighbours`]); 0 for a fixed
    /// buffer.
    pub fn degree(&self, buffer: usize) -> usize {
        if self.preset[buffer] {
            return 0;
        }
        if let Some(list) = self.neighbours.get(buffer) {
            return list.len();
        }
        let apart = self.apart.get(buffer).copied().unwrap_or(0);
        self.overlapping(buffer) - apart as usize
    }

    /// The bytes the instance holds on the heap (the vectors' capacities): without gaps and
    /// fixed buffers, linear in the buffers plus the sections times the buffers live in each
    /// (the members lists), never in the pairs of buffers live together.
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        fn flat<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        fn nested<T>(v: &Vec<Vec<T>>) -> usize {
            flat(v) + v.iter().map(flat).sum::<usize>()
        }
        flat(&self.sizes)
            + flat(&self.alignments)
            + flat(&self.lifetimes)
            + flat(&self.preset)
            + flat(&self.preset_offsets)
            + flat(&self.sections)
            + nested(&self.members)
            + nested(&self.neighbours)
            + flat(&self.by_start)
            + flat(&self.first_at)
            + nested(&self.obstacles)
            + nested(&self.section_obstacles)
            + flat(&self.obstacle_sections)
            + flat(&self.totals)
            + flat(&self.spanning)
            + flat(&self.free)
            + flat(&self.section_starts)
            + flat(&self.section_ends)
            + flat(&self.twin_before)
            + nested(&self.separations)
            + nested(&self.widths)
            + flat(&self.pieces)
            + (self.pieces.iter().flatten())
                .map(|p| std::mem::size_of_val::<[Piece]>(p))
                .sum::<usize>()
            + flat(&self.apart)
    }

    /// The free buffers as `u32` indices.
    pub fn free_u32(&self) -> Vec<u32> {
        self.free.iter().map(|&b| b as u32).collect()
    }

    /// The lowest aligned offset at or above `base` where `buffer` avoids its fixed obstacles.
    /// Saturates at `u64::MAX` (which never fits).
    pub fn lowest_fit(&self, buffer: usize, base: u64) -> u64 {
        let (size, alignment) = (self.sizes[buffer], self.alignments[buffer]);
        lowest_clear(&self.obstacles[buffer], base, size, alignment)
    }

    /// Bytes of the fixed obstacles of section `s` lying at or above `floor`.
    pub fn obstacle_bytes_above(&self, s: usize, floor: u64) -> u64 {
        self.section_obstacles[s]
            .iter()
            .map(|&(low, high)| high.saturating_sub(low.max(floor)))
            .sum()
    }
}

/// What the sections of a problem hold.
struct SectionContents {
    /// For each section, the free buffers live in it.
    members: Vec<Vec<u32>>,
    /// For each section, the address ranges the fixed buffers occupy in it.
    section_obstacles: Vec<Vec<(u64, u64)>>,
    /// For each section, the bytes the free buffers occupy in it.
    totals: Vec<u64>,
    /// For each boundary between two sections, how many free buffers live on both sides.
    spanning: Vec<u32>,
}

/// With gaps, what each buffer with gaps occupies in each section of its range (`low..high`
/// of its size); nothing for the others (their size throughout).
fn occupied_by_gapped(problem: &Problem, timeline: &Timeline) -> Vec<Vec<(u64, u64)>> {
    (0..problem.buffers.len())
        .map(|i| match problem.buffers[i].gaps.is_empty() {
            true => Vec::new(),
            false => occupied(problem, timeline, i),
        })
        .collect()
}

/// The sections' contents, with `occupied` as [`occupied_by_gapped`] gives it (empty without
/// gaps).
fn section_contents(
    problem: &Problem,
    timeline: &Timeline,
    occupied: &[Vec<(u64, u64)>],
    watch: &mut Watch<'_>,
) -> Option<SectionContents> {
    let mut members = members_allocated(problem, timeline);
    let mut section_obstacles = vec![Vec::new(); timeline.len()];
    let mut totals = vec![0u64; timeline.len()];
    let mut spanning = vec![0u32; timeline.len().saturating_sub(1)];
    for (i, b) in problem.buffers.iter().enumerate() {
        let range = timeline.buffer_sections[i].clone();
        watch.spend(1 + range.len() as u64)?;
        for s in range.clone() {
            let (low, high) = match occupied.get(i).filter(|w| !w.is_empty()) {
                Some(w) => w[s - range.start],
                None => (0, b.size),
            };
            match b.offset {
                Some(o) if high > low => section_obstacles[s].push((o + low, o + high)),
                Some(_) => {}
                None => {
                    members[s].push(i as u32);
                    totals[s] += high - low;
                }
            }
        }
        if b.offset.is_none() {
            for count in &mut spanning[range.start..range.end.saturating_sub(1)] {
                *count += 1;
            }
        }
    }
    Some(SectionContents {
        members,
        section_obstacles,
        totals,
        spanning,
    })
}

#[cfg(test)]
mod tests;
