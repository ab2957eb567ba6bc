//! The TelaMalloc hybrid search: a policy picks which buffer to place next, the buffer goes to
//! its lowest feasible offset, propagation narrows what is left, and the search backtracks
//! (minor: the next candidate; major: back to the placements behind a conflict, with the
//! buffers involved prioritised), restarting over a portfolio of policies with growing budgets.
//!
//! ```
//! use telamalloc::{Buffer, Problem};
//! use telamalloc::search::{search, SearchOptions, Outcome};
//! let problem = Problem::new(vec![
//!     Buffer::new("a", 0, 3, 4), Buffer::new("b", 3, 9, 4), Buffer::new("c", 0, 9, 4),
//!     Buffer::new("d", 9, 21, 4), Buffer::new("e", 0, 21, 4)], None);
//! let result = search(&problem, 12, &SearchOptions::default(), None, Default::default());
//! assert!(matches!(result.outcome, Outcome::Solved(_)));
//! ```

mod dfs;
pub mod features;
pub mod learned;
pub(crate) mod max_tree;
pub mod minimize;
mod model;
pub mod options;
pub mod policy;
mod portfolio;
pub mod portfolio_model;
pub mod record;
pub mod schedule;
mod state;

pub use model::Model;
pub use options::{Schedule, SearchOptions};
pub use policy::{Candidate, FixedPolicy, NodeView, OrderKey, Policy, StaticOrder};
pub use state::State;

use crate::allocate::{trivially_infeasible, Infeasibility, Limits, Status};
use crate::analysis::Timeline;
use crate::baselines::Baseline;
use crate::io::{check_problem_for, BufferPlaces};
use crate::problem::{Problem, Solution};
use crate::validate::validate;
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Counters of a search.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct SearchStats {
    /// Search nodes expanded.
    pub nodes: u64,
    /// Minor backtracks: candidates that failed at once or whose subtree failed.
    pub minor_backtracks: u64,
    /// Major backtracks: jumps back to the placements behind a conflict.
    pub major_backtracks: u64,
    /// Restarts (runs after the first).
    pub restarts: u64,
    /// Times a placement cut the timeline into independent parts.
    pub decompositions: u64,
    /// The policy that produced the answer, if the search ran.
    pub policy: Option<String>,
    /// Whether a baseline already fitted (no search ran).
    pub heuristic: Option<String>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Decision lines written to the solve log (0 when not recording).
    #[serde(default)]
    pub recorded_decisions: u64,
    /// Decision lines dropped by the per-run record limit.
    #[serde(default)]
    pub dropped_decisions: u64,
    /// The portfolio's policies in the order they ran (empty if the search did not run).
    #[serde(default)]
    pub portfolio: Vec<String>,
    /// The first policy's node budget per round, in multiples of the others' (1: plain round
    /// robin; 0 if the search did not run).
    #[serde(default)]
    pub lead: u64,
}

impl SearchStats {
    fn add(&mut self, other: &SearchStats) {
        self.nodes += other.nodes;
        self.minor_backtracks += other.minor_backtracks;
        self.major_backtracks += other.major_backtracks;
        self.decompositions += other.decompositions;
    }
}

/// How a search ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A validated solution under the capacity.
    Solved(Solution),
    /// Proven: no solution exists.
    Infeasible(Infeasibility),
    /// The time or node limit came first.
    LimitReached,
    /// The problem breaks the model's rules (see [`crate::io::check_problem`]).
    InvalidProblem(String),
}

impl Outcome {
    /// The matching [`Status`].
    pub fn status(&self) -> Status {
        match self {
            Outcome::Solved(_) => Status::Solved,
            Outcome::Infeasible(why) => Status::Infeasible(why.clone()),
            Outcome::LimitReached => Status::LimitReached,
            Outcome::InvalidProblem(why) => Status::InvalidProblem(why.clone()),
        }
    }
}

/// The result of [`search`].
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// How it ended.
    pub outcome: Outcome,
    /// Counters.
    pub stats: SearchStats,
    /// Why the solve log could not be written, if recording failed.
    pub log_error: Option<String>,
}

/// Where and how much to record (see [`record`]).
pub struct Recording<'w> {
    /// Receives the log's JSON lines.
    pub writer: &'w mut (dyn std::io::Write + Send),
    /// The problem's name in the header.
    pub problem: String,
    /// The most decision lines to write per run.
    pub limit_per_run: u64,
}

/// The policies of the default portfolio, in round-robin order.
pub fn default_policies(buffers: usize, options: &SearchOptions) -> Vec<Box<dyn Policy>> {
    let mut policies: Vec<Box<dyn Policy>> =
        vec![Box::new(FixedPolicy::new(buffers, options.conflict_boost))];
    for word in ["WAT", "TAW", "TWA"] {
        policies.push(Box::new(StaticOrder::new(word).expect("valid word")));
    }
    policies
}

/// A policy by name: `fixed`, `learned` (the model at [`learned::DEFAULT_MODEL_PATH`]), the path
/// of a `.json` model file, an order word over `W`, `A`, `T`, `Z` such as `WAT`, or an order
/// word with conflict boosting such as `TWA+` (the fixed policy is `WZA+`). A learned
/// policy whose model cannot be used warns once and runs as the fixed policy.
pub fn policy_by_name(
    name: &str,
    buffers: usize,
    options: &SearchOptions,
) -> Option<Box<dyn Policy>> {
    if name.eq_ignore_ascii_case("fixed") {
        return Some(Box::new(FixedPolicy::new(buffers, options.conflict_boost)));
    }
    let model = if name.eq_ignore_ascii_case("learned") {
        Some(learned::DEFAULT_MODEL_PATH)
    } else if name.to_ascii_lowercase().ends_with(".json") {
        Some(name)
    } else {
        None
    };
    if let Some(path) = model {
        return Some(Box::new(learned::LearnedPolicy::from_path(
            path,
            buffers,
            options.conflict_boost,
        )));
    }
    if let Some(word) = name.strip_suffix('+') {
        return FixedPolicy::boosted(word, buffers).map(|p| Box::new(p) as Box<dyn Policy>);
    }
    StaticOrder::new(name).map(|p| Box::new(p) as Box<dyn Policy>)
}

/// The portfolio a policy name stands for: `portfolio` is [`default_policies`]; a learned
/// policy whose model has a portfolio head runs itself (in the head's `fixed` slot) with the
/// head's other strategies, ordered per problem by the head; any other name (see
/// [`policy_by_name`]) is that policy alone. `None` for an unknown name.
pub fn policies_by_name(
    name: &str,
    buffers: usize,
    options: &SearchOptions,
) -> Option<Vec<Box<dyn Policy>>> {
    if name.eq_ignore_ascii_case("portfolio") {
        return Some(default_policies(buffers, options));
    }
    let first = policy_by_name(name, buffers, options)?;
    let strategies: Vec<String> = first
        .portfolio_strategies()
        .into_iter()
        .filter(|s| s != "fixed")
        .collect();
    let mut policies = vec![first];
    for strategy in strategies {
        policies.push(policy_by_name(&strategy, buffers, options)?);
    }
    Some(policies)
}

/// Fits `problem` under `capacity`, or proves it cannot, within `limits`.
///
/// `policies` is the portfolio to run (round robin with growing budgets); `None` or an empty
/// list uses [`default_policies`]. A `Solved` outcome has passed the validator; a problem that
/// breaks the model's rules (the readers' checks) gives `InvalidProblem`.
pub fn search(
    problem: &Problem,
    capacity: u64,
    options: &SearchOptions,
    policies: Option<Vec<Box<dyn Policy>>>,
    limits: Limits,
) -> SearchResult {
    search_with_cancel(problem, capacity, options, policies, limits, None)
}

/// [`search`] that also stops when `cancel` becomes true.
pub fn search_with_cancel(
    problem: &Problem,
    capacity: u64,
    options: &SearchOptions,
    policies: Option<Vec<Box<dyn Policy>>>,
    limits: Limits,
    cancel: Option<&AtomicBool>,
) -> SearchResult {
    search_recorded(problem, capacity, options, policies, limits, cancel, None)
}

/// [`search_with_cancel`] that also writes a solve log (see [`record`]) when `recording` is given.
pub fn search_recorded(
    problem: &Problem,
    capacity: u64,
    options: &SearchOptions,
    policies: Option<Vec<Box<dyn Policy>>>,
    limits: Limits,
    cancel: Option<&AtomicBool>,
    recording: Option<Recording<'_>>,
) -> SearchResult {
    let start = Instant::now();
    let mut stats = SearchStats::default();
    let mut recording = recording;
    let mut log_error: Option<String> = None;
    let mut finish = |outcome: Outcome, mut stats: SearchStats, log: &mut Option<Recording<'_>>| {
        stats.seconds = start.elapsed().as_secs_f64();
        if let Some(r) = log.as_mut() {
            let footer = record::LogLine::Footer(record::Footer {
                outcome: outcome.status().label().to_string(),
                decisions: stats.recorded_decisions,
                dropped: stats.dropped_decisions,
                stats: stats.clone(),
            });
            if let Err(e) = record::write_line(r.writer, &footer).and_then(|_| r.writer.flush()) {
                log_error.get_or_insert(e.to_string());
            }
        }
        SearchResult {
            outcome,
            stats,
            log_error: log_error.clone(),
        }
    };
    if let Err(e) = check_problem_for(problem, None, "problem", &BufferPlaces::None) {
        return finish(Outcome::InvalidProblem(e.to_string()), stats, &mut None);
    }
    let load = Timeline::new(problem).load();
    if let Some(r) = recording.as_mut() {
        let header = record::LogLine::Header(record::Header {
            schema: record::LOG_SCHEMA.to_string(),
            version: record::LOG_SCHEMA_VERSION,
            feature_version: features::FEATURE_SCHEMA_VERSION,
            candidate_features: features::CANDIDATE_FEATURES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            node_features: features::NODE_FEATURES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            problem: r.problem.clone(),
            problem_hash: record::problem_hash(problem, capacity),
            buffers: problem.len(),
            capacity,
            load,
        });
        if let Err(e) = record::write_line(r.writer, &header) {
            return SearchResult {
                outcome: Outcome::LimitReached,
                stats,
                log_error: Some(e.to_string()),
            };
        }
    }
    if let Some(Status::Infeasible(why)) = trivially_infeasible(problem, capacity, load) {
        return finish(Outcome::Infeasible(why), stats, &mut recording);
    }
    if options.heuristic_first {
        for baseline in [
            Baseline::TfliteMicro,
            Baseline::Tflite,
            Baseline::StartOrder,
        ] {
            let layout = baseline.allocate(problem, 0);
            if layout.peak(problem) <= capacity {
                stats.heuristic = Some(baseline.name().to_string());
                return finish(checked(problem, capacity, layout), stats, &mut recording);
            }
        }
    }
    let model = Model::new(problem, capacity);
    let mut policies = match policies {
        Some(list) if !list.is_empty() => list,
        _ => default_policies(problem.len(), options),
    };
    // The first policy may choose the order of the portfolio for this problem.
    let names: Vec<String> = policies.iter().map(|p| p.name()).collect();
    let initial = State::new(&model);
    let view = NodeView {
        model: &model,
        state: &initial,
        depth: 0,
        unplaced: model.free.len(),
    };
    let mut lead = 1;
    if let Some(order) = policies[0].rank_portfolio(&view, &names) {
        if is_permutation(&order, policies.len()) {
            if options.portfolio_lead {
                lead = policies[0].portfolio_lead().max(1) as u64;
            }
            let mut slots: Vec<Option<Box<dyn Policy>>> = policies.into_iter().map(Some).collect();
            policies = order.iter().filter_map(|&i| slots[i].take()).collect();
        }
    }
    stats.portfolio = policies.iter().map(|p| p.name()).collect();
    stats.lead = lead;
    let deadline = limits.timeout.map(|t| start + t);
    let outcome = portfolio::run(
        &model,
        options,
        policies,
        portfolio::RunSettings {
            deadline,
            node_limit: limits.nodes,
            cancel,
            recording: recording
                .as_mut()
                .map(|r| (&mut *r.writer, r.limit_per_run)),
            lead,
        },
        &mut stats,
    );
    let outcome = match outcome {
        portfolio::Verdict::Found(offsets) => checked(problem, capacity, Solution { offsets }),
        portfolio::Verdict::Exhausted => Outcome::Infeasible(Infeasibility::Exhausted),
        portfolio::Verdict::Limit => Outcome::LimitReached,
    };
    finish(outcome, stats, &mut recording)
}

/// Whether `order` holds each of `0..len` exactly once.
fn is_permutation(order: &[usize], len: usize) -> bool {
    let mut seen = vec![false; len];
    order.len() == len
        && order
            .iter()
            .all(|&i| i < len && !std::mem::replace(&mut seen[i], true))
}

/// Validates a layout before it leaves the search; an invalid one is a bug and panics.
fn checked(problem: &Problem, capacity: u64, solution: Solution) -> Outcome {
    let report = validate(problem, &solution, Some(capacity));
    assert!(
        report.is_valid(),
        "internal error: the search produced an invalid solution:\n{report}"
    );
    Outcome::Solved(solution)
}
