//! The search flags shared by `solve` and `bench`: policy, technique switches, threads.

use super::CliError;
use clap::Args;
use telamalloc::{Algorithm, PolicySpec, SearchOptions, Solver};

#[derive(Args, Clone, Debug, Default)]
pub struct SearchArgs {
    /// Policy for `--algo search`: `fixed` (TelaMalloc's order with conflict boosting), an
    /// order word over W (lifetime), A (area), T (section total), Z (size), e.g. WAT, an order
    /// word with conflict boosting, e.g. TWA+ (fixed is WZA+), an order word with diversified
    /// restarts, e.g. TWA~ or TWA+~ (runs after the first sort by seeded noisy keys), such
    /// policies joined by / for a round robin of them (e.g. TWA/TWA~/TWA+),
    /// `learned` (the shipped model, models/policy.json, compiled into the binary), or a model
    /// file `PATH.json` (read at run time; one that is missing or cannot be used is an error,
    /// exit 2). Default: `portfolio`, the built-in model's portfolio (its learned policy, TWA,
    /// TAW, WAT, TWA+, WAT+, TAW+, ZAT and ZAT+), ordered and given shares of each round per
    /// problem by its portfolio head; with `--no learned-order`, the round robin
    /// fixed/WAT~/TAW~/TWA, one run each per round.
    #[arg(long)]
    pub policy: Option<PolicySpec>,
    /// Worker threads for the search portfolio (the answer does not depend on it); for
    /// `--algo cpsat`, CP-SAT's `num_workers` (deterministic only with 1).
    #[arg(long, default_value_t = 1, value_parser = super::threads_arg())]
    pub threads: usize,
    #[command(flatten)]
    pub switches: SwitchArgs,
}

/// The technique switches, shared by `solve`, `bench` and `eval`.
#[derive(Args, Clone, Debug, Default)]
pub struct SwitchArgs {
    /// Turn search techniques off (comma-separated; `telamalloc switches` lists them).
    #[arg(long = "no", value_delimiter = ',', value_name = "TECHNIQUE")]
    pub disable: Vec<String>,
    /// Turn search techniques on (comma-separated, same names; `cpsat` adds OR-tools' CP-SAT to
    /// the portfolio).
    #[arg(long = "with", value_delimiter = ',', value_name = "TECHNIQUE")]
    pub enable: Vec<String>,
    /// With `--with cpsat`: CP-SAT's share of the search's work, in policies (1: as much as one
    /// policy of the round robin; 0: none). Its runs start from scratch with doubling budgets.
    #[arg(long, default_value_t = 1.0, value_name = "POLICIES", value_parser = share_arg)]
    pub cpsat_share: f64,
}

impl SwitchArgs {
    /// Applies these flags to `options`.
    pub fn apply(&self, options: &mut SearchOptions) -> Result<(), CliError> {
        options
            .apply_switches(&self.disable, &self.enable)
            .map_err(CliError::Usage)?;
        options.cpsat_share = self.cpsat_share;
        Ok(())
    }
}

impl SearchArgs {
    /// The search options these flags ask for.
    pub fn options(&self) -> Result<SearchOptions, CliError> {
        let mut options = SearchOptions::default();
        self.switches.apply(&mut options)?;
        options.threads = self.threads;
        Ok(options)
    }

    /// A solver running `algorithm`, with these flags for the search.
    pub fn solver(&self, algorithm: Algorithm) -> Result<Solver, CliError> {
        Ok(Solver::new()
            .algorithm(algorithm)
            .options(self.options()?)
            .policy(self.policy.clone().unwrap_or_default()))
    }
}

/// Parses a `--cpsat-share`: a finite number, 0 or more.
fn share_arg(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(share) if share.is_finite() && share >= 0.0 => Ok(share),
        _ => Err(format!(
            "'{text}' is not a share (a number, 0 or more, e.g. 0.5)"
        )),
    }
}

/// Parses an `--algo` name.
pub fn algorithm(name: &str) -> Result<Algorithm, CliError> {
    Algorithm::from_name(name).ok_or_else(|| CliError::Usage(format!("unknown algorithm '{name}'")))
}

/// The names `--algo` accepts.
pub fn algorithm_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(Algorithm::names())
}
