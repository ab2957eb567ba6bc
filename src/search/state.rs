//! Search state with incremental propagation and trail-based undo: an undo costs what the
//! placement changed, never a copy of the whole state.

use super::instance::Instance;
use super::max_tree::MaxTree;

/// Marks a buffer that is not placed.
pub const UNPLACED: u64 = u64::MAX;

/// A value overwritten by a placement, restored on undo.
#[derive(Clone, Copy)]
enum Change {
    /// A buffer's placed-neighbour base and lowest feasible offset before the placement.
    MinOffset { buffer: u32, base: u64, min: u64 },
    /// A section's floor before the placement.
    Floor { section: u32, floor: u64 },
}

/// The most entries of the tracked lists of [`State::track_free_members`] (16 MiB): a copy of
/// part of the members lists, which are the largest structure of a large instance.
pub const TRACKED_MEMBERS_MAX: usize = 1 << 22;

/// The mutable state of one search.
pub struct State {
    /// Offset of each buffer, or `u64::MAX` while it is unplaced.
    pub offsets: Vec<u64>,
    /// The decision depth at which each placed buffer was placed.
    pub levels: Vec<u32>,
    /// For each buffer, the highest end of its placed free neighbours.
    pub base: Vec<u64>,
    /// For each unplaced buffer, its lowest feasible offset (aligned, above its placed
    /// neighbours, clear of fixed obstacles).
    pub min_offsets: Vec<u64>,
    /// For each section, a lower bound on the offset of any unplaced buffer live in it.
    pub floors: Vec<u64>,
    /// For each section, the total size of its unplaced buffers.
    pub totals: Vec<u64>,
    /// For each boundary, the unplaced buffers crossing it.
    pub spanning: Vec<u32>,
    /// For each buffer, how many of its free neighbours are unplaced.
    pub unplaced_neighbours: Vec<u32>,
    /// Best solution offsets: written at each placement; complete once the search succeeds.
    pub solution: Vec<u64>,
    /// The unplaced totals per section, for range-max queries.
    total_tree: MaxTree,
    trail: Vec<Change>,
    affected: Vec<u32>,
    stamp: Vec<u32>,
    epoch: u32,
    /// Free buffers placed now.
    pub placed: usize,
    /// The neighbours whose lowest offset the last placement raised, with the offset before,
    /// reused by [`State::place`].
    lifted: Vec<(u32, u64)>,
    /// Per section tracked ([`State::track_free_members`]), its unplaced free buffers in no
    /// particular order; empty for the others.
    free_members: Vec<Vec<u32>>,
    /// Per section (and one past the last), the first tracked section at or after it; empty
    /// while no section is tracked.
    next_tracked: Vec<u32>,
    /// Per placement, where it took its buffer out of each tracked list of its lifetime, then
    /// how many lists: what [`State::undo`] puts back.
    free_trail: Vec<u32>,
}

impl State {
    /// The initial state: only fixed buffers placed.
    pub fn new(instance: &Instance) -> State {
        let n = instance.sizes.len();
        let mut offsets = vec![UNPLACED; n];
        let mut solution = vec![0; n];
        for i in 0..n {
            if instance.preset[i] {
                offsets[i] = instance.preset_offsets[i];
                solution[i] = instance.preset_offsets[i];
            }
        }
        let min_offsets = (0..n)
            .map(|i| {
                if instance.preset[i] {
                    instance.preset_offsets[i]
                } else {
                    instance.lowest_fit(i, 0)
                }
            })
            .collect();
        let mut state = State {
            offsets,
            levels: vec![0; n],
            base: vec![0; n],
            min_offsets,
            floors: vec![0; instance.members.len()],
            totals: instance.totals.clone(),
            total_tree: MaxTree::new(
                &instance
                    .totals
                    .iter()
                    .map(|&t| t as i128)
                    .collect::<Vec<_>>(),
            ),
            spanning: instance.spanning.clone(),
            unplaced_neighbours: (0..n).map(|b| instance.degree(b) as u32).collect(),
            solution,
            trail: Vec::new(),
            affected: Vec::new(),
            stamp: vec![0; instance.members.len()],
            epoch: 0,
            placed: 0,
            lifted: Vec::new(),
            free_members: Vec::new(),
            next_tracked: Vec::new(),
            free_trail: Vec::new(),
        };
        for s in 0..instance.members.len() {
            // Floors start at 0: the lowest offset of the section's unplaced buffers, if higher.
            state.floors[s] = state.raised_floor(instance, s).unwrap_or(0);
        }
        state
    }

    /// Whether `buffer` is placed.
    #[inline]
    pub fn is_placed(&self, buffer: usize) -> bool {
        self.offsets[buffer] != UNPLACED
    }

    /// The trail position to pass to [`State::undo`].
    #[inline]
    pub fn mark(&self) -> usize {
        self.trail.len()
    }

    /// Places free `buffer` at `offset` (its lowest feasible offset) at decision depth `level`
    /// and propagates: neighbours' lowest offsets, section floors and totals, cut counts.
    pub fn place(
        &mut self,
        instance: &Instance,
        buffer: usize,
        offset: u64,
        level: u32,
        unplaced_floor: bool,
    ) {
        let end = offset + instance.sizes[buffer];
        self.placed += 1;
        self.offsets[buffer] = offset;
        self.take_out_of_tracked(instance, buffer);
        self.levels[buffer] = level;
        self.solution[buffer] = offset;
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        self.affected.clear();
        let range = instance.sections[buffer].clone();
        if unplaced_floor {
            // The placed buffer's own sections lose a member: recompute their floors.
            for s in range.clone() {
                self.stamp[s] = self.epoch;
                self.affected.push(s as u32);
            }
        }
        // Raise the unplaced neighbours' lowest offsets (with gaps, each keeps its own distance
        // above the buffer).
        if let Some(list) = instance.neighbours.get(buffer) {
            let separations = instance.separations.get(buffer).map(Vec::as_slice);
            for (k, &u) in list.iter().enumerate() {
                let end = separations.map_or(end, |d| offset + d[k]);
                if let Some(old) = self.lift(instance, u as usize, end) {
                    self.note_raised(instance, u as usize, old, unplaced_floor);
                }
            }
        } else if instance.has_gaps() {
            self.lift_gapped_slices(instance, buffer, offset, unplaced_floor);
        } else {
            self.lift_slices(instance, buffer, end, unplaced_floor);
        }
        for s in range.clone() {
            self.totals[s] -= instance.width(buffer, s);
            if self.floors[s] < end {
                self.trail.push(Change::Floor {
                    section: s as u32,
                    floor: self.floors[s],
                });
                self.floors[s] = end;
            }
        }
        for k in range.start..range.end - 1 {
            self.spanning[k] -= 1;
        }
        self.add_to_tree(instance, buffer, -1);
        if unplaced_floor {
            let affected = std::mem::take(&mut self.affected);
            for &s in &affected {
                let s = s as usize;
                if let Some(lowest) = self.raised_floor(instance, s) {
                    self.trail.push(Change::Floor {
                        section: s as u32,
                        floor: self.floors[s],
                    });
                    self.floors[s] = lowest;
                }
            }
            self.affected = affected;
        }
    }

    /// After a placement, raises the lowest offset of neighbour `u` (if unplaced) to `end`;
    /// returns the offset before if it rose.
    #[inline(always)]
    fn lift(&mut self, instance: &Instance, u: usize, end: u64) -> Option<u64> {
        if self.offsets[u] != UNPLACED {
            return None;
        }
        self.unplaced_neighbours[u] -= 1;
        if self.base[u] >= end {
            return None;
        }
        self.trail.push(Change::MinOffset {
            buffer: u as u32,
            base: self.base[u],
            min: self.min_offsets[u],
        });
        self.base[u] = end;
        let min = instance.lowest_fit(u, end);
        let old = self.min_offsets[u];
        self.min_offsets[u] = min;
        (min != old).then_some(old)
    }

    /// [`State::place`]'s propagation to the neighbours of `buffer` (placed, ending at `end`)
    /// when the instance stores no neighbour lists: over the two slices of
    /// [`Instance::neighbour_slices`], whose order is not by index, so the raised buffers are
    /// noted afterwards in index order, as the lists would give them (the section checks report
    /// the first failing section: the order decides which conflict is reported).
    #[inline(never)]
    fn lift_slices(&mut self, instance: &Instance, buffer: usize, end: u64, unplaced_floor: bool) {
        let mut lifted = std::mem::take(&mut self.lifted);
        lifted.clear();
        let (live, starting) = instance.neighbour_slices(buffer);
        // `live` holds `buffer` itself, which is placed: `lift` passes it by.
        for &u in live.iter().chain(starting) {
            if let Some(old) = self.lift(instance, u as usize, end) {
                if unplaced_floor {
                    lifted.push((u, old));
                }
            }
        }
        self.note_lifted(instance, lifted, unplaced_floor);
    }

    /// [`State::lift_slices`] for a problem with gaps: each unplaced buffer overlapping
    /// `buffer` (placed at `offset`) in time whose pieces meet its own is raised to its own
    /// distance above it ([`Instance::separation`]); the others are not neighbours.
    #[inline(never)]
    fn lift_gapped_slices(
        &mut self,
        instance: &Instance,
        buffer: usize,
        offset: u64,
        unplaced_floor: bool,
    ) {
        let mut lifted = std::mem::take(&mut self.lifted);
        lifted.clear();
        let (live, starting) = instance.neighbour_slices(buffer);
        for &u in live.iter().chain(starting) {
            if self.offsets[u as usize] != UNPLACED {
                continue; // `buffer` itself among them.
            }
            let Some(distance) = instance.separation(buffer, u as usize) else {
                continue;
            };
            if let Some(old) = self.lift(instance, u as usize, offset + distance) {
                if unplaced_floor {
                    lifted.push((u, old));
                }
            }
        }
        self.note_lifted(instance, lifted, unplaced_floor);
    }

    /// Notes the raised buffers `lifted` (with their lowest offsets before) in index order, as
    /// the neighbour lists would give them (the section checks report the first failing
    /// section: the order decides which conflict is reported); keeps the vector for reuse.
    fn note_lifted(
        &mut self,
        instance: &Instance,
        mut lifted: Vec<(u32, u64)>,
        unplaced_floor: bool,
    ) {
        lifted.sort_unstable_by_key(|&(u, _)| u);
        for &(u, old) in &lifted {
            self.note_raised(instance, u as usize, old, unplaced_floor);
        }
        self.lifted = lifted;
    }

    /// Notes the sections of unplaced buffer `u`, whose lowest offset a placement raised from
    /// `old`, that the section checks after the placement must see: with `unplaced_floor`, those
    /// whose floor `u` may have held up (`affected`).
    #[inline(always)]
    fn note_raised(&mut self, instance: &Instance, u: usize, old: u64, unplaced_floor: bool) {
        if unplaced_floor {
            // Floors are kept exact (the lowest offset of the section's unplaced buffers), so a
            // section's floor can only rise if `u` sat exactly on it.
            for s in instance.sections[u].clone() {
                if self.stamp[s] != self.epoch && self.floors[s] >= old {
                    self.stamp[s] = self.epoch;
                    self.affected.push(s as u32);
                }
            }
        }
    }

    /// Undoes the placement of `buffer`, restoring the trail to `mark`.
    pub fn undo(&mut self, instance: &Instance, buffer: usize, mark: usize) {
        self.placed -= 1;
        while self.trail.len() > mark {
            match self.trail.pop().expect("trail longer than mark") {
                Change::MinOffset { buffer, base, min } => {
                    self.base[buffer as usize] = base;
                    self.min_offsets[buffer as usize] = min;
                }
                Change::Floor { section, floor } => self.floors[section as usize] = floor,
            }
        }
        let range = instance.sections[buffer].clone();
        for s in range.clone() {
            self.totals[s] += instance.width(buffer, s);
        }
        for k in range.start..range.end - 1 {
            self.spanning[k] += 1;
        }
        self.add_to_tree(instance, buffer, 1);
        match instance.neighbours.get(buffer) {
            Some(list) => self.count_unplaced(list),
            None if instance.has_gaps() => {
                // `buffer` itself is still placed here: passed by.
                let (live, starting) = instance.neighbour_slices(buffer);
                for &u in live.iter().chain(starting) {
                    let u = u as usize;
                    if self.offsets[u] == UNPLACED && instance.separation(buffer, u).is_some() {
                        self.unplaced_neighbours[u] += 1;
                    }
                }
            }
            None => {
                // `live` holds `buffer` itself, still placed here: `count_unplaced` passes it by.
                let (live, starting) = instance.neighbour_slices(buffer);
                self.count_unplaced(live);
                self.count_unplaced(starting);
            }
        }
        self.offsets[buffer] = UNPLACED;
        self.put_back_into_tracked(instance, buffer);
    }

    /// From now on, keeps for each section that `tracked` marks the list of its unplaced free
    /// buffers ([`State::free_members`]), at a cost to each placement and undo of a search over
    /// those lists. Only at the root (no free buffer placed), once (later calls change nothing),
    /// and only if the lists hold at most [`TRACKED_MEMBERS_MAX`] entries.
    pub fn track_free_members(&mut self, instance: &Instance, tracked: &[bool]) {
        if self.placed > 0 || !self.next_tracked.is_empty() {
            return;
        }
        let count = instance.members.len();
        let entries: usize = (0..count)
            .filter(|&t| tracked[t])
            .map(|t| instance.members[t].len())
            .sum();
        if entries > TRACKED_MEMBERS_MAX {
            return; // too large a copy: the sections are read from their members
        }
        self.next_tracked = vec![count as u32; count + 1];
        for t in (0..count).rev() {
            self.next_tracked[t] = if tracked[t] {
                t as u32
            } else {
                self.next_tracked[t + 1]
            };
        }
        self.free_members = (0..count)
            .map(|t| {
                if tracked[t] {
                    instance.members[t].clone()
                } else {
                    Vec::new()
                }
            })
            .collect();
    }

    /// The unplaced free buffers of section `s`, in no particular order, if it is tracked.
    #[inline]
    pub fn free_members(&self, s: usize) -> Option<&[u32]> {
        (self.next_tracked.get(s) == Some(&(s as u32))).then(|| self.free_members[s].as_slice())
    }

    /// Takes placed `buffer` out of the tracked lists of its sections.
    fn take_out_of_tracked(&mut self, instance: &Instance, buffer: usize) {
        if self.next_tracked.is_empty() {
            return;
        }
        let span = instance.sections[buffer].clone();
        let mut taken = 0;
        let mut t = self.next_tracked[span.start] as usize;
        while t < span.end {
            let list = &mut self.free_members[t];
            let at = list
                .iter()
                .position(|&u| u as usize == buffer)
                .expect("an unplaced free member");
            list.swap_remove(at);
            self.free_trail.push(at as u32);
            taken += 1;
            t = self.next_tracked[t + 1] as usize;
        }
        self.free_trail.push(taken);
    }

    /// Puts `buffer`, whose placement is undone, back where it was in the tracked lists.
    fn put_back_into_tracked(&mut self, instance: &Instance, buffer: usize) {
        if self.next_tracked.is_empty() {
            return;
        }
        let taken = self.free_trail.pop().expect("a tracked placement") as usize;
        let first = self.free_trail.len() - taken;
        let span = instance.sections[buffer].clone();
        let mut t = self.next_tracked[span.start] as usize;
        for k in first..first + taken {
            let list = &mut self.free_members[t];
            list.push(buffer as u32);
            let last = list.len() - 1;
            list.swap(self.free_trail[k] as usize, last);
            t = self.next_tracked[t + 1] as usize;
        }
        self.free_trail.truncate(first);
    }

    /// Counts a placement's undo in the unplaced neighbours of the unplaced buffers of `list`.
    #[inline]
    fn count_unplaced(&mut self, list: &[u32]) {
        for &u in list {
            if self.offsets[u as usize] == UNPLACED {
                self.unplaced_neighbours[u as usize] += 1;
            }
        }
    }

    /// Adds `sign` times what `buffer` occupies to the unplaced totals' range-max tree.
    fn add_to_tree(&mut self, instance: &Instance, buffer: usize, sign: i128) {
        let range = instance.sections[buffer].clone();
        if instance.widths.get(buffer).is_none_or(Vec::is_empty) {
            self.total_tree
                .add(range, sign * instance.sizes[buffer] as i128);
            return;
        }
        for s in range {
            self.total_tree
                .add(s..s + 1, sign * instance.width(buffer, s) as i128);
        }
    }

    /// The lowest `min_offset` among the unplaced buffers of section `s` if it lies above the
    /// section's floor (`None` as soon as one unplaced buffer sits at or below the floor, or if
    /// none is unplaced).
    fn raised_floor(&self, instance: &Instance, s: usize) -> Option<u64> {
        let floor = self.floors[s];
        let mut lowest = u64::MAX;
        for &u in &instance.members[s] {
            let u = u as usize;
            if self.offsets[u] == UNPLACED {
                let min = self.min_offsets[u];
                if min <= floor {
                    return None;
                }
                lowest = lowest.min(min);
            }
        }
        (lowest != u64::MAX).then_some(lowest)
    }

    /// Whether section `s` breaks the capacity with its floor raised to at least `bound`:
    /// floor plus (with `inference`) its unplaced total plus the fixed bytes above the floor.
    #[inline]
    fn section_fails(&self, instance: &Instance, s: usize, bound: u64, inference: bool) -> bool {
        let total = self.totals[s];
        if total == 0 {
            return false;
        }
        let floor = self.floors[s].max(bound);
        let need = if inference {
            floor.saturating_add(total)
        } else {
            floor
        };
        need > instance.capacity
            || (!instance.section_obstacles[s].is_empty()
                && need.saturating_add(instance.obstacle_bytes_above(s, floor)) > instance.capacity)
    }

    /// Section inference over every section of `sections` (used at the root of a run).
    pub fn failing_section(
        &self,
        instance: &Instance,
        sections: std::ops::Range<usize>,
        bound: u64,
        inference: bool,
    ) -> Option<usize> {
        sections
            .into_iter()
            .find(|&s| self.section_fails(instance, s, bound, inference))
    }

    /// Decides before placing `buffer` at `offset` whether the raised canonical bound already
    /// breaks a section of `sections`: after the placement some section would need
    /// `offset + unplaced total > capacity` (the buffer's own size leaves its sections). Returns
    /// the section, or `None` if this test passes (the full check still runs after placing).
    pub fn bound_fails_before(
        &self,
        instance: &Instance,
        buffer: usize,
        offset: u64,
        sections: std::ops::Range<usize>,
    ) -> Option<usize> {
        let span = instance.sections[buffer].clone();
        let size = instance.sizes[buffer] as i128;
        let room = instance.capacity.saturating_sub(offset);
        let over = |value: i128| value > 0 && value > room as i128;
        let outside = [sections.start..span.start, span.end..sections.end];
        for range in outside {
            if let Some((largest, s)) = self.total_tree.max(range) {
                if over(largest) {
                    return Some(s);
                }
            }
        }
        match self.total_tree.max(span) {
            Some((largest, s)) if over(largest - size) => Some(s),
            _ => None,
        }
    }

    /// Section inference after placing `buffer`, given that the state before the placement
    /// passed it: only the sections whose floor or total changed are rescanned, and the raised
    /// canonical `bound` is checked against the largest unplaced total of `sections` at once.
    pub fn failing_section_after(
        &self,
        instance: &Instance,
        buffer: usize,
        sections: std::ops::Range<usize>,
        bound: u64,
        inference: bool,
    ) -> Option<usize> {
        let changed = instance.sections[buffer]
            .clone()
            .chain(self.affected.iter().map(|&s| s as usize));
        for s in changed {
            if self.section_fails(instance, s, bound, inference) {
                return Some(s);
            }
        }
        if inference {
            if let Some((largest, s)) = self.total_tree.max(sections.clone()) {
                if largest > 0 && bound as i128 + largest > instance.capacity as i128 {
                    return Some(s);
                }
            }
        }
        instance
            .obstacle_sections
            .iter()
            .map(|&s| s as usize)
            .filter(|s| sections.contains(s))
            .find(|&s| self.section_fails(instance, s, bound, inference))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{Buffer, Problem};
    use proptest::prelude::*;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    /// Everything a placement may change that its undo must restore: the offsets, the
    /// propagated bounds, the section floors and totals (and their range-max tree), the cut
    /// counts, the neighbour counts, the trail, and the levels of the buffers still placed.
    #[derive(Debug, PartialEq)]
    struct Snapshot {
        offsets: Vec<u64>,
        base: Vec<u64>,
        min_offsets: Vec<u64>,
        floors: Vec<u64>,
        totals: Vec<u64>,
        spanning: Vec<u32>,
        unplaced_neighbours: Vec<u32>,
        total_tree: MaxTree,
        trail: usize,
        placed_levels: Vec<Option<u32>>,
    }

    fn snapshot(state: &State) -> Snapshot {
        Snapshot {
            offsets: state.offsets.clone(),
            base: state.base.clone(),
            min_offsets: state.min_offsets.clone(),
            floors: state.floors.clone(),
            totals: state.totals.clone(),
            spanning: state.spanning.clone(),
            unplaced_neighbours: state.unplaced_neighbours.clone(),
            total_tree: state.total_tree.clone(),
            trail: state.trail.len(),
            placed_levels: (0..state.offsets.len())
                .map(|b| state.is_placed(b).then_some(state.levels[b]))
                .collect(),
        }
    }

    /// A random problem: some buffers fixed (without collisions), some aligned, some with a gap
    /// (so that the gapped separations and section widths are placed and undone too).
    fn problem(seed: u64) -> Problem {
        let mut rng = StdRng::seed_from_u64(seed);
        let n = rng.random_range(2..14usize);
        let mut buffers: Vec<Buffer> = Vec::new();
        for i in 0..n {
            let lower = rng.random_range(0..12u64);
            let mut b = Buffer::new(
                format!("b{i}"),
                lower,
                lower + rng.random_range(1..8u64),
                rng.random_range(1..20u64),
            );
            b.alignment = [1, 1, 2, 4][rng.random_range(0..4usize)];
            if b.lifetime() >= 3 && rng.random_range(0..4u32) == 0 {
                // A gap inside the lifetime, sometimes keeping a window of the range.
                let mut gap = crate::problem::Gap::new(b.lower + 1, b.upper - 1);
                if rng.random_range(0..2u32) == 0 {
                    gap.window = Some((0, b.size.div_ceil(2)));
                }
                b.gaps.push(gap);
            }
            if rng.random_range(0..5u32) == 0 {
                // Fixed high up, clear of every other fixed buffer.
                b.alignment = 1;
                b.offset = Some(200 + 40 * i as u64);
            }
            buffers.push(b);
        }
        Problem::new(buffers, None)
    }

    /// Open placements of [`random_walk`]: the buffer, the trail mark and the view before it.
    type Open<V> = Vec<(usize, usize, V)>;

    /// A random walk of `steps` placements (each at the buffer's lowest offset, under
    /// `capacity`; floors noted at random when `random_floors`, else always) and undos over
    /// `state`: each undo must bring back the `view` taken before its placement, and `after`
    /// checks the state after every step. The placements left open.
    fn random_walk<V: PartialEq + std::fmt::Debug>(
        instance: &Instance,
        state: &mut State,
        rng: &mut StdRng,
        (steps, capacity, random_floors): (usize, u64, bool),
        view: impl Fn(&State) -> V,
        mut after: impl FnMut(&State) -> Result<(), TestCaseError>,
    ) -> Result<Open<V>, TestCaseError> {
        let mut open: Open<V> = Vec::new();
        for _ in 0..steps {
            let unplaced: Vec<usize> = instance
                .free
                .iter()
                .copied()
                .filter(|&b| !state.is_placed(b))
                .filter(|&b| state.min_offsets[b] + instance.sizes[b] <= capacity)
                .collect();
            let undo = unplaced.is_empty() || (!open.is_empty() && rng.random_range(0..3u32) == 0);
            if undo {
                let Some((b, mark, before)) = open.pop() else {
                    break;
                };
                state.undo(instance, b, mark);
                prop_assert_eq!(view(state), before, "undo of buffer {}", b);
            } else {
                let b = unplaced[rng.random_range(0..unplaced.len())];
                let before = view(state);
                let mark = state.mark();
                let floor = !random_floors || rng.random_range(0..2u32) == 0;
                state.place(
                    instance,
                    b,
                    state.min_offsets[b],
                    open.len() as u32 + 1,
                    floor,
                );
                prop_assert!(state.is_placed(b));
                open.push((b, mark, before));
            }
            after(state)?;
        }
        Ok(open)
    }

    proptest! {
        #[test]
        fn undo_restores_every_field_of_the_state(seed in 0u64..1_000_000, steps in 1usize..60) {
            let problem = problem(seed);
            let capacity = 1000;
            let mut instance = Instance::new(&problem, capacity);
            if seed % 2 == 0 {
                instance.drop_neighbour_lists(); // Neighbours from the sections (without gaps).
            }
            let mut state = State::new(&instance);
            let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
            let initial = snapshot(&state);
            let walk = (steps, capacity, true);
            let mut open = random_walk(&instance, &mut state, &mut rng, walk, snapshot, |_| Ok(()))?;
            while let Some((b, mark, before)) = open.pop() {
                state.undo(&instance, b, mark);
                prop_assert_eq!(snapshot(&state), before, "undo of buffer {}", b);
            }
            prop_assert_eq!(snapshot(&state), initial);
        }

        #[test]
        fn tracked_free_members_agree_with_a_scan(seed in 0u64..1_000_000, steps in 1usize..80) {
            let problem = problem(seed);
            let capacity = 1000;
            let instance = Instance::new(&problem, capacity);
            let mut state = State::new(&instance);
            let mut rng = StdRng::seed_from_u64(seed ^ 0xf4ee);
            let tracked: Vec<bool> =
                (0..instance.members.len()).map(|_| rng.random_range(0..3u32) != 0).collect();
            state.track_free_members(&instance, &tracked);
            // Each tracked list holds the unplaced members of its section (in any order); an
            // undo puts every list back exactly as it was.
            let lists = |state: &State| -> Lists {
                (0..instance.members.len())
                    .map(|t| state.free_members(t).map(<[u32]>::to_vec))
                    .collect()
            };
            let scan = |state: &State| -> Lists {
                (0..instance.members.len())
                    .map(|t| {
                        tracked[t].then(|| {
                            let members = instance.members[t].iter().copied();
                            members.filter(|&b| !state.is_placed(b as usize)).collect()
                        })
                    })
                    .collect()
            };
            let sorted = |mut lists: Lists| {
                lists.iter_mut().flatten().for_each(|list| list.sort_unstable());
                lists
            };
            type Lists = Vec<Option<Vec<u32>>>;
            let open = random_walk(&instance, &mut state, &mut rng, (steps, capacity, false), lists, |state| {
                prop_assert_eq!(sorted(lists(state)), scan(state));
                Ok(())
            })?;
            // Tracking starts only at the root, and only once.
            let placed = state.placed;
            let mut other = State::new(&instance);
            if let Some(&(b, _, _)) = open.first() {
                other.place(&instance, b, other.min_offsets[b], 1, true);
                other.track_free_members(&instance, &tracked);
                prop_assert!((0..instance.members.len()).all(|t| other.free_members(t).is_none()));
            }
            prop_assert_eq!(placed, open.len());
        }
    }
}
