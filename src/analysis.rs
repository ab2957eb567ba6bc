//! Time analysis of a problem: the sections (maximal time intervals with a constant live set,
//! cut at gap boundaries too), LOAD (the largest total occupied at one time), and the
//! independent partitions (groups of buffers that no time cut separates).

use crate::problem::{Buffer, Problem};
use std::ops::Range;

/// The timeline of a problem, cut into sections.
///
/// Section `k` covers the time interval `[starts[k], ends[k])`; only intervals where some buffer
/// is live are sections, so every buffer covers a contiguous range of section indices.
#[derive(Clone, Debug)]
pub struct Timeline {
    /// First time step of each section.
    pub starts: Vec<u64>,
    /// One past the last time step of each section.
    pub ends: Vec<u64>,
    /// The total size of the buffers live in each section (with gaps: the bytes they occupy).
    pub totals: Vec<u64>,
    /// For each buffer, the range of section indices it is live in.
    pub buffer_sections: Vec<Range<usize>>,
    /// `spanning[k]` = how many buffers are live in both section `k` and `k + 1`
    /// (0 means the timeline can be cut between them).
    pub spanning: Vec<u32>,
}

/// A group of buffers that no time cut separates from each other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// Indices of the buffers in the group, in problem order.
    pub buffers: Vec<usize>,
    /// The contiguous range of sections the group covers.
    pub sections: Range<usize>,
}

/// The distinct time points of `buffers` in order (their ends, and their gaps' ends: gaps cut
/// sections too, so that within a section every buffer occupies a constant part of its range),
/// and for each buffer the indices of its `lower` and `upper` among them: one sort of every
/// end point, not a search per buffer (a search per end missed the cache at a million buffers).
fn end_points(buffers: &[Buffer]) -> (Vec<u64>, Vec<(usize, usize)>) {
    const GAP: usize = usize::MAX; // a gap's end: a point, no buffer's own
    let mut tagged: Vec<(u64, usize)> = Vec::with_capacity(2 * buffers.len());
    for (i, b) in buffers.iter().enumerate() {
        tagged.extend([(b.lower, 2 * i), (b.upper, 2 * i + 1)]);
        tagged.extend(b.gaps.iter().flat_map(|g| [(g.lower, GAP), (g.upper, GAP)]));
    }
    tagged.sort_unstable();
    let mut points: Vec<u64> = Vec::new();
    let mut ends = vec![(0, 0); buffers.len()];
    for (t, tag) in tagged {
        if points.last() != Some(&t) {
            points.push(t);
        }
        let k = points.len() - 1;
        match tag {
            GAP => {}
            _ if tag % 2 == 0 => ends[tag / 2].0 = k,
            _ => ends[tag / 2].1 = k,
        }
    }
    (points, ends)
}

impl Timeline {
    /// Builds the timeline in `O(n log n + sections)`.
    pub fn new(problem: &Problem) -> Timeline {
        let buffers = &problem.buffers;
        let (points, buffer_ends) = end_points(buffers);
        // Live count and total per elementary interval [points[k], points[k+1]) via differences.
        let intervals = points.len().saturating_sub(1);
        let mut count_delta = vec![0i64; intervals + 1];
        let mut total_delta = vec![0i128; intervals + 1];
        let index_of = |t: u64| points.binary_search(&t).expect("point recorded");
        for (b, &(lo, hi)) in buffers
            .iter()
            .zip(&buffer_ends)
            .filter(|(b, _)| b.lower < b.upper)
        {
            count_delta[lo] += 1;
            count_delta[hi] -= 1;
            if b.gaps.is_empty() {
                total_delta[lo] += b.size as i128;
                total_delta[hi] -= b.size as i128;
                continue;
            }
            // What the buffer occupies: its size, less in its gaps.
            for piece in b.pieces() {
                let (lo, hi) = (index_of(piece.lower), index_of(piece.upper));
                total_delta[lo] += piece.width() as i128;
                total_delta[hi] -= piece.width() as i128;
            }
        }
        // Keep the non-empty intervals as sections; map interval index -> section index.
        let mut section_of_interval = vec![usize::MAX; intervals];
        let (mut starts, mut ends, mut totals) = (Vec::new(), Vec::new(), Vec::new());
        let (mut count, mut total) = (0i64, 0i128);
        for k in 0..intervals {
            count += count_delta[k];
            total += total_delta[k];
            if count > 0 {
                section_of_interval[k] = starts.len();
                starts.push(points[k]);
                ends.push(points[k + 1]);
                totals.push(total as u64);
            }
        }
        let buffer_sections: Vec<Range<usize>> = buffers
            .iter()
            .zip(&buffer_ends)
            .map(|(b, &(lo, hi))| {
                if b.lower >= b.upper {
                    return 0..0; // Never live (only a problem built in code can have one).
                }
                section_of_interval[lo]..section_of_interval[hi - 1] + 1
            })
            .collect();
        let mut spanning_delta = vec![0i64; starts.len() + 1];
        for r in &buffer_sections {
            // The buffer spans the boundaries r.start..r.end-1 (between k and k+1).
            if r.len() > 1 {
                spanning_delta[r.start] += 1;
                spanning_delta[r.end - 1] -= 1;
            }
        }
        let mut spanning = Vec::with_capacity(starts.len().saturating_sub(1));
        let mut running = 0i64;
        for delta in spanning_delta.iter().take(starts.len().saturating_sub(1)) {
            running += delta;
            spanning.push(running as u32);
        }
        Timeline {
            starts,
            ends,
            totals,
            buffer_sections,
            spanning,
        }
    }

    /// Number of sections.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether there are no sections (no buffers).
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The section of buffer `buffer`'s lifetime with the largest live total (the first of
    /// equals; 0 for a buffer with no section).
    pub fn fullest_section(&self, buffer: usize) -> usize {
        self.buffer_sections[buffer]
            .clone()
            .max_by_key(|&k| (self.totals[k], std::cmp::Reverse(k)))
            .unwrap_or(0)
    }

    /// LOAD: the largest total size live at any time (0 for no buffers).
    pub fn load(&self) -> u64 {
        self.totals.iter().copied().max().unwrap_or(0)
    }

    /// The independent partitions, in time order: maximal runs of sections with no cut inside.
    pub fn partitions(&self) -> Vec<Partition> {
        let ranges = cut_sections(0..self.len(), &self.spanning);
        let items = self
            .buffer_sections
            .iter()
            .enumerate()
            .map(|(i, r)| (i, r.start));
        let groups = group_by_part(&ranges, items);
        ranges
            .into_iter()
            .zip(groups)
            .map(|(sections, buffers)| Partition { buffers, sections })
            .collect()
    }
}

/// Cuts the section range `sections` at every boundary `k` (between sections `k` and `k + 1`)
/// that no buffer crosses (`spanning[k] == 0`): the maximal runs with no cut inside.
pub(crate) fn cut_sections(sections: Range<usize>, spanning: &[u32]) -> Vec<Range<usize>> {
    let mut parts = Vec::new();
    let mut start = sections.start;
    for k in sections.clone() {
        if k + 1 == sections.end || spanning[k] == 0 {
            parts.push(start..k + 1);
            start = k + 1;
        }
    }
    parts
}

/// Groups `items`, each given with its first section, by the part of `parts` (sorted, disjoint
/// section ranges) that holds that section.
pub(crate) fn group_by_part<T>(
    parts: &[Range<usize>],
    items: impl IntoIterator<Item = (T, usize)>,
) -> Vec<Vec<T>> {
    let mut groups: Vec<Vec<T>> = (0..parts.len()).map(|_| Vec::new()).collect();
    for (item, first) in items {
        let g = parts.partition_point(|p| p.end <= first);
        groups[g].push(item);
    }
    groups
}

/// LOAD of a problem: the largest total size of the buffers live at one time (a buffer in a
/// gap counts its window's width, or nothing).
pub fn load(problem: &Problem) -> u64 {
    Timeline::new(problem).load()
}

/// Summary statistics of a problem, as `telamalloc stats` prints them.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Stats {
    /// Number of buffers.
    pub buffers: usize,
    /// The largest `upper` (time steps).
    pub horizon: u64,
    /// LOAD: the largest live total.
    pub load: u64,
    /// The capacity, if the problem has one.
    pub capacity: Option<u64>,
    /// LOAD / capacity, if there is a capacity.
    pub load_over_capacity: Option<f64>,
    /// Number of sections.
    pub sections: usize,
    /// Number of independent partitions.
    pub partitions: usize,
    /// The largest buffer size.
    pub largest_buffer: u64,
    /// The largest buffer size / LOAD.
    pub largest_over_load: f64,
}

impl Stats {
    /// Computes the statistics of `problem`.
    pub fn of(problem: &Problem) -> Stats {
        let timeline = Timeline::new(problem);
        let load = timeline.load();
        let largest_buffer = problem.buffers.iter().map(|b| b.size).max().unwrap_or(0);
        Stats {
            buffers: problem.len(),
            horizon: problem.horizon(),
            load,
            capacity: problem.capacity,
            load_over_capacity: problem.capacity.map(|c| load as f64 / c as f64),
            sections: timeline.len(),
            partitions: timeline.partitions().len(),
            largest_buffer,
            largest_over_load: if load == 0 {
                0.0
            } else {
                largest_buffer as f64 / load as f64
            },
        }
    }
}
