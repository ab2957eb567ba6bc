//! MiniMalloc's `gaps` and `hint` columns: reading its own examples of the format (the cases of
//! its converter tests, in our words), writing them back, the errors for bad ones, the
//! validator on known gapped layouts, LOAD and sections, the search and the command line.

use crate::common;

use common::{telamalloc, Scratch};
use telamalloc::io::{
    parse_csv_problem, parse_json_problem, write_csv_problem, write_csv_solution,
    write_json_solution,
};
use telamalloc::{validate, Algorithm, Buffer, Gap, Goal, Limits, Problem, Solution, Solver};
use telamalloc::{Infeasibility, SearchOptions, Status};

fn parse(text: &str) -> Problem {
    parse_csv_problem(text, "t.csv", None).unwrap_or_else(|e| panic!("{e}"))
}

fn error(text: &str) -> String {
    parse_csv_problem(text, "t.csv", None)
        .expect_err("bad input")
        .to_string()
}

fn gapped(id: &str, (lower, upper, size): (u64, u64, u64), gaps: Vec<Gap>) -> Buffer {
    Buffer {
        gaps,
        ..Buffer::new(id, lower, upper, size)
    }
}

#[test]
fn reads_minimalloc_gaps_and_windows() {
    // MiniMalloc's FromCsvWithGaps, whose second buffer (live over [5, 10)) has gaps beyond its
    // lifetime, which MiniMalloc does not check and we refuse...
    let theirs =
        "start,size,buffer,upper,alignment,gaps\n6,18,1,12,2,7-9 \n5,15,0,10,1,9-11 12-14@2:13\n";
    let message = error(theirs);
    assert!(
        message
            .contains("line 3: field 'gaps': gap 9-11 lies outside the buffer's lifetime [5, 10)"),
        "{message}"
    );
    // ...and the same with the lifetime stretched to hold them.
    let problem = parse(&theirs.replace("5,15,0,10,", "5,15,0,16,"));
    assert_eq!(problem.buffers[0].gaps, vec![Gap::new(7, 9)]);
    assert_eq!(problem.buffers[0].alignment, 2);
    assert_eq!(
        problem.buffers[1].gaps,
        vec![Gap::new(9, 11), Gap::with_window(12, 14, 2, 13)]
    );
}

#[test]
fn an_inclusive_end_makes_gap_ends_inclusive_too() {
    // MiniMalloc's FromCsvWithEndColumn: `end` 11 and gap 7-8 read as upper 12 and gap 7-9.
    let problem =
        parse("start,size,buffer,end,alignment,gaps\n6,18,1,11,2,7-8 \n5,15,0,13,1,9-10 12-13\n");
    assert_eq!(
        (problem.buffers[0].lower, problem.buffers[0].upper),
        (6, 12)
    );
    assert_eq!(problem.buffers[0].gaps, vec![Gap::new(7, 9)]);
    assert_eq!(
        problem.buffers[1].gaps,
        vec![Gap::new(9, 11), Gap::new(12, 14)]
    );
}

#[test]
fn reads_hints_and_empty_gaps() {
    let problem = parse("begin,size,buffer,upper,alignment,hint,gaps\n6,18,1,12,2,0,\n5,15,0,10,1,-1,\n7,3,2,9,1,,\n");
    let hints: Vec<Option<u64>> = problem.buffers.iter().map(|b| b.hint).collect();
    assert_eq!(hints, vec![Some(0), None, None]);
    assert!(problem.buffers.iter().all(|b| b.gaps.is_empty()));
}

#[test]
fn writes_what_minimalloc_writes_and_reads_it_back() {
    // MiniMalloc's ToCsv case: hints written -1 when absent, gaps space-separated.
    let problem = Problem::new(
        vec![
            Buffer {
                hint: Some(0),
                ..Buffer::new("0", 5, 10, 15)
            },
            Buffer {
                alignment: 2,
                ..gapped(
                    "1",
                    (6, 12, 18),
                    vec![Gap::new(7, 8), Gap::with_window(9, 10, 1, 17)],
                )
            },
        ],
        Some(40),
    );
    let text = write_csv_problem(&problem);
    assert_eq!(
        text,
        "id,lower,upper,size,alignment,hint,gaps\n0,5,10,15,1,0,\n1,6,12,18,2,-1,7-8 9-10@1:17\n"
    );
    assert_eq!(
        parse_csv_problem(&text, "t.csv", Some(40)).unwrap(),
        problem
    );
    // A solution file repeats the columns and reads back as a problem too.
    let solution = Solution {
        offsets: vec![1, 22],
    };
    let written = write_csv_solution(&problem, &solution);
    assert!(written.starts_with("id,lower,upper,size,alignment,hint,gaps,offset\n"));
    // JSON: both fields, read back exactly.
    let json = write_json_solution(&problem, &solution);
    let problem_json: String = json
        .lines()
        .filter(|line| !line.contains("\"peak\""))
        .collect();
    let back = parse_json_problem(&problem_json, "t.json", None);
    let back = back.unwrap_or_else(|e| panic!("{e}\n{json}"));
    assert_eq!(back.buffers[1].gaps, problem.buffers[1].gaps);
    assert_eq!(back.buffers[0].hint, Some(0));
}

#[test]
fn files_without_gaps_or_hints_are_written_as_before() {
    let problem = Problem::new(vec![Buffer::new("a", 0, 3, 4)], None);
    assert_eq!(
        write_csv_problem(&problem),
        "id,lower,upper,size\na,0,3,4\n"
    );
    let json = write_json_solution(&problem, &Solution { offsets: vec![0] });
    assert!(!json.contains("gaps") && !json.contains("hint"), "{json}");
}

#[test]
fn bad_gaps_and_hints_name_the_line_and_field() {
    let header = "id,lower,upper,size,hint,gaps\n";
    let cases = [
        (
            "a,0,10,4,-1,1-2-3",
            "line 2: field 'gaps': malformed gap '1-2-3'",
        ),
        (
            "a,0,10,4,-1,A-B",
            "line 2: field 'gaps': malformed gap 'A-B'",
        ),
        (
            "a,0,10,4,-1,1-3@2",
            "line 2: field 'gaps': malformed gap '1-3@2'",
        ),
        ("a,0,10,4,-1,3-3", "line 2: field 'gaps': gap 3-3 is empty"),
        (
            "a,0,10,4,-1,8-12",
            "line 2: field 'gaps': gap 8-12 lies outside",
        ),
        (
            "a,0,10,4,-1,4-6 2-5",
            "line 2: field 'gaps': gap 2-5 starts before",
        ),
        (
            "a,0,10,4,-1,2-5 4-6",
            "line 2: field 'gaps': gap 4-6 starts before",
        ),
        (
            "a,0,10,4,-1,2-5@3:3",
            "line 2: field 'gaps': gap 2-5@3:3: the window",
        ),
        (
            "a,0,10,4,-1,2-5@1:5",
            "line 2: field 'gaps': gap 2-5@1:5: the window",
        ),
        ("a,0,10,4,x,", "line 2: field 'hint': 'x' is not an integer"),
        ("a,0,10,4,-5,", "line 2: field 'hint': '-5' is negative"),
    ];
    for (row, expected) in cases {
        // After a good row and a comment, so that the line is not simply the second.
        let message = error(&format!("{header}b,0,1,1,-1,\n# note\n{row}\n"));
        let expected = expected.replace("line 2", "line 4");
        assert!(message.contains(&expected), "{row}: {message}");
    }
    let aligned = "id,lower,upper,size,alignment,hint\na,0,4,4,8,4\n";
    assert!(error(aligned)
        .contains("line 2: field 'hint': hint 4 is not a multiple of the alignment 8"));
    let over = parse_csv_problem("id,lower,upper,size,hint\na,0,4,4,8\n", "t.csv", Some(10));
    assert!(over
        .unwrap_err()
        .to_string()
        .contains("field 'hint': hint 8 + size 4 exceeds the capacity 10"));
}

#[test]
fn validator_checks_pieces() {
    // MiniMalloc's validator cases: gaps that line up leave room, windows interlock.
    let problem = Problem::new(
        vec![
            gapped("a", (0, 10, 2), vec![Gap::new(1, 9)]),
            gapped("b", (5, 15, 2), vec![Gap::new(6, 14)]),
        ],
        None,
    );
    assert!(validate(
        &problem,
        &Solution {
            offsets: vec![0, 0]
        },
        Some(2)
    )
    .is_valid());
    let edge = Problem::new(
        vec![
            gapped("a", (0, 10, 2), vec![Gap::new(1, 8)]),
            gapped("b", (5, 15, 2), vec![Gap::new(8, 14)]),
        ],
        None,
    );
    // The edge case: `a` is back at 8, when `b` has just left for its gap.
    let both_at_0 = Solution {
        offsets: vec![0, 0],
    };
    assert!(validate(&edge, &both_at_0, Some(2)).is_valid());
    let touching = Problem::new(
        vec![
            gapped("a", (0, 10, 2), vec![Gap::new(1, 8)]),
            gapped("b", (5, 15, 2), vec![Gap::new(9, 14)]),
        ],
        None,
    );
    let report = validate(&touching, &both_at_0, None);
    assert!(!report.is_valid());
    assert!(report.to_string().contains("at time 8"), "{report}");
    let tetris = Problem::new(
        vec![
            gapped("a", (0, 10, 2), vec![Gap::with_window(0, 5, 0, 1)]),
            gapped("b", (0, 10, 2), vec![Gap::with_window(5, 10, 1, 2)]),
        ],
        None,
    );
    assert!(validate(
        &tetris,
        &Solution {
            offsets: vec![0, 1]
        },
        Some(3)
    )
    .is_valid());
    assert!(!validate(
        &tetris,
        &Solution {
            offsets: vec![0, 0]
        },
        None
    )
    .is_valid());
    assert!(!validate(
        &tetris,
        &Solution {
            offsets: vec![1, 0]
        },
        None
    )
    .is_valid());
    // Interleaved: `u` between the two windows of `b` (valid, though MiniMalloc's effective
    // sizes would call it an overlap: neither lies wholly above the other).
    let interleaved = interleaved();
    assert!(validate(
        &interleaved,
        &Solution {
            offsets: vec![0, 5]
        },
        Some(10)
    )
    .is_valid());
    assert!(!validate(
        &interleaved,
        &Solution {
            offsets: vec![0, 9]
        },
        None
    )
    .is_valid());
    assert!(!validate(
        &interleaved,
        &Solution {
            offsets: vec![0, 0]
        },
        None
    )
    .is_valid());
}

/// `b` keeps its lowest byte over [0, 5) and its highest over [5, 10); `u` (1 byte) fits
/// between them, so the peak can be 10, which only an interleaved layout reaches.
fn interleaved() -> Problem {
    Problem::new(
        vec![
            gapped(
                "b",
                (0, 10, 10),
                vec![Gap::with_window(0, 5, 0, 1), Gap::with_window(5, 10, 9, 10)],
            ),
            Buffer::new("u", 0, 10, 1),
        ],
        None,
    )
}

#[test]
fn load_and_sections_count_what_is_occupied() {
    let plain = Problem::new(
        vec![Buffer::new("a", 0, 10, 4), Buffer::new("b", 2, 6, 3)],
        None,
    );
    let timeline = telamalloc::analysis::Timeline::new(&plain);
    assert_eq!(timeline.starts, vec![0, 2, 6]);
    let problem = Problem::new(
        vec![
            gapped(
                "a",
                (0, 10, 4),
                vec![Gap::new(3, 5), Gap::with_window(5, 7, 1, 2)],
            ),
            Buffer::new("b", 2, 6, 3),
        ],
        None,
    );
    let timeline = telamalloc::analysis::Timeline::new(&problem);
    assert_eq!(timeline.starts, vec![0, 2, 3, 5, 6, 7]);
    assert_eq!(timeline.totals, vec![4, 7, 3, 4, 1, 4]);
    assert_eq!(timeline.load(), 7);
}

fn solve(problem: &Problem, capacity: u64, options: SearchOptions) -> telamalloc::Allocation {
    Solver::new()
        .options(options)
        .limits(Limits {
            timeout: None,
            nodes: Some(100_000),
        })
        .solve(problem, Goal::Fit(capacity))
        .expect("a valid problem")
}

#[test]
fn a_buffer_fits_in_a_gap_and_only_there() {
    // MiniMalloc's BuffersWithGaps: capacity 2 only if `b` sits in `a`'s gap.
    let problem = Problem::new(
        vec![
            gapped("a", (0, 4, 2), vec![Gap::new(1, 3)]),
            Buffer::new("b", 1, 3, 2),
        ],
        None,
    );
    for options in [SearchOptions::default(), common::without_heuristics()] {
        let result = solve(&problem, 2, options);
        assert_eq!(result.status, Status::Solved);
        assert_eq!(result.solution.unwrap().offsets, vec![0, 0]);
    }
    // Without the gap it is infeasible, and the search proves it.
    let solid = Problem::new(
        vec![Buffer::new("a", 0, 4, 2), Buffer::new("b", 1, 3, 2)],
        None,
    );
    assert!(matches!(
        solve(&solid, 3, common::without_heuristics()).status,
        Status::Infeasible(_)
    ));
    // A gap that does not cover `b`'s lifetime does not help.
    let short = Problem::new(
        vec![
            gapped("a", (0, 4, 2), vec![Gap::new(1, 2)]),
            Buffer::new("b", 1, 3, 2),
        ],
        None,
    );
    assert_eq!(
        solve(&short, 3, common::without_heuristics()).status,
        Status::Infeasible(Infeasibility::LoadExceedsCapacity { load: 4 })
    );
}

#[test]
fn the_search_packs_minimalloc_tetris_and_stairs() {
    let tetris = Problem::new(
        vec![
            gapped("a", (0, 10, 2), vec![Gap::with_window(0, 5, 0, 1)]),
            gapped("b", (0, 10, 2), vec![Gap::with_window(5, 10, 1, 2)]),
        ],
        None,
    );
    let stairs = parse(
        "id,lower,upper,size,gaps\n\
         0,0,108,30,36-72@10:30 72-108@20:30\n\
         1,36,144,50,36-72@20:30 72-108@10:40\n\
         2,84,144,42,114-129@0:28 129-144@0:14\n\
         3,84,129,42,99-114@14:42 114-129@28:42\n\
         4,99,144,70,99-114@28:42 114-129@14:56\n\
         5,0,144,30,72-108@0:20 108-144@0:10\n",
    );
    for (problem, capacity) in [(tetris, 3), (stairs, 144)] {
        for options in [SearchOptions::default(), common::without_heuristics()] {
            let result = solve(&problem, capacity, options);
            assert_eq!(result.status, Status::Solved, "capacity {capacity}");
        }
    }
}

#[test]
fn an_interleaved_packing_is_not_declared_infeasible() {
    // Feasible at 10 only with `u` between `b`'s windows: the search's model (one above the
    // other) misses it, so it must not claim a proof; the placement core finds it.
    let problem = interleaved();
    let result = solve(&problem, 10, common::without_heuristics());
    assert_eq!(result.status, Status::LimitReached);
    // The limit was not a time or node limit: the answer says why it is not a proof.
    assert!(
        result
            .warnings
            .iter()
            .any(|w| w.contains("interleaved layout")),
        "{:?}",
        result.warnings
    );
    // A real limit says nothing of the kind.
    let limited = Solver::new()
        .options(common::without_heuristics())
        .nodes(1)
        .solve(&problem, Goal::Fit(10))
        .unwrap();
    assert_eq!(limited.status, Status::LimitReached);
    assert!(limited.warnings.is_empty(), "{:?}", limited.warnings);
    let result = solve(&problem, 10, SearchOptions::default());
    assert_eq!(result.status, Status::Solved);
    let first_fit = Algorithm::from_name("tflite-micro").unwrap();
    let result = Solver::new()
        .algorithm(first_fit)
        .solve(&problem, Goal::Fit(10))
        .unwrap();
    assert_eq!(result.solution.unwrap().offsets, vec![0, 1]);
}

#[test]
fn hints_are_tried_first() {
    // Without hints the search puts `a` at 0; the hints ask for the other way round.
    let mut problem = Problem::new(
        vec![Buffer::new("a", 0, 4, 4), Buffer::new("b", 2, 6, 4)],
        None,
    );
    let plain = solve(&problem, 8, common::without_heuristics());
    assert_eq!(plain.solution.unwrap().offsets, vec![0, 4]);
    problem.buffers[0].hint = Some(4);
    problem.buffers[1].hint = Some(0);
    for options in [SearchOptions::default(), common::without_heuristics()] {
        let hinted = solve(&problem, 8, options);
        assert_eq!(hinted.solution.unwrap().offsets, vec![4, 0]);
    }
    // Colliding hints are a warm start that fails: the search solves without them.
    problem.buffers[1].hint = Some(4);
    let result = solve(&problem, 8, common::without_heuristics());
    assert_eq!(result.status, Status::Solved);
}

#[test]
fn cpsat_refuses_gaps() {
    let problem = Problem::new(vec![gapped("a", (0, 4, 2), vec![Gap::new(1, 3)])], None);
    let error = Solver::new()
        .algorithm(Algorithm::CpSat)
        .solve(&problem, Goal::Fit(2))
        .expect_err("refused");
    assert!(error.to_string().contains("has gaps"), "{error}");
}

#[test]
fn the_shipped_example_solves_and_validates_on_the_command_line() {
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/examples/gaps-hints.8.csv"
    );
    let scratch = Scratch::new();
    let out = scratch.path("solution.csv");
    let run = telamalloc(["solve", example, "-o", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        format!("{}{}", run.stdout, run.stderr).contains("peak 8 (LOAD 8, capacity 8)"),
        "{}{}",
        run.stdout,
        run.stderr
    );
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(
        written.starts_with("id,lower,upper,size,hint,gaps,offset\n"),
        "{written}"
    );
    // The hints are a packing at LOAD, so the layout is theirs.
    assert!(written.contains("act,3,7,4,0,,0\n"), "{written}");
    assert!(
        written.contains("scratch,0,10,2,-1,3-5@0:1 5-7@1:2,"),
        "{written}"
    );
    let run = telamalloc(["validate", example, out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // The solution file, a problem in its own right, reads back the same.
    let run = telamalloc([
        "validate",
        out.to_str().unwrap(),
        out.to_str().unwrap(),
        "--capacity",
        "8",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // Without its gaps the example does not fit: the search proves it.
    let solid = scratch.file(
        "solid.8.csv",
        "id,lower,upper,size\nweights,0,10,4\nact,3,7,4\nin,0,3,2\nout,7,10,2\nscratch,0,10,2\n",
    );
    let run = telamalloc(["solve", solid.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    // A bad gap is an input error with its line and field.
    let bad = scratch.file("bad.8.csv", "id,lower,upper,size,gaps\na,0,10,4,9-12\n");
    let run = telamalloc(["solve", bad.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("line 2: field 'gaps': gap 9-12 lies outside"),
        "{}",
        run.stderr
    );
}
