//! The `telamalloc` command-line tool: a thin layer over the library.

mod cli;

use std::any::Any;
use std::io::Write;

/// The exit code of a command whose reader closed its standard output early (e.g.
/// `telamalloc stats ... | head`): 128 + SIGPIPE, what a Unix tool ended by the signal reports.
const EXIT_BROKEN_PIPE: i32 = 141;

fn main() {
    // Rust ignores SIGPIPE, so printing to a closed pipe panics, and so does printing to a full
    // disk. A closed pipe means the reader wants no more: stop quietly, as Unix tools do. Any
    // other failure to write standard output is an error of the output, said as such (exit 2),
    // never a panic.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if stdout_failure(info.payload()).is_none() {
            report(info);
        }
    }));
    let code = match std::panic::catch_unwind(cli::run) {
        Ok(code) => std::io::stdout()
            .flush()
            .map_or_else(|e| cannot_write(&e.to_string()), |()| code),
        Err(payload) => match stdout_failure(payload.as_ref()) {
            Some(why) => cannot_write(why),
            None => std::panic::resume_unwind(payload),
        },
    };
    std::process::exit(code)
}

/// The exit code for a failure to write standard output: [`EXIT_BROKEN_PIPE`] for a closed
/// pipe, else 2 (bad input or I/O) after saying why on standard error.
fn cannot_write(why: &str) -> i32 {
    if why.contains("Broken pipe") {
        return EXIT_BROKEN_PIPE;
    }
    eprintln!("error: cannot write standard output: {why}");
    cli::EXIT_BAD_INPUT
}

/// Why `print!` failed, if a panic is its failure to write standard output.
fn stdout_failure(payload: &(dyn Any + Send)) -> Option<&str> {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())?;
    message.strip_prefix("failed printing to stdout: ")
}
