//! Policy evaluation: run the search with each policy over a set of problems and summarise
//! (solved within the limit, median and 90th-percentile time and nodes, major backtracks), with a
//! plot of problems solved against time per policy.

use crate::batch::run_parallel;
use crate::policy_spec::PolicySpec;
use crate::problem::Problem;
use crate::solver::{Goal, Solver};
use serde::Serialize;

/// One policy's run on one problem.
#[derive(Clone, Debug, Serialize)]
pub struct EvalRun {
    /// The policy's name.
    pub policy: String,
    /// The problem's name.
    pub problem: String,
    /// `solved`, `infeasible`, `limit` or `invalid`.
    pub status: String,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Search nodes.
    pub nodes: u64,
    /// Major backtracks.
    pub major_backtracks: u64,
    /// Buffers of the problem (a search that never backtracks needs about this many nodes).
    pub buffers: usize,
    /// The most free buffers the search had placed at once (see
    /// [`SearchStats::deepest`](crate::search::SearchStats::deepest)).
    pub deepest: u64,
}

impl EvalRun {
    /// Whether the run decided its problem: solved it or proved it infeasible.
    pub fn decided(&self) -> bool {
        self.status == "solved" || self.status == "infeasible"
    }

    /// Its nodes for a PAR2 score under a node limit of `limit`: its nodes when it decided,
    /// twice the limit when it did not.
    pub fn par2_nodes(&self, limit: u64) -> u64 {
        if self.decided() {
            self.nodes
        } else {
            2 * limit
        }
    }

    /// Its seconds for a PAR2 score: its seconds when it decided, twice them when it did not.
    pub fn par2_seconds(&self) -> f64 {
        if self.decided() {
            self.seconds
        } else {
            2.0 * self.seconds
        }
    }
}

/// Runs `solver` (with its policy `policy`) on `problem` at its capacity; a problem without a
/// capacity, or one that breaks the rules, counts as `invalid`. A solver whose algorithm is not
/// the search (CP-SAT) is named by its algorithm; CP-SAT's nodes are the node equivalents of its
/// deterministic time ([`crate::cpsat::NODES_PER_DETERMINISTIC_SECOND`]).
pub(crate) fn run_policy(
    problem: &Problem,
    name: &str,
    policy: &PolicySpec,
    solver: &Solver,
) -> EvalRun {
    let solver = solver.clone().policy(policy.clone());
    let result =
        Goal::for_problem(problem, false).and_then(|goal| solver.solve(problem, goal).ok());
    let stats = result
        .as_ref()
        .and_then(|r| r.search.clone())
        .unwrap_or_default();
    let cpsat = result.as_ref().and_then(|r| r.cpsat.as_ref());
    let is_search = solver.algorithm_name() == "search";
    let (seconds, nodes) = match (is_search, cpsat, &result) {
        (false, Some(cpsat), Some(result)) => (
            result.elapsed.as_secs_f64(),
            (cpsat.deterministic_time * crate::cpsat::NODES_PER_DETERMINISTIC_SECOND).round()
                as u64,
        ),
        _ => (stats.seconds, stats.nodes),
    };
    EvalRun {
        policy: if is_search {
            policy.to_string()
        } else {
            solver.algorithm_name().to_string()
        },
        problem: name.to_string(),
        status: result
            .as_ref()
            .map_or("invalid", |r| r.status.label())
            .to_string(),
        seconds,
        nodes,
        major_backtracks: stats.major_backtracks,
        buffers: problem.len(),
        deepest: stats.deepest,
    }
}

/// Runs every policy on every problem, `threads` runs at a time (each single-threaded), with
/// `solver`'s options and limits; the runs come policy by policy, problems in order. The search
/// itself is evaluated: pass a solver with `heuristic-first` off to keep the baselines out.
/// `on_done` sees each run as it finishes (in finishing order), e.g. to save it at once.
pub fn evaluate(
    problems: &[(String, Problem)],
    policies: &[PolicySpec],
    solver: &Solver,
    threads: usize,
    on_done: &(dyn Fn(&EvalRun) + Sync),
) -> Result<Vec<EvalRun>, String> {
    for policy in policies {
        // A model file that cannot be used stops the evaluation before its first run.
        solver
            .clone()
            .policy(policy.clone())
            .check_available()
            .map_err(|e| e.to_string())?;
    }
    let jobs: Vec<(usize, &PolicySpec)> = policies
        .iter()
        .flat_map(|p| (0..problems.len()).map(move |i| (i, p)))
        .collect();
    run_parallel(&jobs, threads, &|| {}, |&(i, policy)| {
        let (name, problem) = &problems[i];
        let run = run_policy(problem, name, policy, solver);
        on_done(&run);
        run
    })
}

/// A policy's totals over the runs.
#[derive(Clone, Debug, Serialize)]
pub struct PolicySummary {
    /// The policy.
    pub policy: String,
    /// Problems run.
    pub problems: usize,
    /// Problems decided (solved or proven infeasible) within the limit.
    pub decided: usize,
    /// Median seconds over the decided problems.
    pub median_seconds: f64,
    /// 90th-percentile seconds over the decided problems.
    pub p90_seconds: f64,
    /// Median nodes over the decided problems.
    pub median_nodes: u64,
    /// 90th-percentile nodes over the decided problems.
    pub p90_nodes: u64,
    /// Total seconds over all runs (limits included).
    pub total_seconds: f64,
    /// Total major backtracks.
    pub major_backtracks: u64,
}

fn percentile<T: Copy + PartialOrd>(sorted: &[T], p: f64) -> Option<T> {
    if sorted.is_empty() {
        return None;
    }
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    Some(sorted[index])
}

/// Summarises the runs of each policy, in the order the policies first appear.
pub fn summarise(runs: &[EvalRun]) -> Vec<PolicySummary> {
    let mut policies: Vec<&str> = Vec::new();
    for r in runs {
        if !policies.contains(&r.policy.as_str()) {
            policies.push(&r.policy);
        }
    }
    policies
        .into_iter()
        .map(|policy| {
            let mine: Vec<&EvalRun> = runs.iter().filter(|r| r.policy == policy).collect();
            let decided: Vec<&&EvalRun> = mine.iter().filter(|r| r.decided()).collect();
            let mut seconds: Vec<f64> = decided.iter().map(|r| r.seconds).collect();
            seconds.sort_by(f64::total_cmp);
            let mut nodes: Vec<u64> = decided.iter().map(|r| r.nodes).collect();
            nodes.sort_unstable();
            PolicySummary {
                policy: policy.to_string(),
                problems: mine.len(),
                decided: decided.len(),
                median_seconds: percentile(&seconds, 0.5).unwrap_or(0.0),
                p90_seconds: percentile(&seconds, 0.9).unwrap_or(0.0),
                median_nodes: percentile(&nodes, 0.5).unwrap_or(0),
                p90_nodes: percentile(&nodes, 0.9).unwrap_or(0),
                total_seconds: mine.iter().map(|r| r.seconds).sum(),
                major_backtracks: mine.iter().map(|r| r.major_backtracks).sum(),
            }
        })
        .collect()
}

/// A policy against a reference policy on the problems both decide.
#[derive(Clone, Debug, Serialize)]
pub struct PairedSummary {
    /// The policy.
    pub policy: String,
    /// The reference policy.
    pub reference: String,
    /// Problems both decide.
    pub both: usize,
    /// The policy's median nodes on them.
    pub median_nodes: u64,
    /// The reference's median nodes on them.
    pub reference_median_nodes: u64,
    /// Median over those problems of reference nodes / policy nodes (above 1: fewer nodes).
    pub median_node_ratio: f64,
    /// Problems on which the reference never backtracked (nodes at most the buffers): no
    /// policy can need fewer nodes there.
    pub reference_first_dive: usize,
    /// The policy's total seconds on them.
    pub seconds: f64,
    /// The reference's total seconds on them.
    pub reference_seconds: f64,
}

/// Each policy after the first against the first, on the problems both decide.
pub fn paired(runs: &[EvalRun]) -> Vec<PairedSummary> {
    let summaries = summarise(runs);
    let Some(reference) = summaries.first().map(|s| s.policy.clone()) else {
        return Vec::new();
    };
    let of = |policy: &str| -> std::collections::BTreeMap<&str, &EvalRun> {
        runs.iter()
            .filter(|r| r.policy == policy && r.decided())
            .map(|r| (r.problem.as_str(), r))
            .collect()
    };
    let base = of(&reference);
    summaries[1..]
        .iter()
        .map(|s| {
            let mine = of(&s.policy);
            let pairs: Vec<(&EvalRun, &EvalRun)> = mine
                .iter()
                .filter_map(|(p, r)| base.get(p).map(|b| (*r, *b)))
                .collect();
            let mut nodes: Vec<u64> = pairs.iter().map(|(r, _)| r.nodes).collect();
            let mut base_nodes: Vec<u64> = pairs.iter().map(|(_, b)| b.nodes).collect();
            let mut ratios: Vec<f64> = pairs
                .iter()
                .map(|(r, b)| b.nodes.max(1) as f64 / r.nodes.max(1) as f64)
                .collect();
            nodes.sort_unstable();
            base_nodes.sort_unstable();
            ratios.sort_by(f64::total_cmp);
            PairedSummary {
                policy: s.policy.clone(),
                reference: reference.clone(),
                both: pairs.len(),
                median_nodes: percentile(&nodes, 0.5).unwrap_or(0),
                reference_median_nodes: percentile(&base_nodes, 0.5).unwrap_or(0),
                median_node_ratio: percentile(&ratios, 0.5).unwrap_or(1.0),
                reference_first_dive: pairs
                    .iter()
                    .filter(|(_, b)| b.nodes <= b.buffers as u64)
                    .count(),
                seconds: pairs.iter().map(|(r, _)| r.seconds).sum(),
                reference_seconds: pairs.iter().map(|(_, b)| b.seconds).sum(),
            }
        })
        .collect()
}

/// The paired comparisons as a Markdown table.
pub fn paired_markdown(pairs: &[PairedSummary]) -> String {
    let mut out = String::from(
        "| policy | vs | both decide | median nodes | vs median nodes | median node ratio (vs / policy) | vs never backtracked | total s | vs total s |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for p in pairs {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.2} | {} | {:.2} | {:.2} |\n",
            p.policy,
            p.reference,
            p.both,
            p.median_nodes,
            p.reference_median_nodes,
            p.median_node_ratio,
            p.reference_first_dive,
            p.seconds,
            p.reference_seconds
        ));
    }
    out
}

/// The summaries as a Markdown table.
pub fn summary_markdown(summaries: &[PolicySummary]) -> String {
    let mut out = String::from(
        "| policy | decided | median s | p90 s | median nodes | p90 nodes | total s | major backtracks |\n|---|---|---|---|---|---|---|---|\n",
    );
    for s in summaries {
        out.push_str(&format!(
            "| {} | {}/{} | {:.4} | {:.4} | {} | {} | {:.2} | {} |\n",
            s.policy,
            s.decided,
            s.problems,
            s.median_seconds,
            s.p90_seconds,
            s.median_nodes,
            s.p90_nodes,
            s.total_seconds,
            s.major_backtracks
        ));
    }
    out
}

/// An SVG "cactus" plot: for each policy, problems decided (up) against the time limit needed
/// (across, logarithmic).
pub fn cactus_svg(runs: &[EvalRun]) -> String {
    let summaries = summarise(runs);
    let (width, height, left, bottom, top, right) = (900.0, 520.0, 70.0, 60.0, 40.0, 160.0);
    let plot_w = width - left - right;
    let plot_h = height - top - bottom;
    let (t_min, t_max) = (1e-4_f64, runs.iter().map(|r| r.seconds).fold(1.0, f64::max));
    let x = |t: f64| left + plot_w * ((t.max(t_min) / t_min).ln() / (t_max / t_min).ln());
    let most = summaries
        .iter()
        .map(|s| s.problems)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let y = |n: f64| top + plot_h * (1.0 - n / most);
    let colours = [
        "#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
    ];
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>\n<text x=\"{left}\" y=\"24\" font-size=\"14\">problems decided within a time limit (of {most}), per policy</text>\n"
    );
    svg.push_str(&format!(
        "<line x1=\"{left}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"black\"/><line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{b}\" stroke=\"black\"/>\n",
        b = top + plot_h,
        r = left + plot_w
    ));
    let mut tick = t_min;
    while tick <= t_max * 1.0001 {
        let tx = x(tick);
        svg.push_str(&format!(
            "<line x1=\"{tx:.1}\" y1=\"{top}\" x2=\"{tx:.1}\" y2=\"{b}\" stroke=\"#eee\"/><text x=\"{tx:.1}\" y=\"{ty}\" text-anchor=\"middle\">{tick}</text>\n",
            b = top + plot_h,
            ty = top + plot_h + 18.0
        ));
        tick *= 10.0;
    }
    svg.push_str(&format!(
        "<text x=\"{cx}\" y=\"{ty}\" text-anchor=\"middle\">time limit (s, log scale)</text>\n",
        cx = left + plot_w / 2.0,
        ty = height - 15.0
    ));
    for k in 0..=4 {
        let n = most * k as f64 / 4.0;
        svg.push_str(&format!(
            "<text x=\"{tx}\" y=\"{ty:.1}\" text-anchor=\"end\">{n:.0}</text>\n",
            tx = left - 6.0,
            ty = y(n) + 4.0
        ));
    }
    for (i, s) in summaries.iter().enumerate() {
        let colour = colours[i % colours.len()];
        let mut times: Vec<f64> = runs
            .iter()
            .filter(|r| r.policy == s.policy && r.decided())
            .map(|r| r.seconds)
            .collect();
        times.sort_by(f64::total_cmp);
        let mut points = format!("{:.1},{:.1}", x(t_min), y(0.0));
        for (k, t) in times.iter().enumerate() {
            points.push_str(&format!(
                " {:.1},{:.1} {:.1},{:.1}",
                x(*t),
                y(k as f64),
                x(*t),
                y(k as f64 + 1.0)
            ));
        }
        points.push_str(&format!(" {:.1},{:.1}", x(t_max), y(times.len() as f64)));
        svg.push_str(&format!(
            "<polyline points=\"{points}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"/>\n<text x=\"{lx}\" y=\"{ly}\" fill=\"{colour}\">{} ({}/{})</text>\n",
            s.policy,
            s.decided,
            s.problems,
            lx = left + plot_w + 10.0,
            ly = top + 16.0 * (i as f64 + 1.0)
        ));
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(policy: &str, problem: &str, status: &str, nodes: u64) -> EvalRun {
        EvalRun {
            policy: policy.into(),
            problem: problem.into(),
            status: status.into(),
            seconds: nodes as f64 / 1000.0,
            nodes,
            major_backtracks: 0,
            buffers: 10,
            deepest: 0,
        }
    }

    #[test]
    fn paired_compares_on_problems_both_decide() {
        let runs = vec![
            run("fixed", "a", "solved", 10),
            run("fixed", "b", "solved", 400),
            run("fixed", "c", "limit", 9000),
            run("fixed", "d", "infeasible", 80),
            run("learned", "a", "solved", 10),
            run("learned", "b", "solved", 100),
            run("learned", "c", "solved", 50),
            run("learned", "d", "limit", 9000),
        ];
        let pairs = paired(&runs);
        assert_eq!(pairs.len(), 1);
        let p = &pairs[0];
        assert_eq!(
            (p.policy.as_str(), p.reference.as_str()),
            ("learned", "fixed")
        );
        // Only a and b are decided by both.
        assert_eq!(p.both, 2);
        assert_eq!(p.reference_first_dive, 1);
        // Ratios 1 and 4; the upper median of two.
        assert_eq!(p.median_node_ratio, 4.0);
        assert_eq!((p.median_nodes, p.reference_median_nodes), (100, 400));
        assert!((p.seconds - 0.11).abs() < 1e-9 && (p.reference_seconds - 0.41).abs() < 1e-9);
        assert!(paired_markdown(&pairs).contains("| learned | fixed | 2 |"));
    }
}
