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
    init_with_format(default_filter, LogFormat::Text);
}

/// How logs are written.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// One line per event for people (colours only on a terminal).
    #[default]
    Text,
    /// One JSON object per line with the fields of the event and of its innermost span
    /// (`cluster`, `work`, `placement`), for log collectors. Never coloured.
    Json,
}

/// The `--log-format` flag of the long-running binaries (`ocm-work-agent`,
/// `ocm-hub-controller`).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct LogArgs {
    /// Log format (logs go to standard error; the level comes from RUST_LOG, default info).
    #[arg(long, value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

impl LogArgs {
    /// Installs the global subscriber with this format and the `info` default level.
    pub fn init(&self) {
        init_with_format("info", self.log_format);
    }
}

/// [`init`] with a choice of format: text (colour only on a terminal) or JSON.
pub fn init_with_format(default_filter: &str, format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter));
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter);
    let _ = match format {
        LogFormat::Text => builder.with_ansi(colour_wanted()).try_init(),
        LogFormat::Json => builder
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .flatten_event(true)
            .try_init(),
    };
}
