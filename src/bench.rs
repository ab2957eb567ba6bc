//! Side-by-side runs of several algorithms over a set of problems (`telamalloc bench`).

use crate::error::InputError;
use crate::io::{file_name, read_problem};
use crate::solver::{Goal, Solver};
use serde::Serialize;
use std::path::PathBuf;

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
                "no capacity: give --capacity N or --minimize (or name the file NAME.CAPACITY.csv)",
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
