//! The front door: a [`Solver`] built once from its options (algorithm, search switches, policy,
//! limits, cancellation, seed) and asked to [`Solver::solve`] problems. It checks the problem
//! once, runs the algorithm, and validates the answer once: a returned solution has always
//! passed [`validate`].
//!
//! ```
//! use telamalloc::{Buffer, Goal, Problem, Solver, Status};
//! let problem = Problem::new(vec![
//!     Buffer::new("a", 0, 3, 4), Buffer::new("b", 3, 9, 4), Buffer::new("c", 0, 9, 4),
//!     Buffer::new("d", 9, 21, 4), Buffer::new("e", 0, 21, 4)], None);
//! let result = Solver::new().solve(&problem, Goal::Fit(12)).unwrap();
//! assert_eq!(result.status, Status::Solved);
//! assert!(result.solution.unwrap().peak(&problem) <= 12);
//! ```

mod assign;
mod bound;
mod by_time;
mod cpsat_member;
mod improve;
mod minimize;
mod obstacles;
mod part_fit;
mod reinsert;
mod window_first;

/// Layouts and problems the tests of the minimise phases start from.
#[cfg(test)]
pub(crate) mod test_layouts {
    use crate::generate::{random, RandomOptions};
    use crate::policy_spec::PolicySpec;
    use crate::problem::{Problem, Solution};
    use crate::search::{PortfolioConfig, SearchOptions};

    /// The default options on `threads` threads with the hand-made round robin (what minimise
    /// gives the searches that lower a layout: `Solver::lowering_portfolio`).
    pub(crate) fn hand_made(threads: usize) -> SearchOptions {
        SearchOptions {
            threads,
            learned_order: false,
            ..SearchOptions::default()
        }
    }

    /// The default portfolio of `options`, seed 0, for a problem of a given number of buffers.
    pub(crate) fn portfolio_of(options: &SearchOptions) -> impl Fn(usize) -> PortfolioConfig + '_ {
        move |buffers| PolicySpec::Portfolio.configure(buffers, options, 0, None).0
    }

    /// Every buffer stacked on the one before: a valid layout, its peak the sum of the sizes.
    pub(crate) fn stacked(problem: &Problem) -> Solution {
        let mut top = 0;
        let offsets = problem.buffers.iter().map(|b| {
            top += b.size;
            top - b.size
        });
        Solution {
            offsets: offsets.collect(),
        }
    }

    /// 400 random buffers over 400 steps, about 50 live at once.
    pub(crate) fn random_400() -> Problem {
        let options = RandomOptions {
            buffers: 400,
            horizon: 400,
            max_lifetime: 100,
            min_size: 1,
            max_size: 1000,
            tightness: 1.0,
        };
        random(&options, 3)
    }
}

pub use assign::greedy_admission;
pub use bound::BoundSource;
pub use minimize::{MinimizePhase, DEFAULT_TIMEOUT as DEFAULT_MINIMIZE_TIMEOUT};

use crate::analysis::Timeline;
use crate::baselines::Baseline;
use crate::cpsat::{self, CpSatError, CpSatStats};
use crate::learned::{ModelError, Network};
use crate::outcome::{trivially_infeasible, Deadline, Limits, Status};
use crate::policy_spec::{configured, PolicySpec};
use crate::problem::rules::RuleBreak;
use crate::problem::{Assignment, Problem, Solution};
use crate::search::instance::{member_entries, MEMBER_ENTRIES_MOST};
use crate::search::{
    self, ExternalMember, FitRequest, Portfolio, PortfolioConfig, SearchObserver, SearchOptions,
    SearchStats,
};
use crate::validate::{validate, validate_assignment};
use cpsat_member::CpSatMember;
use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which allocator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// The hybrid search (the default).
    #[default]
    Search,
    /// A production heuristic (no search).
    Baseline(Baseline),
    /// CP-SAT, Google OR-tools' constraint solver, loaded at run time (see [`crate::cpsat`]).
    CpSat,
}

impl Algorithm {
    /// Every name [`Algorithm::from_name`] accepts: `search`, `cpsat`, then the baselines'.
    pub fn names() -> Vec<&'static str> {
        let mut names = vec!["search", "cpsat"];
        names.extend(Baseline::ALL.iter().map(|b| b.name()));
        names
    }

    /// The algorithm with this command-line name.
    pub fn from_name(name: &str) -> Option<Algorithm> {
        match name {
            "search" => return Some(Algorithm::Search),
            "cpsat" => return Some(Algorithm::CpSat),
            _ => {}
        }
        Baseline::from_name(name).map(Algorithm::Baseline)
    }

    /// The command-line name of the algorithm.
    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::Baseline(b) => b.name(),
            Algorithm::Search => "search",
            Algorithm::CpSat => "cpsat",
        }
    }
}

/// What is asked: fit a capacity, find the smallest peak, keep the most on chip, or place
/// buffers in several memories at the least cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    /// Find offsets with every `offset + size <= capacity`, or show there are none.
    Fit(u64),
    /// Find offsets with the smallest peak the algorithm can reach.
    Minimize,
    /// Keep the largest total benefit ([`Buffer::worth`](crate::Buffer::worth): `benefit`,
    /// else the size) within this capacity and move the rest out (fixed buffers stay unless
    /// their fixed place lies beyond the capacity). Never worse than
    /// [`greedy_admission`]; proven best when the assignment search exhausts its tree within
    /// the limits. On a problem with memories, the same as [`Goal::Memories`].
    Spill(u64),
    /// The problem's [`memories`](Problem::memories): each buffer in one of the memories it may
    /// use, each memory within its capacity, at the least total cost (size x the memory's cost
    /// per byte). Proven best when the assignment search exhausts its
    /// tree within the limits, else the best found.
    Memories,
}

impl Goal {
    /// The goal for a problem: its memories if it has some, else minimise when asked, else fit
    /// its capacity; `None` when neither is possible (no capacity).
    pub fn for_problem(problem: &Problem, minimize: bool) -> Option<Goal> {
        if !problem.memories.is_empty() {
            return Some(Goal::Memories);
        }
        if minimize {
            return Some(Goal::Minimize);
        }
        problem.capacity.map(Goal::Fit)
    }

    /// The spill goal for a problem: its memories if it has some, else keep the most within its
    /// capacity; `None` without a capacity.
    pub fn spill_for(problem: &Problem) -> Option<Goal> {
        if !problem.memories.is_empty() {
            return Some(Goal::Memories);
        }
        problem.capacity.map(Goal::Spill)
    }
}

/// The result of [`Solver::solve`].
#[derive(Clone, Debug)]
pub struct Allocation {
    /// How it ended.
    pub status: Status,
    /// The solution: present exactly when the status is `Solved`; always validated.
    pub solution: Option<Solution>,
    /// The peak of the best layout found, if any (also for `HeuristicExceeded`).
    pub peak: Option<u64>,
    /// LOAD of the problem (a lower bound on any peak).
    pub load: u64,
    /// Wall-clock time spent.
    pub elapsed: Duration,
    /// Search counters, when the algorithm searched.
    pub search: Option<SearchStats>,
    /// A proven lower bound on the peak (minimisation with the search: LOAD, or more when
    /// smaller capacities were proven infeasible); the solution is optimal when it equals the
    /// peak.
    pub lower_bound: Option<u64>,
    /// Where the lower bound comes from, when there is one.
    pub lower_bound_source: Option<BoundSource>,
    /// What the caller should be told (e.g. a learned model that could not be used).
    pub warnings: Vec<String>,
    /// CP-SAT's counters, when it ran ([`Algorithm::CpSat`]).
    pub cpsat: Option<CpSatStats>,
    /// The phase of minimisation with the search that produced the layout.
    pub found_by: Option<MinimizePhase>,
    /// Where each buffer went, for [`Goal::Spill`] and [`Goal::Memories`] (present with the
    /// solution, whose offsets are inside each buffer's memory); validated with it.
    pub assignment: Option<Assignment>,
    /// Greedy admission's assignment (see [`greedy_admission`]), for [`Goal::Spill`] without
    /// memories: what the answer is compared with, computed within the limit.
    pub greedy: Option<Assignment>,
}

impl Allocation {
    /// An allocation with `status` and `load` and nothing found yet.
    fn nothing_yet(status: Status, load: u64) -> Allocation {
        Allocation {
            status,
            solution: None,
            peak: None,
            load,
            elapsed: Duration::ZERO,
            search: None,
            lower_bound: None,
            lower_bound_source: None,
            warnings: Vec::new(),
            cpsat: None,
            assignment: None,
            found_by: None,
            greedy: None,
        }
    }
}

/// Why a problem could not be solved at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SolveError {
    /// The problem breaks a rule of the model (see [`Problem::check`]).
    InvalidProblem(RuleBreak),
    /// CP-SAT was asked for but could not run (e.g. its library is not installed).
    CpSat(CpSatError),
    /// The policy names a model file that cannot be used (missing, unreadable, not a model, or
    /// made for other features): an error, never a silent change of policy.
    Model {
        /// The file named.
        path: std::path::PathBuf,
        /// Why it cannot be used.
        error: ModelError,
    },
}

impl fmt::Display for SolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SolveError::InvalidProblem(why) => write!(f, "invalid problem: {why}"),
            SolveError::CpSat(why) => write!(f, "{why}"),
            SolveError::Model { path, error } => {
                let why = error.to_string();
                let path = path.display().to_string();
                match error {
                    ModelError::Missing(_) => write!(f, "no policy model file at {path}"),
                    // Most reasons name the file already.
                    _ if why.contains(&path) => write!(f, "policy model: {why}"),
                    _ => write!(f, "policy model file {path}: {why}"),
                }
            }
        }
    }
}

impl std::error::Error for SolveError {}

/// Builds the portfolio of a problem of so many buffers under the search options, for policies
/// made in code (see [`Solver::portfolio`]).
pub type PortfolioFactory = dyn Fn(usize, &SearchOptions) -> Portfolio + Send + Sync;

/// Where the search's policies come from.
#[derive(Clone)]
enum PolicySource {
    Spec(PolicySpec),
    Custom(Arc<PortfolioFactory>),
}

/// The front door: options in, [`Allocation`]s out. A solver is immutable once built and can be
/// shared between threads; each [`Solver::solve`] is independent.
///
/// ```
/// use std::time::Duration;
/// use telamalloc::{Algorithm, Goal, PolicySpec, Solver};
/// use telamalloc::baselines::Baseline;
/// let search = Solver::new()
///     .policy("TWA+".parse::<PolicySpec>().unwrap())
///     .timeout(Duration::from_secs(10))
///     .threads(2);
/// let heuristic = Solver::new().algorithm(Algorithm::Baseline(Baseline::Tflite));
/// # let _ = (search, heuristic, Goal::Minimize);
/// ```
#[derive(Clone)]
pub struct Solver {
    algorithm: Algorithm,
    options: SearchOptions,
    policy: PolicySource,
    limits: Limits,
    seed: u64,
    cancel: Option<Arc<AtomicBool>>,
}

impl Default for Solver {
    fn default() -> Self {
        Solver::new()
    }
}

impl fmt::Debug for Solver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Solver")
            .field("algorithm", &self.algorithm)
            .field("options", &self.options)
            .field("policy", &self.policy_name())
            .field("limits", &self.limits)
            .field("seed", &self.seed)
            .finish()
    }
}

/// The time limit of [`Goal::Spill`] and [`Goal::Memories`] when none is given: the search
/// improves the assignment until then (first-fit admission and a packed assignment come first,
/// whatever the time).
pub const DEFAULT_ASSIGN_TIMEOUT: Duration = Duration::from_secs(9);

/// Why a search that ran out of layouts to try reports a limit rather than infeasibility.
const EXHAUSTED_MODEL: &str = "the search tried every layout in which, of two buffers live at \
    a common time, one lies wholly above the other, and none fits; gap windows may still allow \
    an interleaved layout, so this is not a proof that none exists";

impl Solver {
    /// The hybrid search with its default options and portfolio, no limits.
    pub fn new() -> Solver {
        Solver {
            algorithm: Algorithm::Search,
            options: SearchOptions::default(),
            policy: PolicySource::Spec(PolicySpec::Portfolio),
            limits: Limits::default(),
            seed: 0,
            cancel: None,
        }
    }

    /// Runs `algorithm` instead.
    pub fn algorithm(mut self, algorithm: Algorithm) -> Solver {
        self.algorithm = algorithm;
        self
    }

    /// The search's technique switches.
    pub fn options(mut self, options: SearchOptions) -> Solver {
        self.options = options;
        self
    }

    /// The most threads [`Solver::threads`] starts, and the most the command line and the C ABI
    /// accept: each is a real thread, started before the work (many thousands hang or fail to
    /// start), and the portfolio runs only a few policies at a time anyway.
    pub const MAX_THREADS: usize = 1024;

    /// Worker threads for the search's portfolio (the answer does not depend on it); for
    /// [`Algorithm::CpSat`], CP-SAT's `num_workers` (deterministic only with 1). Taken between 1
    /// and [`Solver::MAX_THREADS`].
    pub fn threads(mut self, threads: usize) -> Solver {
        self.options.threads = threads.clamp(1, Solver::MAX_THREADS);
        self
    }

    /// The search's policies, by spec.
    pub fn policy(mut self, spec: PolicySpec) -> Solver {
        self.policy = PolicySource::Spec(spec);
        self
    }

    /// The search's policies, made in code for each problem: `factory(buffers, options)`.
    pub fn portfolio(
        mut self,
        factory: impl Fn(usize, &SearchOptions) -> Portfolio + Send + Sync + 'static,
    ) -> Solver {
        self.policy = PolicySource::Custom(Arc::new(factory));
        self
    }

    /// Time and node limits.
    pub fn limits(mut self, limits: Limits) -> Solver {
        self.limits = limits;
        self
    }

    /// A wall-clock limit. One so long that the clock cannot hold its deadline means no
    /// deadline; the command line and the C ABI accept at most
    /// [`Limits::MAX_TIMEOUT_SECONDS`](crate::Limits::MAX_TIMEOUT_SECONDS).
    pub fn timeout(mut self, timeout: Duration) -> Solver {
        self.limits.timeout = Some(timeout);
        self
    }

    /// A limit on search nodes, summed over restarts and over minimise's probes; never
    /// exceeded. Minimise under a node limit and no time limit has no clock: the same answer on
    /// any machine.
    pub fn nodes(mut self, nodes: u64) -> Solver {
        self.limits.nodes = Some(nodes);
        self
    }

    /// The seed of the randomised parts (the same seed gives the same answer).
    pub fn seed(mut self, seed: u64) -> Solver {
        self.seed = seed;
        self
    }

    /// A flag that stops the search (as a reached limit) when set to true.
    pub fn cancel_flag(mut self, cancel: Arc<AtomicBool>) -> Solver {
        self.cancel = Some(cancel);
        self
    }

    /// The search's technique switches.
    pub fn search_options(&self) -> &SearchOptions {
        &self.options
    }

    /// The algorithm this solver runs.
    pub fn algorithm_name(&self) -> &'static str {
        self.algorithm.name()
    }

    /// The policy spec's name (`custom` for policies made in code).
    pub fn policy_name(&self) -> String {
        match &self.policy {
            PolicySource::Spec(spec) => spec.to_string(),
            PolicySource::Custom(_) => "custom".into(),
        }
    }

    /// Whether what this solver needs is here: OR-tools' library when it runs CP-SAT
    /// ([`Algorithm::CpSat`] or the `cpsat` switch of the search). [`Solver::solve`] gives the
    /// same error; this lets a caller of many solves (e.g. an evaluation) stop before the first.
    pub fn check_available(&self) -> Result<(), SolveError> {
        self.load_policy_model()?;
        self.check_library()
    }

    /// OR-tools' library, when this solver runs CP-SAT.
    fn check_library(&self) -> Result<(), SolveError> {
        let search_with_cpsat = self.algorithm == Algorithm::Search && self.options.cpsat;
        if self.algorithm == Algorithm::CpSat || search_with_cpsat {
            cpsat::library::shared()
                .map_err(|why| SolveError::CpSat(CpSatError::Unavailable(why)))?;
        }
        Ok(())
    }

    /// The network of the model file the search's policy names, read once per solve (`None`
    /// when it names none); an error when the file cannot be used.
    fn load_policy_model(&self) -> Result<Option<Arc<Network>>, SolveError> {
        match &self.policy {
            PolicySource::Spec(spec) if self.algorithm == Algorithm::Search => spec
                .load_model()
                .map_err(|(path, error)| SolveError::Model { path, error }),
            _ => Ok(None),
        }
    }

    /// Solves `problem` for `goal`. The problem is checked first ([`Problem::check`] under the
    /// goal's capacity); a returned solution has passed the validator.
    pub fn solve(&self, problem: &Problem, goal: Goal) -> Result<Allocation, SolveError> {
        self.run(problem, goal, None)
    }

    /// [`Solver::solve`] with `observer` watching the search (e.g. a
    /// [`LogRecorder`](crate::solve_log::LogRecorder) writing a solve log). Only the search
    /// fitting a capacity is observed.
    pub fn solve_observed(
        &self,
        problem: &Problem,
        goal: Goal,
        observer: &mut dyn SearchObserver,
    ) -> Result<Allocation, SolveError> {
        self.run(problem, goal, Some(observer))
    }

    fn run(
        &self,
        problem: &Problem,
        goal: Goal,
        observer: Option<&mut dyn SearchObserver>,
    ) -> Result<Allocation, SolveError> {
        let start = Instant::now();
        let capacity = match goal {
            Goal::Fit(c) => Some(c),
            Goal::Minimize | Goal::Memories => None,
            Goal::Spill(c) => {
                if c == 0 {
                    return Err(SolveError::InvalidProblem(RuleBreak {
                        buffer: None,
                        field: "capacity",
                        message: "capacity must be greater than 0".into(),
                        first_use: None,
                    }));
                }
                Some(c)
            }
        };
        problem.check(None).map_err(SolveError::InvalidProblem)?;
        let with_memories = !problem.memories.is_empty();
        if with_memories != matches!(goal, Goal::Memories) && !matches!(goal, Goal::Spill(_)) {
            return Err(SolveError::InvalidProblem(RuleBreak {
                buffer: None,
                field: "memories",
                message: if with_memories {
                    "a problem with memories is solved for Goal::Memories (or Goal::Spill)".into()
                } else {
                    "Goal::Memories needs a problem with memories".into()
                },
                first_use: None,
            }));
        }
        if matches!(goal, Goal::Spill(_) | Goal::Memories) {
            // An algorithm that cannot run is an error here too, never a memory that "does
            // not fit".
            self.check_available()?;
            return Ok(self.assign(problem, goal, start));
        }
        let model = self.load_policy_model()?;
        let timeline = Timeline::new(problem);
        let load = timeline.load();
        // The limits from `start`, with room left for the validator, which checks the answer
        // after the allocator stops.
        let limits = self.limits_after_setup(start.elapsed());
        let mut allocation = Allocation::nothing_yet(Status::LimitReached, load);
        let layout = match (self.algorithm, goal) {
            (Algorithm::Baseline(baseline), _) => {
                let deadline = Deadline::after(start, limits.timeout, self.cancel.as_deref());
                self.baseline(
                    problem,
                    baseline,
                    (capacity, load),
                    &deadline,
                    &mut allocation,
                )
            }
            (Algorithm::Search, Goal::Fit(c))
                if observer.is_none() && self.lowers_to_fit(problem) =>
            {
                let limits = limits_left(limits, start);
                self.fit_by_lowering(problem, (&timeline, c), (limits, model), &mut allocation)
            }
            (Algorithm::Search, Goal::Fit(c)) => self.fit(
                problem,
                (&timeline, c, start),
                (limits, model),
                observer,
                &mut allocation,
            )?,
            (Algorithm::Search, Goal::Minimize) => {
                let limits = limits_left(limits, start);
                self.minimize(problem, &timeline, (limits, model), &mut allocation)
            }
            (Algorithm::CpSat, _) => self
                .cpsat(problem, goal, load, (start, limits), &mut allocation)
                .map_err(SolveError::CpSat)?,
            (_, Goal::Spill(_) | Goal::Memories) => unreachable!("answered by assign"),
        };
        if let Some(layout) = layout {
            assert_valid(problem, &layout, capacity, self.algorithm.name());
            allocation.peak = Some(layout.peak(problem));
            allocation.solution = Some(layout);
        }
        allocation.elapsed = start.elapsed();
        Ok(allocation)
    }

    /// [`Goal::Spill`] and [`Goal::Memories`]: a place for every buffer, each memory fitted by
    /// this solver's algorithm; the answer validated like every layout.
    fn assign(&self, problem: &Problem, goal: Goal, start: Instant) -> Allocation {
        let (slots, capacity) = match goal {
            Goal::Spill(c) if problem.memories.is_empty() => {
                (assign::Slots::spill(problem, c), Some(c))
            }
            _ => (assign::Slots::memories(problem), None),
        };
        // A node limit is a total over every memory's fits and the assignment search, and
        // alone it sets no clock: the answer is then the same on any machine.
        let limit = match self.limits {
            Limits {
                timeout: None,
                nodes: None,
            } => Some(DEFAULT_ASSIGN_TIMEOUT),
            Limits { timeout, .. } => timeout,
        };
        let deadline = Deadline::after(start, limit, self.cancel.as_deref());
        let fit = |sub: &Problem, capacity: u64, nodes: Option<u64>| {
            let timeout = limit.map(|t| t.saturating_sub(start.elapsed()));
            let child = self.clone().limits(Limits { timeout, nodes });
            match child.solve(sub, Goal::Fit(capacity)) {
                Ok(a) => {
                    let spent = a.search.as_ref().map_or(0, |s| s.nodes);
                    let fitted = match a.status {
                        Status::Solved => assign::Fitted::Fits(a.solution.expect("solved").offsets),
                        // Without gaps an exhausted search is a proof (see EXHAUSTED_MODEL).
                        Status::Infeasible(_) if !sub.has_gaps() => assign::Fitted::DoesNot,
                        _ => assign::Fitted::Unknown,
                    };
                    (fitted, spent)
                }
                // Fixed buffers that collide in this memory.
                Err(SolveError::InvalidProblem(_)) => (assign::Fitted::DoesNot, 0),
                // Checked before the assignment starts (check_available): never a proof.
                Err(_) => (assign::Fitted::Unknown, 0),
            }
        };
        let answer = assign::solve(problem, &slots, (&deadline, self.limits.nodes), &fit);
        let load = Timeline::new(problem).load();
        let mut allocation = Allocation::nothing_yet(answer.status, load);
        allocation.greedy = answer.greedy;
        if let Some((layout, assignment)) = answer.placed {
            let report = validate_assignment(problem, &layout, &assignment, capacity);
            assert!(
                report.is_valid(),
                "internal error: the assignment of {} is invalid:\n{report}",
                self.algorithm.name()
            );
            allocation.peak = Some(
                problem
                    .buffers
                    .iter()
                    .zip(&layout.offsets)
                    .zip(&assignment.memory)
                    .filter(|(_, m)| m.is_some())
                    .map(|((b, &o), _)| o + b.size)
                    .max()
                    .unwrap_or(0),
            );
            allocation.solution = Some(layout);
            allocation.assignment = Some(assignment);
        }
        allocation.elapsed = start.elapsed();
        allocation
    }

    /// A baseline's layout, if it fits within the deadline; the status says how it went.
    fn baseline(
        &self,
        problem: &Problem,
        baseline: Baseline,
        (capacity, load): (Option<u64>, u64),
        deadline: &Deadline<'_>,
        allocation: &mut Allocation,
    ) -> Option<Solution> {
        if let Some(why) = capacity.and_then(|c| trivially_infeasible(problem, c, load)) {
            allocation.status = Status::Infeasible(why);
            return None;
        }
        let Some(layout) = baseline.allocate_within(problem, self.seed, deadline) else {
            allocation.status = Status::LimitReached;
            return None;
        };
        let peak = layout.peak(problem);
        match capacity {
            Some(c) if peak > c => {
                // Checked like every layout, though it is not returned.
                assert_valid(problem, &layout, None, baseline.name());
                allocation.status = Status::HeuristicExceeded { peak };
                allocation.peak = Some(peak);
                None
            }
            _ => {
                allocation.status = Status::Solved;
                Some(layout)
            }
        }
    }

    /// CP-SAT's layout, if it found one; the status (and for minimise the lower bound) says how
    /// it went. Minimise runs under the same default time limit as the search's.
    fn cpsat(
        &self,
        problem: &Problem,
        goal: Goal,
        load: u64,
        (start, limits): (Instant, Limits),
        allocation: &mut Allocation,
    ) -> Result<Option<Solution>, CpSatError> {
        let mut run = cpsat::Run {
            limits,
            cancel: self.cancel.as_deref(),
            workers: self.options.threads,
            seed: self.seed,
            start,
        };
        let answer = match goal {
            Goal::Fit(capacity) => cpsat::fit(problem, capacity, load, &run)?,
            Goal::Minimize => {
                run.limits.timeout = Some(limits.timeout.unwrap_or(DEFAULT_MINIMIZE_TIMEOUT));
                cpsat::minimize(problem, load, &run)?
            }
            Goal::Spill(_) | Goal::Memories => unreachable!("answered by assign"),
        };
        allocation.status = answer.status;
        allocation.lower_bound = answer.lower_bound;
        allocation.lower_bound_source = answer.lower_bound.map(|bound| match bound > load {
            true => BoundSource::CpSat,
            false => BoundSource::Load,
        });
        allocation.cpsat = answer.stats;
        Ok(answer.solution)
    }

    /// What the search runs on a problem of `buffers` buffers (the portfolio and its switches),
    /// and the warnings its building raised; `model`: the network of the policy's model file,
    /// read once per solve.
    fn build_portfolio(
        &self,
        buffers: usize,
        model: Option<&Arc<Network>>,
    ) -> (PortfolioConfig, Vec<String>) {
        let (options, seed) = (&self.options, self.seed);
        match &self.policy {
            PolicySource::Spec(spec) => spec.configure(buffers, options, seed, model.cloned()),
            PolicySource::Custom(factory) => {
                let portfolio = factory(buffers, options);
                if !portfolio.policies.is_empty() {
                    return (configured(portfolio, options), Vec::new());
                }
                // Nothing to run would never decide: an empty portfolio means the default one.
                PolicySpec::Portfolio.configure(buffers, options, seed, None)
            }
        }
    }

    /// The search's layout, if it found one (with CP-SAT in its rounds when the `cpsat` switch
    /// is on; then an error when CP-SAT cannot run).
    fn fit(
        &self,
        problem: &Problem,
        (timeline, capacity, start): (&Timeline, u64, Instant),
        (limits, model): (Limits, Option<Arc<Network>>),
        observer: Option<&mut dyn SearchObserver>,
        allocation: &mut Allocation,
    ) -> Result<Option<Solution>, SolveError> {
        self.check_library()?;
        let member = self
            .cpsat_member(problem, (timeline, capacity, start), limits)
            .map_err(SolveError::CpSat)?;
        let (portfolio, warnings) = self.build_portfolio(problem.len(), model.as_ref());
        allocation.warnings = warnings;
        let request = FitRequest {
            portfolio,
            timeline,
            options: &self.options,
            // The search measures its time from its own start.
            limits: limits_left(limits, start),
            cancel: self.cancel.as_deref(),
            observer: observer.map(|o| o as &mut dyn SearchObserver),
            external: member.as_ref().map(|m| m as &dyn ExternalMember),
            hole_model: crate::learned::hole_model::lottery_weights(&self.options),
            run_judge: crate::learned::restart_model::run_judge(&self.options),
            placement_risk: crate::learned::placement_risk(&self.options, model.as_ref()),
        };
        let result = search::fit(problem, capacity, request);
        if let Some(member) = member {
            allocation.cpsat = member.finish().map_err(SolveError::CpSat)?;
        }
        allocation.status = result.outcome.status();
        if result.exhausted_model {
            allocation.warnings.push(EXHAUSTED_MODEL.to_string());
        }
        let entries = match allocation.status {
            Status::LimitReached => member_entries(problem, timeline),
            _ => 0,
        };
        if entries > MEMBER_ENTRIES_MOST {
            allocation.warnings.push(format!(
                "the search did not run: its model of this problem would list {entries} pairs \
                 of a buffer and a section it lives in, more than {MEMBER_ENTRIES_MOST} (use \
                 --minimize, or a baseline with --algo)"
            ));
        }
        allocation.search = Some(result.stats);
        Ok(match result.outcome {
            search::Outcome::Found(solution) => Some(solution),
            _ => None,
        })
    }

    /// CP-SAT for the search's rounds, when the `cpsat` switch is on (its library checked); none
    /// when a cheap proof of infeasibility applies (the search gives it).
    fn cpsat_member(
        &self,
        problem: &Problem,
        (timeline, capacity, start): (&Timeline, u64, Instant),
        limits: Limits,
    ) -> Result<Option<CpSatMember<'_>>, CpSatError> {
        if !self.options.cpsat {
            return Ok(None);
        }
        let share = if self.options.cpsat_gate {
            let features = crate::search::features::problem_features_of(problem, capacity);
            crate::learned::CpSatGate::built_in().share(&features)
        } else {
            self.options.cpsat_share
        };
        if share.is_nan() || share <= 0.0 {
            return Ok(None);
        }
        if trivially_infeasible(problem, capacity, timeline.load()).is_some() {
            return Ok(None);
        }
        let run = (self.seed, limits.timeout, start);
        CpSatMember::new(problem, capacity, share, run, self.cancel.as_deref()).map(Some)
    }

    fn minimize(
        &self,
        problem: &Problem,
        timeline: &Timeline,
        (limits, model): (Limits, Option<Arc<Network>>),
        allocation: &mut Allocation,
    ) -> Option<Solution> {
        let result = self.minimized(problem, timeline, (limits, None), model, allocation);
        allocation.status = Status::Solved;
        allocation.found_by = Some(result.phase);
        allocation.lower_bound = Some(result.lower_bound);
        allocation.lower_bound_source = Some(result.bound_source);
        allocation.search = Some(result.stats);
        Some(result.solution)
    }

    /// A fit of a problem too large for the search's model of the whole problem (above
    /// [`minimize::WHOLE_SEARCH_MOST`] buffers, which would take gigabytes): minimise's phases,
    /// first-fit then windows of time re-placed by the search, stopped once the peak is at
    /// most `capacity`; the limit reached otherwise (nothing is proven).
    fn fit_by_lowering(
        &self,
        problem: &Problem,
        (timeline, capacity): (&Timeline, u64),
        (limits, model): (Limits, Option<Arc<Network>>),
        allocation: &mut Allocation,
    ) -> Option<Solution> {
        if let Some(why) = trivially_infeasible(problem, capacity, timeline.load()) {
            allocation.status = Status::Infeasible(why);
            return None;
        }
        let result = self.minimized(
            problem,
            timeline,
            (limits, Some(capacity)),
            model,
            allocation,
        );
        allocation.search = Some(result.stats);
        if result.solution.peak(problem) > capacity {
            allocation.status = Status::LimitReached;
            return None;
        }
        allocation.status = Status::Solved;
        allocation.found_by = Some(result.phase);
        Some(result.solution)
    }

    /// Whether a fit with the search goes by [`Solver::fit_by_lowering`]: above
    /// [`minimize::WHOLE_SEARCH_MOST`] buffers, with the `lns` switch, without gaps, hints or
    /// CP-SAT.
    fn lowers_to_fit(&self, problem: &Problem) -> bool {
        problem.len() > minimize::WHOLE_SEARCH_MOST
            && self.options.lns
            && !self.options.cpsat
            && !problem.has_gaps()
            && !problem.has_hints()
    }

    /// Minimise's phases with this solver's portfolios (see [`minimize::minimize`]), their
    /// warnings put in `allocation`.
    fn minimized(
        &self,
        problem: &Problem,
        timeline: &Timeline,
        (limits, enough): (Limits, Option<u64>),
        model: Option<Arc<Network>>,
        allocation: &mut Allocation,
    ) -> minimize::Minimized {
        let warnings = std::cell::RefCell::new(Vec::new());
        let portfolio = |buffers: usize| {
            let (portfolio, new) = self.build_portfolio(buffers, model.as_ref());
            let mut seen = warnings.borrow_mut();
            for w in new {
                if !seen.contains(&w) {
                    seen.push(w);
                }
            }
            portfolio
        };
        let lowering = |buffers: usize| match self.lowering_portfolio(buffers) {
            Some(portfolio) => portfolio,
            None => portfolio(buffers),
        };
        let portfolios = minimize::Portfolios {
            own: &portfolio,
            lowering: &lowering,
        };
        let result = minimize::minimize(
            problem,
            timeline,
            &self.options,
            &portfolios,
            (limits, enough),
            self.cancel.as_deref(),
        );
        allocation.warnings = warnings.into_inner();
        result
    }

    /// The portfolio of minimise's searches that lower a layout already found (the probes
    /// above LOAD, the improvement phase's windows) on `buffers` buffers: with the default
    /// policy, the hand-made round robin (as with `learned-order` off), which lowers the peaks
    /// of random problems of 1,000 to 3,000 buffers further than the learned portfolio (chosen
    /// on fits at a problem's own capacity; it still runs the probe at LOAD, window-first's
    /// windows and the bound phase's). `None`: the solve's own portfolio, for a policy the
    /// caller chose (which every search runs) or the hand-made one already.
    fn lowering_portfolio(&self, buffers: usize) -> Option<PortfolioConfig> {
        let default = matches!(self.policy, PolicySource::Spec(PolicySpec::Portfolio));
        if !default || !self.options.learned_order {
            return None;
        }
        let options = SearchOptions {
            learned_order: false,
            ..self.options.clone()
        };
        Some(
            PolicySpec::Portfolio
                .configure(buffers, &options, self.seed, None)
                .0,
        )
    }

    /// The limits for an allocator timed from the solve's start, after a setup (checking the
    /// problem, building its timeline) that took `setup`: the time limit shortened by `setup`
    /// once more, because the validator checks the answer after the allocator stops and costs
    /// about as much (each goes over every buffer and sorts their end points once: 0.06-0.09 s
    /// for the validator, 0.065 s for the setup at 200,000 buffers), so that the answer comes
    /// within the limit. The node limit is as given.
    fn limits_after_setup(&self, setup: Duration) -> Limits {
        Limits {
            timeout: self.limits.timeout.map(|t| t.saturating_sub(setup)),
            ..self.limits
        }
    }
}

/// `limits`, timed from `start`, as the time left from now (for allocators that start their
/// own clock).
fn limits_left(limits: Limits, start: Instant) -> Limits {
    Limits {
        timeout: limits.timeout.map(|t| t.saturating_sub(start.elapsed())),
        ..limits
    }
}

/// Validates a layout before it leaves the front door (under `capacity`, if any); an invalid one
/// is a bug in the allocator `who` and panics with the validator's report.
fn assert_valid(problem: &Problem, layout: &Solution, capacity: Option<u64>, who: &str) {
    let report = validate(problem, layout, Some(capacity.unwrap_or(u64::MAX)));
    assert!(
        report.is_valid(),
        "internal error: {who} produced an invalid layout:\n{report}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of the policies of minimise's portfolios on 100 buffers: its own, and the one
    /// of the searches lowering a layout found.
    fn minimise_portfolios(solver: &Solver) -> (Vec<String>, Vec<String>) {
        let own = solver.build_portfolio(100, None).0.portfolio.names();
        let lowering = solver
            .lowering_portfolio(100)
            .map_or_else(|| own.clone(), |p| p.portfolio.names());
        (own, lowering)
    }

    /// With the default policy the probes above LOAD and the improvement windows run the
    /// hand-made round robin, the rest the learned portfolio; a policy the caller names runs
    /// everywhere, and `learned-order` off gives the hand-made one everywhere.
    #[test]
    fn minimise_lowers_with_the_hand_made_round_robin_unless_a_policy_is_named() {
        let spec = |name: &str| name.parse::<PolicySpec>().expect("a policy");
        let hand_made = spec("fixed/WAT~/TAW~/TWA")
            .build(100, &SearchOptions::default())
            .portfolio
            .names();
        let (own, lowering) = minimise_portfolios(&Solver::new());
        assert_eq!(lowering, hand_made);
        assert!(own.len() > hand_made.len(), "{own:?}");
        for named in ["learned", "TWA+", "fixed/WAT~/TAW~/TWA"] {
            let (own, lowering) = minimise_portfolios(&Solver::new().policy(spec(named)));
            assert_eq!(own, lowering, "{named}");
        }
        let off = Solver::new().options(SearchOptions {
            learned_order: false,
            ..SearchOptions::default()
        });
        assert_eq!(minimise_portfolios(&off), (hand_made.clone(), hand_made));
    }
}
