//! Log capture for tests that assert on what a controller logs (the same capture as ocm-work's tests use).
//!
//! A scoped subscriber (`tracing::subscriber::set_default`) is not reliable in a test binary
//! that runs several tests at once: tracing caches, per call site, whether anyone is
//! interested in it, and when only one scoped subscriber is alive a call site first reached on
//! another thread (a test without a subscriber) is cached as uninteresting for every thread.
//! The test holding the subscriber then silently sees nothing (this happened in CI).
//!
//! So this module installs one process-wide subscriber, once, whose filter admits an event
//! only when the current thread has a capture open. Its call sites are therefore cached as
//! "ask each time", never as "never", and each test reads only the lines written on its own
//! thread. Tests that capture run on a current-thread runtime, so every task they spawn logs
//! on their thread.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, OnceLock};

use tracing_subscriber::filter::{LevelFilter, dynamic_filter_fn};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::{Layer, Registry};

thread_local! {
    static SINK: RefCell<Option<Logs>> = const { RefCell::new(None) };
}

/// What was logged (INFO and above) on the capturing thread, as the `fmt` subscriber prints it
/// without colour.
#[derive(Clone, Default)]
pub struct Logs(Arc<Mutex<Vec<u8>>>);

impl Logs {
    /// Everything captured so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    /// The captured lines at WARN.
    pub fn warnings(&self) -> Vec<String> {
        self.text()
            .lines()
            .filter(|l| l.contains("WARN"))
            .map(str::to_string)
            .collect()
    }
}

/// Ends the capture of the thread that opened it when dropped.
pub struct Capture {
    logs: Logs,
}

impl Capture {
    /// The captured output.
    pub fn logs(&self) -> &Logs {
        &self.logs
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        SINK.with(|s| s.borrow_mut().take());
    }
}

/// Starts capturing this thread's log output.
pub fn capture() -> Capture {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let layer = tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(|| SinkWriter(SINK.with(|s| s.borrow().clone())))
            .with_filter(LevelFilter::INFO)
            .with_filter(dynamic_filter_fn(|_, _| {
                SINK.with(|s| s.borrow().is_some())
            }));
        tracing::subscriber::set_global_default(Registry::default().with(layer))
            .expect("no other global subscriber in this test binary");
        // Building the subscriber recomputed every known call site's interest, but a call
        // site first reached on another thread before the global default was in place was
        // decided by that thread's empty default: recompute once more now that it is.
        tracing::callsite::rebuild_interest_cache();
    });
    let logs = Logs::default();
    SINK.with(|s| *s.borrow_mut() = Some(logs.clone()));
    Capture { logs }
}

/// The writer of the process-wide subscriber: the current thread's capture, if any.
struct SinkWriter(Option<Logs>);

impl std::io::Write for SinkWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(logs) = &self.0 {
            logs.0.lock().unwrap().extend_from_slice(buf);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
