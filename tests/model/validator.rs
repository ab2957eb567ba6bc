//! The validator catches every planted violation, names the buffers at fault, accepts what is
//! valid (including buffers that share addresses at different times), and agrees with a naive
//! O(n^2) check on random solutions.

use crate::common;

use common::{naive_check, problems, Shape};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::cell::Cell;
use telamalloc::baselines::Baseline;
use telamalloc::validate::MAX_VIOLATIONS;
use telamalloc::{validate, Buffer, Problem, Solution, Violation};

fn solution(offsets: &[u64]) -> Solution {
    Solution {
        offsets: offsets.to_vec(),
    }
}

fn aligned(id: &str, lower: u64, upper: u64, size: u64, alignment: u64) -> Buffer {
    Buffer {
        alignment,
        ..Buffer::new(id, lower, upper, size)
    }
}

fn fixed(id: &str, lower: u64, upper: u64, size: u64, offset: u64) -> Buffer {
    Buffer {
        offset: Some(offset),
        ..Buffer::new(id, lower, upper, size)
    }
}

#[test]
fn a_valid_solution_passes() {
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
    let report = validate(&problem, &solution(&[0, 0, 4, 0, 8]), None);
    assert!(report.is_valid(), "{report}");
    assert_eq!(report.to_string(), "valid");
    assert_eq!(solution(&[0, 0, 4, 0, 8]).peak(&problem), 12);
}

#[test]
fn overlap_of_live_buffers_is_caught() {
    let problem = Problem::new(
        vec![Buffer::new("a", 0, 4, 4), Buffer::new("b", 2, 6, 4)],
        None,
    );
    let report = validate(&problem, &solution(&[0, 3]), None);
    assert_eq!(
        report.violations,
        vec![Violation::Overlap {
            first: "a".into(),
            second: "b".into(),
            time: 2
        }]
    );
    assert!(report.to_string().contains("'a' and 'b'"), "{report}");
    // One byte of overlap is enough; none is fine.
    assert!(!validate(&problem, &solution(&[4, 1]), None).is_valid());
    assert!(validate(&problem, &solution(&[4, 0]), None).is_valid());
    assert!(validate(&problem, &solution(&[0, 4]), None).is_valid());
    // Same offset, one lifetime inside the other.
    let problem = Problem::new(
        vec![Buffer::new("long", 0, 10, 8), Buffer::new("short", 4, 5, 1)],
        None,
    );
    let report = validate(&problem, &solution(&[0, 7]), None);
    assert_eq!(
        report.violations,
        vec![Violation::Overlap {
            first: "long".into(),
            second: "short".into(),
            time: 4
        }]
    );
}

#[test]
fn address_sharing_at_different_times_is_allowed() {
    // Touching lifetimes (upper == lower) are not live at the same time.
    let problem = Problem::new(
        vec![
            Buffer::new("a", 0, 2, 8),
            Buffer::new("b", 2, 4, 8),
            Buffer::new("c", 4, 9, 8),
            Buffer::new("d", 20, 30, 8),
        ],
        Some(8),
    );
    let report = validate(&problem, &solution(&[0, 0, 0, 0]), None);
    assert!(report.is_valid(), "{report}");
    // Ending and starting at one time step in any input order.
    let problem = Problem::new(
        vec![Buffer::new("late", 5, 7, 4), Buffer::new("early", 1, 5, 4)],
        None,
    );
    assert!(validate(&problem, &solution(&[0, 0]), None).is_valid());
}

#[test]
fn over_capacity_is_caught() {
    let problem = Problem::new(
        vec![Buffer::new("a", 0, 2, 4), Buffer::new("b", 0, 2, 4)],
        Some(8),
    );
    let report = validate(&problem, &solution(&[0, 5]), None);
    assert_eq!(
        report.violations,
        vec![Violation::OverCapacity {
            id: "b".into(),
            offset: 5,
            size: 4,
            capacity: 8
        }]
    );
    assert!(validate(&problem, &solution(&[0, 4]), None).is_valid());
    // A capacity given to the validator overrides the problem's.
    assert!(validate(&problem, &solution(&[0, 5]), Some(9)).is_valid());
    let report = validate(&problem, &solution(&[0, 4]), Some(7));
    assert_eq!(report.violations.len(), 1, "{report}");
    assert!(
        matches!(&report.violations[0], Violation::OverCapacity { id, capacity: 7, .. } if id == "b")
    );
    // Without a capacity, only 64 bits bound the end.
    let problem = problem.with_capacity(None);
    let report = validate(&problem, &solution(&[0, u64::MAX - 2]), None);
    assert!(
        matches!(&report.violations[..], [Violation::OverCapacity { id, .. }] if id == "b"),
        "{report}"
    );
    assert!(validate(&problem, &solution(&[0, u64::MAX - 4]), None).is_valid());
}

#[test]
fn misalignment_is_caught() {
    let problem = Problem::new(
        vec![aligned("a", 0, 2, 4, 1), aligned("b", 0, 2, 4, 8)],
        None,
    );
    let report = validate(&problem, &solution(&[0, 12]), None);
    assert_eq!(
        report.violations,
        vec![Violation::Misaligned {
            id: "b".into(),
            offset: 12,
            alignment: 8
        }]
    );
    assert!(validate(&problem, &solution(&[0, 8]), None).is_valid());
    assert!(validate(&problem, &solution(&[3, 16]), None).is_valid());
}

#[test]
fn a_moved_fixed_offset_is_caught() {
    let problem = Problem::new(
        vec![Buffer::new("a", 0, 2, 4), fixed("pinned", 0, 2, 4, 16)],
        Some(32),
    );
    let report = validate(&problem, &solution(&[0, 8]), None);
    assert_eq!(
        report.violations,
        vec![Violation::MovedFixed {
            id: "pinned".into(),
            fixed: 16,
            offset: 8
        }]
    );
    assert!(validate(&problem, &solution(&[0, 16]), None).is_valid());
}

#[test]
fn a_missing_or_extra_offset_is_caught() {
    let problem = Problem::new(
        vec![
            Buffer::new("a", 0, 2, 4),
            Buffer::new("b", 0, 2, 4),
            Buffer::new("c", 0, 2, 4),
        ],
        None,
    );
    for offsets in [&[0, 4][..], &[0, 4, 8, 12], &[]] {
        let report = validate(&problem, &solution(offsets), None);
        assert_eq!(
            report.violations,
            vec![Violation::WrongLength {
                expected: 3,
                found: offsets.len()
            }]
        );
    }
}

#[test]
fn violations_name_the_right_buffers_among_many() {
    // Ten buffers stacked at distinct offsets, live all the time; then plant one fault each.
    let buffers: Vec<Buffer> = (0..10)
        .map(|i| aligned(&format!("x{i}"), i, 20 + i, 8, 8))
        .collect();
    let problem = Problem::new(buffers, Some(80));
    let good: Vec<u64> = (0..10).map(|i| 8 * i).collect();
    assert!(validate(&problem, &solution(&good), None).is_valid());

    let mut bad = good.clone();
    bad[7] = bad[3] + 4; // x7 overlaps x3, and breaks its alignment.
    let report = validate(&problem, &solution(&bad), None);
    let overlaps: Vec<_> = report
        .violations
        .iter()
        .filter_map(|v| match v {
            Violation::Overlap {
                first,
                second,
                time,
            } => Some((first.clone(), second.clone(), *time)),
            _ => None,
        })
        .collect();
    // x7 at 28..36 meets x3 (24..32) and x4 (32..40).
    assert!(!overlaps.is_empty(), "{report}");
    for (first, second, time) in &overlaps {
        let pair = [first.as_str(), second.as_str()];
        assert!(pair.contains(&"x7"), "{report}");
        assert!(pair.contains(&"x3") || pair.contains(&"x4"), "{report}");
        assert!((7..23).contains(time), "{report}");
    }
    assert!(report.violations.contains(&Violation::Misaligned {
        id: "x7".into(),
        offset: 28,
        alignment: 8
    }));

    let mut bad = good.clone();
    bad[9] = 80;
    let report = validate(&problem, &solution(&bad), None);
    assert_eq!(
        report.violations,
        vec![Violation::OverCapacity {
            id: "x9".into(),
            offset: 80,
            size: 8,
            capacity: 80
        }]
    );
}

#[test]
fn the_report_keeps_at_most_max_violations() {
    let buffers: Vec<Buffer> = (0..40)
        .map(|i| Buffer::new(format!("b{i}"), 0, 5, 4))
        .collect();
    let problem = Problem::new(buffers, None);
    let report = validate(&problem, &solution(&[0; 40]), None);
    assert_eq!(report.violations.len(), MAX_VIOLATIONS);
    assert_eq!(report.to_string().lines().count(), MAX_VIOLATIONS);
}

#[test]
fn a_zero_size_buffer_does_not_hide_an_overlap() {
    let problem = Problem::new(
        vec![
            Buffer::new("big", 0, 10, 10),
            Buffer::new("empty", 0, 10, 0),
            Buffer::new("late", 2, 4, 2),
        ],
        None,
    );
    // 'empty' sorts just below 'late' by offset and hides 'big' from the neighbour check.
    let report = validate(&problem, &solution(&[0, 0, 6]), None);
    assert!(!report.is_valid(), "'late' at 6..8 overlaps 'big' at 0..10");
}

/// A random problem, an optional capacity and offsets: either arbitrary small offsets (often
/// invalid) or a baseline's valid layout with at most one planted change.
fn cases() -> impl Strategy<Value = (Problem, Option<u64>, Vec<u64>)> {
    (
        problems(Shape::CONSTRAINED),
        prop::collection::vec((0..160u64, prop::bool::weighted(0.8)), 14),
        prop::bool::ANY,
        0..4usize,
        0..14usize,
        -20i64..20,
        prop::option::weighted(0.5, -4i64..12),
    )
        .prop_map(
            |(problem, random, from_baseline, change, who, delta, capacity_slack)| {
                let n = problem.len();
                let mut offsets: Vec<u64> = if from_baseline {
                    Baseline::TfliteMicro.allocate(&problem, 0).offsets
                } else {
                    problem
                        .buffers
                        .iter()
                        .zip(&random)
                        .map(|(b, &(offset, keep_rules))| match (b.offset, keep_rules) {
                            (Some(fixed), true) => fixed,
                            (_, true) => common::round_up(offset, b.alignment),
                            (_, false) => offset,
                        })
                        .collect()
                };
                let who = who % n;
                match change {
                    1 => offsets[who] = offsets[who].saturating_add_signed(delta),
                    2 => offsets.swap(who, (who + 1) % n),
                    3 => offsets[who] = offsets[(who + 1) % n],
                    _ => {}
                }
                let peak = Solution {
                    offsets: offsets.clone(),
                }
                .peak(&problem);
                let capacity = capacity_slack.map(|s| peak.saturating_add_signed(s).max(1));
                (problem, capacity, offsets)
            },
        )
}

#[test]
fn agrees_with_a_naive_check_on_random_solutions() {
    let valid = Cell::new(0usize);
    let invalid = Cell::new(0usize);
    let mut runner = TestRunner::new(Config {
        cases: 512,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&cases(), |(problem, capacity, offsets)| {
            let naive = naive_check(&problem, &offsets, capacity);
            let report = validate(&problem, &solution(&offsets), capacity);
            prop_assert_eq!(report.is_valid(), naive.is_valid(), "{}", report);
            if naive.is_valid() {
                valid.set(valid.get() + 1);
                return Ok(());
            }
            invalid.set(invalid.get() + 1);
            let id = |i: usize| problem.buffers[i].id.clone();
            let index = |id: &str| problem.buffers.iter().position(|b| b.id == id).unwrap();
            // Every reported fault is real.
            for v in &report.violations {
                match v {
                    Violation::Misaligned { id, .. } => {
                        prop_assert!(naive.misaligned.contains(&index(id)), "{}", v)
                    }
                    Violation::MovedFixed { id, .. } => {
                        prop_assert!(naive.moved.contains(&index(id)), "{}", v)
                    }
                    Violation::OverCapacity { id, .. } => {
                        prop_assert!(naive.over_capacity.contains(&index(id)), "{}", v)
                    }
                    Violation::Overlap {
                        first,
                        second,
                        time,
                    } => {
                        let (i, j) = (index(first), index(second));
                        let pair = (i.min(j), i.max(j));
                        prop_assert!(naive.overlaps.contains(&pair), "{}", v);
                        for b in [&problem.buffers[i], &problem.buffers[j]] {
                            prop_assert!(b.lower <= *time && *time < b.upper, "{}", v);
                        }
                    }
                    Violation::WrongLength { .. }
                    | Violation::WrongMemory { .. }
                    | Violation::MovedOut { .. } => prop_assert!(false, "{}", v),
                }
            }
            // With room in the report, every per-buffer fault is listed, in buffer order.
            let per_buffer = naive.misaligned.len() + naive.moved.len() + naive.over_capacity.len();
            if per_buffer < MAX_VIOLATIONS {
                let listed = |pick: fn(&Violation) -> Option<&String>| -> Vec<String> {
                    report.violations.iter().filter_map(pick).cloned().collect()
                };
                prop_assert_eq!(
                    listed(|v| match v {
                        Violation::Misaligned { id, .. } => Some(id),
                        _ => None,
                    }),
                    naive.misaligned.iter().map(|&i| id(i)).collect::<Vec<_>>()
                );
                prop_assert_eq!(
                    listed(|v| match v {
                        Violation::MovedFixed { id, .. } => Some(id),
                        _ => None,
                    }),
                    naive.moved.iter().map(|&i| id(i)).collect::<Vec<_>>()
                );
                prop_assert_eq!(
                    listed(|v| match v {
                        Violation::OverCapacity { id, .. } => Some(id),
                        _ => None,
                    }),
                    naive
                        .over_capacity
                        .iter()
                        .map(|&i| id(i))
                        .collect::<Vec<_>>()
                );
                if !naive.overlaps.is_empty() {
                    prop_assert!(
                        report
                            .violations
                            .iter()
                            .any(|v| matches!(v, Violation::Overlap { .. })),
                        "missed overlaps {:?}: {}",
                        naive.overlaps,
                        report
                    );
                }
            }
            Ok(())
        })
        .unwrap();
    // The generator must exercise both outcomes for the comparison to mean anything.
    assert!(valid.get() >= 50, "only {} valid cases", valid.get());
    assert!(invalid.get() >= 50, "only {} invalid cases", invalid.get());
}
