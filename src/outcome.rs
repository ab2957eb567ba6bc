//! How an allocation ends: the limits it ran under, its status and the cheap proofs of
//! infeasibility. A leaf module: every allocator and the front door share these types.

use crate::problem::Problem;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Limits on one allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    /// Wall-clock limit on the whole solve: [`Solver`](crate::Solver) counts its own setup and
    /// stops the allocator early by as much, room for validating the answer.
    pub timeout: Option<Duration>,
    /// Limit on search nodes, summed over restarts and over minimise's probes (ignored by
    /// heuristics); never exceeded.
    pub nodes: Option<u64>,
}

impl Limits {
    /// The longest wall-clock limit a number of seconds may ask for (`--timeout`, the C ABI's
    /// `timeout_seconds`): 10^9 s, about 31.7 years. A deadline that far ahead fits every
    /// platform's clock (Linux's monotonic clock, for one, ends about 9.2 x 10^18 s after boot,
    /// and adding past its end panics) and its nanoseconds fit in 64 bits.
    pub const MAX_TIMEOUT_SECONDS: u64 = 1_000_000_000;

    /// The wall-clock limit of `seconds`: a positive number of at most
    /// [`Limits::MAX_TIMEOUT_SECONDS`]. Otherwise (zero, negative, NaN, infinite or too long) the
    /// error says why, in words meant to follow the option's name:
    ///
    /// ```
    /// use telamalloc::Limits;
    /// assert_eq!(Limits::timeout_from_secs(2.5).unwrap().as_millis(), 2500);
    /// let why = Limits::timeout_from_secs(1e30).unwrap_err();
    /// assert_eq!(why, "1e30 is too large (at most 1000000000 seconds, about 31 years)");
    /// assert!(Limits::timeout_from_secs(f64::NAN).is_err());
    /// ```
    pub fn timeout_from_secs(seconds: f64) -> Result<Duration, String> {
        if !(seconds.is_finite() && seconds > 0.0) {
            return Err(format!(
                "must be a positive, finite number of seconds, not {seconds}"
            ));
        }
        if seconds > Limits::MAX_TIMEOUT_SECONDS as f64 {
            return Err(format!(
                "{seconds:e} is too large (at most {} seconds, about 31 years)",
                Limits::MAX_TIMEOUT_SECONDS
            ));
        }
        Ok(Duration::from_secs_f64(seconds))
    }

    /// [`Limits::timeout_from_secs`] where 0 asks for no time limit (`None`; then
    /// [`Solver::no_time_limit`](crate::Solver::no_time_limit) for a fit): the rule of the
    /// command line's `--timeout` and Python's `timeout`. Otherwise (negative, NaN, infinite
    /// or too long) the error says why, in words meant to follow the option's name:
    ///
    /// ```
    /// use telamalloc::Limits;
    /// assert_eq!(Limits::timeout_or_none_from_secs(0.0), Ok(None));
    /// assert_eq!(Limits::timeout_or_none_from_secs(2.0).unwrap().unwrap().as_secs(), 2);
    /// let why = Limits::timeout_or_none_from_secs(-1.0).unwrap_err();
    /// assert_eq!(why, "must be 0 (no time limit) or a positive, finite number of seconds, not -1");
    /// ```
    pub fn timeout_or_none_from_secs(seconds: f64) -> Result<Option<Duration>, String> {
        match seconds {
            0.0 => Ok(None),
            s if s.is_finite() && s > 0.0 => Limits::timeout_from_secs(s).map(Some),
            s => Err(format!(
                "must be 0 (no time limit) or a positive, finite number of seconds, not {s}"
            )),
        }
    }

    /// The time limit to run under: the one given, or `default` when neither a time nor a node
    /// limit is (a node limit alone sets no clock):
    ///
    /// ```
    /// use std::time::Duration;
    /// use telamalloc::Limits;
    /// let minute = Duration::from_secs(60);
    /// assert_eq!(Limits::default().timeout_or(minute), Some(minute));
    /// let nodes = Limits { timeout: None, nodes: Some(1000) };
    /// assert_eq!(nodes.timeout_or(minute), None);
    /// let given = Limits { timeout: Some(Duration::from_secs(2)), nodes: None };
    /// assert_eq!(given.timeout_or(minute), Some(Duration::from_secs(2)));
    /// ```
    pub fn timeout_or(self, default: Duration) -> Option<Duration> {
        match self {
            Limits {
                timeout: None,
                nodes: None,
            } => Some(default),
            Limits { timeout, .. } => timeout,
        }
    }
}

/// Why a problem has no solution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Infeasibility {
    /// The live total at some time exceeds the capacity.
    LoadExceedsCapacity {
        /// LOAD.
        load: u64,
    },
    /// A buffer, or a fixed offset, does not fit under the capacity.
    BufferTooLarge {
        /// The buffer's id.
        id: String,
    },
    /// The search explored every possibility.
    Exhausted,
    /// An exact solver (e.g. CP-SAT) proved it.
    ProvenBySolver {
        /// The solver's name.
        solver: &'static str,
    },
}

/// How an allocation ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// A valid solution was found (and checked by the validator).
    Solved,
    /// There is provably no solution under the capacity.
    Infeasible(Infeasibility),
    /// The time or node limit was reached first, or the solve was cancelled.
    LimitReached,
    /// A heuristic's layout needs more than the capacity (this proves nothing).
    HeuristicExceeded {
        /// The peak the heuristic reached.
        peak: u64,
    },
}

impl Status {
    /// A one-word label for tables and logs: `solved`, `infeasible`, `limit` or `exceeds` (a
    /// heuristic above the capacity).
    pub fn label(&self) -> &'static str {
        match self {
            Status::Solved => "solved",
            Status::Infeasible(_) => "infeasible",
            Status::LimitReached => "limit",
            Status::HeuristicExceeded { .. } => "exceeds",
        }
    }

    /// Whether the problem was decided: solved or proven infeasible.
    pub fn is_decided(&self) -> bool {
        matches!(self, Status::Solved | Status::Infeasible(_))
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Solved => write!(f, "solved"),
            Status::Infeasible(Infeasibility::LoadExceedsCapacity { load }) => {
                write!(f, "infeasible (proven: LOAD {load} exceeds the capacity)")
            }
            Status::Infeasible(Infeasibility::BufferTooLarge { id }) => {
                write!(f, "infeasible (proven: buffer '{id}' does not fit the capacity)")
            }
            Status::Infeasible(Infeasibility::Exhausted) => {
                write!(f, "infeasible (proven: search space exhausted)")
            }
            Status::Infeasible(Infeasibility::ProvenBySolver { solver }) => {
                write!(f, "infeasible (proven by {solver})")
            }
            Status::LimitReached => write!(f, "not solved: limit reached"),
            Status::HeuristicExceeded { peak } => write!(
                f,
                "not solved: the heuristic needs {peak} bytes, more than the capacity (no proof of infeasibility)"
            ),
        }
    }
}

/// The cheap proofs of infeasibility: a buffer (or a fixed offset) above the capacity, or LOAD
/// above it.
pub fn trivially_infeasible(problem: &Problem, capacity: u64, load: u64) -> Option<Infeasibility> {
    for b in &problem.buffers {
        let top = b.offset.unwrap_or(0).checked_add(b.size);
        if top.is_none_or(|t| t > capacity) {
            return Some(Infeasibility::BufferTooLarge { id: b.id.clone() });
        }
    }
    (load > capacity).then_some(Infeasibility::LoadExceedsCapacity { load })
}

/// When work must stop: a wall-clock deadline and a cancellation flag, either optional. Checked
/// by long loops (the search, the baselines' placement loops, minimise probes) every so often.
#[derive(Clone, Copy, Debug, Default)]
pub struct Deadline<'a> {
    /// Stop at this instant.
    pub at: Option<Instant>,
    /// Stop once this becomes true.
    pub cancel: Option<&'a AtomicBool>,
}

impl<'a> Deadline<'a> {
    /// No deadline, no cancellation.
    pub fn none() -> Deadline<'static> {
        Deadline {
            at: None,
            cancel: None,
        }
    }

    /// The deadline `timeout` after `start` (none if the clock cannot hold it), cancelled by
    /// `cancel`.
    pub fn after(
        start: Instant,
        timeout: Option<Duration>,
        cancel: Option<&'a AtomicBool>,
    ) -> Self {
        Deadline {
            at: timeout.and_then(|t| start.checked_add(t)),
            cancel,
        }
    }

    /// Whether the work must stop now.
    pub fn passed(&self) -> bool {
        self.cancelled() || self.at.is_some_and(|at| Instant::now() >= at)
    }

    /// Whether the cancellation flag is set: one atomic load, cheap enough for every step of a
    /// loop whose steps are too quick to read the clock at each.
    pub fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }
}
