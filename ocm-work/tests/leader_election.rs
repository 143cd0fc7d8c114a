//! Leader election (`ocm_work::runtime::leader`) against ocm-testkit: one leader at a time,
//! hand-over when the leader dies (after the lease duration) or shuts down (at once), a
//! leader that cannot renew stops, and clock skew between holders changes nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, PostParams};
use ocm_testkit::wait::eventually;
use ocm_testkit::{FakeCluster, FaultRule};
use ocm_work::runtime::leader::{LeaderElectionConfig, LeaderElector, LeaderState, Outcome};
use ocm_work::runtime::shutdown::Shutdown;
use serde_json::json;

const NS: &str = "default";
const LEASE: &str = "test-lock";
const LEASE_DURATION: Duration = Duration::from_millis(1500);
const RENEW_DEADLINE: Duration = Duration::from_millis(1000);
const RETRY: Duration = Duration::from_millis(100);

fn config(identity: &str) -> LeaderElectionConfig {
    LeaderElectionConfig::new(NS, LEASE)
        .identity(identity)
        .durations(LEASE_DURATION, RENEW_DEADLINE, RETRY)
}

/// Counts replicas acting at once and the most ever seen.
#[derive(Default)]
struct Acting {
    now: AtomicUsize,
    max: AtomicUsize,
    starts: AtomicUsize,
}

impl Acting {
    async fn act(&self, leading: Shutdown) {
        let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(n, Ordering::SeqCst);
        self.starts.fetch_add(1, Ordering::SeqCst);
        leading.cancelled().await;
        self.now.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn holder(cluster: &FakeCluster) -> Option<String> {
    Api::<Lease>::namespaced(cluster.client(), NS)
        .get_opt(LEASE)
        .await
        .unwrap()
        .and_then(|l| l.spec)
        .and_then(|s| s.holder_identity)
}

fn spawn(
    cluster: &FakeCluster,
    identity: &str,
    acting: &Arc<Acting>,
) -> (
    Arc<LeaderElector>,
    Shutdown,
    tokio::task::JoinHandle<ocm_work::Result<Outcome>>,
) {
    spawn_with(cluster, config(identity), acting)
}

fn spawn_with(
    cluster: &FakeCluster,
    config: LeaderElectionConfig,
    acting: &Arc<Acting>,
) -> (
    Arc<LeaderElector>,
    Shutdown,
    tokio::task::JoinHandle<ocm_work::Result<Outcome>>,
) {
    let elector = Arc::new(LeaderElector::new(cluster.client(), config));
    let shutdown = Shutdown::new();
    let (e, s, a) = (elector.clone(), shutdown.clone(), acting.clone());
    let task = tokio::spawn(async move {
        e.run(&s, |leading| async move { a.act(leading).await })
            .await
    });
    (elector, shutdown, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_leader_and_a_dead_leader_is_replaced_after_the_lease_duration() {
    let cluster = FakeCluster::new();
    let acting = Arc::new(Acting::default());
    let (a, _a_stop, a_task) = spawn(&cluster, "a", &acting);
    assert!(
        eventually(Duration::from_secs(5), async || a.is_leader()).await,
        "the first candidate leads"
    );
    let (b, b_stop, b_task) = spawn(&cluster, "b", &acting);
    tokio::time::sleep(LEASE_DURATION * 2).await;
    assert!(
        a.is_leader() && !b.is_leader(),
        "b stands by while a renews"
    );
    assert_eq!(*b.state().borrow(), LeaderState::Standby);
    assert_eq!(holder(&cluster).await.as_deref(), Some("a"));

    // a dies without releasing.
    a_task.abort();
    let killed = Instant::now();
    assert!(
        eventually(Duration::from_secs(10), async || b.is_leader()).await,
        "b takes over"
    );
    let took = killed.elapsed();
    assert!(
        took >= LEASE_DURATION - RETRY * 3,
        "not before the lease duration: {took:?}"
    );
    assert!(
        took <= LEASE_DURATION + RETRY * 5 + Duration::from_millis(500),
        "within the lease duration (and a retry): {took:?}"
    );
    assert_eq!(holder(&cluster).await.as_deref(), Some("b"));
    let lease = Api::<Lease>::namespaced(cluster.client(), NS)
        .get(LEASE)
        .await
        .unwrap();
    assert_eq!(lease.spec.unwrap().lease_transitions, Some(1));
    // a's work was dropped with its task, so count starts: one each.
    assert_eq!(acting.starts.load(Ordering::SeqCst), 2);

    b_stop.cancel();
    assert_eq!(b_task.await.unwrap().unwrap(), Outcome::Released);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_shuts_down_releases_and_its_standby_takes_over_at_once() {
    // A lease duration far longer than the wait below: the standby can only become leader
    // in time because the lease was released, however slow the machine is.
    const LONG_LEASE: Duration = Duration::from_secs(60);
    let long = |identity: &str| {
        LeaderElectionConfig::new(NS, LEASE)
            .identity(identity)
            .durations(LONG_LEASE, Duration::from_secs(40), RETRY)
    };
    let cluster = FakeCluster::new();
    let acting = Arc::new(Acting::default());
    let (a, a_stop, a_task) = spawn_with(&cluster, long("a"), &acting);
    assert!(eventually(Duration::from_secs(5), async || a.is_leader()).await);
    let (b, b_stop, b_task) = spawn_with(&cluster, long("b"), &acting);
    tokio::time::sleep(RETRY * 5).await;
    assert!(!b.is_leader());

    a_stop.cancel();
    let stopped = Instant::now();
    assert_eq!(a_task.await.unwrap().unwrap(), Outcome::Released);
    // Released: no holder, unless the standby's next retry already took the lease (it keeps
    // retrying while a shuts down, and a loaded machine may run it first). `a` never holds it.
    let after = holder(&cluster).await;
    assert!(
        matches!(after.as_deref(), None | Some("b")),
        "released: {after:?}"
    );
    assert!(
        eventually(Duration::from_secs(20), async || b.is_leader()).await,
        "the standby did not take the released lease"
    );
    assert!(
        stopped.elapsed() < LONG_LEASE,
        "no wait for the lease duration: {:?}",
        stopped.elapsed()
    );
    assert_eq!(acting.max.load(Ordering::SeqCst), 1, "never two at once");
    b_stop.cancel();
    assert_eq!(b_task.await.unwrap().unwrap(), Outcome::Released);
    assert_eq!(*b.state().borrow(), LeaderState::Stopped);
}

#[tokio::test]
async fn a_leader_that_cannot_renew_stops_its_work_after_the_renew_deadline() {
    let cluster = FakeCluster::new();
    let acting = Arc::new(Acting::default());
    let (a, _stop, task) = spawn(&cluster, "a", &acting);
    assert!(eventually(Duration::from_secs(5), async || a.is_leader()).await);
    // The API server refuses every Lease write from now on.
    cluster.inject(FaultRule::new(500).verb("update").resource("leases"));
    let cut = Instant::now();
    let outcome = tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("run returns")
        .unwrap()
        .unwrap();
    assert_eq!(outcome, Outcome::Lost);
    let took = cut.elapsed();
    assert!(
        took >= RENEW_DEADLINE && took < LEASE_DURATION + RETRY * 3,
        "stops after the renew deadline, before another replica could take over: {took:?}"
    );
    assert_eq!(acting.now.load(Ordering::SeqCst), 0, "its work was stopped");
}

/// A holder whose clock is far behind ours (its renewTime looks an hour old) keeps the Lease
/// while it renews; once it stops, we take the Lease after the lease duration although its
/// last renewTime lies in our past already (and another holder's in our future would too).
#[tokio::test]
async fn clock_skew_changes_nothing() {
    let cluster = FakeCluster::new();
    let api: Api<Lease> = Api::namespaced(cluster.client(), NS);
    let skewed = |secs: i64| {
        MicroTime(
            k8s_openapi::jiff::Timestamp::now()
                .checked_sub(k8s_openapi::jiff::SignedDuration::from_secs(3600 - secs))
                .unwrap(),
        )
    };
    let lease: Lease = serde_json::from_value(json!({
        "metadata": {"name": LEASE, "namespace": NS},
        "spec": {"holderIdentity": "behind", "leaseDurationSeconds": 1, "leaseTransitions": 0}
    }))
    .unwrap();
    api.create(&PostParams::default(), &lease).await.unwrap();
    // The skewed holder renews every 100 ms for 3 lease durations.
    let renewer = {
        let api = api.clone();
        tokio::spawn(async move {
            for i in 0..45 {
                let mut lease = api.get(LEASE).await.unwrap();
                lease.spec.as_mut().unwrap().renew_time = Some(skewed(i));
                api.replace(LEASE, &PostParams::default(), &lease)
                    .await
                    .unwrap();
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    let acting = Arc::new(Acting::default());
    let (me, stop, task) = spawn(&cluster, "me", &acting);
    renewer.await.unwrap();
    assert!(
        !me.is_leader(),
        "a renewing holder keeps the Lease whatever its clock says"
    );
    let stopped_renewing = Instant::now();
    assert!(eventually(Duration::from_secs(10), async || me.is_leader()).await);
    assert!(
        stopped_renewing.elapsed() >= LEASE_DURATION - RETRY * 3,
        "taken only after the lease duration: {:?}",
        stopped_renewing.elapsed()
    );
    stop.cancel();
    assert_eq!(task.await.unwrap().unwrap(), Outcome::Released);
}

#[tokio::test]
async fn settings_in_the_wrong_order_are_refused() {
    let cluster = FakeCluster::new();
    let wrong = LeaderElectionConfig::new(NS, LEASE).durations(
        Duration::from_secs(10),
        Duration::from_secs(20),
        Duration::from_secs(2),
    );
    let elector = LeaderElector::new(cluster.client(), wrong);
    let error = elector
        .run(&Shutdown::new(), |_| async {})
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("must be greater than the renew deadline"),
        "{error}"
    );
    let no_namespace = LeaderElectionConfig::new("", LEASE);
    assert!(no_namespace.validate().unwrap_err().contains("--namespace"));
}
