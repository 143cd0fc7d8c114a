//! The `ReadOnly` strategy: nothing is written. The manifest counts as applied whether or not
//! the object exists; the object is only read, by the status refresh (availability, feedback
//! and condition rules) and by the AppliedManifestWork bookkeeping (its uid).

use futures::future::BoxFuture;
use serde_json::Value;

use super::applier::{Applier, ApplyRequest};
use super::engine::ApplyError;

/// The `ReadOnly` strategy: answers with the required manifest and sends no request.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOnlyApplier;

impl Applier for ReadOnlyApplier {
    fn apply<'a>(&'a self, request: ApplyRequest<'a>) -> BoxFuture<'a, Result<Value, ApplyError>> {
        Box::pin(async move { Ok(request.required) })
    }
}
