//! The `--timeout` / `--nodes` flags shared by `solve`, `bench`, `collect` and `eval`.

use super::CliError;
use clap::Args;
use std::time::Duration;
use telamalloc::Limits;

#[derive(Args, Clone, Debug, Default)]
pub struct LimitArgs {
    /// Wall-clock limit in seconds, per problem (per run for `bench` and `eval`); at most
    /// 1000000000 (about 31 years).
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Limit on search nodes, summed over restarts (and over --minimize's probes): a
    /// machine-independent limit, for results that are reproducible (with --minimize and no
    /// --timeout, no clock applies).
    #[arg(long)]
    pub nodes: Option<u64>,
}

impl LimitArgs {
    /// The limits these flags ask for.
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

    /// These flags' node limit with `timeout` seconds of wall clock.
    fn with_timeout(&self, timeout: Option<f64>) -> Result<Limits, CliError> {
        Ok(Limits {
            timeout: duration(timeout)?,
            nodes: self.nodes,
        })
    }
}

/// Turns `--timeout SECONDS` into a duration: positive, finite and at most
/// [`Limits::MAX_TIMEOUT_SECONDS`] (a usage error otherwise, never a panic).
fn duration(seconds: Option<f64>) -> Result<Option<Duration>, CliError> {
    seconds
        .map(|s| {
            Limits::timeout_from_secs(s).map_err(|why| CliError::Usage(format!("--timeout {why}")))
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
