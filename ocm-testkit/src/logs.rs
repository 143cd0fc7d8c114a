//! The SDK's logs in tests: see them ([`show`]) or assert on them ([`capture`]).
//!
//! The SDK logs with `tracing`. A test binary has one process-wide subscriber at most; this
//! module installs it the first time either function is called, and both work side by side.
//!
//! * [`show`]: every event at `RUST_LOG`'s levels (INFO when unset) is printed through
//!   libtest's capture, so a failing test shows what the controllers said and a passing one
//!   stays quiet (`cargo test -- --nocapture` prints everything).
//! * [`capture`]: the events logged on the current thread at INFO and above, as text, until
//!   the returned [`Capture`] is dropped. Run the test on a current-thread runtime
//!   (`#[tokio::test]`'s default) so that the tasks it spawns log on its thread.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! ocm_testkit::logs::show();
//! let capture = ocm_testkit::logs::capture();
//! tracing::warn!(placement = "p1", "the placement cannot be decoded");
//! tracing::debug!("not captured: below INFO");
//! let warnings = capture.logs().warnings();
//! assert_eq!(warnings.len(), 1);
//! assert!(warnings[0].contains("the placement cannot be decoded"));
//! # }
//! ```
//!
//! # Why a process-wide subscriber
//!
//! A scoped subscriber (`tracing::subscriber::set_default`) is not reliable when several
//! tests of one binary run at once: tracing caches, per call site, whether any subscriber is
//! interested, and while a single scoped subscriber is alive a call site first reached on a
//! thread without one is cached as uninteresting for every thread, so the capturing test
//! sees nothing. The filters here decide per event (whether the thread captures, whether
//! showing is on), so no call site is ever cached as "never".
//!
//! If the binary already has a global subscriber of its own, [`show`] leaves it alone and
//! [`capture`] panics saying so (it cannot see events another subscriber takes).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tracing_subscriber::filter::{EnvFilter, LevelFilter, dynamic_filter_fn};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::{Layer, Registry};

thread_local! {
    static SINK: RefCell<Option<Logs>> = const { RefCell::new(None) };
}

/// Whether [`show`] was called.
static SHOW: AtomicBool = AtomicBool::new(false);

/// What was logged (INFO and above) on a capturing thread, as tracing's `fmt` subscriber
/// prints it, without colour.
#[derive(Debug, Clone, Default)]
pub struct Logs(Arc<Mutex<Vec<u8>>>);

impl Logs {
    /// Everything captured so far.
    pub fn text(&self) -> String {
        let bytes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The captured lines logged at WARN.
    pub fn warnings(&self) -> Vec<String> {
        self.lines_at("WARN")
    }

    /// The captured lines logged at ERROR.
    pub fn errors(&self) -> Vec<String> {
        self.lines_at("ERROR")
    }

    fn lines_at(&self, level: &str) -> Vec<String> {
        self.text()
            .lines()
            .filter(|l| l.split_whitespace().nth(1) == Some(level))
            .map(str::to_string)
            .collect()
    }
}

/// A capture of the current thread's log events; it ends when dropped.
#[derive(Debug)]
pub struct Capture {
    logs: Logs,
}

impl Capture {
    /// What was captured so far.
    pub fn logs(&self) -> &Logs {
        &self.logs
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        SINK.with(|s| s.borrow_mut().take());
    }
}

/// Starts capturing the events logged on this thread at INFO and above (see the
/// [module docs](self)). A second capture on the same thread replaces the first.
///
/// # Panics
///
/// When the process already has a global `tracing` subscriber that is not this module's.
pub fn capture() -> Capture {
    assert!(
        install(),
        "ocm_testkit::logs::capture: this test binary already has a global tracing subscriber \
         of its own, which would take the events to capture; use ocm_testkit::logs::show \
         instead of installing one"
    );
    let logs = Logs::default();
    SINK.with(|s| *s.borrow_mut() = Some(logs.clone()));
    Capture { logs }
}

/// Shows the SDK's logs in the test output from now on, at the levels `RUST_LOG` names (INFO
/// when it is unset or does not parse). Safe to call from every test; a binary with a global
/// subscriber of its own keeps it.
pub fn show() {
    if install() {
        SHOW.store(true, Ordering::Relaxed);
    }
}

/// Installs the process-wide subscriber once; whether it is this module's.
fn install() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        let captured = tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(|| SinkWriter(SINK.with(|s| s.borrow().clone())))
            .with_filter(LevelFilter::INFO)
            .with_filter(dynamic_filter_fn(|_, _| {
                SINK.with(|s| s.borrow().is_some())
            }));
        let levels = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
        let shown = tracing_subscriber::fmt::layer()
            .with_test_writer()
            .with_filter(levels)
            .with_filter(dynamic_filter_fn(|_, _| SHOW.load(Ordering::Relaxed)));
        let installed =
            tracing::subscriber::set_global_default(Registry::default().with(captured).with(shown))
                .is_ok();
        // Building the subscriber recomputed the interest of every call site seen so far, but
        // one first reached on another thread before the global default was in place was
        // decided by that thread's empty default: recompute once more now that it is.
        tracing::callsite::rebuild_interest_cache();
        installed
    })
}

/// The writer of the capturing layer: the current thread's capture, if any.
struct SinkWriter(Option<Logs>);

impl std::io::Write for SinkWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(logs) = &self.0 {
            logs.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
