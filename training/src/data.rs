//! The datasets built from solve logs.
//!
//! Ranking: every decision with a try that led to the solution (`found`) is one example: its
//! candidates' features in the order the logging policy ranked them, and the index of the
//! candidate that stayed on the solution path. Decisions without such a try (refuted subtrees,
//! runs cut off by their budget) say nothing about which candidate is best and are left out of
//! the ranking data.
//!
//! Corrective ranking (`Labels::Corrective`): only the decisions on the solution path where a
//! try before the one that found the solution failed (its subtree was exhausted): the example
//! holds the failed candidates and the found one, in the logging policy's order, and the target
//! is the found one. Each such node says which candidate the logging order got wrong; a decision
//! solved by its first try says nothing about its other candidates and is left out.
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

/// Where the ranking labels come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Labels {
    /// Every decision on the solution path; the target is the candidate the path took.
    Path,
    /// The decisions on the solution path where an earlier try failed: the found candidate
    /// over the failed ones (see the module documentation).
    Corrective,
}

/// The ranking example of `decision` whose try of candidate `found` found the solution, under
/// `labels`: every candidate (path), or the failed candidates and the found one (corrective;
/// `None` when no try failed before it); the target is the found one, in the logging order.
fn rank_example(decision: &Decision, found: usize, labels: Labels) -> Option<RankExample> {
    let failed = |c: usize| {
        decision
            .tries
            .iter()
            .any(|t| t.candidate as usize == c && t.result == TryResult::Failed)
    };
    let kept: Vec<usize> = (0..decision.candidates.len())
        .filter(|&c| labels == Labels::Path || c == found || failed(c))
        .collect();
    if labels == Labels::Corrective && kept.len() < 2 {
        return None;
    }
    Some(RankExample {
        features: kept
            .iter()
            .flat_map(|&c| decision.candidates[c].features.iter().copied())
            .collect(),
        target: kept.iter().position(|&c| c == found).expect("kept"),
    })
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
/// keeps, with ranking targets from `labels`.
pub fn read_dir(
    dir: &Path,
    filter: &PolicyFilter,
    labels: Labels,
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
                    data.rank.extend(rank_example(decision, target, labels));
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

#[cfg(test)]
mod tests {
    use super::*;
    use telamalloc::training::{CandidateRecord, TryRecord};

    /// A decision of four candidates (features: the candidate's index) with the given tries.
    fn decision(tries: &[(u32, TryResult)]) -> Decision {
        Decision {
            run: 0,
            policy: "fixed".into(),
            node: 0,
            depth: 0,
            unplaced: 4,
            features: vec![],
            candidates: (0..4)
                .map(|i| CandidateRecord {
                    buffer: i,
                    offset: 0,
                    rank: i,
                    features: vec![i as f32; WIDTH],
                })
                .collect(),
            tries: tries
                .iter()
                .map(|&(candidate, result)| TryRecord {
                    candidate,
                    nodes_below: 1,
                    failures_below: 0,
                    majors_below: 0,
                    result,
                })
                .collect(),
        }
    }

    #[test]
    fn a_corrective_example_holds_the_failed_tries_and_the_found_one() {
        use TryResult::{Failed, Found, Unwound};
        // 0 failed, 1 was unwound by a backjump (no verdict), 3 found: 0 and 3 kept, 3 the target.
        let example = rank_example(
            &decision(&[(0, Failed), (1, Unwound), (3, Found)]),
            3,
            Labels::Corrective,
        )
        .expect("a failed try before the found one");
        let firsts: Vec<f32> = example.features.chunks(WIDTH).map(|c| c[0]).collect();
        assert_eq!(firsts, vec![0.0, 3.0]);
        assert_eq!(example.target, 1);
        // Found at the first try: nothing to correct.
        assert!(rank_example(&decision(&[(0, Found)]), 0, Labels::Corrective).is_none());
        // Only unwound tries before it: no refuted sibling, no example.
        assert!(rank_example(
            &decision(&[(0, Unwound), (2, Found)]),
            2,
            Labels::Corrective
        )
        .is_none());
    }
}
