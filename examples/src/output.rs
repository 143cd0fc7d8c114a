//! Standard output for command-line tools that may be piped into `head`, `grep -q` or a
//! closed terminal.
//!
//! Rust's `println!` panics when standard output is a closed pipe. [`outln!`](crate::outln)
//! and [`write_out`] write through a handler instead: a closed pipe (`BrokenPipe`) ends the
//! process quietly with exit code 0, as most command-line tools do when their reader has
//! gone; any other write error is reported on standard error and ends the process with exit
//! code 1.

use std::io::{self, Write};

/// Writes `text` to standard output as is.
///
/// On a closed pipe the process exits with code 0; on another write error it prints the error
/// and exits with code 1.
pub fn write_out(text: &str) {
    let mut out = io::stdout().lock();
    let result = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    handle(result);
}

/// Writes one formatted line to standard output (the engine of [`outln!`](crate::outln)).
pub fn write_line(args: std::fmt::Arguments<'_>) {
    let mut out = io::stdout().lock();
    let result = out
        .write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    handle(result);
}

fn handle(result: io::Result<()>) {
    match result {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            let _ = writeln!(io::stderr(), "error: cannot write to standard output: {e}");
            std::process::exit(1);
        }
    }
}

/// Runs a demo binary's `run` and reports it the same way for every demo: `<name> finished in
/// <elapsed>` on standard output, or `<name> failed: <error>` on standard error, with exit
/// code 0 or 1.
///
/// ```
/// async fn demo() -> std::process::ExitCode {
///     ocm_examples::output::run_demo("demo", async { Ok::<(), String>(()) }).await
/// }
/// ```
pub async fn run_demo<E: std::fmt::Display>(
    name: &str,
    run: impl std::future::Future<Output = Result<(), E>>,
) -> std::process::ExitCode {
    let start = std::time::Instant::now();
    match run.await {
        Ok(()) => {
            write_line(format_args!("\n{name} finished in {:.2?}", start.elapsed()));
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(io::stderr(), "{name} failed: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// `println!` that ends the process quietly when standard output is a closed pipe.
///
/// ```
/// ocm_examples::outln!("{} clusters", 3);
/// ```
#[macro_export]
macro_rules! outln {
    () => {
        $crate::output::write_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::output::write_line(format_args!($($arg)*))
    };
}
