//! The configuration hash of a manifest, compatible with upstream's.
//!
//! Upstream hashes the text Go's `fmt.Sprintf("%v", obj)` gives for an unstructured object
//! (`&{map[...]}`) with MD5. Reproducing that text exactly lets this agent take over objects a
//! Go agent applied without a spurious re-apply.

use md5::{Digest, Md5};
use serde_json::Value;

/// The lower-case hex MD5 of the Go `%v` rendering of `object`.
///
/// ```
/// use serde_json::json;
/// let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": "test", "namespace": "default"}, "data": {"foo1": "bar1"}});
/// assert_eq!(ocm_work::apply::hash::config_hash(&cm), "4c07ba481d04e9c38e5ed3bf24139537");
/// ```
pub fn config_hash(object: &Value) -> String {
    let text = go_unstructured_string(object);
    let digest = Md5::digest(text.as_bytes());
    let mut out = String::with_capacity(32);
    for byte in digest.iter() {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Go's `%v` rendering of a pointer to an unstructured object: `&{` + value + `}`.
pub fn go_unstructured_string(object: &Value) -> String {
    let mut out = String::from("&{");
    write_go_value(object, &mut out);
    out.push('}');
    out
}

fn write_go_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else if let Some(u) = n.as_u64() {
                // Go's unstructured decoding keeps integers that overflow int64 as float64.
                out.push_str(&go_float(u as f64));
            } else if let Some(f) = n.as_f64() {
                out.push_str(&go_float(f));
            }
        }
        Value::String(s) => out.push_str(s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_go_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push_str("map[");
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(key);
                out.push(':');
                write_go_value(&map[key.as_str()], out);
            }
            out.push(']');
        }
    }
}

/// Go's `%v` for a float64: `strconv.FormatFloat(f, 'g', -1, 64)`, i.e. the shortest digits
/// that round-trip, in exponent form (`1e+06`, `2.5e-07`) when the decimal exponent is below -4
/// or at least 6, and in plain decimal form otherwise.
fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // Shortest round-trip digits and decimal exponent, from Rust's `{:e}` output.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    // Plain decimal form with the same digits.
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let point = exp + 1; // digits before the decimal point
    let mut s = String::new();
    if negative {
        s.push('-');
    }
    if point <= 0 {
        s.push_str("0.");
        for _ in 0..(-point) {
            s.push('0');
        }
        s.push_str(&digits);
    } else {
        let point = point as usize;
        if digits.len() <= point {
            s.push_str(&digits);
            for _ in digits.len()..point {
                s.push('0');
            }
        } else {
            s.push_str(&digits[..point]);
            s.push('.');
            s.push_str(&digits[point..]);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_like_go_percent_v() {
        let v = json!({"b": [1, "x", null, true, {"z": 1.5}], "a": {}});
        assert_eq!(
            go_unstructured_string(&v),
            "&{map[a:map[] b:[1 x <nil> true map[z:1.5]]]}"
        );
    }

    #[test]
    fn floats_use_go_shortest_g_format() {
        for (f, want) in [
            (1.5, "1.5"),
            (0.1, "0.1"),
            (100.25, "100.25"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (100000.5, "100000.5"),
            (999999.0, "999999"),
            (1e6, "1e+06"),
            (1e21, "1e+21"),
            (-2.5e-7, "-2.5e-07"),
            (123456789.125, "1.23456789125e+08"),
        ] {
            assert_eq!(go_float(f), want, "{f}");
        }
    }

    #[test]
    fn upstream_vector() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "test", "namespace": "default"}, "data": {"foo1": "bar1"}});
        assert_eq!(
            go_unstructured_string(&cm),
            "&{map[apiVersion:v1 data:map[foo1:bar1] kind:ConfigMap metadata:map[name:test namespace:default]]}"
        );
        assert_eq!(config_hash(&cm), "4c07ba481d04e9c38e5ed3bf24139537");
    }
}
