//! What the search explores, pinned: a fixed sample of the effort-validation corpus (the smallest
//! problem of each family and one larger, made again here by `telamalloc gen` with the manifest's flags) is
//! searched by the default solver under a node budget, and each answer's status, node count and
//! deciding policy must be exactly the recorded ones. A refactoring of the engine must leave
//! them identical; a change meant to alter the search updates the table in the same commit,
//! with the measurements that justify it. `tests/search/hardset.rs` does the same on the public hard
//! set.

use crate::common;

use common::{telamalloc_in, Scratch};
use std::path::Path;
use telamalloc::io::read_problem;
use telamalloc::{validate, Goal, Problem, SearchOptions, Solver};

/// The budget each problem is searched under.
const NODES: u64 = 20_000;

/// A problem of the sample: its corpus file name, the `gen` flags that make it, and its
/// buffer count in the manifest.
struct Sample {
    name: &'static str,
    gen: &'static [&'static str],
    buffers: usize,
}

/// The smallest problem of each perfect-packing family and of the on-chip family, by the
/// corpus's selection nodes (each made bit for bit as the corpus's file), and one larger thin
/// packing that the round robin alone does not decide within the budget.
const SAMPLE: [Sample; 17] = [
    perfect("guillotine.uniform.n100.r3.s20002", 97),
    perfect("guillotine.central.n100.r4.s20003", 96),
    perfect("guillotine.edge.n100.r4.s20003", 96),
    perfect("non-guillotine.uniform.n100.r1.s20000", 99),
    perfect("non-guillotine.central.n100.r4.s20003", 96),
    perfect("non-guillotine.edge.n100.r4.s20003", 96),
    perfect("mixed.uniform.n100.r4.s20003", 96),
    perfect("mixed.central.n100.r1.s20000", 99),
    perfect("mixed.edge.n100.r4.s20003", 96),
    perfect("thin.uniform.n200.r6.s20002", 194),
    perfect("thin.central.n250.r2.s20000", 248),
    perfect("thin.edge.n200.r8.s20003", 192),
    perfect("time-slab.uniform.n100.r4.s20003", 96),
    perfect("time-slab.central.n150.r6.s20003", 144),
    perfect("time-slab.edge.n150.r6.s20003", 144),
    Sample {
        name: "ppocr_v4_rec.f0.3.area.t3.a64.s51354",
        gen: &[
            "onchip",
            "--from",
            "datasets/models/ppocr_v4_rec.csv",
            "--fraction",
            "0.3",
            "--benefit",
            "area",
            "--alignment",
            "64",
            "--seed",
            "51354",
            "--tiles",
            "3",
        ],
        buffers: 455,
    },
    Sample {
        name: "perfect.thin.edge.n500.r5.s20000",
        gen: &[
            "perfect",
            "--style",
            "thin",
            "--cuts",
            "edge",
            "--buffers",
            "500",
            "--remove",
            "5",
            "--seed",
            "20000",
        ],
        buffers: 0,
    },
];

/// A sample of the perfect-packing families, named `STYLE.CUTS.nN.rR.sS` as in the corpus.
const fn perfect(name: &'static str, buffers: usize) -> Sample {
    Sample {
        name,
        gen: &[],
        buffers,
    }
}

/// The `gen` flags of a perfect-packing sample, read off its name, with the corpus's fixed ones.
fn perfect_flags(name: &str) -> Vec<String> {
    let parts: Vec<&str> = name.split('.').collect();
    let number = |prefix: char| {
        parts[2..]
            .iter()
            .find_map(|p| p.strip_prefix(prefix))
            .expect("nN, rR and sS in the name")
            .to_string()
    };
    [
        "perfect",
        "--style",
        parts[0],
        "--cuts",
        parts[1],
        "--buffers",
        &number('n'),
        "--remove",
        &number('r'),
        "--seed",
        &number('s'),
        "--alignment",
        "1024",
        "--horizon",
        "1024",
        "--capacity",
        "1048576",
    ]
    .map(String::from)
    .to_vec()
}

/// Status, nodes and deciding policy of each sample, in order (nodes only where decided), with
/// the default switches.
const EXPECTED: [(&str, u64, &str); 17] = [
    ("solved", 101, "slack-fill"),
    ("solved", 487, "slack-fill-likely"),
    ("solved", 99, "slack-fill"),
    ("solved", 173, "slack-fill"),
    ("solved", 127, "slack-fill"),
    ("solved", 100, "slack-fill"),
    ("solved", 485, "slack-fill-match"),
    ("solved", 101, "slack-fill"),
    ("solved", 101, "slack-fill"),
    ("solved", 199, "slack-fill"),
    ("solved", 250, "slack-fill"),
    ("solved", 985, "slack-fill-match"),
    ("solved", 102, "slack-fill"),
    ("solved", 410, "slack-fill"),
    ("solved", 524, "slack-fill-match"),
    ("solved", 608, "ZAT"),
    ("solved", 3017, "slack-fill-match"),
];

/// The same with `--no slack-fill`: the portfolio of placement orders alone.
const EXPECTED_ROUND_ROBIN: [(&str, u64, &str); 17] = [
    ("solved", 1870, "WAT+"),
    ("solved", 130, "ZAT+"),
    ("solved", 870, "TAW"),
    ("solved", 108, "TAW+"),
    ("solved", 182, "TAW+"),
    ("solved", 989, "WAT+"),
    ("solved", 1434, "WAT+"),
    ("solved", 500, "ZAT"),
    ("solved", 176, "TAW+"),
    ("solved", 2205, "ZAT"),
    ("solved", 397, "ZAT+"),
    ("solved", 1850, "TAW+"),
    ("solved", 96, "ZAT"),
    ("solved", 146, "ZAT"),
    ("solved", 144, "ZAT"),
    ("solved", 608, "ZAT"),
    ("limit", 0, ""),
];

/// Makes the sample's problems with `telamalloc gen`, in `scratch`.
fn sample_problems(scratch: &Scratch) -> Vec<Problem> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    SAMPLE
        .iter()
        .map(|sample| {
            let path = scratch.dir().join(format!("{}.csv", sample.name));
            let mut args = vec!["gen".to_string()];
            args.extend(if sample.gen.is_empty() {
                perfect_flags(sample.name)
            } else {
                sample.gen.iter().map(|s| s.to_string()).collect()
            });
            args.extend(["-o".to_string(), path.display().to_string()]);
            let run = telamalloc_in(root, &args);
            assert_eq!(run.code, 0, "{}: {}", sample.name, run.stderr);
            // `gen` prints the capacity it chose (onchip); perfect packings are cut at 1048576.
            let capacity = run
                .stderr
                .split("capacity ")
                .nth(1)
                .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|digits| digits.parse::<u64>().ok())
                .unwrap_or(1_048_576);
            let problem = read_problem(&path, Some(capacity)).expect("gen writes a valid problem");
            if sample.buffers > 0 {
                assert_eq!(problem.buffers.len(), sample.buffers, "{}", sample.name);
            }
            problem
        })
        .collect()
}

/// Searches every problem with `options` under the budget: status, nodes and deciding policy.
fn search_all(problems: &[Problem], options: SearchOptions) -> Vec<(&'static str, u64, String)> {
    let solver = Solver::new().options(options).nodes(NODES);
    problems
        .iter()
        .zip(&SAMPLE)
        .map(|(problem, sample)| {
            let capacity = problem.capacity.expect("read with one");
            let result = solver
                .solve(problem, Goal::Fit(capacity))
                .expect("a valid problem");
            if let Some(solution) = &result.solution {
                assert!(
                    validate(problem, solution, Some(capacity)).is_valid(),
                    "{}",
                    sample.name
                );
            }
            let stats = result.search.expect("the search ran");
            (
                result.status.label(),
                stats.nodes,
                stats.policy.unwrap_or_default(),
            )
        })
        .collect()
}

/// The samples whose answer differs from `expected`, described.
fn differences(found: &[(&str, u64, String)], expected: &[(&str, u64, &str)]) -> Vec<String> {
    SAMPLE
        .iter()
        .zip(found)
        .zip(expected)
        .filter(|((_, got), want)| {
            got.0 != want.0 || (got.0 == "solved" && (got.1, got.2.as_str()) != (want.1, want.2))
        })
        .map(|((sample, got), want)| format!("{}: {got:?}, recorded {want:?}", sample.name))
        .collect()
}

/// Makes the sample and searches it with `options` (without heuristic-first, so that the
/// search itself answers every problem; `change` adjusts the rest); the samples whose answer
/// differs from `expected`.
fn check_sample(change: impl FnOnce(&mut SearchOptions), expected: &[(&str, u64, &str)]) {
    let scratch = Scratch::new();
    let problems = sample_problems(&scratch);
    let mut options = SearchOptions {
        heuristic_first: false,
        ..SearchOptions::default()
    };
    change(&mut options);
    let found = search_all(&problems, options);
    let wrong = differences(&found, expected);
    assert!(wrong.is_empty(), "{wrong:#?}\nall: {found:?}");
}

#[test]
fn the_validation_sample_is_searched_with_the_recorded_node_counts() {
    check_sample(|_| {}, &EXPECTED);
}

#[test]
fn without_slack_filling_the_sample_is_searched_with_the_recorded_node_counts() {
    check_sample(
        |options| assert!(options.set("slack-fill", false)),
        &EXPECTED_ROUND_ROBIN,
    );
}
