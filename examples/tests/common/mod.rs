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

/// A fresh scratch directory for `test`.
pub fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ocm-e2e-{}-{test}", std::process::id()));
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
