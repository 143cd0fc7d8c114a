//! Log set-up for the example binaries: `tracing` to standard error, filtered by `RUST_LOG`
//! (default `info`), with colour codes only when standard error is a terminal and `NO_COLOR`
//! is unset.

use std::io::IsTerminal;

/// Whether log lines should carry ANSI colour codes: standard error is a terminal and the
/// `NO_COLOR` convention (<https://no-color.org>) does not ask otherwise.
pub fn colour_wanted() -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::stderr().is_terminal()
}

/// Installs the global `tracing` subscriber: standard error, `RUST_LOG` or `default_filter`,
/// colour only on a terminal. Does nothing if a subscriber is already installed.
pub fn init(default_filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(colour_wanted())
        .with_env_filter(filter)
        .try_init();
}
