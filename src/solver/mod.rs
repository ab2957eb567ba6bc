//! The front door: a [`Solver`] built once from its options (algorithm, search switches, policy,
//! limits, cancellation, seed) and asked to [`Solver::solve`] problems. It checks the problem
//! once, hands the goal to the engine that answers it ([`dispatch`]: a fit, minimise, or the
//! assignment of spill and memories, whose fits of each memory enter the same dispatch), and
//! validates the answer once: a returned solution has always passed [`validate`].
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

mod adapters;
mod algorithm;
mod allocation;
mod assignment;
mod checks;
mod dispatch;

pub use crate::assign::greedy_admission;
pub use crate::fit::PortfolioFactory;
pub use crate::minimize::{
    BoundSource, MinimizePhase, DEFAULT_TIMEOUT as DEFAULT_MINIMIZE_TIMEOUT,
};
pub use algorithm::Algorithm;
pub use allocation::{Allocation, SolveError};

use crate::analysis::Timeline;
use crate::fit::PolicySource;
use crate::outcome::Limits;
use crate::policy_spec::PolicySpec;
use crate::problem::{Problem, Solution};
use crate::search::{Portfolio, SearchObserver, SearchOptions};
use crate::validate::validate;
use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// [`greedy_admission`](crate::greedy_admission); proven best when the assignment search exhausts its tree within
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

    /// Whether the goal improves its answer until a limit stops it (minimise, spill and
    /// memories) rather than stopping once it decides (a fit). Such a goal keeps its default
    /// time limit under [`Solver::no_time_limit`]: each of its steps may be a full search,
    /// which on a hard problem need not end in any useful time. The front ends accept "no
    /// time limit" for it only with a node limit.
    pub fn improves_until_a_limit(self) -> bool {
        !matches!(self, Goal::Fit(_))
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
    /// No default time limit for a fit (see [`Solver::no_time_limit`]).
    no_time_limit: bool,
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
            .field("no_time_limit", &self.no_time_limit)
            .field("seed", &self.seed)
            .finish()
    }
}

/// The time limit of [`Goal::Fit`] when neither a time nor a node limit is given (and
/// [`Solver::no_time_limit`] was not asked for), so that a hard case returns: the limit
/// reached, then, rather than a search that may not end. As minimise's
/// ([`DEFAULT_MINIMIZE_TIMEOUT`]).
pub const DEFAULT_FIT_TIMEOUT: Duration = Duration::from_secs(60);

/// The time limit of [`Goal::Spill`] and [`Goal::Memories`] when none is given: the search
/// improves the assignment until then (first-fit admission and a packed assignment come first,
/// whatever the time).
pub const DEFAULT_ASSIGN_TIMEOUT: Duration = Duration::from_secs(9);

impl Solver {
    /// The hybrid search with its default options and portfolio, and the default limits: a
    /// fit stops at [`DEFAULT_FIT_TIMEOUT`], minimise at
    /// [`DEFAULT_MINIMIZE_TIMEOUT`], spill and memories at [`DEFAULT_ASSIGN_TIMEOUT`], unless a
    /// time or node limit is given.
    pub fn new() -> Solver {
        Solver {
            algorithm: Algorithm::Search,
            options: SearchOptions::default(),
            policy: PolicySource::Spec(PolicySpec::Portfolio),
            limits: Limits::default(),
            no_time_limit: false,
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

    /// Time and node limits (a time limit given replaces [`Solver::no_time_limit`]).
    pub fn limits(mut self, limits: Limits) -> Solver {
        self.no_time_limit &= limits.timeout.is_none();
        self.limits = limits;
        self
    }

    /// A wall-clock limit. One so long that the clock cannot hold its deadline means no
    /// deadline; the command line and the C ABI accept at most
    /// [`Limits::MAX_TIMEOUT_SECONDS`](crate::Limits::MAX_TIMEOUT_SECONDS).
    pub fn timeout(mut self, timeout: Duration) -> Solver {
        self.limits.timeout = Some(timeout);
        self.no_time_limit = false;
        self
    }

    /// No time limit for a fit: without one (and without a node limit) a fit stops at
    /// [`DEFAULT_FIT_TIMEOUT`], and with this it runs until it decides, which on a hard problem
    /// may take very long. Minimise, spill and memories improve their answer until a limit
    /// ([`Goal::improves_until_a_limit`]), so they keep their default time limits.
    /// [`Solver::timeout`] undoes it.
    ///
    /// ```
    /// use telamalloc::{Buffer, Goal, Problem, Solver, Status};
    /// let problem = Problem::new(vec![Buffer::new("a", 0, 2, 8)], None);
    /// let result = Solver::new().no_time_limit().solve(&problem, Goal::Fit(8)).unwrap();
    /// assert_eq!(result.status, Status::Solved);
    /// ```
    pub fn no_time_limit(mut self) -> Solver {
        self.limits.timeout = None;
        self.no_time_limit = true;
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

    /// Solves `problem` for `goal`. The problem is checked first ([`Problem::check`] under the
    /// goal's capacity); a returned solution has passed the validator.
    pub fn solve(&self, problem: &Problem, goal: Goal) -> Result<Allocation, SolveError> {
        self.run(problem, goal, None)
    }

    /// [`Solver::solve`] with `observer` watching the search (e.g. a
    /// [`LogRecorder`](crate::solve_log::LogRecorder) writing a solve log). The observer never
    /// changes what runs: it sees the search fitting a capacity, and nothing of a fit above
    /// 100,000 buffers, which lowers first-fit's layout by searching windows of time cut from
    /// the problem, nor of minimise, spill and memories.
    pub fn solve_observed(
        &self,
        problem: &Problem,
        goal: Goal,
        observer: &mut dyn SearchObserver,
    ) -> Result<Allocation, SolveError> {
        self.run(problem, goal, Some(observer))
    }

    /// Checks, dispatches and validates: [`Solver::solve`].
    fn run(
        &self,
        problem: &Problem,
        goal: Goal,
        observer: Option<&mut dyn SearchObserver>,
    ) -> Result<Allocation, SolveError> {
        let start = Instant::now();
        let capacity = Solver::check(problem, goal)?;
        if matches!(goal, Goal::Spill(_) | Goal::Memories) {
            // An algorithm that cannot run is an error here too, never a memory that "does
            // not fit".
            let model = self.load_policy_model()?;
            self.check_library()?;
            return Ok(self.assign(problem, goal, start, &self.engine(model)));
        }
        let engine = self.engine(self.load_policy_model()?);
        let timeline = Timeline::new(problem);
        // The limits from `start`, with room left for the validator, which checks the answer
        // after the allocator stops.
        let limits = self.limits_after_setup(goal, start.elapsed());
        let setup = (&timeline, start, limits);
        let (mut allocation, layout) = self.dispatch(problem, goal, setup, &engine, observer)?;
        if let Some(layout) = layout {
            assert_valid(problem, &layout, capacity, self.algorithm.name());
            allocation.peak = Some(layout.peak(problem));
            allocation.solution = Some(layout);
        }
        allocation.elapsed = start.elapsed();
        Ok(allocation)
    }

    /// The limits for an allocator timed from the solve's start, after a setup (checking the
    /// problem, building its timeline) that took `setup`: the time limit (for a fit,
    /// [`DEFAULT_FIT_TIMEOUT`] when none is set) shortened by `setup` once more, because the
    /// validator checks the answer after the allocator stops and costs about as much (each
    /// goes over every buffer and sorts their end points once: 0.06-0.09 s for the validator,
    /// 0.065 s for the setup at 200,000 buffers), so that the answer comes within the limit.
    /// The node limit is as given.
    fn limits_after_setup(&self, goal: Goal, setup: Duration) -> Limits {
        let timeout = match goal {
            Goal::Fit(_) if !self.no_time_limit => self.limits.timeout_or(DEFAULT_FIT_TIMEOUT),
            _ => self.limits.timeout,
        };
        Limits {
            timeout: timeout.map(|t| t.saturating_sub(setup)),
            ..self.limits
        }
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

    /// A fit without limits stops at the default; a node limit, a time limit or
    /// `no_time_limit` replaces it; minimise keeps its own default (applied by minimise).
    #[test]
    fn a_fit_has_a_default_time_limit_unless_one_is_given_or_none_asked_for() {
        let timeout =
            |solver: Solver, goal: Goal| solver.limits_after_setup(goal, Duration::ZERO).timeout;
        let fit = Goal::Fit(1);
        assert_eq!(timeout(Solver::new(), fit), Some(DEFAULT_FIT_TIMEOUT));
        assert_eq!(timeout(Solver::new().no_time_limit(), fit), None);
        assert_eq!(timeout(Solver::new().nodes(10), fit), None);
        let given = Duration::from_secs(3);
        assert_eq!(timeout(Solver::new().timeout(given), fit), Some(given));
        let undone = Solver::new().no_time_limit().timeout(given);
        assert_eq!(timeout(undone, fit), Some(given));
        assert_eq!(timeout(Solver::new(), Goal::Minimize), None);
    }

    /// The configuration's debug text shows whether no time limit was asked for (the front
    /// ends' tests read it), and only a fit runs without one.
    #[test]
    fn no_time_limit_shows_in_the_debug_text_and_applies_to_a_fit_only() {
        let text = |solver: Solver| format!("{solver:?}");
        assert!(text(Solver::new().no_time_limit()).contains("no_time_limit: true"));
        assert!(text(Solver::new()).contains("no_time_limit: false"));
        let undone = Solver::new()
            .no_time_limit()
            .timeout(Duration::from_secs(1));
        assert!(text(undone).contains("no_time_limit: false"));
        assert!(!Goal::Fit(1).improves_until_a_limit());
        for goal in [Goal::Minimize, Goal::Spill(1), Goal::Memories] {
            assert!(goal.improves_until_a_limit(), "{goal:?}");
        }
    }
}
