//! `validate` reads every solution `solve` writes, in both formats and every goal: the cases a
//! user met, and random spill and memories problems (CSV and JSON, fixed offsets, benefits,
//! capacities in file names, in files and in flags) through the binary.

use crate::common;

use common::{telamalloc, Run, Scratch};
use proptest::prelude::*;
use std::ffi::OsString;
use std::path::Path;

const SRAM_DRAM: &str = "id,capacity,cost\nsram,8,1\ndram,64,20\n";

/// `telamalloc solve PROBLEM -o SOLUTION ARGS`, then `telamalloc validate PROBLEM SOLUTION
/// ARGS`, the same flags for both but `--spill` and `--nodes N`, which only solve takes.
fn solve_then_validate(problem: &Path, solution: &Path, args: &[OsString]) -> (Run, Run) {
    let mut solve: Vec<OsString> = vec!["solve".into(), problem.into(), "-o".into()];
    solve.push(solution.into());
    solve.extend(args.iter().cloned());
    let solved = telamalloc(&solve);
    let mut validate: Vec<OsString> = vec!["validate".into(), problem.into(), solution.into()];
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--spill") => {}
            Some("--nodes") => drop(args.next()),
            _ => validate.push(arg.clone()),
        }
    }
    (solved, telamalloc(&validate))
}

/// Asserts that solve solved and validate accepted.
fn assert_round_trip(problem: &Path, solution: &Path, args: &[&str]) -> String {
    let args: Vec<OsString> = args.iter().map(Into::into).collect();
    let (solved, checked) = solve_then_validate(problem, solution, &args);
    let what = format!("{} -> {}", problem.display(), solution.display());
    assert_eq!(solved.code, 0, "{what}: {}", solved.stderr);
    assert_eq!(
        checked.code, 0,
        "{what}: {}{}",
        checked.stdout, checked.stderr
    );
    assert!(checked.stdout.starts_with("valid: "), "{}", checked.stdout);
    checked.stdout
}

#[test]
fn validate_accepts_what_solve_writes_in_every_goal_and_format() {
    let scratch = Scratch::new();
    // A spilled buffer larger than the capacity, and a fixed place beyond it.
    let big = scratch.file("big.8.csv", "id,lower,upper,size\na,0,4,100\nb,2,6,4\n");
    let fixed = scratch.file(
        "fixed.8.csv",
        "id,lower,upper,size,offset\nf,0,4,4,8\ng,0,4,4,\n",
    );
    for problem in [&big, &fixed] {
        for name in ["s.csv", "s.json"] {
            let said = assert_round_trip(problem, &scratch.path(name), &["--spill"]);
            assert!(said.contains("1 moved out"), "{said}");
        }
    }
    // Several memories, JSON too, with a capacity in the file name that the memories replace.
    let memories = scratch.file("sram-dram.csv", SRAM_DRAM);
    let memories = memories.to_str().unwrap();
    let weights = "id,lower,upper,size,memories\nweights,0,4,4,sram\na,0,4,4,\nb,2,6,4,\n";
    for name in ["weights.csv", "weights.2.csv"] {
        let problem = scratch.file(name, weights);
        for solution in ["m.csv", "m.json"] {
            let said =
                assert_round_trip(&problem, &scratch.path(solution), &["--memories", memories]);
            assert!(said.contains("cost 88"), "{said}");
        }
    }
}

#[test]
fn capacity_and_memories_together_are_refused_by_solve_and_validate_alike() {
    let scratch = Scratch::new();
    let memories = scratch.file("sram-dram.csv", SRAM_DRAM);
    let problem = scratch.file("p.csv", "id,lower,upper,size\na,0,2,4\n");
    let solution = scratch.file("s.csv", "id,offset,memory\na,0,sram\n");
    let flags: [&std::ffi::OsStr; 4] = [
        "--memories".as_ref(),
        memories.as_os_str(),
        "--capacity".as_ref(),
        "4".as_ref(),
    ];
    for command in [
        vec!["solve".as_ref(), problem.as_os_str()],
        vec![
            "validate".as_ref(),
            problem.as_os_str(),
            solution.as_os_str(),
        ],
    ] {
        let run = telamalloc(command.iter().chain(&flags));
        assert_eq!(run.code, 2, "{command:?}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("cannot be used with '--capacity <CAPACITY>'")
                || run
                    .stderr
                    .contains("cannot be used with '--memories <MEMORIES>'"),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn a_buffer_moved_out_with_an_offset_and_memories_without_memory_are_refused() {
    let scratch = Scratch::new();
    let problem = scratch.file("big.8.csv", "id,lower,upper,size\na,0,4,10\nb,2,6,4\n");
    let memories = scratch.file("sram-dram.csv", SRAM_DRAM);
    let cases: [(&str, &str, &[&Path], &str); 5] = [
        (
            "s.csv",
            "id,lower,upper,size,offset,memory\na,0,4,10,0,\nb,2,6,4,0,chip\n",
            &[],
            "s.csv: line 2: field 'offset': buffer 'a' is moved out (no memory) but has offset 0",
        ),
        (
            "s.json",
            "{\"buffers\": [\n{\"id\": \"a\", \"offset\": 0, \"memory\": null},\n{\"id\": \"b\", \"offset\": 0, \"memory\": \"chip\"}]}",
            &[],
            "s.json: line 2: buffers[0] (id 'a'): field 'offset': buffer 'a' is moved out",
        ),
        (
            "s.json",
            "{\"buffers\": [{\"id\": \"a\", \"memory\": null},\n{\"id\": \"b\", \"offset\": 0, \"memory\": \"l2\"}]}",
            &[],
            "s.json: line 2: buffers[1] (id 'b'): field 'memory': 'l2' is not a memory",
        ),
        (
            "mixed.json",
            "{\"buffers\": [{\"id\": \"a\", \"memory\": null},\n{\"id\": \"b\", \"offset\": 0}]}",
            &[],
            "mixed.json: line 2: buffers[1] (id 'b'): field 'memory': some rows give a memory",
        ),
        (
            "plain.csv",
            "id,offset\na,0\nb,0\n",
            &[&memories],
            "plain.csv: field 'memory': the problem has memories but the solution gives no",
        ),
    ];
    for (name, text, memories, expected) in cases {
        let solution = scratch.file(name, text);
        let mut args: Vec<OsString> = vec!["validate".into(), (&problem).into(), solution.into()];
        for path in memories {
            args.extend(["--memories".into(), path.into()]);
        }
        let run = telamalloc(&args);
        assert_eq!(run.code, 2, "{name}: {}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(expected), "{name}: {}", run.stderr);
    }
}

/// A buffer of a [`Case`]: lower, upper, size, fixed offset, benefit, memories it may use.
type Row = (u64, u64, u64, Option<u64>, Option<u64>, Vec<&'static str>);

/// A random spill or memories problem as files and flags: what to solve and validate with.
#[derive(Debug, Clone)]
struct Case {
    rows: Vec<Row>,
    json: bool,
    /// `Some`: several memories (sram 16 at cost 1, dram 64 at cost 9), in the JSON file
    /// itself or as `--memories`; `None`: spill.
    memories: Option<bool>,
    /// The spill capacity, and where it is given: 0 the file name, 1 `--capacity`, 2 the JSON.
    capacity: (u64, u8),
    json_solution: bool,
}

fn cases() -> impl Strategy<Value = Case> {
    let row = (
        0u64..6,
        1u64..4,
        1u64..14,
        prop::option::weighted(0.15, 0u64..20),
        prop::option::weighted(0.4, 0u64..30),
        prop::sample::subsequence(vec!["sram", "dram"], 0..=1),
    )
        .prop_map(|(lower, length, size, offset, benefit, memories)| {
            (lower, lower + length, size, offset, benefit, memories)
        });
    (
        prop::collection::vec(row, 1..8),
        any::<bool>(),
        prop::option::of(any::<bool>()),
        (4u64..24, 0u8..3),
        any::<bool>(),
    )
        .prop_map(|(rows, json, memories, capacity, json_solution)| Case {
            rows,
            json,
            memories,
            capacity,
            json_solution,
        })
}

impl Case {
    /// The problem file's text; a fixed offset is kept on the first buffer only (fixed buffers
    /// must not collide).
    fn problem(&self) -> String {
        let rows = self.rows.iter().enumerate().map(|(i, row)| {
            let (lower, upper, size, offset, benefit, ref memories) = *row;
            let offset = offset.filter(|_| i == 0).map(|o| o.min(16 - size.min(16)));
            let memories = if self.memories.is_some() {
                memories.clone()
            } else {
                vec![]
            };
            (
                format!("b{i}"),
                lower,
                upper,
                size,
                offset,
                benefit,
                memories,
            )
        });
        if !self.json {
            let mut text = String::from("id,lower,upper,size,offset,benefit,memories\n");
            for (id, lower, upper, size, offset, benefit, memories) in rows {
                let cell = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
                text.push_str(&format!(
                    "{id},{lower},{upper},{size},{},{},{}\n",
                    cell(offset),
                    cell(benefit),
                    memories.join(" ")
                ));
            }
            return text;
        }
        let buffers: Vec<serde_json::Value> = rows
            .map(|(id, lower, upper, size, offset, benefit, memories)| {
                serde_json::json!({"id": id, "lower": lower, "upper": upper, "size": size,
                    "offset": offset, "benefit": benefit, "memories": memories})
            })
            .collect();
        let mut file = serde_json::json!({ "buffers": buffers });
        if self.capacity.1 == 2 {
            file["capacity"] = self.capacity.0.into();
        }
        if self.memories == Some(true) {
            file["memories"] = serde_json::json!([
                {"id": "sram", "capacity": 16, "cost": 1},
                {"id": "dram", "capacity": 64, "cost": 9}
            ]);
        }
        file.to_string()
    }

    /// The problem's file name: with the capacity when the case gives it there (for memories,
    /// a capacity they must ignore).
    fn file_name(&self) -> String {
        let extension = if self.json { "json" } else { "csv" };
        match self.capacity {
            (capacity, 0) => format!("p.{capacity}.{extension}"),
            _ => format!("p.{extension}"),
        }
    }

    fn flags(&self, memories_file: &Path) -> Vec<OsString> {
        let mut flags: Vec<OsString> = vec!["--nodes".into(), "3000".into()];
        let by_file = self.memories == Some(false) || (self.memories.is_some() && !self.json);
        if by_file {
            flags.extend(["--memories".into(), memories_file.into()]);
        }
        if self.memories.is_none() {
            flags.push("--spill".into());
        }
        if self.memories.is_none() && (self.capacity.1 == 1 || (self.capacity.1 == 2 && !self.json))
        {
            flags.extend(["--capacity".into(), self.capacity.0.to_string().into()]);
        }
        flags
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Every solution `solve` writes, `validate` accepts with the same flags.
    #[test]
    fn validate_accepts_every_spill_and_memories_solution(case in cases()) {
        let scratch = Scratch::new();
        let problem = scratch.file(&case.file_name(), &case.problem());
        let memories = scratch.file("m.csv", "id,capacity,cost\nsram,16,1\ndram,64,9\n");
        let solution = scratch.path(if case.json_solution { "s.json" } else { "s.csv" });
        let (solved, checked) = solve_then_validate(&problem, &solution, &case.flags(&memories));
        prop_assert!(!solved.stderr.contains("panicked"), "{}", solved.stderr);
        // A case the readers refuse (a fixed offset the capacity cannot take without spill)
        // or the limit stops is not a round trip; every other one is.
        prop_assume!(solved.code == 0);
        prop_assert_eq!(
            checked.code, 0,
            "{:?}\n{}\nsolution:\n{}\n{}{}",
            case, case.problem(), std::fs::read_to_string(&solution).unwrap_or_default(),
            checked.stdout, checked.stderr
        );
    }
}
