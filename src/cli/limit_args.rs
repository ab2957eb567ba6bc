//! The `--timeout` / `--nodes` flags shared by `solve`, `bench`, `collect` and `eval`.

use super::CliError;
use clap::Args;
use std::time::Duration;
use telamalloc::Limits;

#[derive(Args, Clone, Debug, Default)]
pub struct LimitArgs {
    /// Wall-clock limit in seconds, per problem (per run for `bench` and `eval`).
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

/// Turns `--timeout SECONDS` into a duration, rejecting negative or non-finite values.
fn duration(seconds: Option<f64>) -> Result<Option<Duration>, CliError> {
    match seconds {
        None => Ok(None),
        Some(s) if s.is_finite() && s > 0.0 => {
            Duration::try_from_secs_f64(s).map(Some).map_err(|_| {
                CliError::Usage(format!(
                    "--timeout {s:e} is too large (at most {} seconds)",
                    Duration::MAX.as_secs()
                ))
            })
        }
        Some(s) => Err(CliError::Usage(format!(
            "--timeout must be a positive number of seconds, not {s}"
        ))),
    }
}
