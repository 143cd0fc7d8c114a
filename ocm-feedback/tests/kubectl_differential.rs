//! Differential test against kubectl's own JSONPath implementation.
//!
//! Every template in `corpus/common.txt` is evaluated on every object in `corpus/*.json`, and
//! every template in `corpus/thing.txt` on `corpus/thing.json` (those in `corpus/strict.txt`
//! with missing keys not allowed), both by this crate and by
//!
//! ```text
//! kubectl --kubeconfig=/dev/null patch --local -f obj.json --type=merge -p '{}' -o jsonpath=<template>
//! ```
//!
//! (no API server needed). The outputs must be identical, or both must fail with the same
//! client-go error text. Notes on the harness:
//!
//! * Objects get `apiVersion: example.com/v1` so kubectl keeps them as unstructured JSON (a
//!   built-in kind would be decoded into typed structs, dropping or reshaping fields).
//! * kubectl's merge patch re-encodes numbers through Go's float64 (so `2.0` becomes the
//!   integer `2`, and integers beyond 2^53 lose precision). Each object is therefore first
//!   passed through kubectl once (`-o json`), and both sides evaluate that canonical form.
//! * kubectl's order for `*` over a map and for `..` is Go's random map order. Templates
//!   marked `~` in the corpus are compared as multisets of space-separated words (and, when
//!   both fail, only the failing is compared).
//! * kubectl panics on an index applied to a JSON null inside `range`; this crate reports
//!   `EvalError::NilValue` there, and the test accepts that pair.
//! * To keep the test fast, templates this crate evaluates without error are run through
//!   kubectl in batches joined by a separator; a batch whose output does not split back into
//!   the expected number of pieces is re-run one template at a time, so every mismatch is
//!   reported against a single template.
//!
//! Without kubectl on PATH the test prints that it was skipped; with `CI=true` it fails.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use ocm_feedback::jsonpath::{EvalError, Template};
use serde_json::Value;

const SEPARATOR: &str = "\n<<~ocm-feedback-separator~>>\n";
const BATCH: usize = 16;

#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Printed(String),
    ParseError(String),
    EvalError(String),
    Panic,
    Other(String),
}

struct Case {
    object: String,
    file: PathBuf,
    template: String,
    unordered: bool,
    /// Missing keys are errors (`--allow-missing-template-keys=false`).
    strict: bool,
    ours: Outcome,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn read_templates(name: &str) -> Vec<(String, bool)> {
    let text = std::fs::read_to_string(corpus_dir().join(name)).expect("corpus file");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| match l.strip_prefix("~ ") {
            Some(t) => (t.to_owned(), true),
            None => {
                let unordered = l.contains("..") || l.contains(".*");
                (l.to_owned(), unordered)
            }
        })
        .collect()
}

fn kubectl(file: &Path, output: &str) -> Outcome {
    kubectl_with(file, output, true)
}

fn kubectl_with(file: &Path, output: &str, allow_missing_keys: bool) -> Outcome {
    let out = Command::new("kubectl")
        .args(["--kubeconfig=/dev/null", "patch", "--local"])
        .arg(format!(
            "--allow-missing-template-keys={allow_missing_keys}"
        ))
        .arg("-f")
        .arg(file)
        .args(["--type=merge", "-p", "{}", "-o"])
        .arg(output)
        .output()
        .expect("run kubectl");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        return Outcome::Printed(stdout);
    }
    if stderr.contains("panic: ") {
        return Outcome::Panic;
    }
    let template = output.strip_prefix("jsonpath=").unwrap_or(output);
    if let Some(msg) = stderr.strip_prefix(&format!("error: error parsing jsonpath {template}, ")) {
        return Outcome::ParseError(msg.trim_end_matches('\n').to_owned());
    }
    const EXEC: &str = "Error executing template: ";
    const TAIL: &str = ". Printing more information for debugging the template:";
    if let (Some(start), Some(end)) = (stderr.find(EXEC), stderr.find(TAIL)) {
        return Outcome::EvalError(stderr[start + EXEC.len()..end].to_owned());
    }
    Outcome::Other(stderr)
}

fn ours(template: &str, data: &Value, strict: bool) -> Outcome {
    match Template::parse(template) {
        Err(e) => Outcome::ParseError(e.message().to_owned()),
        Ok(t) => match t.allow_missing_keys(!strict).execute(data) {
            Ok(s) => Outcome::Printed(s),
            Err(EvalError::NilValue) => Outcome::Panic,
            Err(e) => Outcome::EvalError(e.to_string()),
        },
    }
}

fn words(s: &str) -> Vec<&str> {
    let mut w: Vec<&str> = s.split(' ').collect();
    w.sort_unstable();
    w
}

fn agrees(case: &Case, theirs: &Outcome) -> bool {
    match (&case.ours, theirs) {
        (Outcome::Printed(a), Outcome::Printed(b)) if case.unordered => words(a) == words(b),
        (Outcome::EvalError(_), Outcome::EvalError(_)) if case.unordered => true,
        (a, b) => a == b,
    }
}

/// Runs jobs on a few threads (kubectl is mostly CPU; two cores here).
fn parallel<T: Send, R: Send>(items: Vec<T>, work: impl Fn(T) -> R + Sync) -> Vec<R> {
    let n = items.len();
    let slots: Vec<Mutex<Option<T>>> = items.into_iter().map(|i| Mutex::new(Some(i))).collect();
    let results: Vec<Mutex<Option<R>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 4)
        + 1;
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let item = slots[i].lock().unwrap().take().unwrap();
                    *results[i].lock().unwrap() = Some(work(item));
                }
            });
        }
    });
    results
        .into_iter()
        .map(|r| r.into_inner().unwrap().unwrap())
        .collect()
}

fn kubectl_available() -> bool {
    Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn kubectl_jsonpath_differential() {
    if !kubectl_available() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!(
                "kubectl is not on PATH, and CI=true: the kubectl differential test cannot be skipped"
            );
        }
        println!("SKIPPED kubectl_jsonpath_differential: kubectl is not on PATH");
        eprintln!("SKIPPED kubectl_jsonpath_differential: kubectl is not on PATH");
        return;
    }
    let work = std::env::temp_dir().join(format!("ocm-feedback-kubectl-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();

    // Canonicalise every object through kubectl once.
    let mut names: Vec<String> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".json").map(str::to_owned)
        })
        .collect();
    names.sort();
    let objects = parallel(names, |name| {
        let text = std::fs::read_to_string(corpus_dir().join(format!("{name}.json"))).unwrap();
        let mut value: Value = serde_json::from_str(&text).unwrap();
        value["apiVersion"] = Value::String("example.com/v1".into());
        let raw = work.join(format!("{name}.raw.json"));
        std::fs::write(&raw, serde_json::to_string(&value).unwrap()).unwrap();
        let Outcome::Printed(json) = kubectl(&raw, "json") else {
            panic!("kubectl could not read {name}.json");
        };
        let file = work.join(format!("{name}.json"));
        std::fs::write(&file, &json).unwrap();
        (name, file, serde_json::from_str::<Value>(&json).unwrap())
    });

    let common = read_templates("common.txt");
    let thing = read_templates("thing.txt");
    let strict = read_templates("strict.txt");
    let mut cases = Vec::new();
    for (name, file, data) in &objects {
        let extra: &[(String, bool)] = if name == "thing" { &thing } else { &[] };
        let strict_extra: &[(String, bool)] = if name == "thing" { &strict } else { &[] };
        let all = common
            .iter()
            .chain(extra)
            .map(|t| (t, false))
            .chain(strict_extra.iter().map(|t| (t, true)));
        for ((template, unordered), strict) in all {
            cases.push(Case {
                object: name.clone(),
                file: file.clone(),
                ours: ours(template, data, strict),
                template: template.clone(),
                unordered: *unordered,
                strict,
            });
        }
    }
    assert!(cases.len() >= 200, "corpus too small: {}", cases.len());

    // Plan kubectl runs: batches of templates we expect to succeed, single runs otherwise.
    let batchable = |c: &Case| {
        matches!(c.ours, Outcome::Printed(_))
            && !c.strict
            && !c.template.contains("range")
            && !c.template.contains("end")
    };
    let mut jobs: Vec<Vec<usize>> = Vec::new();
    for (name, _, _) in &objects {
        let idx: Vec<usize> = (0..cases.len())
            .filter(|&i| &cases[i].object == name)
            .collect();
        let (batch, single): (Vec<usize>, Vec<usize>) =
            idx.into_iter().partition(|&i| batchable(&cases[i]));
        jobs.extend(batch.chunks(BATCH).map(<[usize]>::to_vec));
        jobs.extend(single.into_iter().map(|i| vec![i]));
    }
    let kubectl_runs = AtomicUsize::new(0);
    let run = |members: &[usize]| -> Vec<(usize, Outcome)> {
        let file = &cases[members[0]].file;
        kubectl_runs.fetch_add(1, Ordering::Relaxed);
        if let [only] = members {
            return vec![(
                *only,
                kubectl(file, &format!("jsonpath={}", cases[*only].template)),
            )];
        }
        let joined: Vec<&str> = members
            .iter()
            .map(|&i| cases[i].template.as_str())
            .collect();
        let outcome = kubectl(file, &format!("jsonpath={}", joined.join(SEPARATOR)));
        if let Outcome::Printed(out) = &outcome {
            let pieces: Vec<&str> = out.split(SEPARATOR).collect();
            if pieces.len() == members.len() {
                return members
                    .iter()
                    .zip(pieces)
                    .map(|(&i, p)| (i, Outcome::Printed(p.to_owned())))
                    .collect();
            }
        }
        members
            .iter()
            .map(|&i| {
                kubectl_runs.fetch_add(1, Ordering::Relaxed);
                (i, kubectl(file, &format!("jsonpath={}", cases[i].template)))
            })
            .collect()
    };
    let mut results: Vec<Option<Outcome>> = vec![None; cases.len()];
    for (i, outcome) in parallel(jobs, |members| run(&members))
        .into_iter()
        .flatten()
    {
        results[i] = Some(outcome);
    }
    // A batched piece that disagrees is confirmed with a run of its own, so that a mismatch
    // is never an artefact of batching.
    let mut failures = Vec::new();
    // Set OCM_FEEDBACK_KUBECTL_DUMP=1 to print every case with kubectl's outcome.
    let dump = std::env::var_os("OCM_FEEDBACK_KUBECTL_DUMP").is_some();
    for (i, case) in cases.iter().enumerate() {
        let mut theirs = results[i].take().unwrap();
        if !agrees(case, &theirs) {
            let output = format!("jsonpath={}", case.template);
            theirs = kubectl_with(&case.file, &output, !case.strict);
        }
        if dump {
            let mode = if case.strict { " (strict)" } else { "" };
            println!(
                "{}{mode} :: {}\n    => {:?}",
                case.object, case.template, theirs
            );
        }
        if !agrees(case, &theirs) {
            failures.push(format!(
                "{}{} :: {}\n    kubectl: {:?}\n    ours:    {:?}",
                case.object,
                if case.strict { " (strict)" } else { "" },
                case.template,
                theirs,
                case.ours
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    println!(
        "kubectl differential: {} template x object pairs, {} kubectl runs, {} mismatches",
        cases.len(),
        kubectl_runs.load(Ordering::Relaxed),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from kubectl:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
