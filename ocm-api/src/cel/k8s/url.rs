//! Kubernetes' `URLs` library.
//!
//! * `url(s)` and `isURL(s)`: `s` must be an absolute URI (`https://example.com/x`) or an
//!   absolute path (`/x`), as Go's `url.ParseRequestURI` accepts them; anything else is an
//!   evaluation error (`url`) or `false` (`isURL`).
//! * On a URL: `getScheme()`, `getHost()` (IPv6 with brackets, port included),
//!   `getHostname()` (no brackets, no port), `getPort()`, `getEscapedPath()` (percent-encoded)
//!   and `getQuery()` (a `map(string, list(string))` of the unescaped query parameters; a
//!   repeated key collects its values in order). Absent parts give `''` or `{}`.
//!
//! The parser follows Go's `net/url` rules, which Kubernetes relies on: a lower-cased scheme
//! of letters, digits, `+`, `-` and `.` that starts with a letter; a port of digits only; a
//! host whose only percent-escapes are of non-ASCII bytes (or `%25` for an IPv6 zone); the
//! fragment is kept out of the path and query. Two URLs are equal when all their parts are.

use std::collections::HashMap;

use cel::common::types::{CelList, CelMap, CelMapKey, CelString, STRING_TYPE, Type};
use cel::common::value::{CowVal, Val};
use cel::{Env, ExecutionError};

use super::{boolean, opaque_val, owned, string, string_arg, typed};

/// The CEL type of URLs.
pub(crate) static URL_TYPE: Type = Type::new_unspecified_type("kubernetes.URL");

/// A parsed URL; strings are as Go's `url.URL` keeps them (path and fragment unescaped).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Url {
    scheme: String,
    opaque: String,
    userinfo: Option<String>,
    host: String,
    path: String,
    raw_path: String,
    force_query: bool,
    raw_query: String,
    fragment: String,
}

opaque_val!(Url, URL_TYPE);

/// How a part of a URL is escaped (the subset of Go's modes this library needs).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    UserPassword,
    QueryComponent,
    Fragment,
    Host,
    Zone,
}

/// Whether byte `c` must be percent-escaped in `mode`.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone)
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => {
            return match mode {
                Mode::Path => c == b'?',
                Mode::UserPassword => matches!(c, b'@' | b'/' | b'?' | b':'),
                Mode::QueryComponent => true,
                Mode::Fragment => false,
                // Not reached for the sub-delimiters above; '/', '?' and '@' need escaping.
                Mode::Host | Mode::Zone => true,
            };
        }
        _ => {}
    }
    !(mode == Mode::Fragment && matches!(c, b'!' | b'(' | b')' | b'*'))
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Decodes the percent-escapes of `s` (and `+` as a space in query components).
fn unescape(s: &str, mode: Mode) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let pair = bytes
                    .get(i + 1..i + 3)
                    .and_then(|p| Some(hex_value(*p.first()?)? << 4 | hex_value(*p.get(1)?)?));
                let Some(byte) = pair else {
                    let end = (i + 3).min(bytes.len());
                    let shown = String::from_utf8_lossy(&bytes[i..end]);
                    return Err(format!("invalid URL escape {shown:?}"));
                };
                // A host may escape only non-ASCII bytes (and `%25`, the zone separator).
                if mode == Mode::Host && byte < 0x80 && byte != b'%' {
                    let shown = String::from_utf8_lossy(&bytes[i..i + 3]);
                    return Err(format!("invalid URL escape {shown:?}"));
                }
                out.push(byte);
                i += 3;
            }
            b'+' if mode == Mode::QueryComponent => {
                out.push(b' ');
                i += 1;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    return Err(format!(
                        "invalid character {:?} in host name",
                        char::from(c).to_string()
                    ));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Percent-escapes what `mode` does not allow as is.
fn escape(s: &str, mode: Mode) -> String {
    let mut out = String::with_capacity(s.len());
    for &c in s.as_bytes() {
        if should_escape(c, mode) {
            out.push_str(&format!("%{c:02X}"));
        } else {
            out.push(char::from(c));
        }
    }
    out
}

/// Whether `s` is already a valid escaped form for `mode` (sub-delimiters allowed as is).
fn valid_encoded(s: &str, mode: Mode) -> bool {
    s.bytes().all(|c| {
        matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
                | b'['
                | b']'
                | b'%'
        ) || !should_escape(c, mode)
    })
}

/// `""` or `:` followed by digits.
fn valid_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Splits a leading scheme off `raw`: `(scheme, rest)`.
fn split_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

fn valid_userinfo(s: &str) -> bool {
    s.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                '-' | '.'
                    | '_'
                    | ':'
                    | '~'
                    | '!'
                    | '$'
                    | '&'
                    | '\''
                    | '('
                    | ')'
                    | '*'
                    | '+'
                    | ','
                    | ';'
                    | '='
                    | '%'
                    | '@'
            )
    })
}

/// Decodes a host, checking its port and escapes.
fn parse_host(host: &str) -> Result<String, String> {
    if host.starts_with('[') {
        let close = host.rfind(']').ok_or("missing ']' in host")?;
        let port = &host[close + 1..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {port:?} after host"));
        }
        // An IPv6 zone (`[fe80::1%25eth0]`) may escape anything.
        if let Some(zone) = host[..close].find("%25") {
            let address = unescape(&host[..zone], Mode::Host)?;
            let zone_part = unescape(&host[zone..close], Mode::Zone)?;
            let rest = unescape(&host[close..], Mode::Host)?;
            return Ok(address + &zone_part + &rest);
        }
    } else if let Some(colon) = host.rfind(':') {
        let port = &host[colon..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {port:?} after host"));
        }
    }
    unescape(host, Mode::Host)
}

/// Parses `raw` the way Go's `url.Parse` (`request == false`, fragment already removed) or
/// `url.ParseRequestURI` (`request == true`) does.
fn parse(raw: &str, request: bool) -> Result<Url, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    if raw.is_empty() && request {
        return Err("empty url".into());
    }
    let mut url = Url::default();
    if raw == "*" {
        url.path = "*".into();
        return Ok(url);
    }
    let (scheme, mut rest) = split_scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        url.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_owned();
        rest = before;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            // A rootless path (`mailto:a@b`) is opaque.
            url.opaque = rest.to_owned();
            return Ok(url);
        }
        if request {
            return Err("invalid URI for request".into());
        }
        let first_segment = rest.split('/').next().unwrap_or_default();
        if first_segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || !request && !rest.starts_with("///")) && rest.starts_with("//") {
        let after = &rest[2..];
        let (authority, path) = match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, ""),
        };
        rest = path;
        let host_part = match authority.rfind('@') {
            Some(at) => {
                let userinfo = &authority[..at];
                if !valid_userinfo(userinfo) {
                    return Err("net/url: invalid userinfo".into());
                }
                let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
                unescape(user, Mode::UserPassword)?;
                unescape(password, Mode::UserPassword)?;
                url.userinfo = Some(userinfo.to_owned());
                &authority[at + 1..]
            }
            None => authority,
        };
        url.host = parse_host(host_part)?;
    }
    url.path = unescape(rest, Mode::Path)?;
    if escape(&url.path, Mode::Path) != rest {
        url.raw_path = rest.to_owned();
    }
    Ok(url)
}

/// Checks `raw` as Go's `url.ParseRequestURI` does, with Go's error text.
pub(crate) fn parse_request_uri(raw: &str) -> Result<(), String> {
    parse(raw, true)
        .map(drop)
        .map_err(|e| format!("parse {raw:?}: {e}"))
}

/// Parses `raw` as Kubernetes' `url()` does: it must pass `ParseRequestURI`, and is then
/// parsed again with the fragment split off (which `ParseRequestURI` would leave in the path
/// or query). Errors read like Go's.
pub(crate) fn parse_url(raw: &str) -> Result<Url, String> {
    parse_request_uri(raw)?;
    let wrap = |e: String| format!("parse {raw:?}: {e}");
    let (before, fragment) = raw.split_once('#').unwrap_or((raw, ""));
    let mut url = parse(before, false).map_err(wrap)?;
    url.fragment = unescape(fragment, Mode::Fragment).map_err(wrap)?;
    Ok(url)
}

impl Url {
    /// Host and port as Go's `splitHostPort` separates them, brackets removed.
    fn host_and_port(&self) -> (&str, &str) {
        let mut host = self.host.as_str();
        let mut port = "";
        if let Some(colon) = host.rfind(':')
            && valid_optional_port(&host[colon..])
        {
            port = &host[colon + 1..];
            host = &host[..colon];
        }
        if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            host = inner;
        }
        (host, port)
    }

    fn escaped_path(&self) -> String {
        if !self.raw_path.is_empty()
            && valid_encoded(&self.raw_path, Mode::Path)
            && unescape(&self.raw_path, Mode::Path).is_ok_and(|p| p == self.path)
        {
            return self.raw_path.clone();
        }
        if self.path == "*" {
            return "*".into();
        }
        escape(&self.path, Mode::Path)
    }

    /// The query parameters; pairs that do not decode (or use `;`) are skipped, as Go does.
    fn query(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for pair in self.raw_query.split('&') {
            if pair.is_empty() || pair.contains(';') {
                continue;
            }
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let (Ok(key), Ok(value)) = (
                unescape(key, Mode::QueryComponent),
                unescape(value, Mode::QueryComponent),
            ) else {
                continue;
            };
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some((_, values)) => values.push(value),
                None => out.push((key, vec![value])),
            }
        }
        out
    }
}

fn to_url<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let raw = string_arg("url", &args, 0)?;
    let url = parse_url(raw).map_err(|e| {
        ExecutionError::function_error(
            "url",
            format!("URL parse error during conversion from string: {e}"),
        )
    })?;
    owned(url)
}

fn is_url<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    boolean(parse(string_arg("isURL", &args, 0)?, true).is_ok())
}

fn get_scheme<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    string(typed::<Url>("getScheme", &args, 0)?.scheme.clone())
}

fn get_host<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    string(typed::<Url>("getHost", &args, 0)?.host.clone())
}

fn get_hostname<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    string(
        typed::<Url>("getHostname", &args, 0)?
            .host_and_port()
            .0
            .to_owned(),
    )
}

fn get_port<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    string(
        typed::<Url>("getPort", &args, 0)?
            .host_and_port()
            .1
            .to_owned(),
    )
}

fn get_escaped_path<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    string(typed::<Url>("getEscapedPath", &args, 0)?.escaped_path())
}

fn get_query<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let url: &Url = typed("getQuery", &args, 0)?;
    let map: HashMap<CelMapKey<'static>, Box<dyn Val>> = url
        .query()
        .into_iter()
        .map(|(key, values)| {
            let values: Vec<Box<dyn Val>> = values
                .into_iter()
                .map(|v| Box::new(CelString::from(v)) as Box<dyn Val>)
                .collect();
            (
                CelMapKey::String(CelString::from(key)),
                Box::new(CelList::from(values)) as Box<dyn Val>,
            )
        })
        .collect();
    owned(CelMap::from(map))
}

/// Registers the library.
pub(crate) fn register(env: &mut Env) -> Result<(), cel::DeclarationError> {
    let url = || URL_TYPE.to_owned();
    env.add_overload("url", "string_to_url", vec![STRING_TYPE], to_url)?;
    env.add_overload("isURL", "is_url_string", vec![STRING_TYPE], is_url)?;
    env.add_member_overload("getScheme", "url_get_scheme", url(), vec![], get_scheme)?;
    env.add_member_overload("getHost", "url_get_host", url(), vec![], get_host)?;
    env.add_member_overload(
        "getHostname",
        "url_get_hostname",
        url(),
        vec![],
        get_hostname,
    )?;
    env.add_member_overload("getPort", "url_get_port", url(), vec![], get_port)?;
    env.add_member_overload(
        "getEscapedPath",
        "url_get_escaped_path",
        url(),
        vec![],
        get_escaped_path,
    )?;
    env.add_member_overload("getQuery", "url_get_query", url(), vec![], get_query)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check, eval, fails};

    #[test]
    fn accepted_and_refused() {
        check(
            "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
            true,
        );
        check("isURL('/absolute-path')", true);
        check("isURL('mailto:someone@example.com')", true);
        check("isURL('https://a:b:c/')", false);
        check("isURL('../relative-path')", false);
        check("isURL('relative')", false);
        check("isURL('')", false);
        check("isURL(':no-scheme')", false);
        check("isURL('https://exa mple.com/')", false);
        check("isURL('https://example.com/%zz')", false);
        check("isURL('https://example.com/\\x01')", false);
        check("isURL('https://[::1/')", false);
        check("isURL('https://us er@example.com/')", false);
    }

    #[test]
    fn parts() {
        check("url('/path').getScheme()", "");
        check("url('HTTPS://example.com/').getScheme()", "https");
        check("url('https://example.com:80/').getHost()", "example.com:80");
        check("url('https://example.com/').getHost()", "example.com");
        check("url('https://[::1]:80/').getHost()", "[::1]:80");
        check("url('https://[::1]/').getHost()", "[::1]");
        check("url('/path').getHost()", "");
        check(
            "url('https://example.com:80/').getHostname()",
            "example.com",
        );
        check("url('https://127.0.0.1:80/').getHostname()", "127.0.0.1");
        check("url('https://[::1]:80/').getHostname()", "::1");
        check("url('/path').getHostname()", "");
        check("url('https://example.com:80/').getPort()", "80");
        check("url('https://example.com/').getPort()", "");
        check("url('/path').getPort()", "");
        check("url('https://example.com/path').getEscapedPath()", "/path");
        check(
            "url('https://example.com/path with spaces/').getEscapedPath()",
            "/path%20with%20spaces/",
        );
        check(
            "url('https://example.com/a%2Fb').getEscapedPath()",
            "/a%2Fb",
        );
        check("url('https://example.com').getEscapedPath()", "");
        check("url('https://example.com/p#frag').getEscapedPath()", "/p");
        check(
            "url('https://user:pass@example.com:8443/x').getHostname()",
            "example.com",
        );
    }

    #[test]
    fn queries() {
        check(
            "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == \
             {'k1': ['a'], 'k2': ['b', 'c']}",
            true,
        );
        check(
            "url('https://example.com/path?key with spaces=value with spaces').getQuery() == \
             {'key with spaces': ['value with spaces']}",
            true,
        );
        check(
            "url('https://example.com/p?a=1+2&b=%41&bad=%zz&semi=1;2').getQuery() == \
             {'a': ['1 2'], 'b': ['A']}",
            true,
        );
        check("url('https://example.com/path?').getQuery() == {}", true);
        check("url('https://example.com/path').getQuery() == {}", true);
        check(
            "url('https://example.com/p?x=1#y=2').getQuery() == {'x': ['1']}",
            true,
        );
    }

    #[test]
    fn equality() {
        check(
            "url('https://example.com/a') == url('https://example.com/a')",
            true,
        );
        check(
            "url('https://example.com/a') == url('https://example.com/b')",
            false,
        );
    }

    #[test]
    fn bad_input() {
        fails("url('https://a:b:c/')", "invalid port \":c\" after host");
        fails("url('../relative-path')", "invalid URI for request");
        fails("url('')", "empty url");
        fails("url('https://example.com/%zz')", "invalid URL escape");
        fails("url('https://ex%41mple.com/')", "invalid URL escape");
        fails("url('https://example.com/#%zz')", "invalid URL escape");
        fails("url('https://a b/')", "in host name");
        fails("url(1)", "");
        assert!(eval("url('/x').getQuery()['missing']").is_err());
    }
}
