//! Side-by-side runs of several algorithms over a set of problems (`telamalloc bench`).

use crate::analysis::Timeline;
use crate::error::InputError;
use crate::io::{file_name, read_problem};
use crate::outcome::Deadline;
use crate::problem::Problem;
use crate::search::instance::Instance;
use crate::solver::{Algorithm, Goal, Solver};
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// One algorithm's result on one problem.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    /// The problem's file name.
    pub problem: String,
    /// The algorithm's name.
    pub algorithm: String,
    /// `solved`, `infeasible`, `limit` or `exceeds` (a heuristic above the capacity).
    pub status: String,
    /// The peak reached, if a layout was produced.
    pub peak: Option<u64>,
    /// LOAD of the problem.
    pub load: u64,
    /// The capacity, when fitting one.
    pub capacity: Option<u64>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Search statistics, when the algorithm searches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<serde_json::Value>,
}

impl BenchRow {
    /// peak / LOAD.
    pub(crate) fn peak_over_load(&self) -> Option<f64> {
        self.peak
            .filter(|_| self.load > 0)
            .map(|p| p as f64 / self.load as f64)
    }

    /// peak / capacity.
    pub(crate) fn peak_over_capacity(&self) -> Option<f64> {
        self.peak
            .zip(self.capacity)
            .map(|(p, c)| p as f64 / c as f64)
    }
}

/// The search of `base` with its options as given, then with each technique switch flipped in
/// turn (labelled `search`, then `-name` or `+name`).
pub fn ablation(base: &Solver) -> Vec<(String, Solver)> {
    let mut solvers = vec![("search".to_string(), base.clone())];
    for (label, options) in base.search_options().ablation_variants() {
        solvers.push((label, base.clone().options(options)));
    }
    solvers
}

/// Runs every labelled solver on every problem, one at a time (so timings do not interfere).
/// `capacity` overrides the files' own; `minimize` asks for the smallest peak. A problem without
/// a capacity, when not minimising, is an error (the rule of [`Goal::for_problem`], as for
/// `solve`). `on_row` sees each row as soon as it is measured.
pub fn run(
    files: &[PathBuf],
    solvers: &[(String, Solver)],
    capacity: Option<u64>,
    minimize: bool,
    mut on_row: impl FnMut(&BenchRow),
) -> Result<Vec<BenchRow>, InputError> {
    let mut rows = Vec::new();
    for file in files {
        let problem = read_problem(file, capacity)?;
        let goal = Goal::for_problem(&problem, minimize).ok_or_else(|| {
            InputError::at_line(
                &file.display().to_string(),
                None,
                Some("capacity"),
                crate::io::no_capacity_message(file, true),
            )
        })?;
        for (label, solver) in solvers {
            let result = solver.solve(&problem, goal).map_err(|e| {
                InputError::at_line(&file.display().to_string(), None, None, e.to_string())
            })?;
            let row = BenchRow {
                problem: file_name(file),
                algorithm: label.clone(),
                status: result.status.label().to_string(),
                peak: result.peak,
                load: result.load,
                capacity: match goal {
                    Goal::Fit(c) | Goal::Spill(c) => Some(c),
                    Goal::Minimize | Goal::Memories => problem.capacity,
                },
                seconds: result.elapsed.as_secs_f64(),
                search: result
                    .search
                    .map(|s| serde_json::to_value(s).expect("plain data")),
            };
            on_row(&row);
            rows.push(row);
        }
    }
    Ok(rows)
}

/// The table header matching [`table_line`].
pub fn table_header() -> String {
    format!(
        "{:<18} {:<22} {:<10} {:>10} {:>10} {:>9} {:>10}",
        "problem", "algorithm", "status", "peak", "peak/LOAD", "peak/cap", "time (s)"
    )
}

/// One row of the table.
pub fn table_line(row: &BenchRow) -> String {
    let ratio = |r: Option<f64>| r.map(|r| format!("{r:.3}")).unwrap_or_else(|| "-".into());
    format!(
        "{:<18} {:<22} {:<10} {:>10} {:>10} {:>9} {:>10.3}",
        row.problem,
        row.algorithm,
        row.status,
        row.peak
            .map(|p| p.to_string())
            .unwrap_or_else(|| "-".into()),
        ratio(row.peak_over_load()),
        ratio(row.peak_over_capacity()),
        row.seconds
    )
}

/// Per-algorithm totals over a set of rows, as a Markdown table: problems solved, total and
/// largest time, total nodes (for the search).
pub fn summary_markdown(rows: &[BenchRow]) -> String {
    let mut labels: Vec<&str> = Vec::new();
    for row in rows {
        if !labels.contains(&row.algorithm.as_str()) {
            labels.push(&row.algorithm);
        }
    }
    let mut out = String::from(
        "| algorithm | solved | total time (s) | slowest (s) | total nodes |\n|---|---|---|---|---|\n",
    );
    for label in labels {
        let mine: Vec<&BenchRow> = rows.iter().filter(|r| r.algorithm == label).collect();
        let solved = mine.iter().filter(|r| r.status == "solved").count();
        let total: f64 = mine.iter().map(|r| r.seconds).sum();
        let slowest = mine.iter().map(|r| r.seconds).fold(0.0, f64::max);
        let nodes: u64 = mine
            .iter()
            .filter_map(|r| r.search.as_ref()?.get("nodes")?.as_u64())
            .sum();
        out.push_str(&format!(
            "| {label} | {solved}/{} | {total:.2} | {slowest:.2} | {nodes} |\n",
            mine.len()
        ));
    }
    out
}

/// What a cell of [`matrix_markdown`] shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// `time s (nodes)` when solved, else the status (the heading says so: `search: s (nodes)`).
    Time,
    /// peak / capacity (for minimisation runs).
    PeakOverCapacity,
}

/// One Markdown table: a row per problem, a column per algorithm.
pub fn matrix_markdown(rows: &[BenchRow], cell: Cell) -> String {
    let mut labels: Vec<&str> = Vec::new();
    let mut problems: Vec<&str> = Vec::new();
    for row in rows {
        if !labels.contains(&row.algorithm.as_str()) {
            labels.push(&row.algorithm);
        }
        if !problems.contains(&row.problem.as_str()) {
            problems.push(&row.problem);
        }
    }
    // A column's heading says what its cells hold: the time in seconds (else the status) and,
    // for the search, its nodes in parentheses.
    let headings: Vec<String> = labels
        .iter()
        .map(|label| match cell {
            Cell::PeakOverCapacity => format!("{label}: peak / capacity"),
            Cell::Time => {
                let counted = rows.iter().any(|r| {
                    r.algorithm == *label
                        && r.search.as_ref().and_then(|s| s.get("nodes")).is_some()
                });
                format!("{label}: s{}", if counted { " (nodes)" } else { "" })
            }
        })
        .collect();
    let mut out = format!("| problem | {} |\n|---|", headings.join(" | "));
    out.push_str(&"---|".repeat(labels.len()));
    out.push('\n');
    for problem in problems {
        out.push_str(&format!("| {problem} |"));
        for label in &labels {
            let cell = rows
                .iter()
                .find(|r| r.problem == problem && r.algorithm == *label)
                .map(|r| {
                    if cell == Cell::PeakOverCapacity {
                        return r
                            .peak_over_capacity()
                            .map(|x| format!("{x:.3}"))
                            .unwrap_or_else(|| r.status.clone());
                    }
                    let nodes = r
                        .search
                        .as_ref()
                        .and_then(|s| s.get("nodes")?.as_u64())
                        .map(|n| format!(" ({n})"))
                        .unwrap_or_default();
                    if r.status == "solved" {
                        format!("{:.2}{nodes}", r.seconds)
                    } else {
                        format!("{}{nodes}", r.status)
                    }
                })
                .unwrap_or_default();
            out.push_str(&format!(" {cell} |"));
        }
        out.push('\n');
    }
    out
}

/// What one algorithm costs on one problem at scale (`telamalloc bench --footprint`): a
/// baseline's whole allocation, or the search's setup (its instance: sections, members,
/// neighbour lists), each alone, without reading, checking or validating.
#[derive(Clone, Debug, Serialize)]
pub struct FootprintRow {
    /// The problem's file name.
    pub problem: String,
    /// How many buffers it has.
    pub buffers: usize,
    /// The algorithm's name (`search` measures the search's setup only).
    pub algorithm: String,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The peak of the layout, for a baseline that finished within the time limit.
    pub peak: Option<u64>,
    /// How far the process's peak resident memory rose above its resident memory before the
    /// run, in MiB (Linux: `VmHWM` after resetting it through `/proc/self/clear_refs`, minus
    /// `VmRSS` before; `None` elsewhere). Memory the process freed earlier (reading the
    /// problem) and the allocator reuses does not count, so run one algorithm per process.
    pub memory_mib: Option<f64>,
    /// The process's peak resident memory during the run, problem included, in MiB.
    pub process_mib: Option<f64>,
}

/// Measures `algorithm` on `problem` alone ([`FootprintRow`]): a baseline within `timeout`
/// (hill climbing returns its best layout when it passes), or for [`Algorithm::Search`] the
/// search's setup at the problem's capacity (its LOAD if it has none). `None` for CP-SAT.
pub fn footprint(
    problem: &Problem,
    name: &str,
    algorithm: Algorithm,
    seed: u64,
    timeout: Option<Duration>,
) -> Option<FootprintRow> {
    let rss_before = memory::reset_peak();
    let start = Instant::now();
    let peak = match algorithm {
        Algorithm::Baseline(baseline) => baseline
            .allocate_within(problem, seed, &Deadline::after(start, timeout, None))
            .map(|layout| layout.peak(problem)),
        Algorithm::Search => {
            let capacity = problem
                .capacity
                .unwrap_or_else(|| Timeline::new(problem).load());
            std::hint::black_box(Instance::new(problem, capacity));
            None
        }
        Algorithm::CpSat => return None,
    };
    let seconds = start.elapsed().as_secs_f64();
    let process_peak = memory::peak();
    let memory_mib = rss_before
        .zip(process_peak)
        .map(|(before, peak)| peak.saturating_sub(before) as f64 / 1024.0);
    Some(FootprintRow {
        problem: String::new(),
        buffers: problem.buffers.len(),
        algorithm: name.to_string(),
        seconds,
        peak,
        memory_mib,
        process_mib: process_peak.map(|kib| kib as f64 / 1024.0),
    })
}

/// The header matching [`footprint_line`].
pub fn footprint_header() -> String {
    format!(
        "{:<18} {:>9} {:<22} {:>10} {:>12} {:>13} {:>10}",
        "problem", "buffers", "algorithm", "time (s)", "memory (MiB)", "process (MiB)", "peak"
    )
}

/// One row of the footprint table.
pub fn footprint_line(row: &FootprintRow) -> String {
    let or_dash = |x: Option<String>| x.unwrap_or_else(|| "-".into());
    format!(
        "{:<18} {:>9} {:<22} {:>10.3} {:>12} {:>13} {:>10}",
        row.problem,
        row.buffers,
        row.algorithm,
        row.seconds,
        or_dash(row.memory_mib.map(|m| format!("{m:.1}"))),
        or_dash(row.process_mib.map(|m| format!("{m:.1}"))),
        or_dash(row.peak.map(|p| p.to_string())),
    )
}

/// The process's resident memory, from `/proc/self/status` (Linux only).
mod memory {
    /// Resets the peak resident memory (`VmHWM`) to the current (`VmRSS`), and returns that, in
    /// KiB; `None` where `/proc` is not there.
    pub(crate) fn reset_peak() -> Option<u64> {
        std::fs::write("/proc/self/clear_refs", "5").ok()?;
        status_kib("VmRSS:")
    }

    /// The peak resident memory since the last reset, in KiB.
    pub fn peak() -> Option<u64> {
        status_kib("VmHWM:")
    }

    fn status_kib(field: &str) -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with(field))?;
        line[field.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    }
}
