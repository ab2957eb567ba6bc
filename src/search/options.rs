//! Every search technique as a named switch, so each one's effect can be measured by turning it
//! off. One table ([`SWITCHES`]) gives every switch its name, its layer, its help, when to flip it
//! and its field: the CLI's `--no`/`--with` parsing and help, `telamalloc switches`, the
//! ablation and `get`/`set` all come from it.

use serde::{Deserialize, Serialize};

/// The restart schedule: how the node budget of successive runs grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Schedule {
    /// Budgets `2n, 4n, 8n, ...` (n = number of free buffers, at least 16), each round over
    /// every policy.
    Geometric,
    /// Budgets `4n * luby(i)`: 4, 4, 8, 4, 4, 8, 16, ... times n.
    Luby,
}

/// The switches of the hybrid search (the defaults are those of the CLI and the library).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SearchOptions {
    /// Canonical placements: offsets never decrease along a search path (ties by static rank),
    /// so each packing is reached once.
    pub canonical: bool,
    /// Dominance: never place a buffer at or above the lowest end of another unplaced buffer.
    pub dominance: bool,
    /// Zero-slack reasoning: nothing goes below the lowest candidate offset any more, so a
    /// section that cannot afford to leave that offset uncovered (its slack above it is smaller
    /// than the gap to its next possible start) fails when no buffer can cover it; one without
    /// slack and a single candidate to cover it places that candidate at once.
    pub zero_slack: bool,
    /// Twin symmetry: buffers with the same lifetime, size and alignment are interchangeable,
    /// so they are placed in index order (each only once its previous twin is placed).
    pub twins: bool,
    /// Floor tiling: the buffers that start at the lowest candidate offset are live at
    /// disjoint times, so they must tile, in time, every stretch of sections whose floor
    /// there must be covered (zero-slack reasoning over a stretch instead of one section).
    pub floor_tiling: bool,
    /// Cover branching (with `zero_slack`): when the policy's first candidate starts at the
    /// lowest candidate offset and covers a section with no slack left above it, exactly one
    /// buffer of every packing below the node covers that point, so the node branches over
    /// that point's covers alone (of the first candidate's sections without slack, the one
    /// with the fewest), as perfect-packing solvers branch on the lowest uncovered point. The
    /// first choice stays the policy's; only its alternatives shrink.
    pub cover_branching: bool,
    /// Section inference: fail when a section's floor plus its unplaced sizes exceed the capacity.
    pub section_inference: bool,
    /// Edge finding: per maximal section, CP-SAT's 1-D disjunctive reasoning over address
    /// windows, from below and from the top, to a fixpoint across sections, kept down the
    /// search path. It fails nodes whose buffers cannot fit and leaves out the candidates that
    /// cannot start at their offset.
    pub edge_finding: bool,
    /// Raise a section's floor to the lowest offset any of its unplaced buffers can take.
    pub unplaced_floor: bool,
    /// Solve independent partitions separately, at the start and whenever placements cut time.
    pub decomposition: bool,
    /// Place a buffer that no unplaced buffer overlaps at once, without branching on it.
    pub forced_isolated: bool,
    /// Remember every node a policy's runs have refuted (its part's unplaced buffers with their
    /// lowest offsets and ranks, and the canonical bound; kept across the policy's restarts, at
    /// most a million keys) and fail at once when the same node comes back.
    pub node_cache: bool,
    /// Conflict-driven prioritisation: buffers in failing sections gain activity (decaying, as
    /// in VSIDS) and are tried earlier at nodes; activity persists across restarts.
    pub conflict_boost: bool,
    /// Major backtracks: after a growing number of failures, jump back to the earliest placement
    /// involved in the last conflict and re-explore its subtree with the new priorities.
    /// Off by default, yet major backtracks run by default: `learned_backjump` turns them on
    /// (whatever this says) and picks their targets; this switch alone matters without it.
    pub major_backtrack: bool,
    /// Learned restarts (with `restarts` and the Luby schedule): at checkpoints of a run, the
    /// restart model ([`crate::learned::RestartModel`], `models/restarts.json`) reads the run's
    /// progress and ends a run it predicts will spend its budget without deciding. A run whose
    /// budget is above every earlier budget of its member's schedule is never ended early, so the
    /// search stays complete.
    #[serde(default)]
    pub learned_restarts: bool,
    /// Learned backjumping, when the policy model sets `backjump_risk` (the built-in model's when
    /// the policy has none): major backtracks are on, and each goes back to the placement behind
    /// the last conflict that the model's risk head predicts is the culprit (see
    /// [`ModelFile::backjump_risk`](crate::learned::ModelFile::backjump_risk)).
    pub learned_backjump: bool,
    /// Restarts over a portfolio of policies with growing node budgets (off: one complete run of
    /// the first policy).
    pub restarts: bool,
    /// Slack filling: on a nearly full problem (at most 8% slack, no fixed buffers, no gaps),
    /// also search restrictions whose phantom buffers fill every section's slack (up to four
    /// fixed cuts and a lottery of drawn ones), first in each restart round at one policy's share
    /// each (see `search::slack`). Needs `restarts`.
    pub slack_fill: bool,
    /// With `slack_fill`: the lottery draws its cuts move by move with the learned hole-shape
    /// model ([`crate::learned::HoleModel`], `models/hole_shapes.json`) instead of its hand-made
    /// rules.
    pub learned_holes: bool,
    /// With `learned_holes`: the model's most likely cut (at each step the move it scores
    /// highest) is one more fixed slack-filling member, when it differs from the others.
    pub likely_cut: bool,
    /// With `likely_cut`: the model's next most likely cuts (in the order of its ranking of
    /// the walk's cuts, the fixed members' cuts skipped), three of them, are fixed members too.
    pub more_likely: bool,
    /// With `learned_holes`: the lottery takes the model's cuts in decreasing probability (a
    /// best-first search over the walk's moves) rather than drawing them at random; a draw
    /// whose cut the ranking does not find within its expansions is drawn at random.
    pub ranked_draws: bool,
    /// With `slack-fill`: the lottery's runs make several short draws (a few nodes per buffer
    /// each) rather than one draw at the run's whole budget.
    pub short_draws: bool,
    /// With `slack-fill`: the lottery draws again a cut the fixed members or an earlier draw
    /// searched.
    pub distinct_draws: bool,
    /// With `slack-fill`: the lottery's draws are searched in the static order of the round
    /// robin's first strategy (with `learned-order`, the one the portfolio head ranks first),
    /// when it is one (`WAT~` gives `WAT`); by the fixed policy otherwise.
    pub draw_lead: bool,
    /// With `slack-fill`: the lottery member runs twice in every round (off: once, as each
    /// fixed cut's member does).
    pub double_lottery: bool,
    /// The restart schedule.
    pub schedule: Schedule,
    /// When a strategy ranker (a learned portfolio head) plans the portfolio for the problem,
    /// give each policy the ranker's weight, its runs per round (off: the ranker's order, one
    /// run each per round).
    pub portfolio_shares: bool,
    /// The default policy (`--policy portfolio`) runs the built-in model's portfolio (its
    /// learned policy and the order words of its portfolio head), ordered per problem by the
    /// head: from the problem's features, the strategy most likely to be fastest runs first in
    /// every round; with `portfolio_shares`, each gets the head's share of every round's runs.
    /// Off: the hand-made round robin `fixed/WAT~/TAW~/TWA`, one run each per round.
    pub learned_order: bool,
    /// Try the fast baselines first and return at once when one fits the capacity.
    pub heuristic_first: bool,
    /// Minimise: after the search's probes, lower the best layout's peak by large-neighbourhood
    /// search (windows of time around the buffers ending highest re-placed by the search under
    /// a lower target, the buffers crossing a window's edges held); on problems of more than
    /// 100,000 buffers, instead of probes of the whole problem. Skipped with gaps.
    pub lns: bool,
    /// Minimise, with `lns`: lower the best layout's peak by ruin and recreate, over the
    /// lifetime of a buffer making the peak: the buffers with tops in a band below the peak
    /// taken out and put back by best-fit or first-fit in several orders. Skipped with gaps.
    pub reinsert: bool,
    /// Minimise, with `lns`, up to 100,000 buffers: before the probes, lay out the buffers
    /// live in the window of time of the largest live totals by the search (under LOAD or a
    /// little above), keep them there and lay the others around them by first-fit in the order
    /// of the best layout's offsets. Skipped with gaps or fixed offsets.
    pub window_first: bool,
    /// Minimise, with `window-first`: where the others, placed around the first window's
    /// layout, end above its target, add the fullest sections of the buffers ending highest to
    /// the window (the time between the sections cut out) and search again, a few times.
    pub window_grow: bool,
    /// Minimise, with `lns`: give a window's search the buffers held around it joined into few
    /// fixed obstacles (by address range, over the stretches of time its freed buffers cut),
    /// so that however many it holds, a window is searched.
    pub lns_obstacles: bool,
    /// Minimise, with `lns-obstacles`, above 100,000 buffers: try first, around each buffer
    /// above the target, the widest window freeing only the buffers with tops in a band below
    /// it (2, 8, 16, 32 times the peak's excess over the bound), widened over the long-lived
    /// buffers crossing it with tops in the band, so that they are freed too.
    pub lns_bands: bool,
    /// Minimise: prove, at the end (with a tenth of the time and nodes kept for it), a lower
    /// bound above LOAD on windows of time (the buffers live in one, lifetimes clipped to it, proven by the
    /// search not to fit under the bound). Skipped with gaps.
    pub window_bound: bool,
    /// CP-SAT as one more member of the portfolio, after the policies, with deterministic
    /// budgets (needs OR-tools at run time; the front door supplies it, see [`crate::cpsat`]).
    /// Off by default.
    #[serde(default)]
    pub cpsat: bool,
    /// CP-SAT's share of the search's work, in policies: beside policies of total weight `W`,
    /// its runs take at most `cpsat_share / W` of the policies' node budgets (1: as much as one
    /// policy; 0: it never runs).
    pub cpsat_share: f64,
    /// With `cpsat`: the learned gate ([`crate::learned::CpSatGate`]) sets CP-SAT's share per
    /// problem, between its low and high shares, instead of `cpsat_share`.
    pub cpsat_gate: bool,
    /// Worker threads for the portfolio (1 = sequential). The answer does not depend on it.
    pub threads: usize,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            canonical: true,
            dominance: true,
            zero_slack: true,
            twins: true,
            floor_tiling: true,
            cover_branching: true,
            section_inference: true,
            edge_finding: true,
            unplaced_floor: true,
            decomposition: true,
            forced_isolated: true,
            node_cache: true,
            conflict_boost: true,
            major_backtrack: false,
            learned_restarts: false,
            learned_backjump: true,
            restarts: true,
            slack_fill: true,
            learned_holes: true,
            likely_cut: true,
            more_likely: true,
            ranked_draws: true,
            short_draws: true,
            distinct_draws: true,
            draw_lead: true,
            double_lottery: true,
            schedule: Schedule::Luby,
            portfolio_shares: true,
            learned_order: true,
            heuristic_first: true,
            lns: true,
            reinsert: true,
            window_first: true,
            window_grow: true,
            lns_obstacles: true,
            lns_bands: true,
            window_bound: true,
            cpsat: false,
            cpsat_share: 1.0,
            cpsat_gate: true,
            threads: 1,
        }
    }
}

impl SearchOptions {
    /// The switches for a problem with gaps: those whose reasoning holds for buffers cut into
    /// pieces stay as they are (canonical placements, dominance, twins among buffers without
    /// gaps, decomposition, forced isolated placements, the node cache, conflict boosting,
    /// restarts); those that take each buffer as one rectangle over its sections are off:
    /// section inference and edge finding (a section's floor is raised to the end of the
    /// buffers placed in it, which a neighbour with a smaller separation may sit below), the
    /// unplaced floor that feeds them, and zero-slack reasoning and floor tiling (a buffer at the
    /// floor covers it only where it occupies its lowest bytes).
    pub fn for_gaps(&self) -> SearchOptions {
        SearchOptions {
            zero_slack: false,
            floor_tiling: false,
            cover_branching: false,
            section_inference: false,
            edge_finding: false,
            unplaced_floor: false,
            ..self.clone()
        }
    }
}

/// The layer of the solver that reads a switch; `telamalloc switches` and docs/search.md group
/// the switches by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// The depth-first search: pruning, propagation, backtracking, restarts, and the baselines
    /// tried before it.
    Engine,
    /// The slack-filling members on nearly full problems.
    SlackFilling,
    /// The learned models steering the search (backjumps, restarts, the portfolio).
    Learned,
    /// `--minimize` alone: what lowers the best layout's peak and proves its bound.
    Minimise,
    /// OR-tools' CP-SAT beside the search.
    CpSat,
}

/// Every layer, in the order the switches are listed.
pub const LAYERS: [Layer; 5] = [
    Layer::Engine,
    Layer::SlackFilling,
    Layer::Learned,
    Layer::Minimise,
    Layer::CpSat,
];

impl Layer {
    /// The layer's heading, as `telamalloc switches` prints it.
    pub fn title(self) -> &'static str {
        match self {
            Layer::Engine => "engine: the depth-first search, its pruning and restarts",
            Layer::SlackFilling => "slack filling: nearly full problems (at most 8% slack)",
            Layer::Learned => "learned: the built-in models steering the search",
            Layer::Minimise => "minimise: --minimize only",
            Layer::CpSat => "CP-SAT: needs OR-tools at run time",
        }
    }
}

/// One boolean switch of [`SearchOptions`].
pub struct Switch {
    /// The name, as the CLI spells it (`--no NAME`, `--with NAME`).
    pub name: &'static str,
    /// The layer that reads it.
    pub layer: Layer,
    /// What it does, in one line.
    pub help: &'static str,
    /// When a user would flip it, in one line.
    pub when: &'static str,
    /// Whether it brings in a solver from outside the crate (CP-SAT): `--with` takes it, but
    /// the ablation and [`switch_names`] leave it out, since it needs a library the default
    /// build does not have.
    pub external: bool,
    get: fn(&SearchOptions) -> bool,
    set: fn(&mut SearchOptions, bool),
}

macro_rules! switch {
    ($layer:ident, $name:literal, $field:ident, $help:literal, $when:expr) => {
        Switch {
            name: $name,
            layer: Layer::$layer,
            help: $help,
            when: $when,
            external: false,
            get: |o| o.$field,
            set: |o, on| o.$field = on,
        }
    };
}

/// When a user would turn off a technique that only saves time or lowers a peak: to measure it.
const TO_MEASURE: &str = "off only to measure what it is worth (bench --ablation)";

/// Every switch of [`SearchOptions`], grouped by [`Layer`] in the order of [`LAYERS`]; the
/// ablation table follows this order.
pub const SWITCHES: [Switch; 39] = [
    switch!(
        Engine,
        "canonical",
        canonical,
        "offsets never decrease along a path",
        TO_MEASURE
    ),
    switch!(
        Engine,
        "dominance",
        dominance,
        "skip candidates above another buffer's lowest end",
        TO_MEASURE
    ),
    switch!(
        Engine,
        "zero-slack",
        zero_slack,
        "a section without slack must have its floor covered",
        TO_MEASURE
    ),
    switch!(
        Engine,
        "twins",
        twins,
        "place interchangeable buffers in index order only",
        TO_MEASURE
    ),
    switch!(
        Engine,
        "floor-tiling",
        floor_tiling,
        "the covers of a floor must tile it in time",
        TO_MEASURE
    ),
    switch!(
        Engine,
        "cover-branching",
        cover_branching,
        "branch only over the buffers that can cover the first choice's point of the floor",
        TO_MEASURE
    ),
    switch!(
        Engine,
        "section-inference",
        section_inference,
        "fail when a section's load cannot fit",
        TO_MEASURE
    ),
    switch!(
        Engine,
        "edge-finding",
        edge_finding,
        "per section, raise lowest offsets and lower ends by edge finding over address windows",
        TO_MEASURE
    ),
    switch!(
        Engine,
        "unplaced-floor",
        unplaced_floor,
        "raise section floors to the lowest candidate",
        TO_MEASURE
    ),
    switch!(
        Engine,
        "decomposition",
        decomposition,
        "solve independent parts of the timeline apart",
        TO_MEASURE
    ),
    switch!(
        Engine,
        "forced-isolated",
        forced_isolated,
        "place buffers with no unplaced neighbour at once",
        TO_MEASURE
    ),
    switch!(
        Engine,
        "node-cache",
        node_cache,
        "fail at once on a node refuted before by the same policy (kept across its restarts)",
        "off to save its memory (up to a million keys per strategy), or to measure it"
    ),
    switch!(
        Engine,
        "conflict-boost",
        conflict_boost,
        "try buffers of recent conflicts first",
        TO_MEASURE
    ),
    switch!(
        Engine,
        "major-backtrack",
        major_backtrack,
        "after repeated failures, jump back to the earliest placement behind the last conflict; off here, yet major backtracks run by default: learned-backjump turns them on and aims them",
        "on, with --no learned-backjump, for major backtracks without the model"
    ),
    switch!(
        Engine,
        "restarts",
        restarts,
        "restart over the portfolio with growing budgets (off: one complete run of the first policy)",
        "off for one plain depth-first search of one policy, e.g. to compare node counts with MiniMalloc"
    ),
    Switch {
        name: "luby",
        layer: Layer::Engine,
        help: "the Luby restart schedule (off: the geometric one, budgets doubling each round)",
        when: "off to compare restart schedules",
        external: false,
        get: |o| o.schedule == Schedule::Luby,
        set: |o, on| {
            o.schedule = if on {
                Schedule::Luby
            } else {
                Schedule::Geometric
            }
        },
    },
    switch!(
        Engine,
        "heuristic-first",
        heuristic_first,
        "return a fast baseline's layout when it fits",
        "off to time or count the search itself on problems a baseline fits"
    ),
    switch!(
        SlackFilling,
        "slack-fill",
        slack_fill,
        "on nearly full problems, also search restrictions whose phantom buffers fill the slack",
        "off to search a nearly full problem as it is, or to measure slack filling"
    ),
    switch!(
        SlackFilling,
        "learned-holes",
        learned_holes,
        "with slack-fill: the lottery's cuts drawn by the learned hole-shape model",
        "off for the hand-made random draws, or to measure the model"
    ),
    switch!(
        SlackFilling,
        "likely-cut",
        likely_cut,
        "with learned-holes: also search the hole-shape model's most likely cut",
        TO_MEASURE
    ),
    switch!(
        SlackFilling,
        "more-likely",
        more_likely,
        "with likely-cut: the hole model's next 3 most likely cuts are fixed members too",
        TO_MEASURE
    ),
    switch!(
        SlackFilling,
        "ranked-draws",
        ranked_draws,
        "with learned-holes: the lottery's cuts in decreasing model probability (off: at random)",
        TO_MEASURE
    ),
    switch!(
        SlackFilling,
        "short-draws",
        short_draws,
        "with slack-fill: each lottery run makes several draws of 2 nodes per buffer (off: one)",
        TO_MEASURE
    ),
    switch!(
        SlackFilling,
        "distinct-draws",
        distinct_draws,
        "with slack-fill: the lottery draws again instead of searching a cut twice",
        TO_MEASURE
    ),
    switch!(
        SlackFilling,
        "draw-lead",
        draw_lead,
        "with slack-fill: the lottery's draws searched in the first strategy's order (off: fixed)",
        TO_MEASURE
    ),
    switch!(
        SlackFilling,
        "double-lottery",
        double_lottery,
        "with slack-fill: the lottery runs twice in every round (off: once)",
        TO_MEASURE
    ),
    switch!(
        Learned,
        "learned-backjump",
        learned_backjump,
        "major backtracks on (whatever major-backtrack says), each to the placement the policy model's risk head predicts caused the conflict (a model with backjump_risk: the built-in one has it)",
        "off for the hand-made search: no major backtracks, or with major-backtrack on, the earliest placement behind the conflict"
    ),
    switch!(
        Learned,
        "learned-restarts",
        learned_restarts,
        "end a run early when the learned restart model predicts it will not decide",
        "on to try the restart model on your problems (eval with and without it)"
    ),
    switch!(
        Learned,
        "learned-order",
        learned_order,
        "the default policy runs the built-in model's portfolio, ordered per problem by its head (off: the hand-made round robin fixed/WAT~/TAW~/TWA, one run each per round)",
        "off when your problems are unlike those the model was trained on, to compare (eval)"
    ),
    switch!(
        Learned,
        "portfolio-shares",
        portfolio_shares,
        "when a learned head plans the portfolio, each strategy gets the head's share of every round's runs (off: one run each per round, in the head's order)",
        "off to keep the head's order but give every strategy the same budget"
    ),
    switch!(
        Minimise,
        "lns",
        lns,
        "improve the best layout window by window (large-neighbourhood search)",
        "off for the probes alone (the peak may stay higher), or to measure it"
    ),
    switch!(
        Minimise,
        "reinsert",
        reinsert,
        "with lns: take out the buffers topping the peak and put them back in other orders",
        TO_MEASURE
    ),
    switch!(
        Minimise,
        "window-first",
        window_first,
        "with lns: lay out the window of the largest live totals first, the rest around it",
        TO_MEASURE
    ),
    switch!(
        Minimise,
        "window-grow",
        window_grow,
        "with window-first: add the times where the rest ends too high to the window",
        TO_MEASURE
    ),
    switch!(
        Minimise,
        "lns-obstacles",
        lns_obstacles,
        "with lns: the buffers a window holds joined into few fixed obstacles",
        TO_MEASURE
    ),
    switch!(
        Minimise,
        "lns-bands",
        lns_bands,
        "with lns-obstacles, above 100,000 buffers: top bands first, widened over long-lived buffers",
        TO_MEASURE
    ),
    switch!(
        Minimise,
        "window-bound",
        window_bound,
        "prove a lower bound above LOAD on windows of time (a tenth of the time and nodes is kept for it)",
        "off when only the layout matters, not how far its peak may be above the best"
    ),
    Switch {
        name: "cpsat",
        layer: Layer::CpSat,
        help: "CP-SAT beside the portfolio, at its share of the work (needs OR-tools; off by default)",
        when: "on when OR-tools is installed and the search alone does not decide your problems",
        external: true,
        get: |o| o.cpsat,
        set: |o, on| o.cpsat = on,
    },
    Switch {
        name: "cpsat-gate",
        layer: Layer::CpSat,
        help: "with cpsat: a learned gate sets CP-SAT's share per problem (off: --cpsat-share)",
        when: "off to set CP-SAT's share yourself with --cpsat-share",
        external: true,
        get: |o| o.cpsat_gate,
        set: |o, on| o.cpsat_gate = on,
    },
];

/// Former switch names that still work: (old name, current name).
const RENAMED: [(&str, &str); 1] = [("portfolio-lead", "portfolio-shares")];

/// Former switches whose techniques were removed: `--no`/`--with` refuse them with a message
/// saying so.
const REMOVED: [&str; 4] = [
    "deepening-draws",
    "learned-shares",
    "overload",
    "part-cache",
];

fn switch(name: &str) -> Option<&'static Switch> {
    let name = RENAMED
        .iter()
        .find(|(old, _)| *old == name)
        .map_or(name, |(_, new)| new);
    SWITCHES.iter().find(|s| s.name == name)
}

impl SearchOptions {
    /// Whether the switch with this CLI name is on (`None` for an unknown name).
    pub fn get(&self, name: &str) -> Option<bool> {
        switch(name).map(|s| (s.get)(self))
    }

    /// Sets a switch by its CLI name (`luby` off selects the geometric schedule). Returns false for an
    /// unknown name.
    pub fn set(&mut self, name: &str, on: bool) -> bool {
        match switch(name) {
            Some(s) => {
                (s.set)(self, on);
                true
            }
            None => false,
        }
    }

    /// Turns the techniques named in `off` off and those in `on` on (the CLI's `--no` and
    /// `--with`); an unknown name is an error naming the flag and the known techniques.
    pub fn apply_switches(&mut self, off: &[String], on: &[String]) -> Result<(), String> {
        for (names, value, flag) in [(off, false, "--no"), (on, true, "--with")] {
            for name in names {
                match switch(name) {
                    Some(s) => (s.set)(self, value),
                    None if REMOVED.contains(&name.as_str()) => {
                        return Err(format!(
                            "{flag} {name}: this technique was removed (it was off by default and \
                             measured not to pay)"
                        ))
                    }
                    None => {
                        return Err(format!(
                            "{flag} {name}: unknown technique (known: {})",
                            technique_names().join(", ")
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    /// The ablation variants of these options: each switch flipped in turn (but `cpsat`, an
    /// outside solver), labelled `-name` (turned off) or `+name` (turned on).
    pub fn ablation_variants(&self) -> Vec<(String, SearchOptions)> {
        SWITCHES
            .iter()
            .filter(|s| !s.external)
            .map(|s| {
                let on = (s.get)(self);
                let mut variant = self.clone();
                (s.set)(&mut variant, !on);
                let label = format!("{}{}", if on { "-" } else { "+" }, s.name);
                (label, variant)
            })
            .collect()
    }
}

/// The names `--no` and `--with` take.
pub fn technique_names() -> Vec<&'static str> {
    SWITCHES.iter().map(|s| s.name).collect()
}

/// The names of every switch the search runs by itself, in table order (not `cpsat`, which
/// needs OR-tools).
pub fn switch_names() -> Vec<&'static str> {
    SWITCHES
        .iter()
        .filter(|s| !s.external)
        .map(|s| s.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renamed_switch_still_answers_to_its_old_name() {
        let mut options = SearchOptions::default();
        assert!(options.portfolio_shares);
        options
            .apply_switches(&["portfolio-lead".to_string()], &[])
            .expect("the old name is known");
        assert!(!options.portfolio_shares);
        assert_eq!(options.get("portfolio-lead"), Some(false));
        assert!(options.set("portfolio-shares", true));
        assert!(options.portfolio_shares);
        // Only current names are listed.
        assert!(!switch_names().contains(&"portfolio-lead"));
        assert!(options
            .apply_switches(&["no-such".to_string()], &[])
            .is_err());
    }

    #[test]
    fn a_removed_switch_is_refused_with_a_message_saying_so() {
        let mut options = SearchOptions::default();
        // Those removed with their code, named here so that dropping one from the list fails.
        for name in [
            "deepening-draws",
            "learned-shares",
            "overload",
            "part-cache",
        ] {
            assert!(REMOVED.contains(&name), "{name} is listed as removed");
        }
        for name in REMOVED {
            for (off, on) in [
                (vec![name.to_string()], vec![]),
                (vec![], vec![name.to_string()]),
            ] {
                let error = options
                    .apply_switches(&off, &on)
                    .expect_err("a removed switch is refused");
                assert!(error.contains(name) && error.contains("removed"), "{error}");
            }
            assert_eq!(options.get(name), None);
            assert!(!options.set(name, true));
            assert!(!technique_names().contains(&name));
        }
        assert_eq!(options, SearchOptions::default());
        // Options saved while the fields existed still read, the old fields ignored.
        let saved = r#"{"overload": true, "part_cache": true, "canonical": false}"#;
        let read: SearchOptions = serde_json::from_str(saved).expect("old options still read");
        assert_eq!(
            read,
            SearchOptions {
                canonical: false,
                ..SearchOptions::default()
            }
        );
    }
}
