//! Query-string parsing that tolerates kube's `?&limit=500` shape.

/// Decoded query parameters, in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Query {
    pairs: Vec<(String, String)>,
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                match s
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Query {
    /// Parse a raw query string; empty pairs are skipped.
    pub(crate) fn parse(raw: Option<&str>) -> Self {
        let pairs = raw
            .unwrap_or_default()
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| match p.split_once('=') {
                Some((k, v)) => (decode(k), decode(v)),
                None => (decode(p), String::new()),
            })
            .collect();
        Self { pairs }
    }

    /// The first value of a parameter.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of a parameter, in order.
    pub(crate) fn get_all(&self, key: &str) -> Vec<&str> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// A boolean parameter as kube-apiserver's parameter codec reads it: absent is false,
    /// `0` and `false` (any case) are false, anything else (even empty) is true.
    pub(crate) fn flag(&self, key: &str) -> bool {
        match self.get(key) {
            None => false,
            Some(v) => !(v == "0" || v.eq_ignore_ascii_case("false")),
        }
    }

    /// An integer parameter as kube-apiserver's parameter codec reads it; a value that is not
    /// one is `400` with Go's `strconv.ParseInt` error.
    pub(crate) fn int(&self, key: &str) -> Result<Option<i64>, crate::api_error::ApiError> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let digits = v.strip_prefix(['+', '-']).unwrap_or(v);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(crate::api_error::ApiError::bad_request(format!(
                "strconv.ParseInt: parsing {}: invalid syntax",
                ocm_api::k8s::gojson::quote(v)
            )));
        }
        v.parse::<i64>().map(Some).map_err(|_| {
            crate::api_error::ApiError::bad_request(format!(
                "strconv.ParseInt: parsing {}: value out of range",
                ocm_api::k8s::gojson::quote(v)
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_shapes() {
        let q = Query::parse(Some(
            "&limit=500&labelSelector=app%3Dweb%2Ctier+in+%28a%29&watch=1",
        ));
        assert_eq!(q.get("limit"), Some("500"));
        assert_eq!(q.get("labelSelector"), Some("app=web,tier in (a)"));
        assert!(q.flag("watch"));
        assert_eq!(Query::parse(Some("a=%")).get("a"), Some("%"));
    }
}
