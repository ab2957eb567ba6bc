//! Several memories and the spill goal: on tiny problems the solver's answer is as good as a
//! brute force over every assignment and every offset (which shares nothing with the solver),
//! proven best, and valid; the validator catches a buffer in a memory it may not use; on a
//! larger problem spill keeps at least what greedy admission keeps.

use telamalloc::{
    greedy_admission, validate_assignment, Assignment, Buffer, Goal, Memory, Problem, Solution,
    Solver, Status, Violation,
};

/// A small deterministic generator (xorshift), so that every run sees the same cases.
struct Draw(u64);

impl Draw {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Whether `members` fit in `capacity`: every offset of every buffer tried, depth first, in
/// order of their first step (a group that shares no step with the others fits on its own).
fn brute_fits(problem: &Problem, members: &[usize], capacity: u64) -> bool {
    let buffers = &problem.buffers;
    let mut sorted = members.to_vec();
    sorted.sort_by_key(|&i| (buffers[i].lower, std::cmp::Reverse(buffers[i].size)));
    let mut start = 0;
    let mut reach = 0;
    for k in 0..sorted.len() {
        let b = &buffers[sorted[k]];
        if k > start && b.lower >= reach {
            if !brute_fits_in_order(problem, &sorted[start..k], capacity) {
                return false;
            }
            start = k;
        }
        reach = if k == start {
            b.upper
        } else {
            reach.max(b.upper)
        };
    }
    brute_fits_in_order(problem, &sorted[start..], capacity)
}

/// Whether `members` fit in `capacity`, each buffer's every offset tried in the order given.
fn brute_fits_in_order(problem: &Problem, members: &[usize], capacity: u64) -> bool {
    fn place(problem: &Problem, members: &[usize], offsets: &mut Vec<u64>, capacity: u64) -> bool {
        let k = offsets.len();
        if k == members.len() {
            return true;
        }
        let b = &problem.buffers[members[k]];
        if b.size > capacity {
            return false;
        }
        for offset in 0..=capacity - b.size {
            let clear = (0..k).all(|j| {
                let other = &problem.buffers[members[j]];
                let apart = other.upper <= b.lower || b.upper <= other.lower;
                apart || offsets[j] + other.size <= offset || offset + b.size <= offsets[j]
            });
            if clear {
                offsets.push(offset);
                if place(problem, members, offsets, capacity) {
                    return true;
                }
                offsets.pop();
            }
        }
        false
    }
    place(problem, members, &mut Vec::new(), capacity)
}

fn tiny_buffers(draw: &mut Draw, n: usize) -> Vec<Buffer> {
    (0..n)
        .map(|i| {
            let lower = draw.below(5);
            let upper = lower + 1 + draw.below(4);
            let mut b = Buffer::new(format!("b{i}"), lower, upper, 1 + draw.below(4));
            if draw.below(3) == 0 {
                b.benefit = Some(draw.below(10));
            }
            b
        })
        .collect()
}

/// The most benefit any subset that fits keeps (brute force).
fn brute_spill(problem: &Problem, capacity: u64) -> u64 {
    let n = problem.len();
    (0..1u32 << n)
        .filter_map(|mask| {
            let members: Vec<usize> = (0..n).filter(|&i| mask >> i & 1 == 1).collect();
            brute_fits(problem, &members, capacity).then(|| {
                members
                    .iter()
                    .map(|&i| problem.buffers[i].worth())
                    .sum::<u64>()
            })
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn spill_keeps_as_much_benefit_as_a_brute_force() {
    let mut draw = Draw(0x5eed);
    for case in 0..60 {
        let n = 2 + draw.below(5) as usize;
        let capacity = 3 + draw.below(4);
        let problem = Problem::new(tiny_buffers(&mut draw, n), None);
        let result = Solver::new()
            .solve(&problem, Goal::Spill(capacity))
            .unwrap();
        assert_eq!(result.status, Status::Solved, "case {case}");
        let assignment = result.assignment.expect("an assignment");
        let solution = result.solution.expect("a solution");
        assert!(assignment.proven_best, "case {case}");
        assert!(validate_assignment(&problem, &solution, &assignment, Some(capacity)).is_valid());
        let best = brute_spill(&problem, capacity);
        assert_eq!(
            assignment.kept(&problem),
            best as u128,
            "case {case}: {problem:?}"
        );
        // Greedy admission never keeps more than the best.
        let (_, greedy) = greedy_admission(&problem, capacity);
        assert!(greedy.kept(&problem) <= best as u128, "case {case}");
    }
}

/// The least cost of any assignment whose memories all fit (brute force), if one does.
fn brute_memories(problem: &Problem) -> Option<u128> {
    let n = problem.len();
    let m = problem.memories.len();
    let mut best: Option<u128> = None;
    for code in 0..(m as u64).pow(n as u32) {
        let memory: Vec<usize> = (0..n)
            .map(|i| (code / (m as u64).pow(i as u32) % m as u64) as usize)
            .collect();
        let allowed = (0..n).all(|i| problem.allowed_memories(i).contains(&memory[i]));
        let fits = allowed
            && (0..m).all(|k| {
                let members: Vec<usize> = (0..n).filter(|&i| memory[i] == k).collect();
                brute_fits(problem, &members, problem.memories[k].capacity)
            });
        if fits {
            let cost = (0..n)
                .map(|i| problem.buffers[i].size as u128 * problem.memories[memory[i]].cost as u128)
                .sum();
            best = Some(best.map_or(cost, |b: u128| b.min(cost)));
        }
    }
    best
}

#[test]
fn several_memories_cost_as_little_as_a_brute_force() {
    let mut draw = Draw(0xc0ffee);
    let (mut solved, mut infeasible) = (0, 0);
    for case in 0..60 {
        let n = 2 + draw.below(4) as usize;
        let m = 2 + draw.below(2) as usize;
        let memories: Vec<Memory> = (0..m)
            .map(|k| Memory::new(format!("m{k}"), 3 + draw.below(4), draw.below(4)))
            .collect();
        let mut buffers = tiny_buffers(&mut draw, n);
        for b in &mut buffers {
            if draw.below(2) == 0 {
                b.memories = (0..m)
                    .filter(|_| draw.below(2) == 0)
                    .map(|k| format!("m{k}"))
                    .collect();
                if b.memories.is_empty() {
                    b.memories.push("m0".into());
                }
            }
        }
        let problem = Problem::new(buffers, None).with_memories(memories);
        if problem.check(None).is_err() {
            continue; // a buffer larger than every memory it may use
        }
        let result = Solver::new().solve(&problem, Goal::Memories).unwrap();
        match brute_memories(&problem) {
            Some(best) => {
                solved += 1;
                assert_eq!(result.status, Status::Solved, "case {case}: {problem:?}");
                let assignment = result.assignment.expect("an assignment");
                let solution = result.solution.expect("a solution");
                assert!(assignment.proven_best);
                assert!(validate_assignment(&problem, &solution, &assignment, None).is_valid());
                assert_eq!(assignment.cost(&problem), best, "case {case}: {problem:?}");
            }
            None => {
                infeasible += 1;
                assert!(
                    matches!(result.status, Status::Infeasible(_)),
                    "case {case}: {:?}",
                    result.status
                );
            }
        }
    }
    assert!(
        solved > 20 && infeasible > 0,
        "{solved} solved, {infeasible} infeasible"
    );
}

fn two_memories() -> Problem {
    let mut fast = Buffer::new("fast", 0, 4, 4);
    fast.memories = vec!["sram".into()];
    Problem::new(
        vec![fast, Buffer::new("a", 0, 4, 4), Buffer::new("b", 2, 6, 4)],
        None,
    )
    .with_memories(vec![Memory::new("sram", 8, 1), Memory::new("dram", 64, 10)])
}

#[test]
fn the_cheapest_memory_takes_what_fits_and_the_rest_goes_to_the_costlier() {
    let problem = two_memories();
    let result = Solver::new().solve(&problem, Goal::Memories).unwrap();
    let assignment = result.assignment.unwrap();
    // `fast` must be in sram; one of `a` and `b` fits beside it (each overlaps it in time).
    assert_eq!(assignment.memory[0], Some(0));
    assert_eq!(assignment.cost(&problem), 4 + 4 + 40);
    // Fit and Minimize refuse a problem with memories rather than ignore them.
    assert!(Solver::new().solve(&problem, Goal::Fit(8)).is_err());
    assert!(Solver::new()
        .solve(&Problem::new(vec![], None), Goal::Memories)
        .is_err());
}

#[test]
fn the_validator_catches_a_buffer_in_a_memory_it_may_not_use() {
    let problem = two_memories();
    let solution = Solution {
        offsets: vec![0, 0, 4],
    };
    let wrong = Assignment {
        memory: vec![Some(1), Some(0), Some(0)],
        proven_best: false,
    };
    let report = validate_assignment(&problem, &solution, &wrong, None);
    assert!(matches!(
        report.violations[..],
        [Violation::WrongMemory { ref id, .. }] if id == "fast"
    ));
    let moved = Assignment {
        memory: vec![Some(0), None, Some(1)],
        proven_best: false,
    };
    let report = validate_assignment(&problem, &solution, &moved, None);
    assert!(matches!(
        report.violations[..],
        [Violation::MovedOut { .. }]
    ));
    let right = Assignment {
        memory: vec![Some(0), Some(1), Some(0)],
        proven_best: false,
    };
    assert!(validate_assignment(&problem, &solution, &right, None).is_valid());
    // The same memory for two buffers live together at one offset: an overlap.
    let overlap = Assignment {
        memory: vec![Some(0), Some(0), Some(1)],
        proven_best: false,
    };
    let report = validate_assignment(&problem, &solution, &overlap, None);
    assert!(matches!(report.violations[..], [Violation::Overlap { .. }]));
}

/// Many buffers in a staircase: each of `n` buffers of size 3 lives over two steps, so any
/// capacity of 6 fits all; at capacity 5 only every other one can be kept, at its offset.
#[test]
fn spill_beyond_the_exact_size_keeps_at_least_greedy_admission_under_a_node_limit() {
    let mut draw = Draw(7);
    let buffers: Vec<Buffer> = (0..300)
        .map(|i| {
            let lower = draw.below(200);
            Buffer::new(
                format!("b{i}"),
                lower,
                lower + 1 + draw.below(20),
                1 + draw.below(64),
            )
        })
        .collect();
    let problem = Problem::new(buffers, None);
    let capacity = telamalloc::analysis::load(&problem) * 7 / 10;
    // A node limit is a total over every fit and sets no clock: the same answer on any machine
    // and with any thread count.
    let solve = |threads: usize| {
        let options = telamalloc::SearchOptions {
            threads,
            ..Default::default()
        };
        let result = Solver::new()
            .options(options)
            .nodes(20_000)
            .solve(&problem, Goal::Spill(capacity))
            .unwrap();
        (result.solution.unwrap(), result.assignment.unwrap())
    };
    let (layout, assignment) = solve(1);
    assert_eq!((layout, assignment.clone()), solve(2));
    assert!(!assignment.proven_best);
    let (_, greedy) = greedy_admission(&problem, capacity);
    assert!(
        assignment.kept(&problem) >= greedy.kept(&problem),
        "spill {} < greedy {}",
        assignment.kept(&problem),
        greedy.kept(&problem)
    );
}

/// 10,000 random buffers: spill at about 86% of LOAD and three memories, both validated by the
/// front door; spill keeps at least what greedy admission keeps. About 10 s (each goal runs to
/// its default time limit), so ignored: `cargo test --test model -- --ignored ten_thousand`.
#[test]
#[ignore]
fn ten_thousand_buffers_spill_and_memories() {
    let mut draw = Draw(11);
    let buffers: Vec<Buffer> = (0..10_000)
        .map(|i| {
            let lower = draw.below(1000);
            Buffer::new(
                format!("b{i}"),
                lower,
                lower + 1 + draw.below(50),
                1 + draw.below(4096),
            )
        })
        .collect();
    let problem = Problem::new(buffers, None);
    let load = telamalloc::analysis::load(&problem);
    let capacity = load * 6 / 7;
    let result = Solver::new()
        .solve(&problem, Goal::Spill(capacity))
        .unwrap();
    let kept = result
        .assignment
        .expect("an answer at any time")
        .kept(&problem);
    let (_, greedy) = greedy_admission(&problem, capacity);
    assert!(kept >= greedy.kept(&problem));
    let mut problem = problem.with_memories(vec![
        Memory::new("sram", load / 3, 1),
        Memory::new("tcm", load / 4, 2),
        Memory::new("dram", load * 2, 10),
    ]);
    for b in problem.buffers.iter_mut().step_by(5) {
        b.memories = vec!["sram".into()];
    }
    let result = Solver::new().solve(&problem, Goal::Memories).unwrap();
    assert_eq!(result.status, Status::Solved);
    let assignment = result.assignment.unwrap();
    assert!((0..problem.len())
        .filter(|i| i % 5 == 0)
        .all(|i| assignment.memory[i] == Some(0)));
}

#[test]
fn a_solution_with_memories_reads_back_and_a_bad_memory_names_line_and_field() {
    use telamalloc::io::{parse_csv_assigned, write_csv_assigned};
    let problem = two_memories();
    let result = Solver::new().solve(&problem, Goal::Memories).unwrap();
    let (solution, assignment) = (result.solution.unwrap(), result.assignment.unwrap());
    let text = write_csv_assigned(&problem, &solution, &assignment);
    let (read, memory) = parse_csv_assigned(&text, "s.csv", &problem).unwrap();
    assert_eq!(read, solution);
    assert_eq!(memory.unwrap().memory, assignment.memory);
    let bad = text.replacen(",dram", ",l2", 1);
    let error = parse_csv_assigned(&bad, "s.csv", &problem).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("field 'memory': 'l2' is not a memory"),
        "{error}"
    );
    // Spill: a buffer moved out has an empty offset and memory, and reads back as moved out.
    let spilled = Problem::new(
        vec![Buffer::new("a", 0, 2, 4), Buffer::new("b", 0, 2, 4)],
        None,
    );
    let result = Solver::new().solve(&spilled, Goal::Spill(4)).unwrap();
    let (solution, assignment) = (result.solution.unwrap(), result.assignment.unwrap());
    let text = write_csv_assigned(&spilled, &solution, &assignment);
    assert!(text.contains(",,\n"), "{text}");
    let (_, memory) = parse_csv_assigned(&text, "s.csv", &spilled).unwrap();
    assert_eq!(memory.unwrap().moved_out().len(), 1);
}

#[test]
fn spill_moves_out_a_fixed_buffer_only_when_its_place_lies_beyond_the_capacity() {
    let fixed = |id: &str, offset| Buffer {
        offset: Some(offset),
        ..Buffer::new(id, 0, 2, 4)
    };
    let problem = Problem::new(
        vec![fixed("f", 8), fixed("g", 0), Buffer::new("h", 0, 2, 4)],
        None,
    );
    let result = Solver::new().solve(&problem, Goal::Spill(8)).unwrap();
    let assignment = result.assignment.unwrap();
    assert_eq!(assignment.memory, vec![None, Some(0), Some(0)]);
    // Moving out `g`, whose fixed place fits, breaks the rule.
    let solution = Solution {
        offsets: vec![0, 0, 4],
    };
    let wrong = Assignment {
        memory: vec![None, None, Some(0)],
        proven_best: false,
    };
    let report = validate_assignment(&problem, &solution, &wrong, Some(8));
    assert!(matches!(
        report.violations[..],
        [Violation::MovedOut { ref id }] if id == "g"
    ));
}

/// The most benefit any subset that fits keeps, for up to about 24 buffers: subsets by a
/// depth-first walk that keeps or drops each buffer in turn, cut when what is kept plus all
/// that is left cannot beat the best, or when the live total passes the capacity; each subset
/// that could beat the best is checked by [`brute_fits`]. Shares nothing with the solver.
fn brute_spill_pruned(problem: &Problem, capacity: u64) -> u64 {
    struct Walk<'p> {
        problem: &'p Problem,
        capacity: u64,
        live: Vec<u64>,
        kept: Vec<usize>,
        best: u64,
    }
    impl Walk<'_> {
        fn go(&mut self, i: usize, worth: u64, left: u64) {
            if worth + left <= self.best {
                return;
            }
            if i == self.problem.len() {
                if brute_fits(self.problem, &self.kept, self.capacity) {
                    self.best = worth;
                }
                return;
            }
            let b = &self.problem.buffers[i];
            let steps = b.lower as usize..b.upper as usize;
            if self.live[steps.clone()]
                .iter()
                .all(|&l| l + b.size <= self.capacity)
            {
                self.live[steps.clone()]
                    .iter_mut()
                    .for_each(|l| *l += b.size);
                self.kept.push(i);
                self.go(i + 1, worth + b.worth(), left - b.worth());
                self.kept.pop();
                self.live[steps].iter_mut().for_each(|l| *l -= b.size);
            }
            self.go(i + 1, worth, left - b.worth());
        }
    }
    let horizon = problem.buffers.iter().map(|b| b.upper).max().unwrap_or(0) as usize;
    let mut walk = Walk {
        problem,
        capacity,
        live: vec![0; horizon],
        kept: Vec::new(),
        best: 0,
    };
    let all = problem.buffers.iter().map(|b| b.worth()).sum();
    // The best starts one below 0's reach so that an empty subset counts.
    walk.go(0, 0, all);
    walk.best
}

/// Buffers like a new user's spill trials: lower in 0..7, one to five steps, size 1 to 8,
/// benefit 5 to 30.
fn spill_case(draw: &mut Draw, n: usize) -> Problem {
    let buffers = (0..n)
        .map(|i| {
            let lower = draw.below(7);
            let mut b = Buffer::new(
                format!("b{i}"),
                lower,
                lower + 1 + draw.below(5),
                1 + draw.below(8),
            );
            b.benefit = Some(5 + draw.below(26));
            b
        })
        .collect();
    Problem::new(buffers, None)
}

/// Three memories like a new user's trials (6, 9 and 14 bytes at 0, 1 and 6 a byte) and
/// `n` buffers, each free to use any.
fn memories_case(draw: &mut Draw, n: usize) -> Problem {
    let buffers = (0..n)
        .map(|i| {
            let lower = draw.below(9);
            Buffer::new(
                format!("b{i}"),
                lower,
                lower + 1 + draw.below(4),
                1 + draw.below(6),
            )
        })
        .collect();
    Problem::new(buffers, None).with_memories(vec![
        Memory::new("m0", 6, 0),
        Memory::new("m1", 9, 1),
        Memory::new("m2", 14, 6),
    ])
}

/// The least cost over three memories (brute force, every assignment with the live totals
/// within the capacities checked by [`brute_fits`]).
fn brute_memories_pruned(problem: &Problem) -> Option<u128> {
    let n = problem.len();
    let m = problem.memories.len();
    let horizon = problem.buffers.iter().map(|b| b.upper).max().unwrap_or(0) as usize;
    let mut best: Option<u128> = None;
    let mut code = vec![0usize; n];
    loop {
        let cost: u128 = (0..n)
            .map(|i| problem.buffers[i].size as u128 * problem.memories[code[i]].cost as u128)
            .sum();
        if best.is_none_or(|b| cost < b) {
            let live_fits = (0..m).all(|k| {
                let mut live = vec![0u64; horizon];
                for i in (0..n).filter(|&i| code[i] == k) {
                    let b = &problem.buffers[i];
                    live[b.lower as usize..b.upper as usize]
                        .iter_mut()
                        .for_each(|l| *l += b.size);
                }
                live.iter().all(|&l| l <= problem.memories[k].capacity)
            });
            let fits = live_fits
                && (0..m).all(|k| {
                    let members: Vec<usize> = (0..n).filter(|&i| code[i] == k).collect();
                    brute_fits(problem, &members, problem.memories[k].capacity)
                });
            if fits {
                best = Some(cost);
            }
        }
        let mut i = 0;
        while i < n {
            code[i] += 1;
            if code[i] < m {
                break;
            }
            code[i] = 0;
            i += 1;
        }
        if i == n {
            return best;
        }
    }
}

/// Past the size where every assignment could be listed (2 to the 16th), spill is still
/// proven best, and as good as the brute force: 17 to 20 buffers.
#[test]
fn spill_past_sixteen_buffers_is_proven_and_as_good_as_a_brute_force() {
    let mut draw = Draw(0x17);
    for case in 0..20 {
        let n = 17 + draw.below(4) as usize;
        let problem = spill_case(&mut draw, n);
        let capacity = 12 + draw.below(10);
        let result = Solver::new()
            .solve(&problem, Goal::Spill(capacity))
            .unwrap();
        let assignment = result.assignment.expect("an assignment");
        assert!(assignment.proven_best, "case {case}");
        let best = brute_spill_pruned(&problem, capacity);
        assert_eq!(assignment.kept(&problem), best as u128, "case {case}");
        assert!(result.greedy.expect("greedy").kept(&problem) <= best as u128);
    }
}

/// The trial's case that kept benefit 168 where greedy admission and the optimum keep 180.
#[test]
fn spill_with_benefits_keeps_the_optimum_the_greedy_admission_also_keeps() {
    let rows = [
        (3, 6, 4, 20),
        (3, 7, 6, 15),
        (5, 7, 5, 22),
        (1, 2, 6, 17),
        (3, 8, 5, 24),
        (1, 2, 1, 18),
        (4, 5, 1, 10),
        (2, 5, 7, 10),
        (3, 6, 1, 5),
        (6, 11, 1, 12),
        (5, 6, 1, 23),
        (3, 6, 6, 9),
        (4, 6, 4, 28),
        (5, 10, 1, 5),
        (4, 9, 4, 7),
        (0, 3, 2, 6),
        (2, 6, 8, 19),
    ];
    let buffers = rows
        .iter()
        .enumerate()
        .map(|(i, &(lower, upper, size, benefit))| {
            let mut b = Buffer::new(format!("b{i}"), lower, upper, size);
            b.benefit = Some(benefit);
            b
        })
        .collect();
    let problem = Problem::new(buffers, None);
    let result = Solver::new().solve(&problem, Goal::Spill(19)).unwrap();
    let assignment = result.assignment.expect("an assignment");
    assert_eq!(assignment.kept(&problem), 180);
    assert!(assignment.proven_best);
    assert_eq!(result.greedy.expect("greedy").kept(&problem), 180);
}

/// The trial's twelve buffers over three memories, where the old heuristic gave up at once:
/// an assignment of cost 95 exists, and it is the best.
#[test]
fn twelve_buffers_over_three_memories_are_placed_at_the_least_cost() {
    let rows = [
        (6, 9, 6),
        (3, 7, 6),
        (1, 4, 2),
        (4, 8, 1),
        (3, 5, 6),
        (3, 7, 3),
        (2, 4, 2),
        (5, 7, 6),
        (3, 6, 4),
        (4, 8, 3),
        (0, 1, 1),
        (5, 7, 3),
    ];
    let buffers = rows
        .iter()
        .enumerate()
        .map(|(i, &(lower, upper, size))| Buffer::new(format!("b{i}"), lower, upper, size))
        .collect();
    let problem = Problem::new(buffers, None).with_memories(vec![
        Memory::new("m0", 6, 0),
        Memory::new("m1", 9, 1),
        Memory::new("m2", 14, 6),
    ]);
    let result = Solver::new().solve(&problem, Goal::Memories).unwrap();
    assert_eq!(result.status, Status::Solved);
    let assignment = result.assignment.expect("an assignment");
    assert!(assignment.proven_best);
    assert_eq!(
        Some(assignment.cost(&problem)),
        brute_memories_pruned(&problem)
    );
    assert_eq!(assignment.cost(&problem), 95);
}

/// Eleven and twelve buffers over three memories (3 to the 11th assignments and more): proven
/// best and as cheap as the brute force, or proven infeasible when it is.
#[test]
fn memories_past_the_listing_size_are_proven_and_as_cheap_as_a_brute_force() {
    let mut draw = Draw(0x11);
    for case in 0..8 {
        let n = 11 + draw.below(2) as usize;
        let problem = memories_case(&mut draw, n);
        let result = Solver::new().solve(&problem, Goal::Memories).unwrap();
        match brute_memories_pruned(&problem) {
            Some(best) => {
                let assignment = result.assignment.expect("an assignment");
                assert!(assignment.proven_best, "case {case}");
                assert_eq!(assignment.cost(&problem), best, "case {case}");
            }
            None => assert!(
                matches!(result.status, Status::Infeasible(_)),
                "case {case}: {:?}",
                result.status
            ),
        }
    }
}

/// An algorithm that cannot run (CP-SAT without OR-tools' library) is an error for spill and
/// memories too, never "nothing fits" or a proof.
#[test]
fn spill_and_memories_with_an_unavailable_algorithm_are_errors() {
    let cpsat = Solver::new().algorithm(telamalloc::Algorithm::CpSat);
    let Err(why) = cpsat.check_available() else {
        eprintln!("OR-tools' library is installed: nothing to check");
        return;
    };
    let problem = Problem::new(
        vec![
            Buffer::new("b1", 0, 3, 4),
            Buffer::new("b2", 3, 9, 4),
            Buffer::new("b3", 0, 9, 4),
        ],
        None,
    );
    assert_eq!(cpsat.solve(&problem, Goal::Spill(8)).unwrap_err(), why);
    let with = problem.with_memories(vec![Memory::new("m0", 8, 0)]);
    assert_eq!(cpsat.solve(&with, Goal::Memories).unwrap_err(), why);
}

/// The trial's measure, at the default limit: 200 spill problems of 17 to 24 buffers and 200
/// of 11 to 14 buffers over three memories, each against the brute force. Never worse than
/// greedy admission; within 1% of the optimum on at least 95%. Minutes, so ignored:
/// `cargo test --release --test model -- --ignored --nocapture against_the_brute_force_at_scale`.
#[test]
#[ignore]
fn against_the_brute_force_at_scale() {
    let mut draw = Draw(0xb00);
    let (mut close, mut proven, mut optimal) = (0, 0, 0);
    for case in 0..200 {
        let n = 17 + draw.below(8) as usize;
        let problem = spill_case(&mut draw, n);
        let capacity = 12 + draw.below(12);
        let result = Solver::new()
            .solve(&problem, Goal::Spill(capacity))
            .unwrap();
        let assignment = result.assignment.expect("an assignment");
        let kept = assignment.kept(&problem);
        let greedy = result.greedy.expect("greedy").kept(&problem);
        assert!(
            kept >= greedy,
            "spill case {case}: {kept} < greedy {greedy}"
        );
        let best = brute_spill_pruned(&problem, capacity) as u128;
        assert!(
            kept <= best,
            "spill case {case}: {kept} > brute force {best}"
        );
        if case % 20 == 19 {
            eprintln!("spill case {case}");
        }
        close += (kept * 100 >= best * 99) as usize;
        optimal += (kept == best) as usize;
        proven += assignment.proven_best as usize;
        assert!(
            !assignment.proven_best || kept == best,
            "spill case {case}: a false proof"
        );
    }
    eprintln!("spill: {close} of 200 within 1%, {optimal} optimal, {proven} proven");
    assert!(close >= 190);
    let (mut close, mut proven, mut optimal, mut infeasible) = (0, 0, 0, 0);
    for case in 0..200 {
        let n = 11 + draw.below(4) as usize;
        let problem = memories_case(&mut draw, n);
        let result = Solver::new().solve(&problem, Goal::Memories).unwrap();
        let Some(best) = brute_memories_pruned(&problem) else {
            infeasible += 1;
            assert!(result.assignment.is_none(), "memories case {case}");
            continue;
        };
        let assignment = result.assignment.expect("an assignment");
        let cost = assignment.cost(&problem);
        assert!(
            cost >= best,
            "memories case {case}: {cost} < brute force {best}"
        );
        if case % 20 == 19 {
            eprintln!("memories case {case}");
        }
        close += (cost * 100 <= best * 101) as usize;
        optimal += (cost == best) as usize;
        proven += assignment.proven_best as usize;
        assert!(
            !assignment.proven_best || cost == best,
            "memories case {case}: a false proof"
        );
    }
    let feasible = 200 - infeasible;
    eprintln!(
        "memories: {close} of {feasible} within 1%, {optimal} optimal, {proven} proven; {infeasible} infeasible"
    );
    assert!(close * 100 >= feasible * 95);
}

/// 10,000 buffers over 4,000 memories, half of them free to use any memory and half listing
/// 40: `--timeout 5` answers within 6 s with every buffer placed (memory grows with buffers
/// plus listed pairs, not buffers x memories: 12-48 MB measured with `/usr/bin/time`). Seconds
/// of work at the limit, so ignored: `cargo test --release --test model -- --ignored
/// four_thousand_memories`.
#[test]
#[ignore]
fn four_thousand_memories_answer_within_the_limit() {
    let mut draw = Draw(0x4000);
    let memories: Vec<Memory> = (0..4000)
        .map(|m| Memory::new(format!("m{m}"), 500 + draw.below(4500), 1 + draw.below(99)))
        .collect();
    let buffers: Vec<Buffer> = (0..10_000)
        .map(|i| {
            let lower = draw.below(5000);
            let mut b = Buffer::new(
                format!("b{i}"),
                lower,
                lower + 1 + draw.below(200),
                1 + draw.below(1000),
            );
            if i % 2 == 1 {
                b.memories = (0..40).map(|_| format!("m{}", draw.below(4000))).collect();
                b.memories.push("m0".into());
                b.memories.sort();
                b.memories.dedup();
            }
            b
        })
        .collect();
    let problem = Problem::new(buffers, None).with_memories(memories);
    let started = std::time::Instant::now();
    let result = Solver::new()
        .timeout(std::time::Duration::from_secs(5))
        .solve(&problem, Goal::Memories)
        .unwrap();
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(6), "took {took:?}");
    assert_eq!(result.status, Status::Solved);
}
