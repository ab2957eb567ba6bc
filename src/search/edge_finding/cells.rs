//! A pass's grid: a section's tasks bucketed by lowest offset and end, and the cells cumulated
//! into each window's contents.

use super::few::{ascending_order, Few, FEW};
use super::{EdgeFinder, Task};

impl EdgeFinder {
    /// Buckets the tasks by lowest offset and end as it reads them, while there are at most
    /// [`FEW`] of each (`None` past that), into the cells of `inside` and
    /// `largest_ending_above` (before they are cumulated), with `lows` and `highs`; returns
    /// the number of tasks.
    pub(super) fn bucket_few(
        &mut self,
        members: &[u32],
        tracked: Option<&[u32]>,
        free: &impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let mut compacted = std::mem::take(&mut self.free_members);
        let free_members = match tracked {
            Some(list) => list,
            None => {
                // Without a branch on each member (placed and free ones alternate at random,
                // which a branch predictor cannot follow).
                compacted.resize(members.len(), 0);
                let mut count = 0;
                for &b in members {
                    compacted[count] = b;
                    count += usize::from(free(b as usize));
                }
                &compacted[..count]
            }
        };
        let count = self.scan_few(free_members);
        self.free_members = compacted;
        if count.is_some() {
            self.sort_few();
        }
        count
    }

    /// Buckets the tasks, the buffers of `free_members`, into [`Few`]'s cells, in the order
    /// their values first appear: `None` past [`FEW`] distinct lowest offsets or ends, else the
    /// number of tasks.
    pub(super) fn scan_few(&mut self, free_members: &[u32]) -> Option<usize> {
        let few = &mut *self.few;
        let (mut d, mut h) = (0, 0);
        for &b in free_members {
            let t = self.bounds[b as usize];
            let i = match few.lows[..d].iter().position(|&v| v == t.lowest) {
                Some(i) => i,
                None if d == FEW => return None,
                None => {
                    few.lows[d] = t.lowest;
                    for j in 0..h {
                        few.clear(d, j);
                    }
                    d += 1;
                    d - 1
                }
            };
            let j = match few.highs[..h].iter().position(|&v| v == t.end) {
                Some(j) => j,
                None if h == FEW => return None,
                None => {
                    few.highs[h] = t.end;
                    for i in 0..d {
                        few.clear(i, h);
                    }
                    h += 1;
                    h - 1
                }
            };
            let cell = Few::cell(i, j);
            few.inside[cell] += t.size;
            few.largest[cell] = few.largest[cell].max(t.size);
        }
        (few.d, few.h) = (d, h);
        Some(free_members.len())
    }

    /// Moves [`Few`]'s cells to `inside` and `largest_ending_above`, and its values to `lows`
    /// and `highs`, in ascending order of the values.
    #[inline(never)]
    pub(super) fn sort_few(&mut self) {
        let few = &mut *self.few;
        let (d, h) = (few.d, few.h);
        ascending_order(&few.lows[..d], &mut few.rows[..d]);
        ascending_order(&few.highs[..h], &mut few.columns[..h]);
        let (rows, columns) = (&few.rows[..d], &few.columns[..h]);
        self.lows.clear();
        self.lows.extend(rows.iter().map(|&i| few.lows[i]));
        self.highs.clear();
        self.highs.extend(columns.iter().map(|&j| few.highs[j]));
        self.inside.clear();
        self.largest_ending_above.clear();
        for &i in rows {
            let cells = columns.iter().map(|&j| Few::cell(i, j));
            self.inside
                .extend(cells.clone().map(|cell| few.inside[cell]));
            self.largest_ending_above
                .extend(cells.map(|cell| few.largest[cell]));
        }
    }

    /// [`EdgeFinder::bucket_few`] for many distinct lowest offsets or ends: lists the tasks in
    /// `tasks` and ranks their values by sorting; returns the number of tasks.
    pub(super) fn bucket_many(
        &mut self,
        members: &[u32],
        free: &impl Fn(usize) -> bool,
        tasks: &mut Vec<Task>,
    ) -> usize {
        self.list_tasks(members, free, tasks);
        let ranking = &mut self.ranking;
        rank_by_sorting(&mut self.lows, &mut self.rows, ranking, tasks, |t| t.lowest);
        rank_by_sorting(&mut self.highs, &mut self.columns, ranking, tasks, |t| {
            t.end
        });
        let (d, h) = (self.lows.len(), self.highs.len());
        self.inside.clear();
        self.inside.resize(d * h, 0);
        self.largest_ending_above.clear();
        self.largest_ending_above.resize(d * h, 0);
        for (k, t) in tasks.iter().enumerate() {
            let cell = self.rows[k] as usize * h + self.columns[k] as usize;
            self.inside[cell] += t.size;
            let largest = &mut self.largest_ending_above[cell];
            *largest = (*largest).max(t.size);
        }
        tasks.len()
    }

    /// Lists the `free` buffers of `members` as tasks, with their bounds as they are now.
    pub(super) fn list_tasks(
        &self,
        members: &[u32],
        free: &impl Fn(usize) -> bool,
        tasks: &mut Vec<Task>,
    ) {
        tasks.clear();
        for &b in members {
            if free(b as usize) {
                let bounds = self.bounds[b as usize];
                tasks.push(Task {
                    buffer: b,
                    lowest: bounds.lowest,
                    end: bounds.end,
                    size: bounds.size,
                });
            }
        }
    }

    /// Cumulates the cells of a pass: `inside` over the ends up to each and the lowest offsets
    /// from each up, `largest_ending_above` over the ends above each and the lowest offsets
    /// from each up, and fills `largest_below`.
    #[inline(never)]
    pub(super) fn cumulate(&mut self) {
        let h = self.highs.len();
        // Per row: its largest task (for the rows above it), then totals over the ends up to
        // `j` and the largest over the ends above `j`.
        self.largest_below.clear();
        let mut largest_below = 0;
        let rows = self.inside.chunks_exact_mut(h);
        for (totals, largest) in rows.zip(self.largest_ending_above.chunks_exact_mut(h)) {
            self.largest_below.push(largest_below);
            largest_below = largest.iter().fold(largest_below, |a, &b| a.max(b));
            let mut total = 0;
            for cell in totals.iter_mut() {
                total += *cell;
                *cell = total;
            }
            let mut above = 0;
            for cell in largest.iter_mut().rev() {
                let here = *cell;
                *cell = above;
                above = above.max(here);
            }
        }
        // Then over the rows from the highest lowest offset down: at or above `lows[i]`.
        for i in (1..self.lows.len()).rev() {
            let (lower, upper) = self.inside.split_at_mut(i * h);
            for (cell, higher) in lower[(i - 1) * h..].iter_mut().zip(&upper[..h]) {
                *cell += higher;
            }
            let (lower, upper) = self.largest_ending_above.split_at_mut(i * h);
            for (cell, higher) in lower[(i - 1) * h..].iter_mut().zip(&upper[..h]) {
                *cell = (*cell).max(*higher);
            }
        }
    }
}
/// Fills `distinct` with the distinct values `value(t)` of `tasks`, in ascending order, and
/// `ranks` with each task's position of its value in `distinct`: one sort of (value, task)
/// pairs.
fn rank_by_sorting(
    distinct: &mut Vec<u64>,
    ranks: &mut Vec<u32>,
    pairs: &mut Vec<(u64, u32)>,
    tasks: &[Task],
    value: impl Fn(&Task) -> u64,
) {
    pairs.clear();
    pairs.extend(tasks.iter().enumerate().map(|(k, t)| (value(t), k as u32)));
    pairs.sort_unstable();
    distinct.clear();
    ranks.clear();
    ranks.resize(tasks.len(), 0);
    for &(v, k) in pairs.iter() {
        if distinct.last() != Some(&v) {
            distinct.push(v);
        }
        ranks[k as usize] = (distinct.len() - 1) as u32;
    }
}
