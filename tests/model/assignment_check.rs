//! `validate_assignment` against a brute force written here from the rules alone, sharing
//! nothing with `src/validate.rs`: every byte of every memory at every time step is counted,
//! on tiny spill and memories problems with random (mostly wrong) answers.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use telamalloc::{validate_assignment, Assignment, Buffer, Memory, Problem, Solution};

/// A tiny problem, an answer (offset and memory of each buffer) and the spill capacity.
#[derive(Debug, Clone)]
struct Case {
    problem: Problem,
    offsets: Vec<u64>,
    memory: Vec<Option<usize>>,
    capacity: u64,
}

fn cases() -> impl Strategy<Value = Case> {
    let buffer = (
        0u64..4,
        1u64..4,
        1u64..5,
        prop::sample::select(vec![1u64, 2]),
        prop::option::weighted(0.25, 0u64..8),
        prop::sample::subsequence(vec!["m0", "m1"], 0..=2),
    );
    let memories = prop::option::of(prop::collection::vec((1u64..13, 0u64..3), 1..3));
    (
        prop::collection::vec(buffer, 1..6),
        memories,
        1u64..13,
        prop::collection::vec((0u64..9, 0usize..6), 6),
    )
        .prop_map(|(buffers, memories, capacity, answers)| {
            let memories: Vec<Memory> = memories
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(|(m, (capacity, cost))| Memory::new(format!("m{m}"), capacity, cost))
                .collect();
            let buffers: Vec<Buffer> = buffers
                .into_iter()
                .enumerate()
                .map(
                    |(i, (lower, length, size, alignment, offset, allowed))| Buffer {
                        alignment,
                        offset: offset.map(|o| o / alignment * alignment),
                        memories: if memories.is_empty() {
                            Vec::new()
                        } else {
                            allowed.iter().map(|m| m.to_string()).collect()
                        },
                        ..Buffer::new(format!("b{i}"), lower, lower + length, size)
                    },
                )
                .collect();
            let n = buffers.len();
            // Drawn 0 to 5: 0 to 2 are memories 0 to 2 (2 is past two memories, and 1 and 2
            // past the one capacity: they exist nowhere), 3 and 4 memory 0 again, 5 moved out.
            let memory = answers[..n]
                .iter()
                .map(|&(_, m)| (m < 5).then_some(if m < 3 { m } else { 0 }))
                .collect();
            let offsets = answers[..n].iter().map(|&(o, _)| o).collect();
            Case {
                problem: Problem::new(buffers, None).with_memories(memories),
                offsets,
                memory,
                capacity,
            }
        })
}

/// Whether the answer keeps every rule, byte by byte: each buffer in a memory that exists and
/// that it may use (or moved out: without memories only, and a fixed buffer only when its
/// place lies beyond the capacity); a kept buffer aligned, at its fixed place if it has one,
/// within its memory; no byte of a memory held by two buffers at one time step.
fn brute_force(case: &Case) -> bool {
    let problem = &case.problem;
    let capacity_of = |m: usize| -> Option<u64> {
        if problem.memories.is_empty() {
            (m == 0).then_some(case.capacity)
        } else {
            problem.memories.get(m).map(|memory| memory.capacity)
        }
    };
    // (memory, time, address) -> held.
    let mut held = std::collections::HashSet::new();
    for (i, b) in problem.buffers.iter().enumerate() {
        let offset = case.offsets[i];
        let Some(m) = case.memory[i] else {
            let fixed_fits = b.offset.is_some_and(|o| o + b.size <= case.capacity);
            if !problem.memories.is_empty() || fixed_fits {
                return false;
            }
            continue;
        };
        let Some(capacity) = capacity_of(m) else {
            return false;
        };
        let allowed = problem.memories.is_empty()
            || b.memories.is_empty()
            || b.memories.contains(&problem.memories[m].id);
        if !allowed || !offset.is_multiple_of(b.alignment) || offset + b.size > capacity {
            return false;
        }
        if b.offset.is_some_and(|fixed| fixed != offset) {
            return false;
        }
        for time in b.lower..b.upper {
            for address in offset..offset + b.size {
                if !held.insert((m, time, address)) {
                    return false;
                }
            }
        }
    }
    true
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn the_checker_agrees_with_a_byte_by_byte_brute_force(case in cases()) {
        let solution = Solution { offsets: case.offsets.clone() };
        let assignment = Assignment { memory: case.memory.clone(), proven_best: false };
        let report = validate_assignment(&case.problem, &solution, &assignment, Some(case.capacity));
        prop_assert_eq!(report.is_valid(), brute_force(&case), "{:?}: {}", case, report);
    }
}

/// The generator reaches both answers often enough for the agreement to mean something.
#[test]
fn the_cases_are_valid_and_invalid_alike() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = cases();
    let (mut valid, mut total) = (0, 0);
    for _ in 0..4000 {
        let case = strategy.new_tree(&mut runner).unwrap().current();
        valid += usize::from(brute_force(&case));
        total += 1;
    }
    assert!(
        valid * 20 > total && valid * 20 < 19 * total,
        "{valid} valid of {total}"
    );
}
