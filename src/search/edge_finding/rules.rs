//! The rules over a pass's windows: overload fails the node, and a task outside a window that
//! cannot share it goes above or below all of its tasks.

use super::{EdgeFinder, Task};
use crate::problem::align_up;
use crate::search::instance::Instance;

impl EdgeFinder {
    /// The windows of a pass, over its cumulated cells: overload and both rules. The tasks
    /// (`tasks`, if listed already, else listed here before the first bound moves) are scanned
    /// only where some task outside a window is larger than the window's free room.
    #[inline(never)]
    pub(super) fn windows(
        &mut self,
        instance: &Instance,
        members: &[u32],
        free: &impl Fn(usize) -> bool,
        tasks: &mut Vec<Task>,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<(), ()> {
        let (d, h) = (self.lows.len(), self.highs.len());
        let cell = |i: usize, j: usize| i * h + j;
        for j in 0..h {
            if cancelled() {
                // Each deduction so far is sound on its own; the windows left prove nothing
                // wrong by being skipped.
                return Ok(());
            }
            let l = self.highs[j];
            // Highest lowest offset first, as the windows grow.
            for i in (0..d).rev() {
                let e = self.lows[i];
                let inside = self.inside[cell(i, j)];
                if inside == 0 || l <= e {
                    continue;
                }
                if e + inside > l {
                    return Err(());
                }
                // Either rule needs a task outside the window larger than its free room (the
                // window's lowest start is at most `e`, its highest end at least `l`).
                let room = l - e - inside;
                if self.largest_ending_above[cell(i, j)].max(self.largest_below[i]) <= room {
                    continue;
                }
                if tasks.is_empty() {
                    // No bound has moved in this pass yet: the tasks as the pass found them.
                    self.list_tasks(members, free, tasks);
                }
                for t in tasks.iter() {
                    if t.size <= room || (t.lowest >= e && t.end <= l) {
                        continue; // too small to be pushed, or in the window
                    }
                    if self.push_out(instance, *t, (e, l), inside)? {
                        self.moved.push(t.buffer);
                    }
                }
            }
        }
        Ok(())
    }

    /// The two edge-finding rules for task `t` outside window `(e, l)` holding `inside` bytes
    /// of buffers; whether a bound moved.
    pub(super) fn push_out(
        &mut self,
        instance: &Instance,
        t: Task,
        (e, l): (u64, u64),
        inside: u64,
    ) -> Result<bool, ()> {
        let from = e.min(t.lowest);
        let to = l.max(t.end);
        let needed = from + inside + t.size;
        if needed > to {
            return Err(());
        }
        let b = t.buffer as usize;
        let alignment = instance.alignments[b].max(1);
        let mut changed = false;
        if needed > l {
            // It does not end by `l`: above the window's buffers.
            let raised = align_up(e + inside, alignment).unwrap_or(u64::MAX);
            if raised > self.bounds[b].lowest {
                self.save(b);
                self.bounds[b].lowest = raised;
                changed = true;
            }
        }
        if to < e + inside + t.size {
            // It cannot start at `e` or above: below the window's buffers.
            let Some(start) = l.checked_sub(inside + t.size) else {
                return Err(());
            };
            let lowered = start / alignment * alignment + t.size;
            if lowered < self.bounds[b].end {
                self.save(b);
                self.bounds[b].end = lowered;
                changed = true;
            }
        }
        let bounds = self.bounds[b];
        if bounds.lowest.saturating_add(t.size) > bounds.end {
            return Err(());
        }
        Ok(changed)
    }
}
