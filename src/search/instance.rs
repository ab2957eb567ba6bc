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
    /// For each free buffer, the free buffers overlapping it in time.
    pub neighbours: Vec<Vec<u32>>,
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

/// The separations found per buffer, in the order of its (sorted) neighbour list.
fn sorted_separations(found: Vec<Vec<(u32, u64)>>, neighbours: &[Vec<u32>]) -> Vec<Vec<u64>> {
    found
        .into_iter()
        .zip(neighbours)
        .map(|(mut list, sorted)| {
            list.sort_unstable_by_key(|&(j, _)| j);
            debug_assert!(list.iter().map(|&(j, _)| j).eq(sorted.iter().copied()));
            list.into_iter().map(|(_, d)| d).collect()
        })
        .collect()
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
        let mut members = vec![Vec::new(); timeline.len()];
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
        // Time-overlap lists by a sweep over start times.
        let mut neighbours = vec![Vec::new(); n];
        let mut obstacles = vec![Vec::new(); n];
        // With gaps: (neighbour, separation) per buffer, in discovery order.
        let mut separations: Vec<Vec<(u32, u64)>> = if gapped {
            vec![Vec::new(); n]
        } else {
            Vec::new()
        };
        let mut exact = true;
        let mut by_start: Vec<usize> = (0..n).collect();
        by_start.sort_by_key(|&i| problem.buffers[i].lower);
        let mut active: Vec<usize> = Vec::new();
        for &i in &by_start {
            let b = &problem.buffers[i];
            active.retain(|&j| problem.buffers[j].upper > b.lower);
            for &j in &active {
                match (preset[i], preset[j]) {
                    (false, false) if gapped => {
                        let buffers = &problem.buffers;
                        let (Some(up), Some(down)) = (
                            separation(&buffers[i], &buffers[j]),
                            separation(&buffers[j], &buffers[i]),
                        ) else {
                            continue; // Their pieces never meet in time: not neighbours.
                        };
                        exact &= orders_exactly(&buffers[i], &buffers[j]);
                        neighbours[i].push(j as u32);
                        neighbours[j].push(i as u32);
                        separations[i].push((j as u32, up.max(1) as u64));
                        separations[j].push((i as u32, down.max(1) as u64));
                    }
                    (false, false) => {
                        neighbours[i].push(j as u32);
                        neighbours[j].push(i as u32);
                    }
                    (false, true) => shadows(&problem.buffers[j], b, &mut obstacles[i]),
                    (true, false) => shadows(b, &problem.buffers[j], &mut obstacles[j]),
                    (true, true) => {}
                }
            }
            active.push(i);
        }
        for list in &mut neighbours {
            list.sort_unstable();
        }
        let separations = sorted_separations(separations, &neighbours);
        for list in &mut obstacles {
            list.sort_unstable();
        }
        let obstacle_sections = (0..section_obstacles.len())
            .filter(|&s| !section_obstacles[s].is_empty())
            .map(|s| s as u32)
            .collect();
        Instance {
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
