//! kube-apiserver's size limits: request bodies, stored objects and JSON patches.
//!
//! Without them one small request can make the fake server (and every fake cluster in the
//! test process) allocate without bound: a 2 KB JSON patch of repeated `copy` operations
//! doubles an object with every operation.

use serde_json::Value;

use crate::api_error::ApiError;

/// kube-apiserver's `MaxRequestBodyBytes` (3 MiB): larger bodies get `413`.
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// etcd's default `--max-request-bytes` (1.5 MiB): a write whose object is larger fails in
/// etcd, and kube-apiserver passes etcd's error on. We measure the object's JSON (etcd gets
/// protobuf for built-in kinds, which is somewhat smaller).
pub const MAX_OBJECT_BYTES: usize = 1024 * 1024 * 3 / 2;

/// kube-apiserver's `maxJSONPatchOperations`.
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// kube-apiserver's `JSONPatchMaxCopyBytes` (3 MiB), the limit it sets on how much a JSON
/// patch's `copy` operations may add up to.
pub const JSON_PATCH_MAX_COPY_BYTES: usize = 3 * 1024 * 1024;

/// `413 RequestEntityTooLarge`: `Request entity too large: {message}`
/// (apimachinery's `NewRequestEntityTooLargeError`).
pub(crate) fn request_too_large(message: &str) -> ApiError {
    ApiError::new(
        413,
        "RequestEntityTooLarge",
        format!("Request entity too large: {message}"),
    )
}

/// How many bytes `v` takes as compact JSON, counted without building the text.
pub(crate) fn json_size(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// Refuse to store an object etcd would refuse: kube-apiserver answers with etcd's error,
/// which is no API status, so it becomes a `500` without a reason.
pub(crate) fn check_object_size(obj: &Value) -> Result<(), ApiError> {
    if json_size(obj) > MAX_OBJECT_BYTES {
        return Err(ApiError::new(500, "", "etcdserver: request is too large"));
    }
    Ok(())
}
