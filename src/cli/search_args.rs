//! The search flags shared by `solve` and `bench`: policy, technique switches, threads.

use super::CliError;
use clap::Args;
use telamalloc::allocate::Algorithm;
use telamalloc::search::{policies_by_name, SearchOptions};

#[derive(Args, Clone, Debug, Default)]
pub struct SearchArgs {
    /// Policy for `--algo search`: `fixed` (TelaMalloc's order with conflict boosting), an
    /// order word over W (lifetime), A (area), T (section total), Z (size), e.g. WAT, an order
    /// word with conflict boosting, e.g. TWA+ (fixed is WZA+),
    /// `learned` (the model in models/policy.json; falls back to `fixed` with a warning), or a
    /// model file `PATH.json`. Default: the portfolio fixed, WAT, TAW, TWA in round robin.
    #[arg(long)]
    pub policy: Option<String>,
    /// Worker threads for the search portfolio (the answer does not depend on it).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Turn search techniques off (comma-separated): canonical, dominance, section-inference,
    /// unplaced-floor, decomposition, forced-isolated, conflict-boost, major-backtrack,
    /// restarts, portfolio-lead, heuristic-first.
    #[arg(long = "no", value_delimiter = ',', value_name = "TECHNIQUE")]
    pub disable: Vec<String>,
    /// Turn search techniques on (comma-separated, same names; major-backtrack is off by default).
    #[arg(long = "with", value_delimiter = ',', value_name = "TECHNIQUE")]
    pub enable: Vec<String>,
    /// Use the Luby restart schedule instead of the geometric one.
    #[arg(long)]
    pub luby: bool,
}

impl SearchArgs {
    /// The search options these flags ask for.
    pub fn options(&self) -> Result<SearchOptions, CliError> {
        let mut options = SearchOptions::default();
        for (names, on, flag) in [
            (&self.disable, false, "--no"),
            (&self.enable, true, "--with"),
        ] {
            for name in names {
                if name == "luby" || !options.set(name, on) {
                    return Err(CliError::Usage(format!(
                        "{flag} {name}: unknown technique (known: {})",
                        SearchOptions::SWITCHES[..11].join(", ")
                    )));
                }
            }
        }
        options.set("luby", self.luby);
        if self.threads == 0 {
            return Err(CliError::Usage("--threads must be at least 1".into()));
        }
        options.threads = self.threads;
        if let Some(name) = &self.policy {
            if policies_by_name(name, 0, &options).is_none() {
                return Err(CliError::Usage(format!(
                    "--policy {name}: expected 'fixed', 'portfolio', 'learned', a model file (.json) or an order word over W, A, T, Z (e.g. WAT, or TWA+ with conflict boosting)"
                )));
            }
        }
        Ok(options)
    }

    /// The algorithm for `name`, with these flags applied when it is `search`.
    pub fn algorithm(&self, name: &str) -> Result<Algorithm, CliError> {
        let algorithm = Algorithm::from_name(name)
            .ok_or_else(|| CliError::Usage(format!("unknown algorithm '{name}'")))?;
        Ok(match algorithm {
            Algorithm::Search { .. } => Algorithm::Search {
                options: self.options()?,
                policy: self.policy.clone(),
            },
            other => other,
        })
    }
}
