//! The immutable search instance of a problem: buffers, sections, time-overlap lists, fixed obstacles.

use crate::analysis::Timeline;
use crate::problem::{align_up, for_each_overlap, separation, Buffer, Problem};
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
    /// gaps, those whose pieces meet its own), sorted, when the instance stores them: always
    /// with gaps, and otherwise while they hold at most [`NEIGHBOUR_LISTS_PER_MEMBER`] times the
    /// entries of [`Instance::members`] and at most [`NEIGHBOUR_LISTS_MAX`]. Empty otherwise (many buffers live at once, few
    /// sections): the search then reads the neighbours from [`Instance::neighbour_slices`].
    pub neighbours: Vec<Vec<u32>>,
    /// The free buffers in order of the first section of their range (ties by index): with
    /// [`Instance::first_at`], the free buffers whose range starts in a run of sections form
    /// one slice. With [`Instance::members`] this lists every buffer's neighbours (see
    /// [`Instance::neighbour_slices`]) in memory linear in the input.
    pub by_start: Vec<u32>,
    /// For each section `s` (and one past the last), the position in [`Instance::by_start`] of
    /// the first free buffer whose range starts at `s` or later.
    pub first_at: Vec<u32>,
    /// For each free buffer, the address ranges of the fixed buffers overlapping it in time,
    /// sorted by offset.
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
    /// Only for a problem with gaps (empty otherwise): for each free buffer `b`, parallel to
    /// `neighbours[b]`, the least distance a neighbour placed above `b` keeps from `b`'s offset
    /// (MiniMalloc's effective size, at least 1; see [`separation`]). Without gaps it would be
    /// `b`'s size, which the search reads instead.
    pub separations: Vec<Vec<u64>>,
    /// Only for a problem with gaps (empty otherwise): for each buffer and each section of its
    /// range, the bytes it occupies there (its size, a window's width, or 0 in a gap).
    pub widths: Vec<Vec<u64>>,
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

/// What the sweep over start times finds: the fixed obstacles of each free buffer and, with
/// gaps, the neighbour lists (see [`Instance::obstacles`] and [`Instance::separations`]).
struct Pairs {
    obstacles: Vec<Vec<(u64, u64)>>,
    separations: Vec<Vec<(u32, u64)>>,
    exact: bool,
}

/// Drops from `active` the buffers that end at or before `time`.
fn expire(active: &mut Vec<usize>, problem: &Problem, time: u64) {
    active.retain(|&j| problem.buffers[j].upper > time);
}

/// The time-overlapping pairs the search stores, by a sweep over start times: free buffers
/// against fixed ones (obstacles) and, only with gaps, free buffers against each other. Each
/// list of live buffers is pruned only before it is read, so the sweep costs the pairs it finds
/// (plus `O(n log n)`): without gaps and fixed buffers, nothing.
fn time_pairs(problem: &Problem) -> Pairs {
    let n = problem.buffers.len();
    let gapped = problem.has_gaps();
    let any_fixed = problem.buffers.iter().any(|b| b.offset.is_some());
    let mut pairs = Pairs {
        obstacles: vec![Vec::new(); n],
        separations: if gapped {
            vec![Vec::new(); n]
        } else {
            Vec::new()
        },
        exact: true,
    };
    if !gapped && !any_fixed {
        return pairs;
    }
    let mut by_start: Vec<usize> = (0..n).collect();
    by_start.sort_by_key(|&i| problem.buffers[i].lower);
    let (mut free, mut fixed): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
    for &i in &by_start {
        let b = &problem.buffers[i];
        if b.offset.is_some() {
            expire(&mut free, problem, b.lower);
            for &j in &free {
                shadows(b, &problem.buffers[j], &mut pairs.obstacles[j]);
            }
            fixed.push(i);
            continue;
        }
        expire(&mut fixed, problem, b.lower);
        for &j in &fixed {
            shadows(&problem.buffers[j], b, &mut pairs.obstacles[i]);
        }
        if gapped {
            expire(&mut free, problem, b.lower);
            for &j in &free {
                let buffers = &problem.buffers;
                let (Some(up), Some(down)) = (
                    separation(&buffers[i], &buffers[j]),
                    separation(&buffers[j], &buffers[i]),
                ) else {
                    continue; // Their pieces never meet in time: not neighbours.
                };
                pairs.exact &= orders_exactly(&buffers[i], &buffers[j]);
                pairs.separations[i].push((j as u32, up.max(1) as u64));
                pairs.separations[j].push((i as u32, down.max(1) as u64));
            }
        }
        free.push(i);
    }
    for list in &mut pairs.separations {
        list.sort_unstable_by_key(|&(j, _)| j);
    }
    for list in &mut pairs.obstacles {
        list.sort_unstable();
    }
    pairs
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
        let n = problem.buffers.len();
        let preset: Vec<bool> = problem.buffers.iter().map(|b| b.offset.is_some()).collect();
        let mut members = members_allocated(problem, timeline);
        let mut section_obstacles = vec![Vec::new(); timeline.len()];
        let mut totals = vec![0u64; timeline.len()];
        let mut spanning = vec![0u32; timeline.len().saturating_sub(1)];
        let gapped = problem.has_gaps();
        let widths: Vec<Vec<(u64, u64)>> = if gapped {
            (0..n).map(|i| occupied(problem, timeline, i)).collect()
        } else {
            Vec::new()
        };
        for (i, b) in problem.buffers.iter().enumerate() {
            let range = timeline.buffer_sections[i].clone();
            for s in range.clone() {
                let (low, high) = match widths.get(i) {
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
        let Pairs {
            obstacles,
            separations,
            exact,
        } = time_pairs(problem);
        let (neighbours, separations): (Vec<Vec<u32>>, Vec<Vec<u64>>) = separations
            .into_iter()
            .map(|list| list.into_iter().unzip())
            .unzip();
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
            neighbours,
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
            separations,
            widths: widths
                .into_iter()
                .map(|w| w.into_iter().map(|(low, high)| high - low).collect())
                .collect(),
            exact,
        };
        if !gapped {
            instance.store_neighbour_lists();
        }
        instance
    }

    /// Without gaps, stores the neighbour lists if they hold at most
    /// [`NEIGHBOUR_LISTS_PER_MEMBER`] times the entries of the members lists and at most
    /// [`NEIGHBOUR_LISTS_MAX`] entries.
    fn store_neighbour_lists(&mut self) {
        let entries: usize = self.free.iter().map(|&b| self.degree(b)).sum();
        let members: usize = self.members.iter().map(Vec::len).sum();
        if entries > NEIGHBOUR_LISTS_PER_MEMBER.saturating_mul(members)
            || entries > NEIGHBOUR_LISTS_MAX
        {
            return;
        }
        let mut lists = vec![Vec::new(); self.sizes.len()];
        for &b in &self.free {
            let (live, starting) = self.neighbour_slices(b);
            let mut list = Vec::with_capacity(live.len() - 1 + starting.len());
            list.extend(live.iter().copied().filter(|&u| u as usize != b));
            list.extend_from_slice(starting);
            list.sort_unstable();
            lists[b] = list;
        }
        self.neighbours = lists;
    }

    /// Drops the neighbour lists of a problem without gaps, so that the search reads the
    /// neighbours from the sections (for tests: both ways must decide alike).
    #[cfg(test)]
    pub(crate) fn drop_neighbour_lists(&mut self) {
        if self.separations.is_empty() {
            self.neighbours = Vec::new();
        }
    }

    /// The bytes `buffer` occupies in section `s` (of its range): its size without gaps.
    #[inline]
    pub fn width(&self, buffer: usize, s: usize) -> u64 {
        match self.widths.get(buffer) {
            Some(list) => list[s - self.sections[buffer].start],
            None => self.sizes[buffer],
        }
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

    /// How many free neighbours free `buffer` has (see [`Instance::neighbour_slices`]); 0 for
    /// a fixed buffer.
    pub fn degree(&self, buffer: usize) -> usize {
        if self.preset[buffer] {
            return 0;
        }
        if let Some(list) = self.neighbours.get(buffer) {
            return list.len();
        }
        let range = &self.sections[buffer];
        let starting = self.first_at[range.end] - self.first_at[range.start + 1];
        self.members[range.start].len() - 1 + starting as usize
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
    }

    /// The free buffers as `u32` indices.
    pub fn free_u32(&self) -> Vec<u32> {
        self.free.iter().map(|&b| b as u32).collect()
    }

    /// The lowest aligned offset at or above `base` where `buffer` avoids its fixed obstacles.
    /// Saturates at `u64::MAX` (which never fits).
    pub fn lowest_fit(&self, buffer: usize, base: u64) -> u64 {
        let (size, alignment) = (self.sizes[buffer], self.alignments[buffer]);
        let mut offset = align_up(base, alignment).unwrap_or(u64::MAX);
        for &(low, high) in &self.obstacles[buffer] {
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

    /// Bytes of the fixed obstacles of section `s` lying at or above `floor`.
    pub fn obstacle_bytes_above(&self, s: usize, floor: u64) -> u64 {
        self.section_obstacles[s]
            .iter()
            .map(|&(low, high)| high.saturating_sub(low.max(floor)))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{random, RandomOptions};

    /// The entries of the members lists (sections times the free buffers live in each).
    fn members(instance: &Instance) -> usize {
        instance.members.iter().map(Vec::len).sum()
    }

    /// The memory bound of the instance without gaps and fixed buffers: linear in the buffers,
    /// the sections and the members lists' entries.
    fn bound(instance: &Instance) -> usize {
        64 * (instance.sizes.len() + instance.members.len() + members(instance))
    }

    #[test]
    fn memory_is_linear_in_sections_times_live_buffers_not_in_pairs() {
        // 4000 buffers live at once over 10 sections: 16 million pairs of neighbours, which
        // lists per buffer would hold (64 MB), against 40,000 members.
        let buffers = (0..4000u64)
            .map(|i| Buffer::new(format!("b{i}"), i % 5, 1000 - i % 5, 1 + i % 7))
            .collect();
        let problem = Problem::new(buffers, None);
        let instance = Instance::new(&problem, 1 << 20);
        assert!(instance.neighbours.is_empty(), "no lists stored");
        assert_eq!(instance.degree(0), 3999);
        assert!(
            instance.heap_bytes() <= bound(&instance),
            "{} bytes for {} members",
            instance.heap_bytes(),
            members(&instance)
        );
        // Random problems, with many or few buffers live at once.
        for (seed, max_lifetime) in [(1, 1000), (2, 100), (3, 10)] {
            let options = RandomOptions {
                buffers: 3000,
                horizon: 1000,
                max_lifetime,
                ..RandomOptions::default()
            };
            let problem = random(&options, seed);
            let instance = Instance::new(&problem, problem.capacity.unwrap_or(1 << 30));
            assert!(instance.heap_bytes() <= bound(&instance), "seed {seed}");
        }
    }

    #[test]
    fn the_neighbour_slices_hold_exactly_the_buffers_overlapping_in_time() {
        for seed in 0..20 {
            let options = RandomOptions {
                buffers: 60,
                horizon: 40,
                max_lifetime: 1 + seed % 30,
                ..RandomOptions::default()
            };
            let mut problem = random(&options, seed);
            problem.buffers[3].offset = Some(0); // A fixed buffer is nobody's neighbour.
            let instance = Instance::new(&problem, 1 << 30);
            let overlap = |a: &Buffer, b: &Buffer| a.lower < b.upper && b.lower < a.upper;
            for &b in &instance.free {
                let (live, starting) = instance.neighbour_slices(b);
                let mut found: Vec<u32> = live.iter().chain(starting).copied().collect();
                found.retain(|&u| u as usize != b);
                found.sort_unstable();
                let expected: Vec<u32> = (0..problem.len())
                    .filter(|&u| u != b && problem.buffers[u].offset.is_none())
                    .filter(|&u| overlap(&problem.buffers[u], &problem.buffers[b]))
                    .map(|u| u as u32)
                    .collect();
                assert_eq!(found, expected, "seed {seed}, buffer {b}");
                assert_eq!(instance.degree(b), expected.len());
                assert_eq!(instance.neighbours[b], expected, "the stored list");
            }
        }
    }
}
