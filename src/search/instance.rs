//! The immutable search instance of a problem: buffers, sections, time-overlap lists, fixed obstacles.

use crate::analysis::Timeline;
use crate::problem::{align_up, Problem};
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
    /// (same lifetime, size and alignment: interchangeable in any layout), or `u32::MAX`.
    pub twin_before: Vec<u32>,
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
            if b.offset.is_some() {
                return u32::MAX;
            }
            let class = (b.lower, b.upper, b.size, b.alignment);
            last.insert(class, i as u32).unwrap_or(u32::MAX)
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
        for (i, b) in problem.buffers.iter().enumerate() {
            let range = timeline.buffer_sections[i].clone();
            for s in range.clone() {
                match b.offset {
                    Some(o) => section_obstacles[s].push((o, o + b.size)),
                    None => {
                        members[s].push(i as u32);
                        totals[s] += b.size;
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
        let mut by_start: Vec<usize> = (0..n).collect();
        by_start.sort_by_key(|&i| problem.buffers[i].lower);
        let mut active: Vec<usize> = Vec::new();
        for &i in &by_start {
            let b = &problem.buffers[i];
            active.retain(|&j| problem.buffers[j].upper > b.lower);
            for &j in &active {
                match (preset[i], preset[j]) {
                    (false, false) => {
                        neighbours[i].push(j as u32);
                        neighbours[j].push(i as u32);
                    }
                    (false, true) => {
                        let o = problem.buffers[j].offset.unwrap_or(0);
                        obstacles[i].push((o, o + problem.buffers[j].size));
                    }
                    (true, false) => {
                        let o = b.offset.unwrap_or(0);
                        obstacles[j].push((o, o + b.size));
                    }
                    (true, true) => {}
                }
            }
            active.push(i);
        }
        for list in &mut neighbours {
            list.sort_unstable();
        }
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
