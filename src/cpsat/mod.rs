//! CP-SAT (Google OR-tools' constraint solver) as an optional exact algorithm, `--algo cpsat`,
//! and as one more member of the search's portfolio rounds, `--with cpsat` (the front door's
//! `member` module solves a `FitModel` once per round).
//!
//! Nothing is linked at build time: OR-tools' shared library is found and loaded when first
//! needed ([`library`]; `pip install ortools` provides it), the problem is sent as a
//! hand-encoded `CpModelProto` ([`model`], [`proto`]) through the library's C API, and the
//! `CpSolverResponse` is read back. Without the library, solving with CP-SAT is an error that
//! says how to get it; every other algorithm is unaffected.
//!
//! Limits: the time limit goes to CP-SAT as `max_time_in_seconds` and a watcher thread also
//! stops the solve at the deadline or when the cancel flag is set. A node limit of `N` becomes
//! `max_deterministic_time = N / NODES_PER_DETERMINISTIC_SECOND` (see
//! [`NODES_PER_DETERMINISTIC_SECOND`]), a machine-independent limit like the search's nodes.
//! Workers: the solver's thread count is CP-SAT's `num_workers`; with 1 (the default) and the
//! same seed a solve is deterministic.

pub mod library;
pub(crate) mod member;
pub mod model;
pub mod proto;

use crate::baselines::best_fast;
use crate::outcome::{trivially_infeasible, Deadline, Infeasibility, Limits, Status};
use crate::problem::{Problem, Solution};
use model::Model;
use proto::{CpStatus, Parameters, Response};
use std::fmt;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Search nodes per deterministic second of CP-SAT, for turning a node budget into
/// `max_deterministic_time` (a node limit with `--algo cpsat`, a round's budget with `--with
/// cpsat`). Both count work rather than wall time, and this ratio gives both algorithms about
/// the same wall time for the same budget. Recalibrated on 8 `tight-validation` problems
/// (200-300 buffers; 2-core machine, load 2-4): the search (`--no heuristic-first`, 5-10 s) ran
/// 31 000-225 000 nodes a second and CP-SAT (1 worker, 5 s or until solved) spent 0.029-0.079
/// deterministic seconds a wall second; the ratio per problem ranged 0.4-4.9 million, median
/// 1.75 million. (Earlier, on the hard set: about 4 million.) Rough: the two differ by problem.
pub const NODES_PER_DETERMINISTIC_SECOND: f64 = 2_000_000.0;

/// Why CP-SAT could not be run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpSatError {
    /// The OR-tools library was not found or could not be loaded (the message says what was
    /// tried and how to get it).
    Unavailable(String),
    /// A value of the problem is beyond what CP-SAT's integers hold.
    TooLarge(String),
    /// CP-SAT rejected the model or answered something unreadable (a bug).
    Failed(String),
    /// The problem has something the model cannot express (gaps: its model has one rectangle
    /// per buffer).
    Unsupported(String),
}

impl fmt::Display for CpSatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpSatError::Unavailable(why) => write!(f, "CP-SAT library not available: {why}"),
            CpSatError::TooLarge(what) => write!(
                f,
                "CP-SAT cannot take this problem: {what} has a value above 2^60"
            ),
            CpSatError::Failed(why) => write!(f, "CP-SAT failed: {why}"),
            CpSatError::Unsupported(what) => write!(f, "CP-SAT cannot take this problem: {what}"),
        }
    }
}

impl std::error::Error for CpSatError {}

/// CP-SAT's own account of a solve (from its `CpSolverResponse`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CpSatStats {
    /// CP-SAT's status: `OPTIMAL`, `FEASIBLE`, `INFEASIBLE` or `UNKNOWN`.
    pub status: &'static str,
    /// Conflicts.
    pub conflicts: i64,
    /// Branches.
    pub branches: i64,
    /// Wall-clock seconds inside CP-SAT.
    pub wall_time: f64,
    /// Deterministic seconds spent.
    pub deterministic_time: f64,
    /// `num_workers`.
    pub workers: usize,
    /// Solves summed here: 1 for `--algo cpsat`, one per run with `--with cpsat` (the status
    /// is the last one's).
    pub solves: u32,
    /// With `--with cpsat`: CP-SAT's share of the search's work, in policies (set by the gate
    /// or `--cpsat-share`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
}

impl CpSatStats {
    fn new(response: &Response, workers: usize) -> CpSatStats {
        CpSatStats {
            status: match response.status {
                CpStatus::Optimal => "OPTIMAL",
                CpStatus::Feasible => "FEASIBLE",
                CpStatus::Infeasible => "INFEASIBLE",
                CpStatus::ModelInvalid => "MODEL_INVALID",
                CpStatus::Unknown => "UNKNOWN",
            },
            conflicts: response.conflicts,
            branches: response.branches,
            wall_time: response.wall_time,
            deterministic_time: response.deterministic_time,
            workers: workers.max(1),
            solves: 1,
            share: None,
        }
    }

    /// Adds a later solve's counters and times; its status becomes the status.
    pub(crate) fn absorb(&mut self, later: &CpSatStats) {
        self.status = later.status;
        self.conflicts += later.conflicts;
        self.branches += later.branches;
        self.wall_time += later.wall_time;
        self.deterministic_time += later.deterministic_time;
        self.workers = self.workers.max(later.workers);
        self.solves += later.solves;
    }
}

/// What a CP-SAT solve gives the front door.
#[derive(Clone, Debug)]
pub(crate) struct Answer {
    /// How it ended.
    pub(crate) status: Status,
    /// The layout (not yet validated), present when solved.
    pub(crate) solution: Option<Solution>,
    /// A proven lower bound on the peak (minimise).
    pub(crate) lower_bound: Option<u64>,
    /// CP-SAT's counters, when it ran.
    pub(crate) stats: Option<CpSatStats>,
}

/// How to run CP-SAT: the solver's limits, cancel flag, thread count and seed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Run<'a> {
    /// Time and node limits (the time counted from `start`).
    pub(crate) limits: Limits,
    /// Stops the solve when set.
    pub(crate) cancel: Option<&'a AtomicBool>,
    /// CP-SAT's `num_workers`.
    pub(crate) workers: usize,
    /// CP-SAT's `random_seed` (taken modulo 2³¹).
    pub(crate) seed: u64,
    /// When the solve began.
    pub(crate) start: Instant,
}

impl Run<'_> {
    fn parameters(&self) -> Parameters {
        let left = self
            .limits
            .timeout
            .map(|t| t.saturating_sub(self.start.elapsed()).as_secs_f64());
        Parameters {
            workers: u32::try_from(self.workers.max(1)).unwrap_or(u32::MAX),
            seed: (self.seed % (1 << 31)) as i32,
            max_time: left,
            max_deterministic_time: self
                .limits
                .nodes
                .map(|n| n as f64 / NODES_PER_DETERMINISTIC_SECOND),
        }
    }

    /// Whether the time is up or the cancel flag is set.
    pub(crate) fn should_stop(&self) -> bool {
        Deadline::after(self.start, self.limits.timeout, self.cancel).passed()
    }
}

/// Sends `model` to CP-SAT and reads the answer; the solve stops early when `should_stop()`
/// turns true.
fn solve(
    model: &Model,
    run: &Run,
    should_stop: &(dyn Fn() -> bool + Sync),
) -> Result<Response, CpSatError> {
    let library = library::shared().map_err(CpSatError::Unavailable)?;
    let params = proto::encode_parameters(&run.parameters());
    let bytes = library.solve(&model.bytes, &params, should_stop);
    let response = proto::decode_response(&bytes)
        .map_err(|e| CpSatError::Failed(format!("unreadable response: {e}")))?;
    if response.status == CpStatus::ModelInvalid {
        return Err(CpSatError::Failed(format!(
            "the model was rejected (a bug in telamalloc's encoder): {}",
            response.info
        )));
    }
    Ok(response)
}

/// The layout of a response with a solution.
fn layout(model: &Model, response: &Response) -> Result<Solution, CpSatError> {
    model.solution(&response.solution).ok_or_else(|| {
        CpSatError::Failed(format!(
            "a solution of {} values for {} variables",
            response.solution.len(),
            model.variables
        ))
    })
}

/// The layout of smallest peak among the fast production heuristics, without a time limit.
fn best_heuristic(problem: &Problem) -> Solution {
    best_fast(problem, &Deadline::none()).expect("no deadline")
}

/// A fit model, built once and solved as often as asked: once by [`fit`], once per portfolio
/// round by the search with `--with cpsat`. When the best production heuristic fits, its layout
/// goes to CP-SAT as a solution hint (CP-SAT still decides; on the hard set no heuristic fits,
/// so none is given).
pub(crate) struct FitModel {
    model: Model,
}

impl FitModel {
    /// The model of `problem` (already checked, and not trivially infeasible) under
    /// `capacity`; an error when the library is missing or a value is too large.
    pub(crate) fn new(problem: &Problem, capacity: u64) -> Result<FitModel, CpSatError> {
        refuse_gaps(problem)?;
        library::shared().map_err(CpSatError::Unavailable)?;
        let best = best_heuristic(problem);
        let hint = (best.peak(problem) <= capacity).then_some(&best);
        let model =
            model::fit_model(problem, capacity, hint).map_err(|e| CpSatError::TooLarge(e.what))?;
        Ok(FitModel { model })
    }

    /// One solve under `run`'s limits, also stopped when `should_stop()` turns true: `Solved`
    /// with a layout (not yet validated), `Infeasible` only when CP-SAT proves it, else
    /// `LimitReached`.
    pub(crate) fn solve(
        &self,
        run: &Run,
        should_stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<Answer, CpSatError> {
        let response = solve(&self.model, run, should_stop)?;
        let mut answer = Answer {
            status: Status::LimitReached,
            solution: None,
            lower_bound: None,
            stats: Some(CpSatStats::new(&response, run.workers)),
        };
        match response.status {
            CpStatus::Optimal | CpStatus::Feasible => {
                answer.status = Status::Solved;
                answer.solution = Some(layout(&self.model, &response)?);
            }
            CpStatus::Infeasible => {
                answer.status =
                    Status::Infeasible(Infeasibility::ProvenBySolver { solver: "CP-SAT" });
            }
            CpStatus::Unknown | CpStatus::ModelInvalid => {}
        }
        Ok(answer)
    }
}

/// The model places one rectangle per buffer: a problem with gaps would get wrong answers (too
/// strict a model, and false proofs of infeasibility), so it is refused.
fn refuse_gaps(problem: &Problem) -> Result<(), CpSatError> {
    match problem.buffers.iter().find(|b| !b.gaps.is_empty()) {
        Some(b) => Err(CpSatError::Unsupported(format!(
            "buffer '{}' has gaps, which its model (one rectangle per buffer) cannot express; use the search or a baseline",
            b.id
        ))),
        None => Ok(()),
    }
}

/// Fits `problem` (already checked) under `capacity`: `Solved` with a layout (not yet
/// validated), `Infeasible` only when CP-SAT proves it (or a cheap proof applies), else
/// `LimitReached`.
pub(crate) fn fit(
    problem: &Problem,
    capacity: u64,
    load: u64,
    run: &Run,
) -> Result<Answer, CpSatError> {
    refuse_gaps(problem)?;
    library::shared().map_err(CpSatError::Unavailable)?;
    if let Some(why) = trivially_infeasible(problem, capacity, load) {
        return Ok(Answer {
            status: Status::Infeasible(why),
            solution: None,
            lower_bound: None,
            stats: None,
        });
    }
    FitModel::new(problem, capacity)?.solve(run, &|| run.should_stop())
}

/// The smallest peak CP-SAT finds for `problem` (already checked) and a proven lower bound on
/// any peak. It starts from the best production heuristic's layout (the upper bound and a hint)
/// and the simple lower bound (LOAD, each buffer's top); when the limit comes first it returns
/// the best layout found so far.
pub(crate) fn minimize(problem: &Problem, load: u64, run: &Run) -> Result<Answer, CpSatError> {
    refuse_gaps(problem)?;
    library::shared().map_err(CpSatError::Unavailable)?;
    let best = best_heuristic(problem);
    let upper = best.peak(problem);
    let tops = problem
        .buffers
        .iter()
        .map(|b| b.offset.unwrap_or(0) + b.size);
    let lower = tops.fold(load, u64::max).min(upper);
    let answer = |solution, bound, stats| Answer {
        status: Status::Solved,
        solution: Some(solution),
        lower_bound: Some(bound),
        stats,
    };
    if lower == upper {
        return Ok(answer(best, lower, None));
    }
    let model = model::minimize_model(problem, lower, upper, Some(&best))
        .map_err(|e| CpSatError::TooLarge(e.what))?;
    let response = solve(&model, run, &|| run.should_stop())?;
    let stats = Some(CpSatStats::new(&response, run.workers));
    match response.status {
        CpStatus::Optimal | CpStatus::Feasible => {
            let found = layout(&model, &response)?;
            let solution = if found.peak(problem) <= upper {
                found
            } else {
                best
            };
            let peak = solution.peak(problem);
            let bound = if response.status == CpStatus::Optimal {
                peak
            } else {
                (response.bound.max(0.0).ceil() as u64).clamp(lower, peak)
            };
            Ok(answer(solution, bound, stats))
        }
        CpStatus::Unknown | CpStatus::ModelInvalid => Ok(answer(best, lower, stats)),
        CpStatus::Infeasible => Err(CpSatError::Failed(
            "INFEASIBLE for minimise, although the heuristic's layout is a solution".into(),
        )),
    }
}
