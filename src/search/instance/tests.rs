//! The instance's tests: linear memory, the neighbour lists against the sections, the
//! deadline while it is built, the fixed obstacles joined.

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

/// The 4000 buffers of the test above, live at once over 10 sections, with a gap in every
/// `every`-th buffer (and one in the first), in turn without and with a window.
fn gapped_crowd(every: u64) -> Problem {
    let buffers = (0..4000u64)
        .map(|i| {
            let mut b = Buffer::new(format!("b{i}"), i % 5, 1000 - i % 5, 1 + i % 7);
            if i % every == 0 {
                let mut gap = crate::problem::Gap::new(100 + i % 3, 200);
                if i % 2 == 1 {
                    gap.window = Some((0, 1));
                }
                b.gaps.push(gap);
            }
            b
        })
        .collect();
    Problem::new(buffers, None)
}

#[test]
fn memory_with_gaps_is_linear_in_sections_times_live_buffers_not_in_pairs() {
    // 16 million pairs of neighbours, whatever the gaps.
    for every in [4000, 10, 1] {
        let problem = gapped_crowd(every);
        let instance = Instance::new(&problem, 1 << 20);
        assert!(instance.neighbours.is_empty(), "no lists stored");
        assert_eq!(
            instance.degree(0),
            3999,
            "every pair meets: gaps of 100 steps"
        );
        assert!(
            instance.heap_bytes() <= bound(&instance),
            "a gap in every {every}th buffer: {} bytes for {} members",
            instance.heap_bytes(),
            members(&instance)
        );
    }
}

#[test]
fn building_an_instance_stops_at_the_deadline() {
    // With a gap in every buffer, and without gaps (4000 buffers live at once over 10
    // sections: 40,000 members, which are built by the deadline too).
    let mut plain = gapped_crowd(1);
    for b in &mut plain.buffers {
        b.gaps.clear();
    }
    for problem in [gapped_crowd(1), plain] {
        let timeline = Timeline::new(&problem);
        let gapped = problem.has_gaps();
        let passed = Deadline {
            at: Some(std::time::Instant::now()),
            cancel: None,
        };
        let built = Instance::within(&problem, &timeline, 1 << 20, &passed);
        assert!(built.is_none(), "gaps {gapped}");
        let cancel = std::sync::atomic::AtomicBool::new(true);
        let cancelled = Deadline {
            at: None,
            cancel: Some(&cancel),
        };
        let built = Instance::within(&problem, &timeline, 1 << 20, &cancelled);
        assert!(built.is_none(), "gaps {gapped}");
        let built = Instance::within(&problem, &timeline, 1 << 20, &Deadline::none());
        assert!(built.is_some(), "gaps {gapped}");
    }
}

#[test]
fn with_gaps_the_sections_give_the_neighbours_and_distances_the_lists_hold() {
    let (mut apart, mut inexact) = (0, 0);
    for seed in 0..40 {
        let problem = crate::generate::random_gapped(seed);
        let with_lists = Instance::new(&problem, 1 << 30);
        let mut without = Instance::new(&problem, 1 << 30);
        without.drop_neighbour_lists();
        assert!(without.neighbours.is_empty() && without.has_gaps());
        for &b in &with_lists.free {
            // The definition: the free buffers whose pieces meet `b`'s, at the distance
            // MiniMalloc's effective size gives.
            let pieces = |u: usize| problem.buffers[u].pieces();
            let expected: Vec<(u32, u64)> = (with_lists.free.iter())
                .filter(|&&u| u != b)
                .filter_map(|&u| {
                    let distance = separation(pieces(b), pieces(u))?;
                    Some((u as u32, distance.max(1) as u64))
                })
                .collect();
            let stored: Vec<(u32, u64)> = (with_lists.neighbours[b].iter().copied())
                .zip(with_lists.separations[b].iter().copied())
                .collect();
            assert_eq!(stored, expected, "seed {seed}, buffer {b}: the lists");
            let (live, starting) = without.neighbour_slices(b);
            let mut read: Vec<(u32, u64)> = (live.iter().chain(starting))
                .filter(|&&u| u as usize != b)
                .filter_map(|&u| Some((u, without.separation(b, u as usize)?)))
                .collect();
            read.sort_unstable();
            assert_eq!(read, expected, "seed {seed}, buffer {b}: the sections");
            assert_eq!(without.degree(b), expected.len(), "seed {seed}, buffer {b}");
            assert_eq!(
                with_lists.degree(b),
                expected.len(),
                "seed {seed}, buffer {b}"
            );
            apart += without.apart[b];
        }
        let free = &with_lists.free;
        let pieces = |u: usize| problem.buffers[u].pieces();
        let exact = free.iter().all(|&a| {
            free.iter().all(|&b| {
                a == b
                    || separation(pieces(a), pieces(b)).is_none()
                    || orders_exactly(&problem.buffers[a], &problem.buffers[b])
            })
        });
        assert_eq!(with_lists.exact, exact, "seed {seed}");
        assert_eq!(without.exact, exact, "seed {seed}");
        inexact += u32::from(!exact);
    }
    assert!(apart > 0, "some pairs overlap in time but never meet");
    assert!(
        inexact > 0,
        "some problems have windows that can interleave"
    );
}

#[test]
fn touching_fixed_buffers_make_one_obstacle_range() {
    // 3,000 fixed buffers stacked without a gap and live all the time, under 200 free ones:
    // 600,000 pairs, one range per free buffer.
    let mut buffers: Vec<Buffer> = (0..3000u64)
        .map(|i| Buffer {
            offset: Some(8 * i),
            ..Buffer::new(format!("f{i}"), i % 7, 100, 8)
        })
        .collect();
    buffers.extend((0..200u64).map(|i| Buffer::new(format!("b{i}"), i % 50, 100, 4)));
    let problem = Problem::new(buffers, None);
    let instance = Instance::new(&problem, 1 << 20);
    for &b in &instance.free {
        assert_eq!(instance.obstacles[b], vec![(0, 24_000)], "buffer {b}");
        assert_eq!(instance.lowest_fit(b, 0), 24_000);
    }
}

proptest::proptest! {
    #[test]
    fn joined_ranges_give_the_same_lowest_offsets(
        ranges in proptest::collection::vec((0u64..200, 0u64..40), 0..40),
        base in 0u64..260,
        size in 1u64..50,
        alignment in proptest::sample::select(vec![1u64, 2, 4, 8, 16]),
    ) {
        let mut raw: Vec<(u64, u64)> = ranges.iter().map(|&(low, len)| (low, low + len)).collect();
        raw.sort_unstable();
        let mut joined = raw.clone();
        join_ranges(&mut joined);
        proptest::prop_assert!(joined.windows(2).all(|w| w[0].1 < w[1].0));
        proptest::prop_assert_eq!(
            lowest_clear(&raw, base, size, alignment),
            lowest_clear(&joined, base, size, alignment)
        );
    }
}

#[test]
fn a_search_instance_is_not_built_above_its_member_entries() {
    let options = RandomOptions {
        buffers: 300,
        horizon: 100,
        max_lifetime: 60,
        ..RandomOptions::default()
    };
    let mut problem = random(&options, 5);
    problem.buffers[7].offset = Some(0); // Fixed buffers are no members.
    let timeline = Timeline::new(&problem);
    let instance = Instance::new(&problem, 1 << 30);
    let entries = members(&instance) as u64;
    assert_eq!(member_entries(&problem, &timeline), entries);
    let stop = Deadline::none();
    let within = |most| Instance::within_most(&problem, &timeline, 1 << 30, (&stop, most));
    assert!(within(entries).is_some());
    assert!(within(entries - 1).is_none());
}
