//! HTTP serving: what a client sees on the wire. The routes and status codes, the loopback
//! server with Go's limits, TLS, request options and query strings, paged-list tokens,
//! discovery, OpenAPI documents, `Table` responses and protobuf bodies.
//!
//! | file | what |
//! |---|---|
//! | [`http`] | the axum router: every route, verb and status code |
//! | `serve.rs` | the loopback connection loop, with the head limits of Go's HTTP server |
//! | `tls.rs` | HTTPS for the loopback server when authentication is on |
//! | `options.rs`, `query.rs` | a request's options and its query string |
//! | `continue_token.rs` | `continue` tokens of paged lists |
//! | `discovery.rs`, `openapi/` | discovery documents, OpenAPI v2 and v3 |
//! | `table.rs`, `printers.rs` | `Table` responses and the columns of built-in kinds |
//! | [`protobuf`] | protobuf request bodies |

pub(crate) mod continue_token;
pub(crate) mod discovery;
pub mod http;
pub(crate) mod openapi;
pub(crate) mod options;
pub(crate) mod printers;
pub mod protobuf;
pub(crate) mod query;
pub(crate) mod serve;
pub(crate) mod table;
pub(crate) mod tls;
