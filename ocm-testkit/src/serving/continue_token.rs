//! `continue` tokens of paged lists, in kube-apiserver's form: unpadded URL-safe base64 of
//! `{"v":"meta.k8s.io/v1","rv":<list version>,"start":"<key after the last item>"}`, checked
//! as its storage layer checks them when they come back.

use serde_json::{Value, json};

use crate::storage::store::ObjectKey;

const VERSION: &str = "meta.k8s.io/v1";
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The storage key a page continues after: `namespace/name` (or `name`), and a NUL so that
/// the next page starts after it.
fn start_key(after: &ObjectKey) -> String {
    if after.namespace.is_empty() {
        format!("{}\u{0}", after.name)
    } else {
        format!("{}/{}\u{0}", after.namespace, after.name)
    }
}

/// The token of a page of the list at `resource_version` whose last item was `after`.
pub(crate) fn encode(resource_version: u64, after: &ObjectKey) -> String {
    let text = json!({"v": VERSION, "rv": resource_version, "start": start_key(after)}).to_string();
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
}

/// Go's `base64.RawURLEncoding.DecodeString`: line breaks are skipped; anything else outside
/// the alphabet, padding, or a lone last character is `illegal base64 data at input byte N`.
fn decode_base64(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc = 0u32;
    let mut held = 0;
    let mut last = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' || b == b'\r' {
            continue;
        }
        let Some(v) = ALPHABET.iter().position(|a| *a == b) else {
            return Err(format!("illegal base64 data at input byte {i}"));
        };
        last = i;
        acc = (acc << 6) | v as u32;
        held += 1;
        if held == 4 {
            out.extend_from_slice(&[(acc >> 16) as u8, (acc >> 8) as u8, acc as u8]);
            acc = 0;
            held = 0;
        }
    }
    match held {
        0 => {}
        1 => return Err(format!("illegal base64 data at input byte {last}")),
        2 => out.push((acc >> 4) as u8),
        _ => out.extend_from_slice(&[(acc >> 10) as u8, (acc >> 2) as u8]),
    }
    Ok(out)
}

/// Where a token says the next page starts: the list's resource version and the key to
/// continue after. The error is kube-apiserver's (`continue key is not valid: …`), which the
/// caller prefixes with `invalid continue token: `.
pub(crate) fn decode(token: &str) -> Result<(u64, ObjectKey), String> {
    let invalid = |why: String| format!("continue key is not valid: {why}");
    let data = decode_base64(token).map_err(invalid)?;
    if let Err(e) = crate::validation::decode::go_scan(&data) {
        return Err(invalid(e));
    }
    let parsed: Value = serde_json::from_slice(&crate::validation::decode::go_utf8(&data))
        .map_err(|e| invalid(e.to_string()))?;
    let field = |key: &str, go_type: &str| -> Result<Option<Value>, String> {
        match parsed.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => {
                let ok = match go_type {
                    "string" => v.is_string(),
                    _ => v.is_i64() || v.is_u64(),
                };
                if ok {
                    Ok(Some(v.clone()))
                } else {
                    Err(invalid(format!(
                        "json: cannot unmarshal {} into Go struct field continueToken.{key} of type {go_type}",
                        crate::validation::decode::go_value_kind(v)
                    )))
                }
            }
        }
    };
    if !parsed.is_object() && !parsed.is_null() {
        return Err(invalid(format!(
            "json: cannot unmarshal {} into Go value of type storage.continueToken",
            crate::validation::decode::go_value_kind(&parsed)
        )));
    }
    let version = field("v", "string")?;
    let rv = field("rv", "int64")?;
    let start = field("start", "string")?;
    let version = version.as_ref().and_then(Value::as_str).unwrap_or_default();
    if version != VERSION {
        return Err(format!(
            "continue key is not valid server does not recognize this encoded version {}",
            ocm_api::k8s::gojson::quote(version)
        ));
    }
    let rv = rv.as_ref().and_then(Value::as_u64).unwrap_or(0);
    if rv == 0 {
        return Err(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
                .into(),
        );
    }
    let start = start.as_ref().and_then(Value::as_str).unwrap_or_default();
    if start.is_empty() {
        return Err(
            "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)".into(),
        );
    }
    // No `..`, `.` or doubled slashes: the key must stay below the resource's prefix.
    let key = start.trim_end_matches('\u{0}');
    if key
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return Err(invalid(start.to_string()));
    }
    let after = match key.split_once('/') {
        Some((ns, name)) => ObjectKey::new(ns, name),
        None => ObjectKey::new("", key),
    };
    Ok((rv, after))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip() {
        for key in [
            ObjectKey::new("default", "web"),
            ObjectKey::new("", "node-1"),
        ] {
            let token = encode(42, &key);
            assert!(token.bytes().all(|b| ALPHABET.contains(&b)), "{token}");
            assert_eq!(decode(&token), Ok((42, key)));
        }
    }

    #[test]
    fn bad_tokens_get_kube_apiservers_errors() {
        assert_eq!(
            decode("garbage").unwrap_err(),
            "continue key is not valid: invalid character '\\u0081' looking for beginning of value"
        );
        assert_eq!(
            decode("a!").unwrap_err(),
            "continue key is not valid: illegal base64 data at input byte 1"
        );
        let b64 = |s: &str| {
            let mut t = encode(1, &ObjectKey::new("", "x"));
            t.clear();
            for chunk in s.as_bytes().chunks(3) {
                let n = chunk
                    .iter()
                    .enumerate()
                    .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
                for i in 0..=chunk.len() {
                    t.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
                }
            }
            t
        };
        assert_eq!(
            decode(&b64(r#"{"v":"meta.k8s.io/v1","rv":0,"start":"a"}"#)).unwrap_err(),
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        );
        assert_eq!(
            decode(&b64(r#"{"v":"x","rv":3,"start":"a"}"#)).unwrap_err(),
            "continue key is not valid server does not recognize this encoded version \"x\""
        );
        assert_eq!(
            decode(&b64(r#"{"v":"meta.k8s.io/v1","rv":3,"start":"../x"}"#)).unwrap_err(),
            "continue key is not valid: ../x"
        );
        assert_eq!(
            decode(&b64(r#"{"v":"meta.k8s.io/v1","rv":"3"}"#)).unwrap_err(),
            "continue key is not valid: json: cannot unmarshal string into Go struct field continueToken.rv of type int64"
        );
    }
}
