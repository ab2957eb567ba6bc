//! LOAD, sections and partitions against a step-by-step computation over every time step.

use crate::common;

use common::{naive_live_totals, naive_load, problems, Shape};
use proptest::prelude::*;
use telamalloc::analysis::{load, Stats, Timeline};
use telamalloc::{Buffer, Problem};

/// A section as a step-by-step sweep sees it: `[start, end)`, its live buffers and their total.
#[derive(Debug, PartialEq, Eq)]
struct NaiveSection {
    start: u64,
    end: u64,
    live: Vec<usize>,
    total: u64,
}

/// Maximal runs of consecutive time steps with the same non-empty live set.
fn naive_sections(problem: &Problem) -> Vec<NaiveSection> {
    let mut sections: Vec<NaiveSection> = Vec::new();
    for t in 0..problem.horizon() {
        let live: Vec<usize> = (0..problem.len())
            .filter(|&i| problem.buffers[i].lower <= t && t < problem.buffers[i].upper)
            .collect();
        if live.is_empty() {
            continue;
        }
        match sections.last_mut() {
            Some(last) if last.end == t && last.live == live => last.end = t + 1,
            _ => {
                let total = live.iter().map(|&i| problem.buffers[i].size).sum();
                sections.push(NaiveSection {
                    start: t,
                    end: t + 1,
                    live,
                    total,
                });
            }
        }
    }
    sections
}

fn shape() -> Shape {
    Shape {
        max_buffers: 16,
        max_time: 30,
        max_lifetime: 10,
        max_size: 100,
        alignments: false,
        fixed: false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn load_is_the_largest_live_total(problem in problems(shape())) {
        let timeline = Timeline::new(&problem);
        prop_assert_eq!(timeline.load(), naive_load(&problem));
        prop_assert_eq!(load(&problem), naive_load(&problem));
        prop_assert_eq!(Stats::of(&problem).load, naive_load(&problem));
    }

    #[test]
    fn sections_are_the_runs_of_equal_live_sets(problem in problems(shape())) {
        let timeline = Timeline::new(&problem);
        let naive = naive_sections(&problem);
        let found: Vec<(u64, u64, u64)> = (0..timeline.len())
            .map(|k| (timeline.starts[k], timeline.ends[k], timeline.totals[k]))
            .collect();
        let expected: Vec<(u64, u64, u64)> =
            naive.iter().map(|s| (s.start, s.end, s.total)).collect();
        prop_assert_eq!(found, expected);
        prop_assert_eq!(timeline.is_empty(), naive.is_empty());
        // Each buffer covers exactly the sections it is live in.
        prop_assert_eq!(timeline.buffer_sections.len(), problem.len());
        for (i, range) in timeline.buffer_sections.iter().enumerate() {
            let live_in: Vec<usize> = (0..naive.len()).filter(|&k| naive[k].live.contains(&i)).collect();
            prop_assert_eq!(range.clone().collect::<Vec<_>>(), live_in);
        }
        // spanning[k] counts the buffers live in both section k and k + 1.
        let spanning: Vec<u32> = naive
            .windows(2)
            .map(|w| w[0].live.iter().filter(|i| w[1].live.contains(i)).count() as u32)
            .collect();
        prop_assert_eq!(&timeline.spanning, &spanning);
        // The live totals agree with the steps too.
        let totals = naive_live_totals(&problem);
        for (k, s) in naive.iter().enumerate() {
            for t in s.start..s.end {
                prop_assert_eq!(totals[t as usize], timeline.totals[k]);
            }
        }
        prop_assert_eq!(Stats::of(&problem).sections, naive.len());
    }

    #[test]
    fn partitions_are_the_finest_time_cuts(problem in problems(shape())) {
        let timeline = Timeline::new(&problem);
        let partitions = timeline.partitions();
        prop_assert_eq!(Stats::of(&problem).partitions, partitions.len());
        // Every buffer is in exactly one partition, listed in problem order.
        let mut owner = vec![None; problem.len()];
        for (p, partition) in partitions.iter().enumerate() {
            prop_assert!(!partition.buffers.is_empty());
            prop_assert!(partition.buffers.windows(2).all(|w| w[0] < w[1]));
            for &i in &partition.buffers {
                prop_assert_eq!(owner[i], None);
                owner[i] = Some(p);
                // Its sections lie in the partition's.
                let r = &timeline.buffer_sections[i];
                prop_assert!(partition.sections.start <= r.start && r.end <= partition.sections.end);
            }
        }
        prop_assert!(owner.iter().all(Option::is_some));
        // The partitions' sections tile the timeline in order.
        let mut next = 0;
        for partition in &partitions {
            prop_assert_eq!(partition.sections.start, next);
            prop_assert!(partition.sections.end > partition.sections.start);
            next = partition.sections.end;
        }
        prop_assert_eq!(next, timeline.len());
        // In time: no buffer crosses from one partition into the next.
        let span = |buffers: &[usize]| {
            let lower = buffers.iter().map(|&i| problem.buffers[i].lower).min().unwrap();
            let upper = buffers.iter().map(|&i| problem.buffers[i].upper).max().unwrap();
            (lower, upper)
        };
        for pair in partitions.windows(2) {
            prop_assert!(span(&pair[0].buffers).1 <= span(&pair[1].buffers).0);
        }
        // And none can be split: every time step strictly inside a partition's span is crossed
        // by one of its buffers (live both just before and at it).
        for partition in &partitions {
            let (lower, upper) = span(&partition.buffers);
            for t in lower + 1..upper {
                let crossed = partition
                    .buffers
                    .iter()
                    .any(|&i| problem.buffers[i].lower < t && t < problem.buffers[i].upper);
                prop_assert!(crossed, "partition {:?} could be cut at {}", partition, t);
            }
        }
    }
}

#[test]
fn the_five_buffer_example() {
    let problem = Problem::new(
        vec![
            Buffer::new("b1", 0, 3, 4),
            Buffer::new("b2", 3, 9, 4),
            Buffer::new("b3", 0, 9, 4),
            Buffer::new("b4", 9, 21, 4),
            Buffer::new("b5", 0, 21, 4),
        ],
        Some(12),
    );
    let timeline = Timeline::new(&problem);
    assert_eq!(timeline.starts, vec![0, 3, 9]);
    assert_eq!(timeline.ends, vec![3, 9, 21]);
    assert_eq!(timeline.totals, vec![12, 12, 8]);
    assert_eq!(timeline.spanning, vec![2, 1]);
    assert_eq!(timeline.load(), 12);
    assert_eq!(timeline.partitions().len(), 1);
    let stats = Stats::of(&problem);
    assert_eq!(
        (stats.buffers, stats.horizon, stats.load, stats.capacity),
        (5, 21, 12, Some(12))
    );
    assert_eq!(stats.load_over_capacity, Some(1.0));
    assert_eq!(stats.largest_buffer, 4);
    assert!((stats.largest_over_load - 4.0 / 12.0).abs() < 1e-12);
}

#[test]
fn touching_and_separated_lifetimes_are_cut() {
    let problem = Problem::new(
        vec![
            Buffer::new("a", 0, 2, 4),
            Buffer::new("b", 2, 4, 8),
            Buffer::new("c", 7, 9, 2),
            Buffer::new("d", 8, 12, 2),
        ],
        None,
    );
    let timeline = Timeline::new(&problem);
    assert_eq!(timeline.starts, vec![0, 2, 7, 8, 9]);
    assert_eq!(timeline.ends, vec![2, 4, 8, 9, 12]);
    assert_eq!(timeline.totals, vec![4, 8, 2, 4, 2]);
    assert_eq!(timeline.load(), 8);
    let groups: Vec<Vec<usize>> = timeline
        .partitions()
        .into_iter()
        .map(|p| p.buffers)
        .collect();
    assert_eq!(groups, vec![vec![0], vec![1], vec![2, 3]]);
}

#[test]
fn empty_problem() {
    let problem = Problem::default();
    let timeline = Timeline::new(&problem);
    assert!(timeline.is_empty());
    assert_eq!(timeline.load(), 0);
    assert!(timeline.partitions().is_empty());
    let stats = Stats::of(&problem);
    assert_eq!((stats.buffers, stats.load, stats.sections), (0, 0, 0));
}

#[test]
fn huge_times_and_sizes() {
    let top = u64::MAX;
    let half = 1u64 << 63;
    let problem = Problem::new(
        vec![
            Buffer::new("a", top - 10, top, half - 1),
            Buffer::new("b", top - 5, top - 1, half),
            Buffer::new("c", 0, 1, half),
        ],
        None,
    );
    let timeline = Timeline::new(&problem);
    assert_eq!(timeline.load(), top);
    assert_eq!(timeline.starts, vec![0, top - 10, top - 5, top - 1]);
    assert_eq!(timeline.partitions().len(), 2);
}
