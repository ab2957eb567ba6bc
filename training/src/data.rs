//! The datasets built from solve logs.
//!
//! Ranking: every decision with a try that led to the solution (`found`) is one example: its
//! candidates' features in the order the logging policy ranked them, and the index of the
//! candidate that stayed on the solution path. Decisions without such a try (refuted subtrees,
//! runs cut off by their budget) say nothing about which candidate is best and are left out of
//! the ranking data.
//!
//! Risk: every try whose outcome is known (`found` = 0, `failed` or `unwound` = 1) of the ranking
//! decisions, plus the tries of up to `failed_per_log` other decisions per log (drawn with the
//! seed), so that refuted subtrees, where every candidate fails, are represented too.

use indicatif::{ProgressBar, ProgressStyle};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use telamalloc::training::{
    read_log_file, Decision, TryResult, CANDIDATE_FEATURES, FEATURE_SCHEMA_VERSION,
};

/// Number of candidate features.
pub const WIDTH: usize = CANDIDATE_FEATURES.len();

/// One ranking example: a node's candidates and the one on the solution path.
#[derive(Clone, Debug)]
pub struct RankExample {
    /// Row-major `candidates x WIDTH` raw features, in the logging policy's order.
    pub features: Vec<f32>,
    /// Index of the candidate whose try found the solution.
    pub target: usize,
}

impl RankExample {
    /// Number of candidates.
    pub fn len(&self) -> usize {
        self.features.len() / WIDTH
    }
}

/// One risk example: a tried candidate and whether its subtree failed.
#[derive(Clone, Debug)]
pub struct RiskExample {
    /// Raw features.
    pub features: [f32; WIDTH],
    /// 1 if the subtree held no solution, 0 if it led to the solution.
    pub failed: f32,
    /// Whether the decision lies on the solution path (it has a `found` try).
    pub on_path: bool,
}

/// Everything read from one folder of logs.
#[derive(Debug, Default)]
pub struct Dataset {
    /// Ranking examples.
    pub rank: Vec<RankExample>,
    /// Risk examples.
    pub risk: Vec<RiskExample>,
    /// Logs read.
    pub logs: usize,
    /// Logs skipped (another feature schema, or unreadable), with the reason.
    pub skipped: Vec<String>,
    /// Decisions seen in all logs.
    pub decisions: u64,
    /// FNV-1a 64 over the logs' bytes, in file-name order.
    pub hash: u64,
}

/// FNV-1a, continued from `hash`.
pub fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= b as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The FNV-1a offset basis.
pub const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// The rows of a split manifest (CSV, no quoting) at `path`, each a map from column name to
/// value; an error when it cannot be read or lacks one of the `needed` columns.
pub fn manifest_rows(path: &Path, needed: &[&str]) -> Result<Vec<HashMap<String, String>>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    if let Some(missing) = needed.iter().find(|name| !header.contains(name)) {
        return Err(format!("{}: no '{missing}' column", path.display()));
    }
    Ok(lines
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            header
                .iter()
                .zip(line.split(','))
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect()
        })
        .collect())
}

/// The `.jsonl` and `.jsonl.gz` logs of a folder, sorted by name.
pub fn log_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.to_string_lossy();
            name.ends_with(".jsonl") || name.ends_with(".jsonl.gz")
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("no .jsonl or .jsonl.gz logs in {}", dir.display()));
    }
    Ok(files)
}

/// Which policies' decisions to learn from.
#[derive(Clone, Debug)]
pub struct PolicyFilter(Option<Vec<String>>);

impl PolicyFilter {
    /// From a list of names; `all` (or nothing) keeps every policy.
    pub fn new(names: &[String]) -> PolicyFilter {
        if names.is_empty() || names.iter().any(|n| n.eq_ignore_ascii_case("all")) {
            PolicyFilter(None)
        } else {
            PolicyFilter(Some(names.to_vec()))
        }
    }

    /// Whether decisions of `policy` are kept.
    pub fn keeps(&self, policy: &str) -> bool {
        self.0
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n.eq_ignore_ascii_case(policy)))
    }
}

/// Reads every log of `dir` into a dataset, keeping the decisions of the policies `filter`
/// keeps.
pub fn read_dir(
    dir: &Path,
    filter: &PolicyFilter,
    failed_per_log: usize,
    seed: u64,
) -> Result<Dataset, String> {
    let files = log_files(dir)?;
    let bar = ProgressBar::new(files.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} logs of {msg}, {elapsed}")
            .expect("valid template"),
    );
    bar.set_message(dir.display().to_string());
    let mut data = Dataset {
        hash: FNV_START,
        ..Dataset::default()
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let names: Vec<String> = CANDIDATE_FEATURES.iter().map(|s| s.to_string()).collect();
    for file in &files {
        bar.inc(1);
        let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
        data.hash = fnv1a(
            data.hash,
            file.file_name().unwrap_or_default().as_encoded_bytes(),
        );
        data.hash = fnv1a(data.hash, &bytes);
        let log = match read_log_file(file) {
            Ok(log) => log,
            Err(e) => {
                data.skipped.push(format!("{}: {e}", file.display()));
                continue;
            }
        };
        if log.header.feature_version != FEATURE_SCHEMA_VERSION
            || log.header.candidate_features != names
        {
            data.skipped.push(format!(
                "{}: feature schema {} differs from this build's {FEATURE_SCHEMA_VERSION}",
                file.display(),
                log.header.feature_version
            ));
            continue;
        }
        data.logs += 1;
        data.decisions += log.decisions.len() as u64;
        let mut others = Vec::new();
        for decision in &log.decisions {
            if !filter.keeps(&decision.policy)
                || decision
                    .candidates
                    .iter()
                    .any(|c| c.features.len() != WIDTH)
            {
                continue;
            }
            let found = decision
                .tries
                .iter()
                .find(|t| t.result == TryResult::Found)
                .map(|t| t.candidate as usize);
            match found {
                Some(target) if target < decision.candidates.len() => {
                    data.rank.push(RankExample {
                        features: decision
                            .candidates
                            .iter()
                            .flat_map(|c| c.features.iter().copied())
                            .collect(),
                        target,
                    });
                    push_risk(&mut data.risk, decision, true);
                }
                _ => {
                    if decision
                        .tries
                        .iter()
                        .any(|t| matches!(t.result, TryResult::Failed | TryResult::Unwound))
                    {
                        others.push(decision);
                    }
                }
            }
        }
        others.shuffle(&mut rng);
        for decision in others.into_iter().take(failed_per_log) {
            push_risk(&mut data.risk, decision, false);
        }
    }
    bar.finish_and_clear();
    Ok(data)
}

fn push_risk(risk: &mut Vec<RiskExample>, decision: &Decision, on_path: bool) {
    for t in &decision.tries {
        let failed = match t.result {
            TryResult::Found => 0.0,
            TryResult::Failed | TryResult::Unwound => 1.0,
            TryResult::Stopped => continue,
        };
        let Some(c) = decision.candidates.get(t.candidate as usize) else {
            continue;
        };
        let mut features = [0.0; WIDTH];
        features.copy_from_slice(&c.features);
        risk.push(RiskExample {
            features,
            failed,
            on_path,
        });
    }
}

/// Per-feature mean and standard deviation over the candidates of the ranking examples and the
/// risk examples (a standard deviation below 1e-6 becomes 1).
pub fn normalisation(data: &Dataset) -> (Vec<f32>, Vec<f32>) {
    let mut sum = [0f64; WIDTH];
    let mut squares = [0f64; WIDTH];
    let mut count = 0f64;
    let rows = data
        .rank
        .iter()
        .flat_map(|e| e.features.chunks_exact(WIDTH))
        .chain(data.risk.iter().map(|r| r.features.as_slice()));
    for row in rows {
        for (k, &v) in row.iter().enumerate() {
            sum[k] += v as f64;
            squares[k] += v as f64 * v as f64;
        }
        count += 1.0;
    }
    let count = count.max(1.0);
    let mean: Vec<f32> = sum.iter().map(|s| (s / count) as f32).collect();
    let std = (0..WIDTH)
        .map(|k| {
            let m = sum[k] / count;
            let var = (squares[k] / count - m * m).max(0.0);
            let s = var.sqrt();
            if s < 1e-6 {
                1.0
            } else {
                s as f32
            }
        })
        .collect();
    (mean, std)
}
