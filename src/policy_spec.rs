//! Which policies a search runs, as a typed, parseable spec: `portfolio` (the default round
//! robin), `fixed`, an order word (`WAT`, `TWA+`, `TWA~`), a round robin of those
//! (`TWA/TWA~/TWA+`), `learned` (the built-in model) or a model
//! file. A spec is checked when it is parsed; it is built into a [`Portfolio`] per problem, and
//! only then is a model file read.

use crate::learned::{
    fallback_warning, LearnedPolicy, ModelError, ModelFile, Network, PortfolioNetwork,
    PortfolioRanker,
};
use crate::search::{
    parse_policy_name, FixedPolicy, LearnedHooks, NodePolicy, PolicyName, Portfolio,
    PortfolioConfig, PortfolioSwitches, SearchOptions, StaticOrder,
};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

/// A policy (or portfolio of policies) by name.
///
/// ```
/// use telamalloc::PolicySpec;
/// let spec: PolicySpec = "twa+".parse().unwrap();
/// assert_eq!(spec.to_string(), "TWA+");
/// assert!("nonsense".parse::<PolicySpec>().is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PolicySpec {
    /// The default round robin, `fixed/WAT~/TAW~/TWA`: the fixed policy, `WAT` and `TAW` with
    /// diversified restarts, and `TWA`, each on its own restart schedule; with the
    /// `learned-order` switch (on by default) in the order the built-in portfolio head gives
    /// each problem.
    #[default]
    Portfolio,
    /// TelaMalloc's order (longest lifetime, then size, then area) with conflict boosting (when
    /// the `conflict-boost` switch is on), restarted alone.
    Fixed,
    /// A MiniMalloc static order word over `W` (lifetime), `A` (area), `T` (largest section
    /// total), `Z` (size), restarted alone; `boosted` adds conflict boosting (`TWA+`; `fixed`
    /// is `WZA+`), `diversified` seeded noise on the keys in every restart after the first
    /// (`TWA~`, `TWA+~`; see [`Diversity`](crate::search::Diversity)).
    Order {
        /// The word, upper case.
        word: String,
        /// Whether conflict boosting is on (written `WORD+`).
        boosted: bool,
        /// Whether restarts are diversified (written `WORD~` or `WORD+~`).
        diversified: bool,
    },
    /// A round robin of these single policies (`fixed` or order words), written joined by `/`
    /// (`TWA/TWA~/TWA+`): each runs its own restart schedule, one run per round, in this order
    /// (`fixed/WAT~/TAW~/TWA` searches as `portfolio` does without `learned-order`).
    RoundRobin(Vec<PolicySpec>),
    /// The learned policy of a model file (`None`: the built-in model,
    /// [`BUILT_IN_MODEL`](crate::learned::BUILT_IN_MODEL), which is the repository's
    /// [`DEFAULT_MODEL_PATH`](crate::learned::DEFAULT_MODEL_PATH) compiled in), with the
    /// strategies of its portfolio head, if it has one, ordered per problem by the head.
    Learned {
        /// The model file to read; `None` for the built-in model (no file is read).
        model: Option<PathBuf>,
    },
}

/// A policy name that is none of those [`PolicySpec`] knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPolicy(pub String);

impl fmt::Display for UnknownPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown policy '{}': expected 'fixed', 'portfolio', 'learned', a model file (.json), an order word over W, A, T, Z (e.g. WAT, TWA+ with conflict boosting, TWA~ or TWA+~ with diversified restarts), or different ones of those joined by / (a round robin, e.g. TWA/TWA~/TWA+)",
            self.0
        )
    }
}

impl std::error::Error for UnknownPolicy {}

impl FromStr for PolicySpec {
    type Err = UnknownPolicy;

    fn from_str(name: &str) -> Result<PolicySpec, UnknownPolicy> {
        let lower = name.to_ascii_lowercase();
        match lower.as_str() {
            "portfolio" => return Ok(PolicySpec::Portfolio),
            "learned" => return Ok(PolicySpec::Learned { model: None }),
            _ if lower.ends_with(".json") => {
                return Ok(PolicySpec::Learned {
                    model: Some(PathBuf::from(name)),
                })
            }
            _ => {}
        }
        if name.contains('/') {
            let members: Vec<PolicySpec> = name
                .split('/')
                .map(|part| match parse_policy_name(part) {
                    Some(_) => part.parse(),
                    None => Err(UnknownPolicy(name.to_string())),
                })
                .collect::<Result<_, _>>()?;
            let distinct = members
                .iter()
                .enumerate()
                .all(|(i, m)| !members[..i].contains(m));
            return if distinct {
                Ok(PolicySpec::RoundRobin(members))
            } else {
                Err(UnknownPolicy(name.to_string()))
            };
        }
        match parse_policy_name(name) {
            Some(PolicyName::Fixed) => Ok(PolicySpec::Fixed),
            Some(PolicyName::Order {
                word,
                boosted,
                diversified,
            }) => Ok(PolicySpec::Order {
                word,
                boosted,
                diversified,
            }),
            None => Err(UnknownPolicy(name.to_string())),
        }
    }
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicySpec::Portfolio => write!(f, "portfolio"),
            PolicySpec::Fixed => write!(f, "fixed"),
            PolicySpec::Order {
                word,
                boosted,
                diversified,
            } => {
                let name = PolicyName::Order {
                    word: word.clone(),
                    boosted: *boosted,
                    diversified: *diversified,
                };
                write!(f, "{}", name.canonical())
            }
            PolicySpec::RoundRobin(members) => {
                let names: Vec<String> = members.iter().map(|m| m.to_string()).collect();
                write!(f, "{}", names.join("/"))
            }
            PolicySpec::Learned { model: None } => write!(f, "learned"),
            PolicySpec::Learned { model: Some(path) } => write!(f, "{}", path.display()),
        }
    }
}

/// A portfolio built for one problem, with the warnings its building raised (a learned policy
/// whose model file cannot be used runs as the fixed policy, and says why).
pub struct BuiltPortfolio {
    /// The portfolio.
    pub portfolio: Portfolio,
    /// Warnings for the caller to show.
    pub warnings: Vec<String>,
}

impl PolicySpec {
    /// The portfolio this spec stands for, for a problem of `buffers` buffers under `options`,
    /// with seed 0 (see [`PolicySpec::build_seeded`]).
    pub fn build(&self, buffers: usize, options: &SearchOptions) -> BuiltPortfolio {
        self.build_seeded(buffers, options, 0)
    }

    /// The portfolio this spec stands for, for a problem of `buffers` buffers under `options`;
    /// `seed` seeds the diversified orders (`TWA~`). A learned spec with a model file reads it
    /// here (the built-in model is parsed once per process).
    pub fn build_seeded(
        &self,
        buffers: usize,
        options: &SearchOptions,
        seed: u64,
    ) -> BuiltPortfolio {
        self.build_with_model(buffers, options, seed, None)
    }

    /// [`PolicySpec::build_seeded`] with the network of its model file already read by
    /// [`PolicySpec::load_model`] (`None`: read it here, if the spec names one), so that a
    /// caller building many portfolios (a solve, each probe of a minimisation) reads it once.
    pub fn build_with_model(
        &self,
        buffers: usize,
        options: &SearchOptions,
        seed: u64,
        model: Option<Arc<Network>>,
    ) -> BuiltPortfolio {
        let boost = options.conflict_boost;
        let portfolio = match self {
            // The built-in model's portfolio when it has a head (`learned-order`); otherwise
            // the hand-made round robin.
            PolicySpec::Portfolio => {
                let network = Network::built_in();
                let has_head = network.as_ref().is_ok_and(|n| n.portfolio().is_some());
                if options.learned_order && has_head {
                    return learned_portfolio(network, buffers, boost, seed);
                }
                Portfolio::round_robin(buffers, boost, seed)
            }
            PolicySpec::Learned { model: path } => {
                let network = match (model, path) {
                    (Some(network), _) => Ok(network),
                    (None, None) => Network::built_in(),
                    (None, Some(path)) => ModelFile::load(path)
                        .and_then(|m| Network::new(&m))
                        .map(Arc::new),
                };
                return learned_portfolio(network, buffers, boost, seed);
            }
            PolicySpec::RoundRobin(members) => Portfolio::new(
                members
                    .iter()
                    .map(|m| {
                        m.node_policy(buffers, boost, seed)
                            .expect("fixed or an order word")
                    })
                    .collect(),
            ),
            single => Portfolio::single(
                single
                    .node_policy(buffers, boost, seed)
                    .expect("fixed or an order word"),
            ),
        };
        BuiltPortfolio {
            portfolio,
            warnings: Vec::new(),
        }
    }

    /// What a search runs for this spec on a problem of `buffers` buffers: the portfolio
    /// [`PolicySpec::build_with_model`] builds and the portfolio switches of `options` (see
    /// [`configured`]), with the warnings its building raised.
    pub(crate) fn configure(
        &self,
        buffers: usize,
        options: &SearchOptions,
        seed: u64,
        model: Option<Arc<Network>>,
    ) -> (PortfolioConfig, Vec<String>) {
        let built = self.build_with_model(buffers, options, seed, model);
        (configured(built.portfolio, options), built.warnings)
    }

    /// Reads the model file this spec names, if any, and builds its network for this build's
    /// features (`None` for every other spec, the built-in model included); on failure, the file
    /// and why. [`PolicySpec::build_with_model`] takes what it returns.
    pub fn load_model(&self) -> Result<Option<Arc<Network>>, (PathBuf, ModelError)> {
        match self {
            PolicySpec::Learned { model: Some(path) } => ModelFile::load(path)
                .and_then(|m| Network::new(&m))
                .map(|network| Some(Arc::new(network)))
                .map_err(|e| (path.clone(), e)),
            _ => Ok(None),
        }
    }

    /// Checks that the model file this spec names, if any, can be used (read, parsed and built
    /// into a network for this build's features); on failure, the file and why. The other
    /// specs, the built-in model included, always can.
    pub fn check(&self) -> Result<(), (PathBuf, ModelError)> {
        self.load_model().map(|_| ())
    }

    /// The one node policy of `fixed` or an order word; `None` for the portfolio specs.
    fn node_policy(&self, buffers: usize, boost: bool, seed: u64) -> Option<Box<dyn NodePolicy>> {
        let PolicySpec::Order {
            word,
            boosted,
            diversified,
        } = self
        else {
            return matches!(self, PolicySpec::Fixed)
                .then(|| Box::new(FixedPolicy::new(buffers, boost)) as Box<dyn NodePolicy>);
        };
        let policy: Box<dyn NodePolicy> = match (boosted, diversified) {
            (false, false) => Box::new(StaticOrder::new(word)?),
            (false, true) => Box::new(StaticOrder::diversified(word, seed)?),
            (true, false) => Box::new(FixedPolicy::boosted(word, buffers)?),
            (true, true) => Box::new(FixedPolicy::boosted_diversified(word, buffers, seed)?),
        };
        Some(policy)
    }
}

/// `portfolio` under the portfolio switches of `options` (`conflict-boost`, `portfolio-shares`,
/// `draw-lead`; `learned-order` is read when a spec builds its ranker): the one place the
/// search's portfolio configuration is made, for a spec's portfolio or one made in code.
pub(crate) fn configured(portfolio: Portfolio, options: &SearchOptions) -> PortfolioConfig {
    PortfolioConfig {
        portfolio,
        switches: PortfolioSwitches {
            conflict_boost: options.conflict_boost,
            shares: options.portfolio_shares,
            draw_lead: options.draw_lead,
        },
        learned: LearnedHooks::default(),
    }
}

/// The portfolio head of `network`, if it has one.
fn portfolio_head(network: Result<Arc<Network>, ModelError>) -> Option<Arc<PortfolioNetwork>> {
    network
        .ok()
        .and_then(|n| n.portfolio().cloned())
        .map(Arc::new)
}

/// The learned policy of `network` and, when the model has a portfolio head, the head's other
/// strategies with the head as the ranker (without a network, the fixed policy and the reason).
fn learned_portfolio(
    network: Result<Arc<Network>, ModelError>,
    buffers: usize,
    boost: bool,
    seed: u64,
) -> BuiltPortfolio {
    let policy = LearnedPolicy::with_network(network.clone(), buffers, boost);
    let warnings: Vec<String> = policy
        .fallback_reason()
        .map(fallback_warning)
        .into_iter()
        .collect();
    let own_name = policy.name();
    let mut portfolio = Portfolio::single(Box::new(policy));
    if let Some(head) = portfolio_head(network) {
        for strategy in head.strategies().iter().filter(|s| *s != "fixed") {
            // A checked head names only `fixed` and order words.
            let spec: PolicySpec = strategy.parse().expect("a checked strategy name");
            portfolio.policies.push(
                spec.node_policy(buffers, boost, seed)
                    .expect("an order word"),
            );
        }
        portfolio.ranker = Some(Box::new(PortfolioRanker::new(head, &own_name)));
    }
    BuiltPortfolio {
        portfolio,
        warnings,
    }
}
