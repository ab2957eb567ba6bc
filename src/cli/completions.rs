//! `telamalloc completions SHELL`: the shell completion script, generated from the command-line
//! definition by `clap_complete`.

use super::{CliError, EXIT_SOLVED};
use clap::{Args, CommandFactory};
use clap_complete::Shell;
use std::io::Write;

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: Shell,
}

/// Prints the completion script for the shell asked for. The script is generated in memory
/// first: `clap_complete` panics on a failed write, and a reader that stops early (`| head`) is
/// no error.
pub fn run(args: CompletionsArgs) -> Result<i32, CliError> {
    let mut script = Vec::new();
    clap_complete::generate(
        args.shell,
        &mut super::Cli::command(),
        "telamalloc",
        &mut script,
    );
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&script).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::Usage(format!(
            "cannot write the completion script: {e}"
        ))),
        _ => Ok(EXIT_SOLVED),
    }
}
