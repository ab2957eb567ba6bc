//! The `--timeout` / `--nodes` flags shared by `solve`, `bench`, `collect` and `eval`.

use super::CliError;
use clap::Args;
use std::time::Duration;
use telamalloc::{Limits, Solver};

#[derive(Args, Clone, Debug, Default)]
pub struct LimitArgs {
    /// Wall-clock limit in seconds, per problem (per run for `bench` and `eval`); at most
    /// 1000000000 (about 31 years). 0: no time limit, a fit runs until it decides (with
    /// --minimize, --spill or --memories only together with --nodes).
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Limit on search nodes, summed over restarts (and over --minimize's probes): a
    /// machine-independent limit, for results that are reproducible (with --minimize and no
    /// --timeout, no clock applies).
    #[arg(long)]
    pub nodes: Option<u64>,
}

impl LimitArgs {
    /// The limits these flags ask for (`--timeout 0`: no time limit, see
    /// [`LimitArgs::solver`]).
    pub fn limits(&self) -> Result<Limits, CliError> {
        self.with_timeout(self.timeout)
    }

    /// The limits these flags ask for, with a wall-clock limit of `default_timeout` seconds
    /// when neither flag is given. A node limit alone stays alone: a run cut by the clock
    /// instead would make a node-limited evaluation depend on the machine and its load.
    pub fn limits_or(&self, default_timeout: f64) -> Result<Limits, CliError> {
        let timeout = match (self.timeout, self.nodes) {
            (None, None) => Some(default_timeout),
            (timeout, _) => timeout,
        };
        self.with_timeout(timeout)
    }

    /// `solver` under `limits` (these flags' own, perhaps shortened): with `--timeout 0`, also
    /// without the default time limit of a fit ([`Solver::no_time_limit`]).
    pub fn solver(&self, solver: Solver, limits: Limits) -> Solver {
        let solver = solver.limits(limits);
        match self.timeout == Some(0.0) {
            true => solver.no_time_limit(),
            false => solver,
        }
    }

    /// Rejects `--timeout 0` without `--nodes` for a goal that improves its answer until a
    /// limit stops it (minimise, spill, memories: `improving`): with neither limit it could
    /// search for ever, and the library would keep the goal's default time limit anyway.
    pub fn check_goal(&self, improving: bool) -> Result<(), CliError> {
        if improving && self.timeout == Some(0.0) && self.nodes.is_none() {
            return Err(CliError::Usage(
                "--timeout 0 (no time limit) needs --nodes N with --minimize, --spill or \
                 --memories: they improve their answer until a limit stops them, and their \
                 search may not end on a hard problem (or give --timeout in seconds)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// These flags' node limit with `timeout` seconds of wall clock.
    fn with_timeout(&self, timeout: Option<f64>) -> Result<Limits, CliError> {
        Ok(Limits {
            timeout: duration(timeout)?,
            nodes: self.nodes,
        })
    }
}

/// Turns `--timeout SECONDS` into a duration: none for no flag and for 0, else positive,
/// finite and at most [`Limits::MAX_TIMEOUT_SECONDS`] (a usage error otherwise, never a panic).
fn duration(seconds: Option<f64>) -> Result<Option<Duration>, CliError> {
    match seconds {
        None => Ok(None),
        Some(s) => Limits::timeout_or_none_from_secs(s)
            .map_err(|why| CliError::Usage(format!("--timeout {why}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use telamalloc::Goal;

    fn limits(timeout: Option<f64>, nodes: Option<u64>) -> Limits {
        LimitArgs { timeout, nodes }
            .limits_or(10.0)
            .expect("valid limits")
    }

    #[test]
    fn the_default_timeout_applies_only_without_either_limit() {
        let ten = Some(Duration::from_secs(10));
        assert_eq!(
            (limits(None, None).timeout, limits(None, None).nodes),
            (ten, None)
        );
        let nodes_only = limits(None, Some(5000));
        assert_eq!((nodes_only.timeout, nodes_only.nodes), (None, Some(5000)));
        let both = limits(Some(2.5), Some(5000));
        assert_eq!(both.timeout, Some(Duration::from_secs_f64(2.5)));
        assert_eq!(both.nodes, Some(5000));
        assert_eq!(
            limits(Some(3.0), None).timeout,
            Some(Duration::from_secs(3))
        );
    }

    /// The solver `--timeout 0` configures: no clock and no default (the library's
    /// `no_time_limit`, which its debug text shows), a node limit kept; any other value, or
    /// none, leaves the default in place.
    #[test]
    fn timeout_0_asks_the_solver_for_no_time_limit() {
        let configured = |timeout: Option<f64>, nodes: Option<u64>| {
            let args = LimitArgs { timeout, nodes };
            let limits = args.limits().expect("valid limits");
            (limits, format!("{:?}", args.solver(Solver::new(), limits)))
        };
        let (none, solver) = configured(Some(0.0), None);
        assert_eq!(none, Limits::default());
        assert!(solver.contains("no_time_limit: true"), "{solver}");
        let (nodes, solver) = configured(Some(0.0), Some(500));
        assert_eq!((nodes.timeout, nodes.nodes), (None, Some(500)));
        assert!(solver.contains("no_time_limit: true"), "{solver}");
        for (timeout, nodes) in [(None, None), (Some(2.0), None), (None, Some(500))] {
            let (_, solver) = configured(timeout, nodes);
            assert!(
                solver.contains("no_time_limit: false"),
                "{timeout:?} {nodes:?}: {solver}"
            );
        }
        // eval's default does not replace an explicit 0.
        assert_eq!(limits(Some(0.0), None), Limits::default());
    }

    /// `--timeout 0` is a usage error for a goal that improves until a limit, unless `--nodes`
    /// bounds it; other values (and a fit) pass; negative, NaN and infinite values stay errors.
    #[test]
    fn timeout_0_needs_nodes_for_a_goal_that_improves() {
        let args = |timeout: f64, nodes: Option<u64>| LimitArgs {
            timeout: Some(timeout),
            nodes,
        };
        for goal in [Goal::Minimize, Goal::Spill(8), Goal::Memories] {
            let improving = goal.improves_until_a_limit();
            let Err(CliError::Usage(why)) = args(0.0, None).check_goal(improving) else {
                panic!("{goal:?}: --timeout 0 without --nodes accepted");
            };
            assert!(why.contains("needs --nodes"), "{why}");
            assert!(args(0.0, Some(100)).check_goal(improving).is_ok());
            assert!(args(5.0, None).check_goal(improving).is_ok());
        }
        assert!(args(0.0, None).check_goal(false).is_ok());
        for bad in [-1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let Err(CliError::Usage(why)) = args(bad, None).limits() else {
                panic!("--timeout {bad} accepted");
            };
            assert!(
                why.starts_with("--timeout must be 0 (no time limit) or a positive"),
                "{why}"
            );
        }
    }
}
