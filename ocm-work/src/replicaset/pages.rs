//! Lists in pages (`limit` and `continue`), folding each item into a caller's accumulator as
//! its page arrives, so that a pass over a replica set's works holds one page of response
//! body and only what the caller keeps of each work, never the whole list at once.
//!
//! The pages are read as raw objects ([`RawObject`]): the caller decodes each item on its own
//! (see `crate::read`), so one item that does not decode never fails a page, and the
//! decoder sees the depth of each page before its items are handled.
//!
//! A real API server answers a `continue` token older than its compaction window with
//! `410 Gone` (`Expired`). The listing then starts over from a fresh accumulator, a few
//! times at most; after that the 410 is returned as the error.

use kube::api::{Api, ListParams};
use ocm_api::k8s::object::RawObject;

use crate::read::Decoder;
use crate::{Error, Result};

/// Items asked for per page: at 1,000 clusters a pass reads ten pages of works.
pub(crate) const PAGE_SIZE: u32 = 100;

/// How often a listing starts over after a `410 Gone` for its `continue` token.
pub(crate) const MAX_RESTARTS: usize = 3;

/// Lists `api` with `params` in pages of `page_size`, folding every item into the accumulator
/// `init` returns; a listing that restarts after an expired `continue` token begins again
/// from a new `init()`. `action` names the listing in an error ("list ManifestWorks of …").
pub(crate) async fn fold<T>(
    decoder: &Decoder,
    api: &Api<RawObject>,
    params: &ListParams,
    page_size: u32,
    action: impl Fn() -> String,
    mut init: impl FnMut() -> T,
    mut fold: impl FnMut(&mut T, RawObject),
) -> Result<T> {
    let mut restarts = 0;
    'listing: loop {
        let mut acc = init();
        let mut token: Option<String> = None;
        loop {
            let mut page = params.clone().limit(page_size.max(1));
            if let Some(t) = &token {
                page = page.continue_token(t);
            }
            match api.list(&page).await {
                Ok(list) => {
                    let next = list.metadata.continue_.filter(|c| !c.is_empty());
                    decoder.fit_all(&list.items).await;
                    for item in list.items {
                        fold(&mut acc, item);
                    }
                    match next {
                        Some(c) => token = Some(c),
                        None => return Ok(acc),
                    }
                }
                Err(kube::Error::Api(status))
                    if status.code == 410 && token.is_some() && restarts < MAX_RESTARTS =>
                {
                    restarts += 1;
                    tracing::debug!(
                        action = %action(),
                        restarts,
                        "continue token expired; listing again from the start"
                    );
                    continue 'listing;
                }
                Err(e) => return Err(Error::kube(action(), e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::Resource;
    use kube::api::PostParams;
    use ocm_testkit::{FakeCluster, Gvr, WriteOptions};
    use serde_json::json;

    async fn cluster_with(n: usize) -> (FakeCluster, Api<RawObject>) {
        let cluster = FakeCluster::new();
        let typed: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
        for i in 0..n {
            let cm: ConfigMap = serde_json::from_value(json!({
                "metadata": {"name": format!("cm{i:02}"), "labels": {"app": "x"}}
            }))
            .unwrap();
            typed.create(&PostParams::default(), &cm).await.unwrap();
        }
        let api = crate::read::api::<ConfigMap>(&cluster.client(), Some("default"));
        (cluster, api)
    }

    fn names(acc: &[RawObject]) -> Vec<String> {
        acc.iter().map(|c| c.meta().name.clone().unwrap()).collect()
    }

    /// A write that moves the store on, then a compaction: every `continue` token issued
    /// before it is now expired.
    fn expire_tokens(cluster: &FakeCluster, name: &str) {
        let gvr = Gvr::new("", "v1", "configmaps");
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"app": "x"}}});
        cluster
            .store()
            .create(&gvr, "default", cm, &WriteOptions::default())
            .unwrap();
        cluster.store().compact();
    }

    #[tokio::test]
    async fn pages_are_folded_in_order_and_every_item_once() {
        let (cluster, api) = cluster_with(7).await;
        let params = ListParams::default().labels("app=x");
        let out = fold(
            &Decoder::default(),
            &api,
            &params,
            3,
            String::new,
            Vec::new,
            |acc, cm| acc.push(cm),
        )
        .await
        .unwrap();
        assert_eq!(
            names(&out),
            (0..7).map(|i| format!("cm{i:02}")).collect::<Vec<_>>()
        );
        // Three pages (3 + 3 + 1), each with the limit.
        let lists: Vec<String> = cluster
            .journal()
            .entries()
            .into_iter()
            .filter(|e| e.verb == "list" && e.resource.as_deref() == Some("configmaps"))
            .map(|e| e.query.clone())
            .collect();
        assert_eq!(lists.len(), 3, "{lists:?}");
        assert!(lists.iter().all(|q| q.contains("limit=3")), "{lists:?}");
        assert!(lists[1].contains("continue="), "{lists:?}");
    }

    #[tokio::test]
    async fn an_expired_continue_token_restarts_the_listing_from_a_fresh_accumulator() {
        let (cluster, api) = cluster_with(5).await;
        let params = ListParams::default().labels("app=x");
        let mut inits = 0;
        let mut expired = false;
        let out = fold(
            &Decoder::default(),
            &api,
            &params,
            2,
            String::new,
            || {
                inits += 1;
                Vec::new()
            },
            |acc: &mut Vec<RawObject>, cm| {
                acc.push(cm);
                if !expired {
                    expired = true;
                    expire_tokens(&cluster, "late");
                }
            },
        )
        .await
        .unwrap();
        assert_eq!(inits, 2, "one restart after the 410");
        // The restarted listing sees the object created in between, and nothing twice.
        assert_eq!(
            names(&out),
            ["cm00", "cm01", "cm02", "cm03", "cm04", "late"]
        );
    }

    #[tokio::test]
    async fn a_token_that_keeps_expiring_is_a_clear_error() {
        let (cluster, api) = cluster_with(4).await;
        let params = ListParams::default().labels("app=x");
        let mut n = 0;
        let err = fold(
            &Decoder::default(),
            &api,
            &params,
            2,
            || "list ConfigMaps of test".to_string(),
            Vec::new,
            |acc: &mut Vec<RawObject>, cm| {
                acc.push(cm);
                n += 1;
                expire_tokens(&cluster, &format!("late{n}"));
            },
        )
        .await
        .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("list ConfigMaps of test"), "{text}");
        match err {
            Error::Kube {
                source: kube::Error::Api(status),
                ..
            } => assert_eq!(status.code, 410),
            other => panic!("expected the 410, got {other:?}"),
        }
    }
}
