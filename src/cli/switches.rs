//! `telamalloc switches`: every search technique switch (`--no NAME`, `--with NAME`), grouped by
//! the layer that reads it, whether it is on by default, what it does and when to flip it.

use super::{CliError, EXIT_SOLVED};
use clap::Args;
use std::io::Write;
use telamalloc::search::{LAYERS, SWITCHES};
use telamalloc::SearchOptions;

#[derive(Args)]
pub struct SwitchesArgs {}

/// The width the list is wrapped to.
const COLUMNS: usize = 100;

/// `lead` then `words`, wrapped at `columns` with later lines indented under the first word.
fn wrapped(lead: &str, words: &str, columns: usize) -> String {
    let indent = " ".repeat(lead.len());
    let mut out = String::new();
    let mut line = lead.to_string();
    let mut empty = true;
    for word in words.split_whitespace() {
        if !empty && line.len() + 1 + word.len() > columns {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.clone();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

/// The list: per layer a heading, then one block per switch: its name, `on` or `off` by
/// default, its one-line help and, after `When:`, when a user would flip it.
fn list() -> String {
    let defaults = SearchOptions::default();
    let width = SWITCHES.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let mut text = String::new();
    for (i, layer) in LAYERS.into_iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(layer.title());
        text.push('\n');
        for switch in SWITCHES.iter().filter(|s| s.layer == layer) {
            let state = match defaults.get(switch.name) {
                Some(true) => "on ",
                _ => "off",
            };
            let lead = format!("  {:width$}  {state}  ", switch.name);
            let words = format!("{}. When: {}.", switch.help, switch.when);
            text.push_str(&wrapped(&lead, &words, COLUMNS));
        }
    }
    text
}

/// Prints the list.
pub fn run(_args: SwitchesArgs) -> Result<i32, CliError> {
    let text = list();
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(CliError::Usage(format!("cannot write the switches: {e}")))
        }
        _ => Ok(EXIT_SOLVED),
    }
}
