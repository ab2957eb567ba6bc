//! Side-by-side runs of several algorithms over a set of problems (`telamalloc bench`).

use crate::allocate::{allocate, Algorithm, Goal, Limits};
use crate::error::InputError;
use crate::io::read_problem;
use serde::Serialize;
use std::path::{Path, PathBuf};

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
    pub fn peak_over_load(&self) -> Option<f64> {
        self.peak
            .filter(|_| self.load > 0)
            .map(|p| p as f64 / self.load as f64)
    }

    /// peak / capacity.
    pub fn peak_over_capacity(&self) -> Option<f64> {
        self.peak
            .zip(self.capacity)
            .map(|(p, c)| p as f64 / c as f64)
    }
}

/// The problem files named by `paths`: files as given, folders searched (not recursively) for
/// `.csv` and `.json` files, sorted by name (a folder's `manifest.csv` is not a problem and is
/// skipped).
pub fn problem_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|e| {
                InputError::at_line(
                    &path.display().to_string(),
                    None,
                    None,
                    format!("cannot read folder: {e}"),
                )
            })?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.is_file()
                        && p.file_name().is_some_and(|n| n != "manifest.csv")
                        && matches!(
                            p.extension().and_then(|e| e.to_str()),
                            Some("csv") | Some("json")
                        )
                })
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Runs every algorithm on every problem, one at a time (so timings do not interfere).
/// `capacity` overrides the files' own; `minimize` ignores capacities. `on_row` sees each row
/// as soon as it is measured.
pub fn run(
    files: &[PathBuf],
    algorithms: &[(String, Algorithm)],
    capacity: Option<u64>,
    minimize: bool,
    limits: Limits,
    seed: u64,
    mut on_row: impl FnMut(&BenchRow),
) -> Result<Vec<BenchRow>, InputError> {
    let mut rows = Vec::new();
    for file in files {
        let problem = read_problem(file, capacity)?;
        let goal = match (minimize, problem.capacity) {
            (false, Some(c)) => Goal::Fit(c),
            _ => Goal::Minimize,
        };
        for (label, algorithm) in algorithms {
            let result = allocate(&problem, algorithm, goal, limits, seed);
            let row = BenchRow {
                problem: file_name(file),
                algorithm: label.clone(),
                status: result.status.label().to_string(),
                peak: result.peak,
                load: result.load,
                capacity: match goal {
                    Goal::Fit(c) => Some(c),
                    Goal::Minimize => problem.capacity,
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

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| path.display().to_string())
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
    /// `time s (nodes)` when solved, else the status.
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
    let mut out = format!("| problem | {} |\n|---|", labels.join(" | "));
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
