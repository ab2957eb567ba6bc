//! One fit of one capacity with the search, for every goal: the portfolio it runs (from the
//! solver's policy), its learned hooks, the CP-SAT member, and what it found.

use crate::analysis::Timeline;
use crate::cpsat::member::CpSatMember;
use crate::cpsat::{CpSatError, CpSatStats};
use crate::learned::Network;
use crate::outcome::{Limits, Status};
use crate::policy_spec::{configured, PolicySpec};
use crate::problem::{Problem, Solution};
use crate::search::instance::{member_entries, MEMBER_ENTRIES_MOST};
use crate::search::{
    self, ExternalMember, FitRequest, LearnedHooks, Outcome, Portfolio, PortfolioConfig,
    SearchObserver, SearchOptions, SearchStats,
};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// Builds the portfolio of a problem of so many buffers under the search options, for policies
/// made in code (see [`Solver::portfolio`](crate::Solver::portfolio)).
pub type PortfolioFactory = dyn Fn(usize, &SearchOptions) -> Portfolio + Send + Sync;

/// Where the search's policies come from.
#[derive(Clone)]
pub(crate) enum PolicySource {
    /// A policy by spec (the default: [`PolicySpec::Portfolio`]).
    Spec(PolicySpec),
    /// Policies made in code for each problem.
    Custom(Arc<PortfolioFactory>),
}

/// Why a search that ran out of layouts to try reports a limit rather than infeasibility.
pub(crate) const EXHAUSTED_MODEL: &str = "the search tried every layout in which, of two \
    buffers live at a common time, one lies wholly above the other, and none fits; gap windows \
    may still allow an interleaved layout, so this is not a proof that none exists";

/// What every search of one solve runs with: the switches, the policy, the seed, the cancel
/// flag and the network of the policy's model file (read once per solve).
pub(crate) struct Engine<'a> {
    /// The search's technique switches.
    pub(crate) options: &'a SearchOptions,
    /// Where the portfolios come from.
    pub(crate) policy: &'a PolicySource,
    /// The seed of the randomised parts.
    pub(crate) seed: u64,
    /// Stops every search (as a reached limit) when set.
    pub(crate) cancel: Option<&'a AtomicBool>,
    /// The network of the policy's model file, if it names one.
    pub(crate) model: Option<Arc<Network>>,
    /// The learned parts every fit of the solve consults (from the switches and `model`).
    pub(crate) learned: LearnedHooks,
}

/// What a fit with the search gave.
pub(crate) struct SearchFit {
    /// How it ended.
    pub(crate) status: Status,
    /// The layout, when found (not yet validated).
    pub(crate) solution: Option<Solution>,
    /// The search's counters.
    pub(crate) stats: SearchStats,
    /// What the caller should be told.
    pub(crate) warnings: Vec<String>,
    /// CP-SAT's counters, when it ran as a member.
    pub(crate) cpsat: Option<CpSatStats>,
}

impl Engine<'_> {
    /// What the search runs on a problem of `buffers` buffers (the portfolio and its switches),
    /// and the warnings its building raised.
    pub(crate) fn portfolio(&self, buffers: usize) -> (PortfolioConfig, Vec<String>) {
        let (mut config, warnings) = self.unhooked_portfolio(buffers);
        config.learned = self.learned.clone();
        (config, warnings)
    }

    /// [`Engine::portfolio`] without the learned hooks.
    fn unhooked_portfolio(&self, buffers: usize) -> (PortfolioConfig, Vec<String>) {
        let (options, seed) = (self.options, self.seed);
        match self.policy {
            PolicySource::Spec(spec) => spec.configure(buffers, options, seed, self.model.clone()),
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

    /// The portfolio of minimise's searches that lower a layout already found (the probes
    /// above LOAD, the improvement phase's windows) on `buffers` buffers: with the default
    /// policy, the hand-made round robin (as with `learned-order` off), which lowers the peaks
    /// of random problems of 1,000 to 3,000 buffers further than the learned portfolio (chosen
    /// on fits at a problem's own capacity; it still runs the probe at LOAD, window-first's
    /// windows and the bound phase's). `None`: the solve's own portfolio, for a policy the
    /// caller chose (which every search runs) or the hand-made one already.
    pub(crate) fn lowering_portfolio(&self, buffers: usize) -> Option<PortfolioConfig> {
        let default = matches!(self.policy, PolicySource::Spec(PolicySpec::Portfolio));
        if !default || !self.options.learned_order {
            return None;
        }
        let options = SearchOptions {
            learned_order: false,
            ..self.options.clone()
        };
        let mut config = PolicySpec::Portfolio
            .configure(buffers, &options, self.seed, None)
            .0;
        config.learned = self.learned.clone();
        Some(config)
    }

    /// Fits `problem` (which passed [`Problem::check`]; `timeline` is its timeline) under
    /// `capacity` with the search, within `limits` timed from `start` (with CP-SAT in its
    /// rounds when the `cpsat` switch is on; then an error when CP-SAT cannot run), `observer`
    /// watching.
    pub(crate) fn search(
        &self,
        problem: &Problem,
        (timeline, capacity, start): (&Timeline, u64, Instant),
        limits: Limits,
        observer: Option<&mut dyn SearchObserver>,
    ) -> Result<SearchFit, CpSatError> {
        let member = CpSatMember::for_search(
            problem,
            (timeline, capacity, start),
            self.options,
            (self.seed, limits),
            self.cancel,
        )?;
        let (portfolio, mut warnings) = self.portfolio(problem.len());
        let request = FitRequest {
            portfolio,
            timeline,
            options: self.options,
            // The search measures its time from its own start.
            limits: limits_left(limits, start),
            cancel: self.cancel,
            observer: observer.map(|o| o as &mut dyn SearchObserver),
            external: member.as_ref().map(|m| m as &dyn ExternalMember),
        };
        let result = search::fit(problem, capacity, request);
        let cpsat = match member {
            Some(member) => member.finish()?,
            None => None,
        };
        let status = result.outcome.status();
        if result.exhausted_model {
            warnings.push(EXHAUSTED_MODEL.to_string());
        }
        let entries = match status {
            Status::LimitReached => member_entries(problem, timeline),
            _ => 0,
        };
        if entries > MEMBER_ENTRIES_MOST {
            warnings.push(format!(
                "the search did not run: its model of this problem would list {entries} pairs \
                 of a buffer and a section it lives in, more than {MEMBER_ENTRIES_MOST} (use \
                 --minimize, or a baseline with --algo)"
            ));
        }
        Ok(SearchFit {
            status,
            solution: match result.outcome {
                Outcome::Found(solution) => Some(solution),
                _ => None,
            },
            stats: result.stats,
            warnings,
            cpsat,
        })
    }
}

/// `limits`, timed from `start`, as the time left from now (for allocators that start their
/// own clock).
pub(crate) fn limits_left(limits: Limits, start: Instant) -> Limits {
    Limits {
        timeout: limits.timeout.map(|t| t.saturating_sub(start.elapsed())),
        ..limits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of the policies of minimise's portfolios on 100 buffers under `policy` and
    /// `options`: its own, and the one of the searches lowering a layout found.
    fn minimise_portfolios(
        policy: PolicySpec,
        options: &SearchOptions,
    ) -> (Vec<String>, Vec<String>) {
        let policy = PolicySource::Spec(policy);
        let engine = Engine {
            options,
            policy: &policy,
            seed: 0,
            cancel: None,
            model: None,
            learned: LearnedHooks::default(),
        };
        let own = engine.portfolio(100).0.portfolio.names();
        let lowering = engine
            .lowering_portfolio(100)
            .map_or_else(|| own.clone(), |p| p.portfolio.names());
        (own, lowering)
    }

    /// Whether `config` carries `network`'s risk head (the same network, not a copy).
    fn carries(config: &PortfolioConfig, network: &Arc<Network>) -> bool {
        let risk = config.learned.placement_risk.as_ref().expect("a risk head");
        std::ptr::addr_eq(Arc::as_ptr(risk), Arc::as_ptr(network))
    }

    /// The network of the policy's model file is the risk head of every fit the engine runs:
    /// the plain fit and minimise's own searches (`portfolio`, which part fits and memories'
    /// fits use too) and minimise's lowering searches; with `learned-backjump` off, none.
    #[test]
    fn the_policy_files_risk_head_reaches_every_portfolio() {
        let mut file = crate::learned::ModelFile::built_in().expect("the built-in model");
        file.backjump_risk = Some(0.5);
        let network = Arc::new(Network::new(&file).expect("a network"));
        assert!(network.has_risk());
        let policy = PolicySource::Spec(PolicySpec::Portfolio);
        for backjump in [true, false] {
            let options = SearchOptions {
                learned_backjump: backjump,
                ..SearchOptions::default()
            };
            let engine = Engine {
                options: &options,
                policy: &policy,
                seed: 0,
                cancel: None,
                model: Some(network.clone()),
                learned: crate::learned::hooks(&options, Some(&network)),
            };
            let own = engine.portfolio(100).0;
            let lowering = engine.lowering_portfolio(100).expect("the hand-made one");
            for config in [&own, &lowering, &own.for_hint_dive(100)] {
                match backjump {
                    true => assert!(carries(config, &network)),
                    false => assert!(config.learned.placement_risk.is_none()),
                }
            }
        }
    }

    /// With the default policy the probes above LOAD and the improvement windows run the
    /// hand-made round robin, the rest the learned portfolio; a policy the caller names runs
    /// everywhere, and `learned-order` off gives the hand-made one everywhere.
    #[test]
    fn minimise_lowers_with_the_hand_made_round_robin_unless_a_policy_is_named() {
        let spec = |name: &str| name.parse::<PolicySpec>().expect("a policy");
        let default = SearchOptions::default();
        let hand_made = spec("fixed/WAT~/TAW~/TWA")
            .build(100, &default)
            .portfolio
            .names();
        let (own, lowering) = minimise_portfolios(PolicySpec::Portfolio, &default);
        assert_eq!(lowering, hand_made);
        assert!(own.len() > hand_made.len(), "{own:?}");
        for named in ["learned", "TWA+", "fixed/WAT~/TAW~/TWA"] {
            let (own, lowering) = minimise_portfolios(spec(named), &default);
            assert_eq!(own, lowering, "{named}");
        }
        let off = SearchOptions {
            learned_order: false,
            ..SearchOptions::default()
        };
        let both = minimise_portfolios(PolicySpec::Portfolio, &off);
        assert_eq!(both, (hand_made.clone(), hand_made));
    }
}
