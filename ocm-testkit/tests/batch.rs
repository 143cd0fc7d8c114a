//! batch/v1 Jobs: defaults, the generated selector and pod labels, and immutable fields.

use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, Patch, PatchParams, PostParams};
use ocm_testkit::FakeCluster;
use serde_json::{Value, json};

use crate::support::api_status as api_err;

/// The Job of the upstream "defaulting/immutable fields" documentation: no selector.
fn pi() -> Value {
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default"},
        "spec": {
            "template": {"spec": {
                "containers": [{"name": "pi", "image": "perl:5.34.0",
                                "command": ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]}],
                "restartPolicy": "Never"}},
            "backoffLimit": 4
        }
    })
}

async fn create(api: &Api<Job>, v: Value) -> Value {
    let job: Job = serde_json::from_value(v).unwrap();
    serde_json::to_value(api.create(&PostParams::default(), &job).await.unwrap()).unwrap()
}

#[tokio::test]
async fn job_create_gets_generated_selector_labels_and_defaults() {
    let cluster = FakeCluster::new();
    let api: Api<Job> = Api::default_namespaced(cluster.client());
    let job = create(&api, pi()).await;
    let uid = job["metadata"]["uid"].as_str().unwrap().to_string();
    assert_eq!(
        job["spec"]["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    );
    let pod_labels = json!({
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": uid,
        "job-name": "pi",
    });
    assert_eq!(job["spec"]["template"]["metadata"]["labels"], pod_labels);
    // The Job's own labels come from the template, as a read from storage defaults them.
    assert_eq!(job["metadata"]["labels"], pod_labels);
    let spec = &job["spec"];
    assert_eq!(spec["backoffLimit"], 4, "a set value is kept");
    assert_eq!(spec["completions"], 1);
    assert_eq!(spec["parallelism"], 1);
    assert_eq!(spec["completionMode"], "NonIndexed");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["manualSelector"], false);
    assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["schedulerName"], "default-scheduler");
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    assert_eq!(pod["securityContext"], json!({}));
    let c = &pod["containers"][0];
    assert_eq!(c["imagePullPolicy"], "IfNotPresent");
    assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(c["terminationMessagePolicy"], "File");

    // Only `parallelism` set: completions stays unset; an untagged image is pulled Always.
    let mut other = pi();
    other["metadata"]["name"] = json!("wide");
    other["spec"]["parallelism"] = json!(3);
    other["spec"]["template"]["spec"]["containers"][0]["image"] = json!("perl");
    let wide = create(&api, other).await;
    assert!(wide["spec"].get("completions").is_none());
    assert_eq!(wide["spec"]["parallelism"], 3);
    assert_eq!(
        wide["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "Always"
    );
}

#[tokio::test]
async fn job_replace_with_the_original_manifest_is_rejected_as_immutable() {
    let cluster = FakeCluster::new();
    let api: Api<Job> = Api::default_namespaced(cluster.client());
    let live = create(&api, pi()).await;
    // What a controller re-applying its manifest with PUT sends: no selector, no labels.
    let mut again = pi();
    again["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"].clone();
    let job: Job = serde_json::from_value(again).unwrap();
    let err = api_err(
        api.replace("pi", &PostParams::default(), &job)
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 422);
    assert_eq!(err.reason, "Invalid");
    assert!(
        err.message.starts_with(
            "Job.batch \"pi\" is invalid: [spec.selector: Required value, \
             spec.template.metadata.labels: Invalid value: null: \
             `selector` does not match template `labels`, \
             spec.selector: Invalid value: null: field is immutable, \
             spec.template: Invalid value: "
        ),
        "{}",
        err.message
    );
    assert!(
        err.message.ends_with(": field is immutable]"),
        "{}",
        err.message
    );
    let details = err.details.unwrap();
    assert_eq!(details.kind, "Job");
    assert_eq!(details.group, "batch");
    let fields: Vec<(&str, &str)> = details
        .causes
        .iter()
        .map(|c| (c.reason.as_str(), c.field.as_str()))
        .collect();
    // The spec checks run twice on update, so their causes repeat (the message does not).
    assert_eq!(
        fields,
        vec![
            ("FieldValueRequired", "spec.selector"),
            ("FieldValueInvalid", "spec.template.metadata.labels"),
            ("FieldValueRequired", "spec.selector"),
            ("FieldValueInvalid", "spec.template.metadata.labels"),
            ("FieldValueInvalid", "spec.selector"),
            ("FieldValueInvalid", "spec.template"),
        ]
    );
    // Nothing changed.
    let now = serde_json::to_value(api.get("pi").await.unwrap()).unwrap();
    assert_eq!(
        now["metadata"]["resourceVersion"],
        live["metadata"]["resourceVersion"]
    );
}

#[tokio::test]
async fn job_template_and_completions_are_immutable_other_fields_are_not() {
    let cluster = FakeCluster::new();
    let api: Api<Job> = Api::default_namespaced(cluster.client());
    create(&api, pi()).await;
    let pp = PatchParams::default();

    let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "pi", "image": "perl:5.36"}]}}}});
    let err = api_err(
        api.patch("pi", &pp, &Patch::Strategic(&image))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 422);
    assert!(
        err.message
            .starts_with("Job.batch \"pi\" is invalid: spec.template: Invalid value: {"),
        "{}",
        err.message
    );
    assert!(err.message.ends_with("}: field is immutable"));
    assert_eq!(err.details.unwrap().causes.len(), 1);

    let completions = json!({"spec": {"completions": 3}});
    let err = api_err(
        api.patch("pi", &pp, &Patch::Merge(&completions))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "Job.batch \"pi\" is invalid: spec.completions: Invalid value: 3: field is immutable"
    );

    let selector = json!({"spec": {"selector": {"matchLabels": {"app": "x"}}}});
    let err = api_err(
        api.patch("pi", &pp, &Patch::Merge(&selector))
            .await
            .unwrap_err(),
    );
    assert!(
        err.message.contains(
            "spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"x\",\"batch.kubernetes.io/controller-uid\":"
        ),
        "{}",
        err.message
    );
    assert!(err.message.contains("`selector` not auto-generated"));
    assert!(err.message.contains("field is immutable"));

    // Mutable: parallelism, backoffLimit, suspend, activeDeadlineSeconds, labels.
    let ok = json!({"metadata": {"labels": {"team": "a"}},
                    "spec": {"parallelism": 2, "backoffLimit": 1, "suspend": true, "activeDeadlineSeconds": 60}});
    let j = api.patch("pi", &pp, &Patch::Merge(&ok)).await.unwrap();
    assert_eq!(j.spec.as_ref().unwrap().parallelism, Some(2));
    assert_eq!(j.metadata.generation, Some(2));

    // A replace of what was read is a no-op: defaults do not count as changes.
    let rv = j.metadata.resource_version.clone();
    let same = api.replace("pi", &PostParams::default(), &j).await.unwrap();
    assert_eq!(same.metadata.resource_version, rv);
}

#[tokio::test]
async fn job_server_side_apply_again_keeps_the_generated_selector() {
    let cluster = FakeCluster::new();
    let api: Api<Job> = Api::default_namespaced(cluster.client());
    let pp = PatchParams::apply("work-agent");
    let first = api.patch("pi", &pp, &Patch::Apply(pi())).await.unwrap();
    let selector = first.spec.as_ref().unwrap().selector.clone();
    assert!(selector.is_some());
    let second = api.patch("pi", &pp, &Patch::Apply(pi())).await.unwrap();
    assert_eq!(second.spec.unwrap().selector, selector);
    assert_eq!(
        second.metadata.resource_version,
        first.metadata.resource_version
    );
    // Changing the image through apply is refused like any other write.
    let mut changed = pi();
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = json!("perl:5.36");
    let err = api_err(
        api.patch("pi", &pp, &Patch::Apply(changed))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 422);
    assert!(err.message.contains("spec.template: Invalid value"));
}

#[tokio::test]
async fn job_manual_selector_restart_policy_and_suspended_scheduling() {
    let cluster = FakeCluster::new();
    let api: Api<Job> = Api::default_namespaced(cluster.client());

    // A manual selector is taken as given; no labels are generated.
    let mut manual = pi();
    manual["metadata"]["name"] = json!("manual");
    manual["spec"]["manualSelector"] = json!(true);
    manual["spec"]["selector"] = json!({"matchLabels": {"app": "pi"}});
    manual["spec"]["template"]["metadata"] = json!({"labels": {"app": "pi"}});
    let m = create(&api, manual).await;
    assert_eq!(m["spec"]["selector"], json!({"matchLabels": {"app": "pi"}}));
    assert_eq!(
        m["spec"]["template"]["metadata"]["labels"],
        json!({"app": "pi"})
    );

    // A selector without manualSelector gets the uid added and must then match.
    let mut auto = pi();
    auto["metadata"]["name"] = json!("auto");
    auto["spec"]["selector"] = json!({"matchLabels": {"app": "pi"}});
    let job: Job = serde_json::from_value(auto).unwrap();
    let err = api_err(api.create(&PostParams::default(), &job).await.unwrap_err());
    assert!(
        err.message.contains(
            "spec.template.metadata.labels: Invalid value: {\"batch.kubernetes.io/controller-uid\":"
        ),
        "{}",
        err.message
    );
    assert!(
        err.message
            .contains("`selector` does not match template `labels`")
    );

    // restartPolicy defaults to Always, which a Job may not use.
    let mut always = pi();
    always["metadata"]["name"] = json!("always");
    always["spec"]["template"]["spec"]
        .as_object_mut()
        .unwrap()
        .remove("restartPolicy");
    let job: Job = serde_json::from_value(always).unwrap();
    let err = api_err(api.create(&PostParams::default(), &job).await.unwrap_err());
    assert_eq!(
        err.message,
        "Job.batch \"always\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""
    );

    // A suspended Job that never started may change its scheduling directives only.
    let mut suspended = pi();
    suspended["metadata"]["name"] = json!("held");
    suspended["spec"]["suspend"] = json!(true);
    create(&api, suspended).await;
    let pp = PatchParams::default();
    let sched = json!({"spec": {"template": {
        "metadata": {"annotations": {"a": "b"}},
        "spec": {"nodeSelector": {"zone": "a"}, "tolerations": [{"key": "k", "operator": "Exists"}]}}}});
    api.patch("held", &pp, &Patch::Merge(&sched)).await.unwrap();
    let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "pi", "image": "perl:5.36"}]}}}});
    let err = api_err(
        api.patch("held", &pp, &Patch::Strategic(&image))
            .await
            .unwrap_err(),
    );
    assert!(err.message.contains("spec.template: Invalid value"));
}

#[tokio::test]
async fn indexed_job_scales_completions_with_parallelism() {
    let cluster = FakeCluster::new();
    let api: Api<Job> = Api::default_namespaced(cluster.client());
    let mut indexed = pi();
    indexed["spec"]["completionMode"] = json!("Indexed");
    indexed["spec"]["completions"] = json!(2);
    indexed["spec"]["parallelism"] = json!(2);
    create(&api, indexed).await;
    let pp = PatchParams::default();
    let both = json!({"spec": {"completions": 4, "parallelism": 4}});
    api.patch("pi", &pp, &Patch::Merge(&both)).await.unwrap();
    let alone = json!({"spec": {"completions": 5}});
    let err = api_err(
        api.patch("pi", &pp, &Patch::Merge(&alone))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "Job.batch \"pi\" is invalid: spec.completions: Invalid value: 5: can only be modified in tandem with spec.parallelism"
    );
    let mode = json!({"spec": {"completionMode": "NonIndexed"}});
    let err = api_err(
        api.patch("pi", &pp, &Patch::Merge(&mode))
            .await
            .unwrap_err(),
    );
    assert!(
        err.message
            .contains("spec.completionMode: Invalid value: \"NonIndexed\": field is immutable"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn cronjob_gets_its_defaults_and_its_pod_template_defaults() {
    let cluster = FakeCluster::new();
    let api: Api<k8s_openapi::api::batch::v1::CronJob> = Api::default_namespaced(cluster.client());
    let cj: k8s_openapi::api::batch::v1::CronJob = serde_json::from_value(json!({
        "metadata": {"name": "nightly"},
        "spec": {"schedule": "0 1 * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "OnFailure",
            "containers": [{"name": "c", "image": "busybox:1.36", "ports": [{"containerPort": 80}]}]}}}}}
    }))
    .unwrap();
    let out = serde_json::to_value(api.create(&PostParams::default(), &cj).await.unwrap()).unwrap();
    let spec = &out["spec"];
    assert_eq!(spec["concurrencyPolicy"], "Allow");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["successfulJobsHistoryLimit"], 3);
    assert_eq!(spec["failedJobsHistoryLimit"], 1);
    let pod = &spec["jobTemplate"]["spec"]["template"]["spec"];
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["containers"][0]["imagePullPolicy"], "IfNotPresent");
    assert_eq!(pod["containers"][0]["ports"][0]["protocol"], "TCP");
    // The Job template is not a Job: no Job defaults or selector inside it.
    assert!(spec["jobTemplate"]["spec"].get("selector").is_none());
    assert!(spec["jobTemplate"]["spec"].get("backoffLimit").is_none());
}
