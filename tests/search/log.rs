//! Solve logs: they read back through the library, describe what the search did, and do not
//! depend on the number of threads.

use telamalloc::generate::{perfect, CutStyle, PerfectOptions};
use telamalloc::search::RUN_FEATURES;
use telamalloc::solve_log::{
    read_log, LogRecorder, RunResult, TryResult, LOG_SCHEMA, LOG_SCHEMA_VERSION,
    OLDEST_LOG_SCHEMA_VERSION,
};
use telamalloc::{Allocation, Goal, SearchOptions, Solution, Solver, Status};

/// How a search ended, for comparing runs: the status and the solution.
type Outcome = (Status, Option<Solution>);

fn outcome(result: &Allocation) -> Outcome {
    (result.status.clone(), result.solution.clone())
}

fn solver(threads: usize) -> Solver {
    Solver::new().options(options(threads)).nodes(2_000_000)
}

fn problem(seed: u64) -> telamalloc::Problem {
    perfect(
        &PerfectOptions {
            capacity: 4096,
            horizon: 200,
            buffers: 40,
            style: CutStyle::Mixed,
            remove: 0,
            alignment: 1,
            cuts: Default::default(),
        },
        seed,
    )
    .0
}

fn options(threads: usize) -> SearchOptions {
    SearchOptions {
        heuristic_first: false,
        threads,
        ..SearchOptions::default()
    }
}

fn record(problem: &telamalloc::Problem, threads: usize, limit: u64) -> (Outcome, Vec<u8>) {
    let capacity = problem.capacity.expect("generated with a capacity");
    let mut log = LogRecorder::new(Vec::new(), "p", limit);
    let result = solver(threads)
        .solve_observed(problem, Goal::Fit(capacity), &mut log)
        .expect("a valid problem");
    let bytes = log.finish().expect("writing to memory cannot fail");
    (outcome(&result), bytes)
}

#[test]
fn a_log_reads_back_and_describes_the_search() {
    let mut searched = 0;
    for seed in 0..20 {
        let p = problem(seed);
        let (outcome, bytes) = record(&p, 1, 1_000_000);
        assert_eq!(outcome.0, Status::Solved, "seed {seed}");
        let log = read_log(bytes.as_slice()).expect("a well-formed log");
        assert_eq!(log.header.version, LOG_SCHEMA_VERSION);
        assert_eq!(log.header.buffers, p.len());
        let footer = log.footer.expect("a footer");
        assert_eq!(footer.outcome, "solved");
        assert_eq!(footer.decisions as usize, log.decisions.len());
        // The recorded nodes are the search's own: never more decisions than nodes.
        assert!(log.decisions.len() as u64 <= footer.stats.nodes);
        // One run line per run, in order, the last one the run that found the layout; the
        // runs' nodes add up to the search's; a checkpoint every max(n / 2, 32) nodes.
        assert_eq!(log.runs.len() as u64, footer.stats.restarts + 1);
        assert!(log.runs.iter().enumerate().all(|(i, r)| r.run == i as u32));
        let (last, earlier) = log.runs.split_last().expect("a run");
        assert_eq!(last.result, RunResult::Found);
        assert!(earlier.iter().all(|r| r.result != RunResult::Found));
        assert_eq!(
            log.runs.iter().map(|r| r.nodes).sum::<u64>(),
            footer.stats.nodes
        );
        let stride = (p.len() as u64 / 2).max(32);
        for r in &log.runs {
            // A run stopped by its budget counts the node it refused, which has no checkpoint.
            let checked = match r.result {
                RunResult::Budget => r.nodes - 1,
                _ => r.nodes,
            };
            assert_eq!(r.checkpoints.len() as u64, checked / stride, "seed {seed}");
            assert!(r.checkpoints.iter().all(|c| c.len() == RUN_FEATURES.len()));
        }
        if log.decisions.is_empty() {
            continue;
        }
        searched += 1;
        for d in &log.decisions {
            assert_eq!(d.features.len(), log.header.node_features.len());
            assert!(!d.candidates.is_empty());
            for c in &d.candidates {
                assert_eq!(c.features.len(), log.header.candidate_features.len());
                assert!(c.features.iter().all(|f| f.is_finite()));
            }
            for t in &d.tries {
                assert!((t.candidate as usize) < d.candidates.len());
            }
            // Only the last try of a node can have found a solution.
            let found = d
                .tries
                .iter()
                .filter(|t| t.result == TryResult::Found)
                .count();
            assert!(found <= 1);
            if found == 1 {
                assert_eq!(d.tries.last().map(|t| t.result), Some(TryResult::Found));
            }
        }
        // The final run's solution path: its root decision found the solution.
        let last_run = log.decisions.iter().map(|d| d.run).max().unwrap();
        assert!(log
            .decisions
            .iter()
            .filter(|d| d.run == last_run)
            .any(|d| d.tries.iter().any(|t| t.result == TryResult::Found)));
    }
    assert!(searched > 0, "some problem needed a search");
}

#[test]
fn logs_do_not_depend_on_threads_and_the_limit_is_kept() {
    for seed in 0..10 {
        let p = problem(seed);
        let strip = |bytes: &[u8]| {
            let text = String::from_utf8(bytes.to_vec()).unwrap();
            // The footer holds wall-clock seconds; compare everything before it.
            text.lines()
                .filter(|l| !l.contains("\"kind\":\"footer\""))
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        let (_, one) = record(&p, 1, 1_000_000);
        let (_, two) = record(&p, 2, 1_000_000);
        assert_eq!(strip(&one), strip(&two), "seed {seed}");
        let (_, limited) = record(&p, 1, 3);
        let log = read_log(limited.as_slice()).unwrap();
        let runs = log
            .decisions
            .iter()
            .map(|d| d.run)
            .max()
            .map_or(0, |r| r + 1);
        assert!(log.decisions.len() as u32 <= 3 * runs.max(1));
    }
}

#[test]
fn recording_does_not_change_the_answer() {
    for seed in 0..10 {
        let p = problem(seed);
        let capacity = p.capacity.unwrap();
        let plain = solver(1).solve(&p, Goal::Fit(capacity)).expect("valid");
        let (recorded, _) = record(&p, 1, 1_000_000);
        assert_eq!(outcome(&plain), recorded, "seed {seed}");
    }
}

#[test]
fn a_compressed_log_file_reads_back() {
    use telamalloc::solve_log::{create_log_file, read_log_file};
    let p = problem(3);
    let capacity = p.capacity.unwrap();
    let dir = std::env::temp_dir().join(format!("telamalloc-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["log.jsonl", "log.jsonl.gz"] {
        let path = dir.join(name);
        {
            let writer = create_log_file(&path).unwrap();
            let mut log = LogRecorder::new(writer, name, 1_000_000);
            solver(1)
                .solve_observed(&p, Goal::Fit(capacity), &mut log)
                .expect("valid");
            log.finish().expect("written");
        }
        let log = read_log_file(&path).expect("reads back");
        assert_eq!(log.header.problem, name);
        assert!(log.footer.is_some(), "{name}: complete");
    }
    let plain = std::fs::metadata(dir.join("log.jsonl")).unwrap().len();
    let packed = std::fs::metadata(dir.join("log.jsonl.gz")).unwrap().len();
    assert!(packed < plain, "gzip is smaller ({packed} vs {plain})");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A log of a small search with its header line edited by `edit` (a JSON object).
fn log_with_header(edit: impl Fn(&mut serde_json::Value)) -> String {
    let (_, bytes) = record(&problem(0), 1, 1_000_000);
    let text = String::from_utf8(bytes).expect("UTF-8 log");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut header: serde_json::Value = serde_json::from_str(&lines[0]).expect("a JSON header");
    assert_eq!(header["kind"], "header");
    edit(&mut header);
    lines[0] = header.to_string();
    lines.join("\n") + "\n"
}

#[test]
fn read_log_rejects_a_wrong_schema_or_version() {
    // Unedited, the log reads.
    let good = log_with_header(|_| {});
    assert_eq!(
        read_log(good.as_bytes())
            .expect("a good log")
            .header
            .version,
        LOG_SCHEMA_VERSION
    );
    let wrong_schema = log_with_header(|h| h["schema"] = "someone-elses-log".into());
    let error = read_log(wrong_schema.as_bytes()).expect_err("a wrong schema name");
    assert!(error.starts_with("line 1: "), "{error}");
    assert!(error.contains("someone-elses-log"), "{error}");
    assert!(error.contains(LOG_SCHEMA), "{error}");

    let next = LOG_SCHEMA_VERSION + 1;
    let wrong_version = log_with_header(|h| h["version"] = next.into());
    let error = read_log(wrong_version.as_bytes()).expect_err("a newer version");
    assert!(error.starts_with("line 1: "), "{error}");
    assert!(error.contains(&format!("version {next}")), "{error}");
    assert!(
        error.contains(&format!(
            "{LOG_SCHEMA} version {OLDEST_LOG_SCHEMA_VERSION} to {LOG_SCHEMA_VERSION}"
        )),
        "{error}"
    );
    let wrong_version = log_with_header(|h| h["version"] = 0.into());
    let error = read_log(wrong_version.as_bytes()).expect_err("an older version");
    assert!(error.contains("version 0"), "{error}");
}
