//! Decoding of Kubernetes protobuf request bodies into JSON.
//!
//! kubectl sends protobuf, not JSON, when it writes built-in kinds through its typed clients:
//! `kubectl create namespace|configmap|secret|deployment|job|…`, `kubectl run`,
//! `kubectl expose`. Such a body is the four bytes `k8s\0` followed by a `runtime.Unknown`
//! envelope holding the apiVersion, the kind and the object's own protobuf encoding. This
//! module turns that into the JSON object the rest of the server works with; responses stay
//! JSON, which clients accept.
//!
//! Decoding is driven by a table of message layouts ([`SCHEMA`]: for each message of the
//! kinds above and everything they contain, its field numbers, JSON names and types, as the
//! Kubernetes API publishes them). Fields the table does not know are skipped, as a real
//! decoder skips unknown fields. Empty strings are dropped (Go leaves them out of JSON), while
//! numbers and booleans are kept as sent. Embedded Go structs (a Volume's source, an Ingress
//! rule's value, a key selector's reference) are inlined into their parent, as JSON inlines
//! them. The well-known wrapper messages become their JSON forms: `Time` an RFC 3339 string,
//! `Quantity` its string, `IntOrString` a number or a string, `Duration` a Go duration
//! string, `RawExtension` and `FieldsV1` the JSON they carry.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};

/// The prefix of every Kubernetes protobuf body.
pub const MAGIC: &[u8] = b"k8s\0";

/// The media type of Kubernetes protobuf bodies.
pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// Message layouts: one line per message, `name num=jsonName:type …`. Types are protobuf
/// scalars or message names (`meta.` stands for `k8s.io.apimachinery.pkg.apis.meta.v1.`, `am.`
/// for `k8s.io.apimachinery.pkg.`, other names are under `k8s.io.api.`), `[]T` for repeated
/// fields and `map:K:V` for maps.
pub const SCHEMA: &str = include_str!("protobuf_schema.txt");

#[derive(Debug, Clone, PartialEq)]
enum Ty {
    Str,
    Bytes,
    Int,
    Uint,
    Bool,
    Double,
    Float,
    Msg(String),
}

#[derive(Debug, Clone)]
struct Field {
    name: String,
    ty: Ty,
    repeated: bool,
    map: Option<(Ty, Ty)>,
}

type Schema = HashMap<String, HashMap<u64, Field>>;

fn expand(name: &str) -> String {
    if let Some(rest) = name.strip_prefix("meta.") {
        format!("k8s.io.apimachinery.pkg.apis.meta.v1.{rest}")
    } else if let Some(rest) = name.strip_prefix("am.") {
        format!("k8s.io.apimachinery.pkg.{rest}")
    } else {
        format!("k8s.io.api.{name}")
    }
}

fn parse_ty(t: &str) -> Ty {
    match t {
        "string" => Ty::Str,
        "bytes" => Ty::Bytes,
        "int32" | "int64" | "sint32" | "sint64" => Ty::Int,
        "uint32" | "uint64" => Ty::Uint,
        "bool" => Ty::Bool,
        "double" => Ty::Double,
        "float" => Ty::Float,
        other => Ty::Msg(expand(other)),
    }
}

fn schema() -> &'static Schema {
    static SCHEMA_MAP: OnceLock<Schema> = OnceLock::new();
    SCHEMA_MAP.get_or_init(|| {
        let mut out = Schema::new();
        for line in SCHEMA.lines().filter(|l| !l.trim().is_empty()) {
            let mut parts = line.split_whitespace();
            let Some(name) = parts.next() else { continue };
            let mut fields = HashMap::new();
            for part in parts {
                let Some((num, rest)) = part.split_once('=') else {
                    continue;
                };
                let Some((json, ty)) = rest.split_once(':') else {
                    continue;
                };
                let Ok(num) = num.parse::<u64>() else {
                    continue;
                };
                let field = if let Some(kv) = ty.strip_prefix("map:") {
                    // Key types are scalars, so the first ':' separates key and value.
                    let (k, v) = kv.split_once(':').unwrap_or((kv, "string"));
                    Field {
                        name: json.to_string(),
                        ty: Ty::Str,
                        repeated: false,
                        map: Some((parse_ty(k), parse_ty(v))),
                    }
                } else if let Some(inner) = ty.strip_prefix("[]") {
                    Field {
                        name: json.to_string(),
                        ty: parse_ty(inner),
                        repeated: true,
                        map: None,
                    }
                } else {
                    Field {
                        name: json.to_string(),
                        ty: parse_ty(ty),
                        repeated: false,
                        map: None,
                    }
                };
                fields.insert(num, field);
            }
            out.insert(expand(name), fields);
        }
        out
    })
}

/// Why a protobuf body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(String);

fn err(message: impl Into<String>) -> DecodeError {
    DecodeError(message.into())
}

/// One protobuf field as read off the wire.
enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.buf.get(self.pos) else {
                return Err(err("truncated varint"));
            };
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(err("varint longer than 10 bytes"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.buf.len())
            .ok_or_else(|| err("truncated field"))?;
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn field(&mut self) -> Result<(u64, Wire<'a>), DecodeError> {
        let key = self.varint()?;
        let number = key >> 3;
        let wire = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => {
                let b = self.take(8)?;
                Wire::Fixed64(u64::from_le_bytes(
                    b.try_into().map_err(|_| err("bad fixed64"))?,
                ))
            }
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| err("length too large"))?;
                Wire::Bytes(self.take(len)?)
            }
            5 => {
                let b = self.take(4)?;
                Wire::Fixed32(u32::from_le_bytes(
                    b.try_into().map_err(|_| err("bad fixed32"))?,
                ))
            }
            other => return Err(err(format!("unsupported wire type {other}"))),
        };
        Ok((number, wire))
    }
}

fn utf8(bytes: &[u8]) -> Result<String, DecodeError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| err("string field is not UTF-8"))
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A scalar (or message) value of type `ty` from one wire field.
fn scalar(ty: &Ty, wire: &Wire<'_>, depth: usize) -> Result<Option<Value>, DecodeError> {
    Ok(match (ty, wire) {
        (Ty::Str, Wire::Bytes(b)) => Some(Value::String(utf8(b)?)),
        (Ty::Bytes, Wire::Bytes(b)) => Some(Value::String(base64(b))),
        (Ty::Int, Wire::Varint(v)) => Some(Value::from(*v as i64)),
        (Ty::Uint, Wire::Varint(v)) => Some(Value::from(*v)),
        (Ty::Bool, Wire::Varint(v)) => Some(Value::Bool(*v != 0)),
        (Ty::Double, Wire::Fixed64(v)) => {
            serde_json::Number::from_f64(f64::from_bits(*v)).map(Value::Number)
        }
        (Ty::Float, Wire::Fixed32(v)) => {
            serde_json::Number::from_f64(f64::from(f32::from_bits(*v))).map(Value::Number)
        }
        (Ty::Msg(name), Wire::Bytes(b)) => message(name, b, depth + 1)?,
        _ => return Err(err("field has the wrong wire type for its schema type")),
    })
}

/// Packed repeated scalars (several varints or fixed values in one length-delimited field).
fn packed(ty: &Ty, bytes: &[u8]) -> Result<Vec<Value>, DecodeError> {
    let mut r = Reader::new(bytes);
    let mut out = Vec::new();
    while !r.done() {
        let wire = match ty {
            Ty::Double => Wire::Fixed64(u64::from_le_bytes(
                r.take(8)?.try_into().map_err(|_| err("bad fixed64"))?,
            )),
            Ty::Float => Wire::Fixed32(u32::from_le_bytes(
                r.take(4)?.try_into().map_err(|_| err("bad fixed32"))?,
            )),
            _ => Wire::Varint(r.varint()?),
        };
        if let Some(v) = scalar(ty, &wire, 0)? {
            out.push(v);
        }
    }
    Ok(out)
}

const MAX_DEPTH: usize = 64;

/// Whether `name` is one of the wrapper messages with a JSON form of its own.
fn is_special(name: &str) -> bool {
    matches!(
        name,
        "k8s.io.apimachinery.pkg.apis.meta.v1.Time"
            | "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime"
            | "k8s.io.apimachinery.pkg.apis.meta.v1.Duration"
            | "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1"
            | "k8s.io.apimachinery.pkg.api.resource.Quantity"
            | "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
            | "k8s.io.apimachinery.pkg.runtime.RawExtension"
    )
}

fn special(name: &str, bytes: &[u8]) -> Result<Option<Option<Value>>, DecodeError> {
    if !is_special(name) {
        return Ok(None);
    }
    let short = name.rsplit('.').next().unwrap_or(name);
    let package = name.strip_suffix(short).unwrap_or("");
    let fields = || -> Result<HashMap<u64, Vec<u8>>, DecodeError> {
        let mut r = Reader::new(bytes);
        let mut out = HashMap::new();
        while !r.done() {
            let (n, w) = r.field()?;
            let raw = match w {
                Wire::Varint(v) => v.to_le_bytes().to_vec(),
                Wire::Bytes(b) => b.to_vec(),
                Wire::Fixed64(v) => v.to_le_bytes().to_vec(),
                Wire::Fixed32(v) => v.to_le_bytes().to_vec(),
            };
            out.insert(n, raw);
        }
        Ok(out)
    };
    let int = |f: &HashMap<u64, Vec<u8>>, n: u64| {
        f.get(&n)
            .and_then(|b| <[u8; 8]>::try_from(b.as_slice()).ok())
            .map(|b| u64::from_le_bytes(b) as i64)
            .unwrap_or(0)
    };
    Ok(Some(match (package, short) {
        ("k8s.io.apimachinery.pkg.apis.meta.v1.", "Time" | "MicroTime") => {
            let f = fields()?;
            let (seconds, nanos) = (int(&f, 1), int(&f, 2));
            if seconds == 0 && nanos == 0 {
                None
            } else {
                let ts = jiff::Timestamp::new(seconds, i32::try_from(nanos).unwrap_or(0))
                    .map_err(|e| err(format!("bad timestamp: {e}")))?;
                let seconds = ts.strftime("%Y-%m-%dT%H:%M:%S").to_string();
                let text = if short == "Time" {
                    format!("{seconds}Z")
                } else {
                    format!("{seconds}.{:06}Z", ts.subsec_nanosecond() / 1000)
                };
                Some(Value::String(text))
            }
        }
        ("k8s.io.apimachinery.pkg.apis.meta.v1.", "Duration") => {
            let nanos = int(&fields()?, 1);
            Some(Value::String(go_duration(nanos)))
        }
        ("k8s.io.apimachinery.pkg.api.resource.", "Quantity") => {
            let f = fields()?;
            Some(Value::String(utf8(
                f.get(&1).map(Vec::as_slice).unwrap_or_default(),
            )?))
        }
        ("k8s.io.apimachinery.pkg.util.intstr.", "IntOrString") => {
            let f = fields()?;
            if int(&f, 1) == 1 {
                Some(Value::String(utf8(
                    f.get(&3).map(Vec::as_slice).unwrap_or_default(),
                )?))
            } else {
                Some(Value::from(int(&f, 2) as i32))
            }
        }
        ("k8s.io.apimachinery.pkg.runtime.", "RawExtension")
        | ("k8s.io.apimachinery.pkg.apis.meta.v1.", "FieldsV1") => {
            let f = fields()?;
            match f.get(&1) {
                Some(raw) if !raw.is_empty() => Some(
                    serde_json::from_slice(raw)
                        .map_err(|e| err(format!("embedded object is not JSON: {e}")))?,
                ),
                _ => None,
            }
        }
        _ => return Ok(None),
    }))
}

fn go_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".to_string();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    let (h, rest) = (n / 3_600_000_000_000, n % 3_600_000_000_000);
    let (m, rest) = (rest / 60_000_000_000, rest % 60_000_000_000);
    let (s, frac) = (rest / 1_000_000_000, rest % 1_000_000_000);
    let mut out = String::from(sign);
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if h > 0 || m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if frac == 0 {
        out.push_str(&format!("{s}s"));
    } else {
        let digits = format!("{frac:09}");
        out.push_str(&format!("{s}.{}s", digits.trim_end_matches('0')));
    }
    out
}

/// Whether `field` is an embedded Go struct, whose fields JSON puts in the parent object
/// (protobuf nests it under the embedded type's name).
fn inline(field: &Field) -> bool {
    matches!(field.ty, Ty::Msg(_))
        && !field.repeated
        && matches!(
            field.name.as_str(),
            "volumeSource"
                | "persistentVolumeSource"
                | "localObjectReference"
                | "handler"
                | "ephemeralContainerCommon"
                | "ingressRuleValue"
        )
}

/// Decodes the message `name` from `bytes`; `None` for a wrapper that stands for "unset".
fn message(name: &str, bytes: &[u8], depth: usize) -> Result<Option<Value>, DecodeError> {
    if depth > MAX_DEPTH {
        return Err(err("objects nested too deeply"));
    }
    if let Some(value) = special(name, bytes)? {
        return Ok(value);
    }
    let layout = schema().get(name);
    let mut out = Map::new();
    let mut r = Reader::new(bytes);
    while !r.done() {
        let (number, wire) = r.field()?;
        let Some(field) = layout.and_then(|l| l.get(&number)) else {
            continue;
        };
        if let Some((kt, vt)) = &field.map {
            let Wire::Bytes(entry) = wire else {
                return Err(err(format!(
                    "map field {} is not length-delimited",
                    field.name
                )));
            };
            let mut er = Reader::new(entry);
            let (mut key, mut value) = (None, None);
            while !er.done() {
                let (n, w) = er.field()?;
                match n {
                    1 => key = scalar(kt, &w, depth)?,
                    2 => value = scalar(vt, &w, depth)?,
                    _ => {}
                }
            }
            let key = match key {
                Some(Value::String(s)) => s,
                Some(other) => other.to_string(),
                None => String::new(),
            };
            let value = value.unwrap_or_else(|| match vt {
                Ty::Str | Ty::Bytes => Value::String(String::new()),
                Ty::Msg(_) => Value::Object(Map::new()),
                _ => Value::from(0),
            });
            out.entry(field.name.clone())
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()
                .map(|m| m.insert(key, value));
            continue;
        }
        if field.repeated {
            let items: Vec<Value> = match (&field.ty, &wire) {
                (Ty::Int | Ty::Uint | Ty::Bool | Ty::Double | Ty::Float, Wire::Bytes(b)) => {
                    packed(&field.ty, b)?
                }
                _ => scalar(&field.ty, &wire, depth)?
                    .map(|v| vec![v])
                    .unwrap_or_else(|| vec![Value::Null]),
            };
            if let Some(list) = out
                .entry(field.name.clone())
                .or_insert_with(|| Value::Array(Vec::new()))
                .as_array_mut()
            {
                list.extend(items);
            }
            continue;
        }
        if inline(field) {
            // An embedded Go struct: its fields belong to the parent in JSON.
            if let Some(Value::Object(inner)) = scalar(&field.ty, &wire, depth)? {
                out.extend(inner);
            }
            continue;
        }
        match scalar(&field.ty, &wire, depth)? {
            Some(Value::String(s)) if s.is_empty() && field.ty == Ty::Str => {
                out.remove(&field.name);
            }
            Some(v) => {
                out.insert(field.name.clone(), v);
            }
            None => {
                out.remove(&field.name);
            }
        }
    }
    Ok(Some(Value::Object(out)))
}

/// The protobuf package of `apiVersion` (`apps/v1` → `k8s.io.api.apps.v1`).
fn package_of(api_version: &str) -> Option<String> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let short = match group {
        "" => "core",
        "meta.k8s.io" => return Some(format!("k8s.io.apimachinery.pkg.apis.meta.{version}")),
        g => g.split('.').next().unwrap_or(g),
    };
    Some(format!("k8s.io.api.{short}.{version}"))
}

/// The parts of a `runtime.Unknown` envelope.
#[derive(Default)]
struct Envelope<'a> {
    api_version: String,
    kind: String,
    raw: Option<&'a [u8]>,
    encoding: String,
}

/// Reads one varint of a generated message's field as gogo-protobuf's generated code does,
/// with its errors (`proto: integer overflow`, `unexpected EOF`).
fn gogo_varint(buf: &[u8], at: &mut usize) -> Result<u64, DecodeError> {
    let mut value = 0u64;
    let mut shift = 0u32;
    loop {
        if shift >= 64 {
            return Err(err("proto: integer overflow"));
        }
        let Some(&b) = buf.get(*at) else {
            return Err(err("unexpected EOF"));
        };
        *at += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Ok(value);
        }
        shift += 7;
    }
}

/// Skips a field of an unknown number, as the generated `skipGenerated` does.
fn gogo_skip(buf: &[u8], at: &mut usize, wire_type: u64) -> Result<(), DecodeError> {
    match wire_type {
        0 => gogo_varint(buf, at).map(|_| ()),
        1 | 5 => {
            let n = if wire_type == 1 { 8 } else { 4 };
            if *at + n > buf.len() {
                return Err(err("unexpected EOF"));
            }
            *at += n;
            Ok(())
        }
        2 => {
            let len = gogo_varint(buf, at)?;
            let end = usize::try_from(len)
                .ok()
                .and_then(|l| at.checked_add(l))
                .ok_or_else(|| err("proto: negative length found during unmarshaling"))?;
            if end > buf.len() {
                return Err(err("unexpected EOF"));
            }
            *at = end;
            Ok(())
        }
        3 => Err(err("proto: unexpected end of group")),
        other => Err(err(format!("proto: illegal wireType {other}"))),
    }
}

/// Reads the length-delimited payload of a field whose wire type was checked.
fn gogo_bytes<'a>(buf: &'a [u8], at: &mut usize) -> Result<&'a [u8], DecodeError> {
    let len = gogo_varint(buf, at)?;
    let end = usize::try_from(len)
        .ok()
        .and_then(|l| at.checked_add(l))
        .ok_or_else(|| err("proto: negative length found during unmarshaling"))?;
    if end > buf.len() {
        return Err(err("unexpected EOF"));
    }
    let out = &buf[*at..end];
    *at = end;
    Ok(out)
}

/// The fields of one generated message: `(number, wire type, payload)` for its
/// length-delimited fields, refusing what the generated `Unmarshal` of `message` refuses.
fn gogo_fields<'a>(
    message: &str,
    names: &[(u64, &str)],
    buf: &'a [u8],
) -> Result<Vec<(u64, &'a [u8])>, DecodeError> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < buf.len() {
        let key = gogo_varint(buf, &mut at)?;
        let (number, wire_type) = (key >> 3, key & 7);
        if wire_type == 4 {
            return Err(err(format!(
                "proto: {message}: wiretype end group for non-group"
            )));
        }
        if number == 0 || i32::try_from(number).is_err() {
            return Err(err(format!(
                "proto: {message}: illegal tag {} (wire type {key})",
                number as i32
            )));
        }
        match names.iter().find(|(n, _)| *n == number) {
            Some((_, name)) => {
                if wire_type != 2 {
                    return Err(err(format!(
                        "proto: wrong wireType = {wire_type} for field {name}"
                    )));
                }
                out.push((number, gogo_bytes(buf, &mut at)?));
            }
            None => gogo_skip(buf, &mut at, wire_type)?,
        }
    }
    Ok(out)
}

/// The `runtime.Unknown` envelope of a body, read as kube-apiserver's protobuf serializer
/// reads it, with its errors.
fn envelope(body: &[u8]) -> Result<Envelope<'_>, DecodeError> {
    if body.is_empty() {
        return Err(err("empty data"));
    }
    let Some(rest) = body.strip_prefix(MAGIC) else {
        return Err(err(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
        ));
    };
    if rest.is_empty() {
        return Err(err("empty body"));
    }
    let mut env = Envelope::default();
    let fields = [
        (1, "TypeMeta"),
        (2, "Raw"),
        (3, "ContentEncoding"),
        (4, "ContentType"),
    ];
    for (number, payload) in gogo_fields("Unknown", &fields, rest)? {
        match number {
            1 => {
                let meta = [(1, "APIVersion"), (2, "Kind")];
                for (n, b) in gogo_fields("TypeMeta", &meta, payload)? {
                    let text = String::from_utf8_lossy(b).into_owned();
                    if n == 1 {
                        env.api_version = text;
                    } else {
                        env.kind = text;
                    }
                }
            }
            2 => env.raw = Some(payload),
            3 => env.encoding = String::from_utf8_lossy(payload).into_owned(),
            _ => {}
        }
    }
    Ok(env)
}

/// Decodes a Kubernetes protobuf body (`k8s\0` + `runtime.Unknown`) into the JSON object it
/// encodes, with `apiVersion` and `kind` set. An envelope that does not decode gets the
/// protobuf serializer's error (`proto: Unknown: illegal tag 0 (wire type 1)`).
pub fn decode(body: &[u8]) -> Result<Value, DecodeError> {
    let Envelope {
        api_version,
        kind,
        raw,
        encoding,
    } = envelope(body)?;
    if !encoding.is_empty() {
        return Err(err(format!(
            "content encoding {encoding:?} is not supported"
        )));
    }
    if kind.is_empty() {
        return Err(err("the protobuf body names no kind"));
    }
    let package = package_of(&api_version)
        .ok_or_else(|| err(format!("unknown apiVersion {api_version:?}")))?;
    let name = format!("{package}.{kind}");
    if !schema().contains_key(&name) {
        return Err(err(format!(
            "protobuf bodies of {kind} ({api_version}) are not supported; send JSON"
        )));
    }
    let mut object =
        message(&name, raw.unwrap_or_default(), 0)?.unwrap_or_else(|| Value::Object(Map::new()));
    if let Some(map) = object.as_object_mut() {
        map.insert("apiVersion".into(), Value::String(api_version));
        map.insert("kind".into(), Value::String(kind));
    }
    Ok(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    fn bytes_field(n: u64, b: &[u8], out: &mut Vec<u8>) {
        varint(n << 3 | 2, out);
        varint(b.len() as u64, out);
        out.extend_from_slice(b);
    }

    fn int_field(n: u64, v: u64, out: &mut Vec<u8>) {
        varint(n << 3, out);
        varint(v, out);
    }

    fn map_entry(k: &str, v: &[u8]) -> Vec<u8> {
        let mut e = Vec::new();
        bytes_field(1, k.as_bytes(), &mut e);
        bytes_field(2, v, &mut e);
        e
    }

    fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let mut type_meta = Vec::new();
        bytes_field(1, api_version.as_bytes(), &mut type_meta);
        bytes_field(2, kind.as_bytes(), &mut type_meta);
        let mut unknown = Vec::new();
        bytes_field(1, &type_meta, &mut unknown);
        bytes_field(2, raw, &mut unknown);
        bytes_field(3, b"", &mut unknown);
        bytes_field(4, b"", &mut unknown);
        let mut body = MAGIC.to_vec();
        body.extend(unknown);
        body
    }

    #[test]
    fn self_and_subject_access_reviews_as_kubectl_auth_can_i_sends_them() {
        let mut attrs = Vec::new();
        bytes_field(1, b"cluster1", &mut attrs);
        bytes_field(2, b"create", &mut attrs);
        bytes_field(3, b"work.open-cluster-management.io", &mut attrs);
        bytes_field(5, b"manifestworks", &mut attrs);
        let mut spec = Vec::new();
        bytes_field(1, &attrs, &mut spec);
        let mut review = Vec::new();
        bytes_field(1, b"", &mut review);
        bytes_field(2, &spec, &mut review);
        bytes_field(3, b"", &mut review);
        let value = decode(&envelope(
            "authorization.k8s.io/v1",
            "SelfSubjectAccessReview",
            &review,
        ))
        .unwrap();
        assert_eq!(
            value,
            json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                "metadata": {}, "status": {},
                "spec": {"resourceAttributes": {"namespace": "cluster1", "verb": "create",
                    "group": "work.open-cluster-management.io", "resource": "manifestworks"}}})
        );
        let mut sar = Vec::new();
        bytes_field(1, &attrs, &mut sar);
        bytes_field(3, b"bob", &mut sar);
        bytes_field(4, b"team", &mut sar);
        let mut review = Vec::new();
        bytes_field(2, &sar, &mut review);
        let value = decode(&envelope(
            "authorization.k8s.io/v1",
            "SubjectAccessReview",
            &review,
        ))
        .unwrap();
        assert_eq!(value["spec"]["user"], "bob");
        assert_eq!(value["spec"]["groups"], json!(["team"]));
    }

    #[test]
    fn a_config_map_with_data_and_binary_data() {
        let mut meta = Vec::new();
        bytes_field(1, b"settings", &mut meta);
        bytes_field(2, b"", &mut meta); // generateName, empty: dropped
        bytes_field(3, b"default", &mut meta);
        bytes_field(8, b"", &mut meta); // creationTimestamp, zero: dropped
        bytes_field(11, &map_entry("app", b"web"), &mut meta);
        let mut cm = Vec::new();
        bytes_field(1, &meta, &mut cm);
        bytes_field(2, &map_entry("k", b"v"), &mut cm);
        bytes_field(2, &map_entry("empty", b""), &mut cm);
        bytes_field(3, &map_entry("bin", &[0xde, 0xad, 0xbe, 0xef]), &mut cm);
        let value = decode(&envelope("v1", "ConfigMap", &cm)).unwrap();
        assert_eq!(
            value,
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "settings", "namespace": "default", "labels": {"app": "web"}},
                "data": {"k": "v", "empty": ""}, "binaryData": {"bin": "3q2+7w=="}})
        );
    }

    #[test]
    fn deployments_with_quantities_int_or_strings_and_repeated_fields() {
        let mut limits = Vec::new();
        bytes_field(1, b"500m", &mut limits);
        let mut resources = Vec::new();
        bytes_field(1, &map_entry("cpu", &limits), &mut resources);
        let mut container = Vec::new();
        bytes_field(1, b"web", &mut container);
        bytes_field(2, b"nginx", &mut container);
        bytes_field(3, b"sh", &mut container);
        bytes_field(3, b"-c", &mut container);
        bytes_field(8, &resources, &mut container);
        let mut pod_spec = Vec::new();
        bytes_field(2, &container, &mut pod_spec);
        let mut template = Vec::new();
        bytes_field(2, &pod_spec, &mut template);
        let mut max_surge = Vec::new();
        int_field(1, 1, &mut max_surge);
        bytes_field(3, b"25%", &mut max_surge);
        let mut rolling = Vec::new();
        bytes_field(2, &max_surge, &mut rolling);
        let mut strategy = Vec::new();
        bytes_field(1, b"RollingUpdate", &mut strategy);
        bytes_field(2, &rolling, &mut strategy);
        let mut spec = Vec::new();
        int_field(1, 0, &mut spec); // replicas: 0 is kept
        bytes_field(3, &template, &mut spec);
        bytes_field(4, &strategy, &mut spec);
        let mut meta = Vec::new();
        bytes_field(1, b"web", &mut meta);
        let mut time = Vec::new();
        int_field(1, 1_700_000_000, &mut time);
        bytes_field(8, &time, &mut meta);
        let mut d = Vec::new();
        bytes_field(1, &meta, &mut d);
        bytes_field(2, &spec, &mut d);
        bytes_field(3, b"", &mut d);
        let value = decode(&envelope("apps/v1", "Deployment", &d)).unwrap();
        assert_eq!(value["spec"]["replicas"], json!(0));
        assert_eq!(
            value["spec"]["template"]["spec"]["containers"][0],
            json!({"name": "web", "image": "nginx", "command": ["sh", "-c"], "resources": {"limits": {"cpu": "500m"}}})
        );
        assert_eq!(
            value["spec"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}})
        );
        assert_eq!(
            value["metadata"]["creationTimestamp"],
            json!("2023-11-14T22:13:20Z")
        );
        assert_eq!(value["status"], json!({}));
    }

    #[test]
    fn embedded_structs_are_inlined_as_json_inlines_them() {
        // Volume{name, volumeSource{configMap{localObjectReference{name}, defaultMode}}}
        let mut reference = Vec::new();
        bytes_field(1, b"settings", &mut reference);
        let mut config_map = Vec::new();
        bytes_field(1, &reference, &mut config_map);
        int_field(3, 420, &mut config_map);
        let mut source = Vec::new();
        bytes_field(19, &config_map, &mut source);
        let mut volume = Vec::new();
        bytes_field(1, b"config", &mut volume);
        bytes_field(2, &source, &mut volume);
        let mut pod_spec = Vec::new();
        bytes_field(1, &volume, &mut pod_spec);
        let mut pod = Vec::new();
        bytes_field(2, &pod_spec, &mut pod);
        let value = decode(&envelope("v1", "Pod", &pod)).unwrap();
        assert_eq!(
            value["spec"]["volumes"],
            json!([{"name": "config", "configMap": {"name": "settings", "defaultMode": 420}}])
        );
    }

    #[test]
    fn bad_bodies_are_errors_not_panics() {
        assert!(decode(b"{}").is_err());
        assert!(decode(b"k8s\0\x0a\xff").is_err());
        let mut unknown_kind = Vec::new();
        bytes_field(1, b"x", &mut unknown_kind);
        assert!(
            decode(&envelope("example.com/v1", "Widget", &unknown_kind))
                .unwrap_err()
                .to_string()
                .contains("not supported")
        );
        // Truncated and garbage payloads of a known kind.
        for raw in [
            &b"\x0a\x05ab"[..],
            b"\x0f",
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
        ] {
            assert!(decode(&envelope("v1", "ConfigMap", raw)).is_err());
        }
        // Deep nesting is refused.
        let mut nested = Vec::new();
        for _ in 0..200 {
            let mut outer = Vec::new();
            bytes_field(3, &nested, &mut outer); // JSONSchemaProps-like self nesting is not in
            nested = outer; // the table, so this is skipped field data, never recursed into.
        }
        assert!(decode(&envelope("v1", "ConfigMap", &nested)).is_ok());
    }

    #[test]
    fn every_message_type_in_the_table_is_defined() {
        let schema = schema();
        assert!(schema.len() > 200, "{}", schema.len());
        for fields in schema.values() {
            for f in fields.values() {
                let mut tys = vec![&f.ty];
                if let Some((k, v)) = &f.map {
                    tys.push(k);
                    tys.push(v);
                }
                for ty in tys {
                    if let Ty::Msg(name) = ty
                        && !is_special(name)
                        && !name.contains("scheduling.v1alpha3")
                    {
                        assert!(
                            schema.contains_key(name),
                            "{} refers to missing {name}",
                            f.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn durations_print_as_go_does() {
        assert_eq!(go_duration(0), "0s");
        assert_eq!(go_duration(1_500_000_000), "1.5s");
        assert_eq!(go_duration(3_600_000_000_000 + 60_000_000_000), "1h1m0s");
        assert_eq!(go_duration(-2_000_000_000), "-2s");
    }
}
