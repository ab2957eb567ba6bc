//! `telamalloc switches`: every search technique switch (`--no NAME`, `--with NAME`), whether it
//! is on by default, and what it does.

use super::{CliError, EXIT_SOLVED};
use clap::Args;
use std::io::Write;
use telamalloc::search::SWITCHES;
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

/// Prints one block per switch: its name, `on` or `off` by default, and its one-line help.
pub fn run(_args: SwitchesArgs) -> Result<i32, CliError> {
    let defaults = SearchOptions::default();
    let width = SWITCHES.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let mut text = String::new();
    for switch in &SWITCHES {
        let state = match defaults.get(switch.name) {
            Some(true) => "on ",
            _ => "off",
        };
        let lead = format!("{:width$}  {state}  ", switch.name);
        text.push_str(&wrapped(&lead, switch.help, COLUMNS));
    }
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
