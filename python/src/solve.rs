//! `solve` and its result, `Allocation`: the library's front door run on a worker thread with the
//! GIL released, cancelled by Ctrl-C.

use crate::columns::{optional_unsigned, Integer};
use crate::problem::Problem;
use crate::{error, warn};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use telamalloc::{summary_lines, Algorithm, Goal, Limits, PolicySpec, Solver};

/// How long the calling thread waits for the solve, GIL released, between two looks for a
/// pending signal (Ctrl-C): with the search's own reaction to its cancel flag, a
/// KeyboardInterrupt arrives well within 0.1 s.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// Solves ``problem``: finds an offset for every buffer so that no two buffers live at the same
/// time share an address and every ``offset + size <= capacity``, or shows there is none.
///
/// - ``capacity``: the capacity to fit (default: the problem's own); ``minimize=True`` asks for
///   the smallest peak instead (with a proven lower bound; 60 s when neither ``timeout`` nor
///   ``nodes`` is given). ``spill=True``: keep the largest total benefit (each buffer's
///   ``benefit``, else its size) within the capacity and move the rest out (``memory`` says
///   which). A problem with memories is always solved for the least total cost over them.
/// - ``timeout`` (seconds, positive, at most 10**9) and ``nodes`` (search nodes over all
///   restarts and minimise's probes, never exceeded) limit the work; without either a fit
///   stops after 60 s (spill and memories 9 s). ``timeout=0`` is no time limit: a fit runs
///   until it decides; minimise, spill and memories, which improve until a limit, take it
///   only with ``nodes``. Minimise under ``nodes`` alone has no clock: the same answer on any
///   machine. Ctrl-C (KeyboardInterrupt) stops a solve at any time.
/// - ``policy``: the search's policies, as the command line's ``--policy``: ``portfolio`` (the
///   default round robin), ``fixed``, an order word (``WAT``, ``TWA+``), ``learned`` (the shipped
///   model, built into the package: no file is read) or a model file ``PATH.json``.
/// - ``algo``: ``search`` (the default), ``cpsat`` (needs OR-tools) or a production heuristic
///   (``tflite``, ``tflite-micro``, ``xla``, ``tvm-greedy-size``, ...; see ``algorithms()``).
/// - ``seed``: the same seed gives the same offsets; ``threads``: the search portfolio's
///   worker threads, 1 to 1024 (the answer does not depend on them).
///
/// Returns an ``Allocation``; its offsets, when present, have passed the validator. Raises
/// ``TelamallocError`` for a bad option (a negative number among them) or problem, naming the
/// option, and ``TypeError`` for a number that is not an integer. The GIL is released while it
/// runs.
#[pyfunction]
#[pyo3(
    signature = (problem, capacity=None, minimize=false, timeout=None, nodes=None,
                 policy="portfolio", algo="search", seed=Integer::from(0),
                 threads=Integer::from(1), spill=false),
    text_signature = "(problem, capacity=None, minimize=False, timeout=None, nodes=None, \
                      policy=\"portfolio\", algo=\"search\", seed=0, threads=1, spill=False)"
)]
#[allow(clippy::too_many_arguments)]
pub fn solve(
    py: Python<'_>,
    problem: &Bound<'_, Problem>,
    capacity: Option<Integer>,
    minimize: bool,
    timeout: Option<f64>,
    nodes: Option<Integer>,
    policy: &str,
    algo: &str,
    seed: Integer,
    threads: Integer,
    spill: bool,
) -> PyResult<Allocation> {
    let problem = &problem.get().inner;
    let capacity = optional_unsigned(capacity.as_ref(), "capacity")?;
    let nodes = optional_unsigned(nodes.as_ref(), "nodes")?;
    let seed = seed.unsigned("seed")?;
    let threads = threads.unsigned("threads")?;
    let goal = goal(problem, capacity, minimize, spill)?;
    let cancel = Arc::new(AtomicBool::new(false));
    let mut solver = solver(algo, policy, threads, seed)?.cancel_flag(cancel.clone());
    if let Some(seconds) = timeout {
        solver = with_timeout(solver, seconds, goal, nodes)?;
    }
    if let Some(nodes) = nodes {
        solver = solver.nodes(nodes);
    }
    let allocation =
        run_cancellable(py, &cancel, || solver.solve(problem, goal))?.map_err(error)?;
    for warning in &allocation.warnings {
        warn(py, warning)?;
    }
    Allocation::new(py, problem, allocation, solver.algorithm_name(), goal)
}

/// The goal the arguments ask for.
fn goal(
    problem: &telamalloc::Problem,
    capacity: Option<u64>,
    minimize: bool,
    spill: bool,
) -> PyResult<Goal> {
    if spill && minimize {
        return Err(error("give spill=True or minimize=True, not both"));
    }
    if !problem.memories.is_empty() {
        if minimize || capacity.is_some() {
            return Err(error(
                "a problem with memories takes its capacities from them: no capacity or minimize",
            ));
        }
        return Ok(Goal::Memories);
    }
    if spill {
        return match capacity.or(problem.capacity) {
            Some(0) => Err(error("capacity must be greater than 0")),
            Some(c) => Ok(Goal::Spill(c)),
            None => Err(error(
                "no capacity: spill=True needs capacity=N (the problem has none)",
            )),
        };
    }
    match (capacity, minimize) {
        (Some(_), true) => Err(error("give a capacity or minimize=True, not both")),
        (Some(0), false) => Err(error("capacity must be greater than 0")),
        (Some(c), false) => Ok(Goal::Fit(c)),
        (None, _) => Goal::for_problem(problem, minimize).ok_or_else(|| {
            error("no capacity: give capacity=N or minimize=True (the problem has none)")
        }),
    }
}

/// A solver running the algorithm and policy named, with `threads` (1 to
/// [`Solver::MAX_THREADS`]) and `seed`.
fn solver(algo: &str, policy: &str, threads: u64, seed: u64) -> PyResult<Solver> {
    let algorithm = Algorithm::from_name(algo).ok_or_else(|| {
        error(format!(
            "unknown algorithm '{algo}' (known: {})",
            Algorithm::names().join(", ")
        ))
    })?;
    let policy: PolicySpec = policy.parse().map_err(error)?;
    if threads == 0 {
        return Err(error("threads must be at least 1"));
    }
    let threads = match usize::try_from(threads) {
        Ok(threads) if threads <= Solver::MAX_THREADS => threads,
        _ => {
            return Err(error(format!(
                "threads {threads} is too many (at most {})",
                Solver::MAX_THREADS
            )))
        }
    };
    Ok(Solver::new()
        .algorithm(algorithm)
        .policy(policy)
        .threads(threads)
        .seed(seed))
}

/// `solver` with `timeout=seconds`: a positive, finite number of seconds, at most
/// [`Limits::MAX_TIMEOUT_SECONDS`], or 0 for no time limit (the rules of the command line's
/// `--timeout`), which a goal that improves until a limit takes only with a node limit.
fn with_timeout(solver: Solver, seconds: f64, goal: Goal, nodes: Option<u64>) -> PyResult<Solver> {
    let timeout = Limits::timeout_or_none_from_secs(seconds)
        .map_err(|why| error(format!("timeout {why}")))?;
    match timeout {
        Some(timeout) => Ok(solver.timeout(timeout)),
        None if goal.improves_until_a_limit() && nodes.is_none() => Err(error(
            "timeout=0 (no time limit) needs nodes=N with minimize=True, spill=True or \
             memories: they improve their answer until a limit stops them, and their search \
             may not end on a hard problem (or give timeout in seconds)",
        )),
        None => Ok(solver.no_time_limit()),
    }
}

/// Set once the worker is done (or has panicked).
#[derive(Default)]
struct Done {
    done: Mutex<bool>,
    signal: Condvar,
}

impl Done {
    fn set(&self) {
        *self.done.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.signal.notify_all();
    }

    /// Waits up to `timeout` for the worker; whether it is done.
    fn wait(&self, timeout: Duration) -> bool {
        let done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        let (done, _) = self
            .signal
            .wait_timeout_while(done, timeout, |done| !*done)
            .unwrap_or_else(|e| e.into_inner());
        *done
    }
}

/// Sets [`Done`] when dropped, so that a panicking worker is seen to end too.
struct SetOnDrop<'a>(&'a Done);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.set();
    }
}

/// Runs `work` on a worker thread while this thread waits with the GIL released, looking for a
/// pending signal every [`SIGNAL_POLL`]. When a signal handler raises (Ctrl-C raises
/// KeyboardInterrupt), sets `cancel` (which `work` must watch), waits for the worker to stop and
/// returns the exception. A panic in `work` (a bug in telamalloc) becomes a RuntimeError.
fn run_cancellable<T: Send>(
    py: Python<'_>,
    cancel: &AtomicBool,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let done = Done::default();
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let _set = SetOnDrop(&done);
            work()
        });
        while !py.detach(|| done.wait(SIGNAL_POLL)) {
            if let Err(raised) = py.check_signals() {
                cancel.store(true, Ordering::Relaxed);
                let _ = py.detach(|| worker.join());
                return Err(raised);
            }
        }
        py.detach(|| worker.join()).map_err(|panic| {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            PyRuntimeError::new_err(format!("internal error in telamalloc: {what}"))
        })
    })
}

/// The result of ``solve``.
///
/// ``status`` is ``"solved"`` (``offsets`` holds one validated offset per buffer, in the
/// problem's order), ``"infeasible"`` (proven: no layout fits the capacity), ``"limit"`` (the
/// time or node limit, or Ctrl-C, came first) or ``"exceeds"`` (a heuristic's layout needs more
/// than the capacity, which proves nothing); ``message`` says it in words, as the command line
/// does.
#[pyclass(module = "telamalloc", frozen)]
pub struct Allocation {
    /// `solved`, `infeasible`, `limit` or `exceeds`.
    #[pyo3(get)]
    status: &'static str,
    /// The status in words.
    #[pyo3(get)]
    message: String,
    /// The validated offsets (a read-only `uint64` array), when solved.
    #[pyo3(get)]
    offsets: Option<Py<PyArray1<u64>>>,
    /// The peak of the layout found, if any (also for `exceeds`).
    #[pyo3(get)]
    peak: Option<u64>,
    /// LOAD of the problem.
    #[pyo3(get)]
    load: u64,
    /// A proven lower bound on the peak (minimisation), if any.
    #[pyo3(get)]
    lower_bound: Option<u64>,
    /// Where the lower bound comes from (minimisation): ``"LOAD"``, or e.g.
    /// ``"window [0,5) of 7 buffers infeasible at 4"``.
    #[pyo3(get)]
    lower_bound_source: Option<String>,
    /// The capacity fitted (None when minimising).
    #[pyo3(get)]
    capacity: Option<u64>,
    /// Seconds spent inside the library's front door.
    #[pyo3(get)]
    elapsed: f64,
    /// The algorithm's name.
    #[pyo3(get)]
    algorithm: &'static str,
    /// The warnings the solve raised (also issued as TelamallocWarning).
    #[pyo3(get)]
    warnings: Vec<String>,
    /// The search counters as a dict, plus CP-SAT's under "cpsat" when it ran.
    stats: Py<PyDict>,
    /// The command line's summary line(s).
    summary: String,
    /// For spill or memories: each buffer's memory id (``"chip"`` for the one capacity), or
    /// None when moved out; None for the other goals.
    #[pyo3(get)]
    memory: Option<Vec<Option<String>>>,
    /// For spill or memories: the total cost (size x cost per byte of each buffer's memory).
    #[pyo3(get)]
    cost: Option<u64>,
    /// For spill or memories: the bytes kept in a memory.
    #[pyo3(get)]
    kept_bytes: Option<u64>,
    /// For spill: the bytes greedy admission (benefit order, first fit) keeps, to compare.
    #[pyo3(get)]
    greedy_kept_bytes: Option<u64>,
    /// For spill or memories: whether no better assignment exists (all were tried).
    #[pyo3(get)]
    proven_best: Option<bool>,
}

impl Allocation {
    fn new(
        py: Python<'_>,
        problem: &telamalloc::Problem,
        allocation: telamalloc::Allocation,
        algorithm: &'static str,
        goal: Goal,
    ) -> PyResult<Allocation> {
        let summary = summary_lines(&allocation, algorithm, goal).join("\n");
        let assignment = allocation.assignment.as_ref();
        let memory = assignment.map(|a| {
            a.memory
                .iter()
                .map(|m| {
                    m.map(|m| {
                        problem
                            .memories
                            .get(m)
                            .map_or("chip".into(), |m| m.id.clone())
                    })
                })
                .collect()
        });
        let greedy_kept_bytes = match (goal, assignment) {
            // Computed by the solve, within its limit.
            (Goal::Spill(_), Some(_)) => allocation
                .greedy
                .as_ref()
                .map(|greedy| greedy.kept_bytes(problem) as u64),
            _ => None,
        };
        let stats = PyDict::new(py);
        let json = py.import("json")?;
        if let Some(search) = &allocation.search {
            let text = serde_json::to_string(search).expect("plain data");
            stats.update(json.call_method1("loads", (text,))?.cast()?)?;
        }
        if let Some(cpsat) = &allocation.cpsat {
            let text = serde_json::to_string(cpsat).expect("plain data");
            stats.set_item("cpsat", json.call_method1("loads", (text,))?)?;
        }
        let offsets = match allocation.solution {
            Some(solution) => {
                let array = PyArray1::from_vec(py, solution.offsets);
                array.readwrite().make_nonwriteable();
                Some(array.unbind())
            }
            None => None,
        };
        Ok(Allocation {
            status: allocation.status.label(),
            message: allocation.status.to_string(),
            offsets,
            peak: allocation.peak,
            load: allocation.load,
            lower_bound: allocation.lower_bound,
            lower_bound_source: allocation
                .lower_bound_source
                .as_ref()
                .map(|s| s.to_string()),
            capacity: match goal {
                Goal::Fit(c) | Goal::Spill(c) => Some(c),
                Goal::Minimize | Goal::Memories => None,
            },
            memory,
            cost: assignment.map(|a| a.cost(problem) as u64),
            kept_bytes: assignment.map(|a| a.kept_bytes(problem) as u64),
            greedy_kept_bytes,
            proven_best: assignment.map(|a| a.proven_best),
            elapsed: allocation.elapsed.as_secs_f64(),
            algorithm,
            warnings: allocation.warnings,
            stats: stats.unbind(),
            summary,
        })
    }

    /// The validated offsets, when solved.
    pub(crate) fn offsets(&self) -> Option<&Py<PyArray1<u64>>> {
        self.offsets.as_ref()
    }

    /// The status in words.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }
}

#[pymethods]
impl Allocation {
    /// Whether offsets were found (status ``"solved"``).
    #[getter]
    fn solved(&self) -> bool {
        self.offsets.is_some()
    }

    /// The search counters (nodes, backtracks, restarts, the policy that answered, its
    /// seconds, ...) as a dict; empty for a heuristic; CP-SAT's under ``"cpsat"`` when it ran.
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.stats.bind(py).copy()
    }

    fn __str__(&self) -> &str {
        &self.summary
    }

    fn __repr__(&self) -> String {
        let peak = self.peak.map_or("None".to_string(), |p| p.to_string());
        format!(
            "<telamalloc.Allocation: {} by {}, peak {peak}, LOAD {}, {:.3} s>",
            self.status, self.algorithm, self.load, self.elapsed
        )
    }
}
