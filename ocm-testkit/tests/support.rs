//! What several suites share.

/// The Status of an error the API server answered; any other error fails the test.
pub fn api_status(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}
