//! `telamalloc-train replay`: what round robins of strategies would decide, replayed from
//! strategy races (`telamalloc eval --policies S1,S2,... --nodes N`, each strategy alone) instead
//! of run. Exact, because each strategy's runs in a round robin are its runs alone
//! (`crate::schedule`); a round robin is written as `--policy` takes it (`TWA/TWA~/TWA+`), with
//! `NAME*W` for `W` runs of that strategy per round.
//!
//! ```sh
//! cargo run --release -- replay --runs ../logs/races/effort-validation/eval.json \
//!     --schedules 'fixed/WAT/TAW/TWA,TWA/TWA~/TWA+' --nodes 50000 \
//!     --manifest ../datasets/splits/effort-validation-manifest.csv
//! ```

use crate::schedule::{read_runs, replay, Race};
use clap::Parser;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Replays round robins over strategy races and prints what each decides.
#[derive(Parser, Debug)]
#[command(bin_name = "telamalloc-train replay")]
pub struct ReplayArgs {
    /// `eval.json` files of strategy races (comma-separated); together they give each problem
    /// its strategies' runs.
    #[arg(long, required = true, value_delimiter = ',')]
    runs: Vec<PathBuf>,
    /// Round robins to replay (comma-separated): strategies joined by `/`, each optionally
    /// `NAME*W` for `W` runs per round (e.g. `fixed/WAT/TAW/TWA`, `TWA*2/TWA~/TWA+`).
    #[arg(long, required = true, value_delimiter = ',')]
    schedules: Vec<String>,
    /// The node limit of every replay (at most the limit the races ran to).
    #[arg(long)]
    nodes: u64,
    /// Manifests (`file` and `family` columns) to break the counts down by family.
    #[arg(long, value_delimiter = ',')]
    manifest: Vec<PathBuf>,
}

/// One round robin: its strategies and their runs per round.
struct Schedule {
    name: String,
    strategies: Vec<String>,
    weights: Vec<u32>,
}

fn parse_schedule(text: &str) -> Result<Schedule, String> {
    let mut strategies = Vec::new();
    let mut weights = Vec::new();
    for member in text.split('/') {
        let (name, weight) = match member.split_once('*') {
            Some((name, w)) => (
                name,
                w.parse::<u32>()
                    .ok()
                    .filter(|w| (1..=64).contains(w))
                    .ok_or_else(|| format!("'{member}': a weight is a whole number 1 to 64"))?,
            ),
            None => (member, 1),
        };
        if name.is_empty() || strategies.iter().any(|s| s == name) {
            return Err(format!("'{text}': empty or repeated strategy"));
        }
        strategies.push(name.to_string());
        weights.push(weight);
    }
    Ok(Schedule {
        name: text.to_string(),
        strategies,
        weights,
    })
}

/// Per problem: its free buffers and, per strategy raced on it, its nodes if it decided.
type Races = BTreeMap<String, (usize, BTreeMap<String, Option<u64>>)>;

/// Reads the races; also returns, per strategy, the most nodes a run that did not decide took
/// (where its race stopped).
fn read(files: &[PathBuf]) -> Result<(Races, BTreeMap<String, u64>), String> {
    let mut races = Races::new();
    let mut stopped_at: BTreeMap<String, u64> = BTreeMap::new();
    for r in read_runs(files)? {
        let decided = r.decided();
        if !decided {
            let limit = stopped_at.entry(r.policy.clone()).or_insert(0);
            *limit = (*limit).max(r.nodes);
        }
        let entry = races
            .entry(r.problem)
            .or_insert((r.buffers, BTreeMap::new()));
        entry.1.insert(r.policy, decided.then_some(r.nodes.max(1)));
    }
    Ok((races, stopped_at))
}

/// Decided problems and the sum of PAR2 nodes over the problems `names`, for `schedule`;
/// `None` for the problems where one of its strategies has no race.
fn replay_on<'a>(
    schedule: &Schedule,
    races: &Races,
    names: impl Iterator<Item = &'a String>,
    cap: u64,
) -> (usize, usize, f64) {
    let (mut decided, mut count, mut total) = (0, 0, 0.0);
    for name in names {
        let (buffers, by_strategy) = &races[name];
        let nodes: Option<Vec<Option<u64>>> = schedule
            .strategies
            .iter()
            .map(|s| by_strategy.get(s).copied())
            .collect();
        let Some(nodes) = nodes else { continue };
        count += 1;
        let race = Race {
            buffers: *buffers,
            nodes: &nodes,
        };
        let order: Vec<usize> = (0..nodes.len()).collect();
        match replay(&race, &order, &schedule.weights, cap) {
            Some(n) => {
                decided += 1;
                total += n as f64;
            }
            None => total += 2.0 * cap as f64,
        }
    }
    (decided, count, total)
}

fn families(manifests: &[PathBuf]) -> Result<BTreeMap<String, String>, String> {
    let mut family_of = BTreeMap::new();
    for path in manifests {
        for row in crate::data::manifest_rows(path, &["file", "family"])? {
            if let (Some(file), Some(family)) = (row.get("file"), row.get("family")) {
                let base = file.rsplit('/').next().unwrap_or(file);
                family_of.insert(base.to_string(), family.clone());
            }
        }
    }
    Ok(family_of)
}

pub fn run(args: ReplayArgs) -> Result<(), String> {
    let schedules: Vec<Schedule> = args
        .schedules
        .iter()
        .map(|s| parse_schedule(s))
        .collect::<Result<_, _>>()?;
    let (races, stopped_at) = read(&args.runs)?;
    for schedule in &schedules {
        for s in &schedule.strategies {
            match stopped_at.get(s) {
                Some(&limit) if limit < args.nodes => {
                    return Err(format!(
                        "the races of {s} stop at {limit} nodes, below --nodes {}: a replay \
                         beyond them would not be exact",
                        args.nodes
                    ))
                }
                _ if !races.values().any(|(_, by)| by.contains_key(s)) => {
                    return Err(format!("no race of '{s}' in --runs"))
                }
                _ => {}
            }
        }
    }
    println!(
        "| round robin ({} nodes) | decided | problems | mean PAR2 nodes |",
        args.nodes
    );
    println!("|---|---|---|---|");
    for schedule in &schedules {
        let (decided, count, total) = replay_on(schedule, &races, races.keys(), args.nodes);
        println!(
            "| `{}` | {decided} | {count} | {:.0} |",
            schedule.name,
            total / count.max(1) as f64
        );
    }
    if args.manifest.is_empty() {
        return Ok(());
    }
    let family_of = families(&args.manifest)?;
    let mut by_family: BTreeMap<&str, Vec<&String>> = BTreeMap::new();
    for name in races.keys() {
        let family = family_of.get(name).map_or("(no family)", String::as_str);
        by_family.entry(family).or_default().push(name);
    }
    println!();
    let names: Vec<String> = schedules.iter().map(|s| format!("`{}`", s.name)).collect();
    println!("| family | problems | {} |", names.join(" | "));
    println!("|---|---|{}", "---|".repeat(schedules.len()));
    for (family, names) in &by_family {
        let cells: Vec<String> = schedules
            .iter()
            .map(|s| {
                let (decided, _, _) = replay_on(s, &races, names.iter().copied(), args.nodes);
                decided.to_string()
            })
            .collect();
        println!("| {family} | {} | {} |", names.len(), cells.join(" | "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_parse_with_weights_and_refuse_repeats() {
        let s = parse_schedule("TWA*2/TWA~/TWA+").unwrap();
        assert_eq!(s.strategies, ["TWA", "TWA~", "TWA+"]);
        assert_eq!(s.weights, [2, 1, 1]);
        for bad in ["TWA/TWA", "TWA*0", "TWA*65", "TWA/", "TWA*x"] {
            assert!(parse_schedule(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_replay_counts_only_problems_every_strategy_raced() {
        let mut races = Races::new();
        let both = BTreeMap::from([("a".to_string(), Some(100)), ("b".to_string(), None)]);
        let only_a = BTreeMap::from([("a".to_string(), None)]);
        races.insert("p".into(), (16, both));
        races.insert("q".into(), (16, only_a));
        let ab = parse_schedule("a/b").unwrap();
        // p: 64 (a) + 64 (b), then a decides 36 nodes into its second run; q has no race of b.
        assert_eq!(replay_on(&ab, &races, races.keys(), 10_000), (1, 1, 164.0));
        let a = parse_schedule("a").unwrap();
        // p: 100 nodes; q: not decided, twice the limit.
        assert_eq!(
            replay_on(&a, &races, races.keys(), 10_000),
            (1, 2, 20_100.0)
        );
    }
}
