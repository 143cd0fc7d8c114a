//! Liveness and readiness checks, answered on `/healthz` and `/readyz`
//! ([`crate::runtime::server`]).
//!
//! `/healthz` answers while the process serves requests (its runtime is alive), shutdown
//! included, so Kubernetes does not kill a replica that is finishing its work. `/readyz`
//! answers 200 once every readiness check passes; for the binaries that is [`leader_ready`]
//! (or [`leader_ready_with`]): a standby replica is ready (it is healthy and waiting), the
//! leader once its informers have listed (the work agent: and while they hear from their
//! servers, see [`WorkAgent::readiness`](crate::agent::WorkAgent::readiness)).
//!
//! A failing check answers 503 with one line per check, in kube-apiserver's style:
//!
//! ```text
//! [+]leader ok
//! [-]informers failed: the ManifestWork and AppliedManifestWork informers have not listed yet
//! readyz check failed
//! ```

use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::runtime::leader::LeaderState;

/// A check: `Ok` or why not.
pub type Check = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// The checks of a process. Cloning shares them.
#[derive(Clone, Default)]
pub struct Health {
    liveness: Arc<Mutex<Vec<(String, Check)>>>,
    readiness: Arc<Mutex<Vec<(String, Check)>>>,
}

impl std::fmt::Debug for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = |list: &Mutex<Vec<(String, Check)>>| -> Vec<String> {
            lock(list).iter().map(|(n, _)| n.clone()).collect()
        };
        f.debug_struct("Health")
            .field("liveness", &names(&self.liveness))
            .field("readiness", &names(&self.readiness))
            .finish()
    }
}

fn lock(list: &Mutex<Vec<(String, Check)>>) -> std::sync::MutexGuard<'_, Vec<(String, Check)>> {
    list.lock().unwrap_or_else(|e| e.into_inner())
}

/// The result of running checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// Whether every check passed.
    pub ok: bool,
    /// `ok`, or one `[+]`/`[-]` line per check and a last line naming the endpoint.
    pub text: String,
}

impl Health {
    /// No checks: live and ready.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a liveness check (`/healthz`).
    pub fn liveness_check(
        &self,
        name: impl Into<String>,
        check: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) {
        lock(&self.liveness).push((name.into(), Arc::new(check)));
    }

    /// Adds a readiness check (`/readyz`).
    pub fn readiness_check(
        &self,
        name: impl Into<String>,
        check: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) {
        lock(&self.readiness).push((name.into(), Arc::new(check)));
    }

    /// Runs the liveness checks.
    pub fn live(&self) -> Report {
        run(&self.liveness, "healthz")
    }

    /// Runs the readiness checks.
    pub fn ready(&self) -> Report {
        run(&self.readiness, "readyz")
    }
}

fn run(list: &Mutex<Vec<(String, Check)>>, endpoint: &str) -> Report {
    let checks: Vec<(String, Check)> = lock(list).clone();
    let results: Vec<(String, Result<(), String>)> = checks
        .into_iter()
        .map(|(name, check)| (name, check()))
        .collect();
    if results.iter().all(|(_, r)| r.is_ok()) {
        return Report {
            ok: true,
            text: "ok".into(),
        };
    }
    let mut text = String::new();
    for (name, result) in &results {
        match result {
            Ok(()) => text.push_str(&format!("[+]{name} ok\n")),
            Err(why) => text.push_str(&format!("[-]{name} failed: {why}\n")),
        }
    }
    text.push_str(&format!("{endpoint} check failed\n"));
    Report { ok: false, text }
}

/// The binaries' readiness: a standby replica is ready; the leader (or a replica without
/// leader election: `state` is `None`) once `synced` says its informers have listed; a
/// replica whose election is over (shutting down, or leadership lost) is not ready.
pub fn leader_ready(
    state: Option<watch::Receiver<LeaderState>>,
    synced: impl Fn() -> bool + Send + Sync + 'static,
    what: &'static str,
) -> impl Fn() -> Result<(), String> + Send + Sync + 'static {
    leader_ready_with(state, move || {
        if synced() {
            Ok(())
        } else {
            Err(format!("{what} have not listed yet"))
        }
    })
}

/// [`leader_ready`] with the leader's own check: a standby replica is ready; the leader (or a
/// replica without leader election: `state` is `None`) when `ready` passes (the work agent's
/// is [`WorkAgent::readiness`](crate::agent::WorkAgent::readiness)), with its reason when it
/// does not; a replica whose election is over is not ready.
pub fn leader_ready_with(
    state: Option<watch::Receiver<LeaderState>>,
    ready: impl Fn() -> Result<(), String> + Send + Sync + 'static,
) -> impl Fn() -> Result<(), String> + Send + Sync + 'static {
    move || {
        if let Some(state) = &state {
            match *state.borrow() {
                LeaderState::Standby => return Ok(()),
                LeaderState::Leading => {}
                _ => return Err("leader election is over for this replica".into()),
            }
        }
        ready()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn checks_report_like_kube_apiserver() {
        let health = Health::new();
        assert_eq!(health.ready().text, "ok");
        health.readiness_check("always", || Ok(()));
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        health.readiness_check("informers", move || {
            if f.load(Ordering::SeqCst) {
                Ok(())
            } else {
                Err("not synced".into())
            }
        });
        let report = health.ready();
        assert!(!report.ok);
        assert_eq!(
            report.text,
            "[+]always ok\n[-]informers failed: not synced\nreadyz check failed\n"
        );
        flag.store(true, Ordering::SeqCst);
        assert_eq!(
            health.ready(),
            Report {
                ok: true,
                text: "ok".into()
            }
        );
        assert!(health.live().ok);
    }

    #[test]
    fn standby_is_ready_and_the_leader_once_synced() {
        let (tx, rx) = watch::channel(LeaderState::Standby);
        let synced = Arc::new(AtomicBool::new(false));
        let s = synced.clone();
        let check = leader_ready(Some(rx), move || s.load(Ordering::SeqCst), "informers");
        assert_eq!(check(), Ok(()), "standby");
        tx.send_replace(LeaderState::Leading);
        assert_eq!(check(), Err("informers have not listed yet".into()));
        synced.store(true, Ordering::SeqCst);
        assert_eq!(check(), Ok(()));
        tx.send_replace(LeaderState::Stopped);
        assert!(check().is_err());
        let without_election = leader_ready(None, || true, "informers");
        assert_eq!(without_election(), Ok(()));
    }

    #[test]
    fn the_leaders_own_check_gives_its_reason() {
        let (tx, rx) = watch::channel(LeaderState::Standby);
        let check = leader_ready_with(Some(rx), || Err("the hub has not answered".into()));
        assert_eq!(check(), Ok(()), "standby");
        tx.send_replace(LeaderState::Leading);
        assert_eq!(check(), Err("the hub has not answered".into()));
        tx.send_replace(LeaderState::Stopped);
        assert_eq!(
            check(),
            Err("leader election is over for this replica".into())
        );
        assert_eq!(leader_ready_with(None, || Ok(()))(), Ok(()));
    }
}
