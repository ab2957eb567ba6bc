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
    /// Limit on search nodes, summed over restarts: a machine-independent limit, for results
    /// that are reproducible.
    #[arg(long)]
    pub nodes: Option<u64>,
}

impl LimitArgs {
    /// The limits these flags ask for.
    pub fn limits(&self) -> Result<Limits, CliError> {
        self.limits_or(None)
    }

    /// The limits these flags ask for, with `timeout` (seconds) when `--timeout` is not given.
    pub fn limits_or(&self, timeout: Option<f64>) -> Result<Limits, CliError> {
        Ok(Limits {
            timeout: duration(self.timeout.or(timeout))?,
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
