//! Helpers shared by the example binaries' end-to-end tests: running binaries and kubectl,
//! scratch directories, waiting for a condition.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Kills the child process when dropped, so a failing test leaves nothing running.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A fresh scratch directory for `test`, never shared: the suites of `tests/` run in one
/// process, so two of them may pick the same name, and each call gets a directory of its own.
pub fn scratch(test: &str) -> PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("ocm-e2e-{}-{call}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Whether kubectl is on PATH. Without it the caller skips (prints SKIPPED); with `CI=true`
/// a missing kubectl fails the test.
pub fn kubectl_available() -> bool {
    let found = Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var("CI").map(|v| v != "true").unwrap_or(true),
            "kubectl is required when CI=true"
        );
        eprintln!("SKIPPED: kubectl not found on PATH");
    }
    found
}

/// What a command did: exit status, standard output and standard error.
#[derive(Debug)]
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// Standard output, asserting that the command succeeded.
    #[track_caller]
    pub fn out(&self) -> &str {
        assert!(
            self.ok(),
            "command failed ({:?}):\n{}{}",
            self.code,
            self.stdout,
            self.stderr
        );
        &self.stdout
    }

    /// Standard error, asserting that the command failed with exit code 1.
    #[track_caller]
    pub fn err(&self) -> &str {
        assert_eq!(
            self.code,
            Some(1),
            "expected exit code 1:\n{}{}",
            self.stdout,
            self.stderr
        );
        &self.stderr
    }
}

impl From<Output> for Ran {
    fn from(out: Output) -> Self {
        Self {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// Runs `program args` to completion.
pub fn run(program: &str, args: &[&str]) -> Ran {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
        .into()
}

/// Runs kubectl with `--kubeconfig kubeconfig`.
pub fn kubectl(kubeconfig: &Path, args: &[&str]) -> Ran {
    let mut all = vec!["--kubeconfig", kubeconfig.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    run("kubectl", &all)
}

/// Runs kubectl, feeding `stdin` (for `kubectl apply -f -` with the documentation's heredocs).
pub fn kubectl_stdin(kubeconfig: &Path, args: &[&str], stdin: &str) -> Ran {
    use std::io::Write;
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kubectl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("kubectl output").into()
}

/// Runs `ocm-clusteradm --kubeconfig kubeconfig args`.
pub fn clusteradm(kubeconfig: &Path, args: &[&str]) -> Ran {
    let mut all = vec!["--kubeconfig", kubeconfig.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    run(env!("CARGO_BIN_EXE_ocm-clusteradm"), &all)
}

/// Polls `check` every 100 ms until it returns `Some`, for at most `secs` seconds.
#[track_caller]
pub fn eventually<T>(what: &str, secs: u64, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs `kubectl args` until its output (trimmed) satisfies `pred`; returns that output.
#[track_caller]
pub fn kubectl_until(
    kubeconfig: &Path,
    args: &[&str],
    what: &str,
    pred: impl Fn(&str) -> bool,
) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ran = kubectl(kubeconfig, args);
        let last = if ran.ok() {
            let out = ran.stdout.trim().to_string();
            if pred(&out) {
                return out;
            }
            out
        } else {
            ran.stderr.clone()
        };
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: kubectl {args:?} last printed:\n{last}"
        );
        std::thread::sleep(Duration::from_millis(150));
    }
}

/// The table lines of `text` split into whitespace-separated cells (header included).
pub fn cells(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// A fake OCM environment made of our binaries, as a user would run them: `ocm-fake-apiserver`
/// (a hub and `clusters` managed clusters, each with its own kubeconfig), `ocm-hub-controller`
/// and one `ocm-work-agent` per managed cluster. Every process is killed when the fleet is
/// dropped; their logs are kept in the fleet's directory and printed when a test fails.
pub struct Fleet {
    /// Scratch directory: kubeconfigs, logs, files the test writes.
    pub dir: PathBuf,
    /// The hub's kubeconfig.
    pub hub: PathBuf,
    /// The managed clusters, `cluster1`…
    pub clusters: Vec<String>,
    processes: Vec<(String, Running)>,
}

/// How to start a [`Fleet`].
#[derive(Clone, Debug)]
pub struct FleetOptions {
    /// Number of managed clusters.
    pub clusters: usize,
    /// Extra arguments of `ocm-fake-apiserver`.
    pub server_args: Vec<String>,
    /// Start `ocm-hub-controller` (with these extra arguments).
    pub hub_controller: Option<Vec<String>>,
    /// Start an `ocm-work-agent` per cluster (with these extra arguments).
    pub agents: Option<Vec<String>>,
}

impl FleetOptions {
    /// `clusters` managed clusters, the hub controller and the agents, with default flags.
    pub fn new(clusters: usize) -> Self {
        Self {
            clusters,
            server_args: Vec::new(),
            hub_controller: Some(Vec::new()),
            agents: Some(Vec::new()),
        }
    }

    pub fn agent_args(mut self, args: &[&str]) -> Self {
        self.agents = Some(args.iter().map(|s| s.to_string()).collect());
        self
    }

    pub fn no_agents(mut self) -> Self {
        self.agents = None;
        self
    }
}

impl Fleet {
    /// Starts the fleet and waits until the hub controller has reconciled the cluster sets.
    pub fn start(test: &str, options: FleetOptions) -> Self {
        use std::io::{BufRead, BufReader};
        let dir = scratch(test);
        let hub = dir.join("hub.kubeconfig");
        let spokes = dir.join("clusters");
        let log =
            |name: &str| std::fs::File::create(dir.join(format!("{name}.log"))).expect("log file");
        let mut child = Command::new(env!("CARGO_BIN_EXE_ocm-fake-apiserver"))
            .arg("--kubeconfig")
            .arg(&hub)
            .args(["--clusters", &options.clusters.to_string()])
            .arg("--cluster-kubeconfigs")
            .arg(&spokes)
            .args(&options.server_args)
            .stdout(Stdio::piped())
            .stderr(log("ocm-fake-apiserver"))
            .spawn()
            .expect("start ocm-fake-apiserver");
        let stdout = child.stdout.take().expect("stdout");
        let mut fleet = Self {
            dir: dir.clone(),
            hub: hub.clone(),
            clusters: (1..=options.clusters)
                .map(|i| format!("cluster{i}"))
                .collect(),
            processes: vec![("ocm-fake-apiserver".into(), Running(child))],
        };
        let mut lines = BufReader::new(stdout).lines();
        loop {
            match lines.next() {
                Some(Ok(line)) if line.starts_with("ready") => break,
                Some(Ok(_)) => {}
                _ => panic!("ocm-fake-apiserver exited before it was ready"),
            }
        }
        // Keep draining its output so that it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        if let Some(args) = &options.hub_controller {
            // As the README runs it: outside a pod the Lease's namespace is a flag.
            let child = Command::new(env!("CARGO_BIN_EXE_ocm-hub-controller"))
                .arg("--kubeconfig")
                .arg(&hub)
                .args(["--namespace", "default"])
                .args(args)
                // Its logs go to standard error (`ocm_examples::logging`).
                .stdout(log("ocm-hub-controller.out"))
                .stderr(log("ocm-hub-controller"))
                .spawn()
                .expect("start ocm-hub-controller");
            fleet
                .processes
                .push(("ocm-hub-controller".into(), Running(child)));
            // The inventory controller reports the default set's members once it runs.
            kubectl_until(
                &hub,
                &[
                    "get",
                    "managedclusterset",
                    "default",
                    "-o",
                    "jsonpath={.status.conditions[0].type}",
                ],
                "the hub controller",
                |out| out == "ClusterSetEmpty",
            );
        }
        if let Some(args) = options.agents.clone() {
            for cluster in fleet.clusters.clone() {
                fleet.start_agent(
                    &cluster,
                    &args.iter().map(String::as_str).collect::<Vec<_>>(),
                );
            }
        }
        fleet
    }

    /// The kubeconfig of a managed cluster.
    pub fn spoke(&self, cluster: &str) -> PathBuf {
        self.dir
            .join("clusters")
            .join(format!("{cluster}.kubeconfig"))
    }

    /// Starts (another) `ocm-work-agent` for `cluster`.
    pub fn start_agent(&mut self, cluster: &str, extra: &[&str]) {
        let log =
            std::fs::File::create(self.dir.join(format!("agent-{cluster}.log"))).expect("log");
        let child = Command::new(env!("CARGO_BIN_EXE_ocm-work-agent"))
            .args(["--cluster-name", cluster, "--status-sync-interval", "1s"])
            .args(["--namespace", "default"])
            .args(extra)
            .arg("--hub-kubeconfig")
            .arg(&self.hub)
            .arg("--spoke-kubeconfig")
            .arg(self.spoke(cluster))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start ocm-work-agent");
        self.processes
            .push((format!("agent-{cluster}"), Running(child)));
    }

    /// Stops every `ocm-work-agent` of `cluster` as Kubernetes stops a pod: SIGTERM, and
    /// wait for it to exit (it releases its leader Lease, so a restarted agent leads at once).
    pub fn stop_agent(&mut self, cluster: &str) {
        let name = format!("agent-{cluster}");
        for (_, Running(child)) in self.processes.iter_mut().filter(|(n, _)| n == &name) {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        self.processes.retain(|(n, _)| n != &name);
    }

    /// Writes `text` to a file in the fleet's directory; returns its path.
    pub fn file(&self, name: &str, text: &str) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, text).expect("write file");
        path.to_str().expect("utf-8 path").to_string()
    }

    /// kubectl against the hub.
    pub fn kubectl(&self, args: &[&str]) -> Ran {
        kubectl(&self.hub, args)
    }

    /// kubectl against a managed cluster.
    pub fn kubectl_on(&self, cluster: &str, args: &[&str]) -> Ran {
        kubectl(&self.spoke(cluster), args)
    }

    /// `kubectl apply -f -` on the hub with `yaml` (the documentation's `cat << EOF | kubectl
    /// apply -f -`).
    pub fn apply(&self, yaml: &str) -> Ran {
        kubectl_stdin(&self.hub, &["apply", "-f", "-"], yaml)
    }

    /// `kubectl apply -f -` on a managed cluster.
    pub fn apply_on(&self, cluster: &str, yaml: &str) -> Ran {
        kubectl_stdin(&self.spoke(cluster), &["apply", "-f", "-"], yaml)
    }

    /// `ocm-clusteradm` against the hub.
    pub fn clusteradm(&self, args: &[&str]) -> Ran {
        clusteradm(&self.hub, args)
    }

    /// Runs `kubectl args` on the hub until the trimmed output satisfies `pred`.
    #[track_caller]
    pub fn hub_until(&self, args: &[&str], what: &str, pred: impl Fn(&str) -> bool) -> String {
        kubectl_until(&self.hub, args, what, pred)
    }

    /// Runs `kubectl args` on a managed cluster until the trimmed output satisfies `pred`.
    #[track_caller]
    pub fn spoke_until(
        &self,
        cluster: &str,
        args: &[&str],
        what: &str,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        kubectl_until(&self.spoke(cluster), args, what, pred)
    }

    /// Runs `ocm-clusteradm args` until its output satisfies `pred`.
    #[track_caller]
    pub fn clusteradm_until(
        &self,
        args: &[&str],
        what: &str,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ran = self.clusteradm(args);
            if ran.ok() && pred(&ran.stdout) {
                return ran.stdout;
            }
            let last = format!("{}{}", ran.stdout, ran.stderr);
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}: ocm-clusteradm {args:?} last printed:\n{last}"
            );
            std::thread::sleep(Duration::from_millis(150));
        }
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        self.processes.clear();
        if std::thread::panicking() {
            eprintln!("fleet logs kept in {}", self.dir.display());
            if let Ok(entries) = std::fs::read_dir(&self.dir) {
                for entry in entries.flatten() {
                    let path = entry.path();
                    if path.extension().is_some_and(|e| e == "log") {
                        let text = std::fs::read_to_string(&path).unwrap_or_default();
                        let tail: Vec<&str> = text.lines().rev().take(15).collect();
                        eprintln!("--- {} (last lines)", path.display());
                        for line in tail.iter().rev() {
                            eprintln!("{line}");
                        }
                    }
                }
            }
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The value of `column` in the row whose first cell is `name`, in a kubectl-style table.
#[track_caller]
pub fn cell(table: &str, name: &str, column: &str) -> String {
    let mut lines = table.lines();
    let header = lines.next().expect("header line");
    let start = header
        .find(column)
        .unwrap_or_else(|| panic!("no column {column} in:\n{table}"));
    let row = lines
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row {name} in:\n{table}"));
    let rest = row.get(start..).unwrap_or_default();
    rest.split("   ")
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
}
