//! The edge finder's tests: both rules on small cases, cancellation, undo, the sections passed
//! over, and every pass against the windows checked one by one.

use super::few::FEW;
use super::*;
use crate::problem::{Buffer, Problem};

/// Capacity 10. `w` (size 2, live at 0-2) is placed at 0; `v` (size 6, live at 0-3) then
/// starts at 2 or above; `u` (size 4, live at 2-3) shares the section 2-3 with `v`, where
/// the two fill the capacity. `v` cannot go under `u` (2 + 6 + 4 > 10), so `u` ends by 4
/// (from the top), and then `v` starts at 4 or above (from below).
fn squeezed() -> (Instance, State) {
    let buffers = vec![
        Buffer::new("w", 0, 2, 2),
        Buffer::new("v", 0, 3, 6),
        Buffer::new("u", 2, 3, 4),
    ];
    let problem = Problem::new(buffers, None);
    let instance = Instance::new(&problem, 10);
    let mut state = State::new(&instance);
    state.place(&instance, 0, 0, 1, true);
    (instance, state)
}

#[test]
fn both_rules_fire_and_feed_each_other() {
    let (instance, state) = squeezed();
    let mut edge = EdgeFinder::new(&instance);
    let all = 0..instance.members.len();
    assert_eq!(state.min_offsets[1], 2);
    assert_eq!(
        edge.propagate(&instance, &state, &[0, 1, 2], all, None, &|| false),
        Ok(())
    );
    assert_eq!(edge.bounds[2].end, 4, "u goes under v");
    assert_eq!(edge.lowest(1), 4, "v goes above u");
    assert_eq!(edge.lowest(2), 0);
    // Taken back on the way up.
    edge.undo(0);
    assert_eq!((edge.lowest(1), edge.bounds[2].end), (0, 10));
}

#[test]
fn a_cancelled_propagation_skips_its_passes() {
    let (instance, state) = squeezed();
    let mut edge = EdgeFinder::new(&instance);
    let all = 0..instance.members.len();
    let cancelled = edge.propagate(&instance, &state, &[0, 1, 2], all.clone(), None, &|| true);
    assert_eq!(cancelled, Ok(()));
    // The bounds the placement of w gives (v at 2), none of the passes' (v at 4, u by 4).
    assert_eq!((edge.lowest(1), edge.bounds[2].end), (2, 10));
    edge.undo(0);
    // Not cancelled: asked before each pass, and the passes prove both bounds.
    let asked = std::cell::Cell::new(0);
    let full = edge.propagate(&instance, &state, &[0, 1, 2], all, None, &|| {
        asked.set(asked.get() + 1);
        false
    });
    assert_eq!(full, Ok(()));
    assert!(asked.get() >= 2, "{} passes", asked.get());
    assert_eq!((edge.lowest(1), edge.bounds[2].end), (4, 4));
}

#[test]
fn an_overfull_window_fails_the_node() {
    let (instance, state) = squeezed();
    let mut edge = EdgeFinder::new(&instance);
    let all = 0..instance.members.len();
    // With every buffer at or above 1 (a canonical bound), u and v need 1 + 4 + 6 > 10.
    let ranks = [0, 0, 0];
    let failed = edge.propagate(
        &instance,
        &state,
        &[0, 1, 2],
        all,
        Some((1, 0, &ranks)),
        &|| false,
    );
    assert!(failed.is_err());
}

#[test]
fn the_canonical_rank_lifts_a_buffer_off_the_bound() {
    let (instance, state) = squeezed();
    let mut edge = EdgeFinder::new(&instance);
    let all = 0..instance.members.len();
    // The last placement was at 0 with rank 1. u, ranked after it, may still start at 0,
    // under v; ranked before it (rank 0), u must start above 0 and no longer fits under v.
    let after = [0, 2, 2];
    let mark = edge.mark();
    let ok = edge.propagate(
        &instance,
        &state,
        &[0, 1, 2],
        all.clone(),
        Some((0, 1, &after)),
        &|| false,
    );
    assert_eq!(ok, Ok(()));
    assert_eq!(edge.lowest(2), 0);
    edge.undo(mark);
    let before = [0, 2, 0];
    let lifted = edge.propagate(
        &instance,
        &state,
        &[0, 1, 2],
        all,
        Some((0, 1, &before)),
        &|| false,
    );
    assert!(lifted.is_err());
}

#[test]
fn a_part_forgets_what_was_proved_above_it_until_undone() {
    let (instance, state) = squeezed();
    let mut edge = EdgeFinder::new(&instance);
    let all = 0..instance.members.len();
    assert_eq!(
        edge.propagate(&instance, &state, &[1, 2], all.clone(), None, &|| false),
        Ok(())
    );
    let proved = (edge.lowest(1), edge.lowest(2), edge.bounds[2].end);
    assert_eq!(proved, (4, 0, 4));
    // An independent part starts an order of its own: it starts from nothing proved.
    let mark = edge.mark();
    edge.forget(&instance, &state, &[1, 2]);
    assert_eq!(
        (edge.lowest(1), edge.lowest(2), edge.bounds[2].end),
        (0, 0, 10)
    );
    // Its own propagation proves what the placements imply, and is taken back with it.
    assert_eq!(
        edge.propagate(&instance, &state, &[1, 2], all, None, &|| false),
        Ok(())
    );
    assert_eq!((edge.lowest(1), edge.lowest(2), edge.bounds[2].end), proved);
    edge.undo(mark);
    assert_eq!((edge.lowest(1), edge.lowest(2), edge.bounds[2].end), proved);
    edge.undo(0);
    assert_eq!(
        (edge.lowest(1), edge.lowest(2), edge.bounds[2].end),
        (0, 0, 10)
    );
}

#[test]
fn only_sections_no_neighbour_contains_are_passed_over() {
    let (instance, _) = squeezed();
    let edge = EdgeFinder::new(&instance);
    // Sections 0-2 (w, v) and 2-3 (v, u): neither holds the other's buffers.
    let live: Vec<&Vec<u32>> = instance.members.iter().collect();
    assert_eq!(live, [&vec![0, 1], &vec![1, 2]]);
    assert_eq!(edge.maximal, [true, true]);
}

/// Draws below a bound, from a xorshift generator started at `seed`.
fn draws(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |below| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below
    }
}

#[test]
fn each_section_knows_whether_it_is_maximal() {
    let mut next = draws(0x2545_f491_4f6c_dd1d);
    for _ in 0..50 {
        let buffers = (0..2 + next(30))
            .map(|i| {
                let start = next(40);
                Buffer::new(format!("b{i}"), start, start + 1 + next(10), 1 + next(5))
            })
            .collect();
        let instance = Instance::new(&Problem::new(buffers, None), 1000);
        let edge = EdgeFinder::new(&instance);
        let count = instance.members.len();
        let within = |s: usize, other: usize| {
            let others: std::collections::HashSet<_> = instance.members[other].iter().collect();
            instance.members[s].iter().all(|b| others.contains(b))
        };
        let maximal = |t: usize| {
            let held = (t > 0 && within(t, t - 1)) || (t + 1 < count && within(t, t + 1));
            !instance.members[t].is_empty() && !held
        };
        for t in 0..count {
            assert_eq!(edge.maximal[t], maximal(t), "section {t} of {count}");
        }
    }
}

#[test]
fn enqueue_adds_the_waiting_maximal_sections_in_order() {
    let mut next = draws(0x1234_5678_9abc_def1);
    for _ in 0..30 {
        // Long horizons, so that sections run over several words of the bit set.
        let buffers: Vec<Buffer> = (0..20 + next(60))
            .map(|i| {
                let start = next(400);
                Buffer::new(format!("b{i}"), start, start + 1 + next(150), 1)
            })
            .collect();
        let count = buffers.len();
        let instance = Instance::new(&Problem::new(buffers, None), 1000);
        let mut edge = EdgeFinder::new(&instance);
        let maximal = edge.maximal_sections().to_vec();
        let sections = instance.members.len();
        // The model: a queue and whether each section is in it.
        let (mut queue, mut queued) = (Vec::new(), vec![false; sections]);
        for _ in 0..200 {
            if next(3) == 0 {
                // A pass takes the first section off the queue.
                if let Some(s) = edge.queue.pop_front() {
                    edge.waiting[s / 64] |= 1 << (s % 64);
                    assert_eq!(s, queue.remove(0));
                    queued[s] = false;
                }
                continue;
            }
            let b = next(count as u64) as usize;
            let lo = next(sections as u64 + 1) as usize;
            let range = lo..lo + next((sections - lo) as u64 + 1) as usize;
            edge.enqueue(&instance, b, &range);
            let span = instance.sections[b].clone();
            for t in span.start.max(range.start)..span.end.min(range.end) {
                if maximal[t] && !queued[t] {
                    queued[t] = true;
                    queue.push(t);
                }
            }
            assert_eq!(edge.queue.iter().copied().collect::<Vec<_>>(), queue);
        }
    }
}

impl EdgeFinder {
    /// Every buffer's lowest offset and end.
    fn proved(&self) -> Vec<(u64, u64)> {
        self.bounds.iter().map(|b| (b.lowest, b.end)).collect()
    }
}

/// One pass with every window `[e, l]` (each task's lowest offset and end) and every task
/// outside it, with no shortcut: what [`EdgeFinder::pass`] must deduce.
fn every_window(edge: &mut EdgeFinder, instance: &Instance, tasks: &[Task]) -> Result<(), ()> {
    for l in tasks.iter().map(|t| t.end) {
        for e in tasks.iter().map(|t| t.lowest) {
            let inside: u64 = tasks
                .iter()
                .filter(|t| t.lowest >= e && t.end <= l)
                .map(|t| t.size)
                .sum();
            if inside == 0 || l <= e {
                continue;
            }
            if e + inside > l {
                return Err(());
            }
            for t in tasks.iter().filter(|t| t.lowest < e || t.end > l) {
                edge.push_out(instance, *t, (e, l), inside)?;
            }
        }
    }
    Ok(())
}

#[test]
fn a_pass_deduces_what_every_window_deduces() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |below: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below
    };
    let (mut failed, mut many) = (0, 0);
    for _ in 0..3000 {
        // Up to 50 tasks (more distinct offsets than the insertion path takes), sizes 1-12,
        // alignments 1 or 2, lowest offsets and ends on a coarse grid so that they repeat.
        let count = 2 + next(49) as usize;
        let capacity = 40 + next(160);
        let buffers = (0..count)
            .map(|i| {
                let mut buffer = Buffer::new(format!("b{i}"), 0, 1, 1 + next(12));
                buffer.alignment = 1 + next(2);
                buffer
            })
            .collect();
        let instance = Instance::new(&Problem::new(buffers, None), capacity);
        let all: Vec<Task> = (0..count)
            .map(|i| {
                let size = instance.sizes[i];
                let lowest = next(40) * 2;
                let end = capacity.saturating_sub(next(20) * 3).max(lowest + size);
                Task {
                    buffer: i as u32,
                    lowest,
                    end,
                    size,
                }
            })
            .collect();
        // About one buffer in four is placed: a member of the section, not a task.
        let free: Vec<bool> = all
            .iter()
            .map(|t| t.end <= capacity && next(4) != 0)
            .collect();
        let tasks: Vec<Task> = all
            .iter()
            .copied()
            .filter(|t| free[t.buffer as usize])
            .collect();
        let (mut fast, mut slow) = (EdgeFinder::new(&instance), EdgeFinder::new(&instance));
        for edge in [&mut fast, &mut slow] {
            for t in &all {
                edge.bounds[t.buffer as usize].lowest = t.lowest;
                edge.bounds[t.buffer as usize].end = t.end;
            }
        }
        let distinct = |value: fn(&Task) -> u64| {
            let values: std::collections::BTreeSet<u64> = tasks.iter().map(value).collect();
            values.len()
        };
        if distinct(|t| t.lowest) > FEW || distinct(|t| t.end) > FEW {
            many += 1;
        }
        let members: Vec<u32> = (0..count as u32).collect();
        let verdict = fast.pass(&instance, &members, None, &|b| free[b], &|| false);
        assert_eq!(
            verdict,
            every_window(&mut slow, &instance, &tasks),
            "{tasks:?}"
        );
        if verdict.is_ok() {
            assert_eq!(fast.proved(), slow.proved(), "{tasks:?}");
        } else {
            failed += 1;
        }
    }
    // Both outcomes are exercised, and both ways of bucketing the tasks.
    assert!((100..2900).contains(&failed), "{failed} of 3000 failed");
    assert!(
        (100..2900).contains(&many),
        "{many} of 3000 with many values"
    );
}
