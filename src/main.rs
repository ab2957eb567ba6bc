//! The `telamalloc` command-line tool: a thin layer over the library.

mod cli;

use std::any::Any;

/// The exit code of a command whose reader closed its standard output early (e.g.
/// `telamalloc stats ... | head`): 128 + SIGPIPE, what a Unix tool ended by the signal reports.
const EXIT_BROKEN_PIPE: i32 = 141;

fn main() {
    // Rust ignores SIGPIPE, so printing to a closed pipe panics. A closed pipe means the reader
    // wants no more: stop quietly, as Unix tools do, instead of printing a panic.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_broken_pipe(info.payload()) {
            report(info);
        }
    }));
    match std::panic::catch_unwind(cli::run) {
        Ok(code) => std::process::exit(code),
        Err(payload) if is_broken_pipe(payload.as_ref()) => std::process::exit(EXIT_BROKEN_PIPE),
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

/// Whether a panic is `print!`'s on a closed standard output.
fn is_broken_pipe(payload: &(dyn Any + Send)) -> bool {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    message.starts_with("failed printing to stdout") && message.contains("Broken pipe")
}
