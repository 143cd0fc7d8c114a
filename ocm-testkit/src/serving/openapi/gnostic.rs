//! Swagger 2.0 documents in gnostic's protobuf form.
//!
//! kubectl asks `/openapi/v2` for `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`
//! and unmarshals the answer into gnostic's `openapi.v2.Document` message (the model of
//! `openapiv2/OpenAPIv2.proto` in `github.com/google/gnostic-models`). This module writes that
//! message from the JSON form of a document, field by field, with the message and field
//! numbers of that `.proto` file.
//!
//! As gnostic does, values the model has no typed field for (`default`, `example`, `enum`
//! entries and `x-` vendor extensions) travel as `Any` messages carrying their YAML text; the
//! text written here is the value's JSON, which every YAML parser reads as the same value.
//! Proto3 rules apply: scalars equal to their zero value are left out, while sub-messages and
//! the members of a `oneof` are written whenever the JSON has them (their presence matters:
//! an empty `properties` object makes a schema a structure, not a map).

use serde_json::{Map, Value};

/// The media type kubectl asks for (kube-apiserver also accepts it with `@` spelled `.`).
pub(crate) const MEDIA_TYPE_REQUESTED: &str = "com.github.proto-openapi.spec.v2@v1.0+protobuf";

/// The media type kube-apiserver names in `Content-Type` for both spellings.
pub(crate) const MEDIA_TYPE: &str = "com.github.proto-openapi.spec.v2.v1.0+protobuf";

const VARINT: u64 = 0;
const FIXED64: u64 = 1;
const LEN: u64 = 2;

/// A protobuf message being written.
#[derive(Default)]
struct Msg(Vec<u8>);

impl Msg {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn key(&mut self, field: u64, wire: u64) {
        self.varint(field << 3 | wire);
    }

    fn bytes(&mut self, field: u64, b: &[u8]) {
        self.key(field, LEN);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    /// A string field; empty strings are the default and are left out.
    fn string(&mut self, field: u64, s: &str) {
        if !s.is_empty() {
            self.bytes(field, s.as_bytes());
        }
    }

    /// Every string of a JSON string or array of strings, as a repeated field.
    fn strings(&mut self, field: u64, v: &Value) {
        match v {
            Value::String(s) => self.bytes(field, s.as_bytes()),
            Value::Array(items) => {
                for s in items.iter().filter_map(Value::as_str) {
                    self.bytes(field, s.as_bytes());
                }
            }
            _ => {}
        }
    }

    fn boolean(&mut self, field: u64, v: &Value) {
        if v.as_bool() == Some(true) {
            self.key(field, VARINT);
            self.varint(1);
        }
    }

    fn int64(&mut self, field: u64, v: &Value) {
        let n = v
            .as_i64()
            .or_else(|| v.as_f64().map(|f| f as i64))
            .unwrap_or(0);
        if n != 0 {
            self.key(field, VARINT);
            // Negative int64 values are ten-byte varints of their two's complement.
            self.varint(n as u64);
        }
    }

    fn double(&mut self, field: u64, v: &Value) {
        let f = v.as_f64().unwrap_or(0.0);
        if f != 0.0 {
            self.key(field, FIXED64);
            self.0.extend_from_slice(&f.to_le_bytes());
        }
    }

    fn message(&mut self, field: u64, m: Msg) {
        self.bytes(field, &m.0);
    }

    /// An `Any` holding `v` as YAML text (its JSON).
    fn any(&mut self, field: u64, v: &Value) {
        self.message(field, any(v));
    }

    /// `x-…` keys of `obj` as repeated `NamedAny` vendor extensions.
    fn vendor_extensions(&mut self, field: u64, obj: &Map<String, Value>) {
        for (k, v) in obj.iter().filter(|(k, _)| k.starts_with("x-")) {
            let mut named = Msg::default();
            named.string(1, k);
            named.any(2, v);
            self.message(field, named);
        }
    }
}

fn any(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(2, &serde_json::to_string(v).unwrap_or_default());
    m
}

fn object(v: &Value) -> &Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    v.as_object().unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// The `openapi.v2.Document` message of a Swagger 2.0 document in JSON form.
pub(crate) fn document(doc: &Value) -> Vec<u8> {
    let mut m = Msg::default();
    let obj = object(doc);
    for (k, v) in obj {
        match k.as_str() {
            "swagger" => m.string(1, text(v)),
            "info" => m.message(2, info(v)),
            "host" => m.string(3, text(v)),
            "basePath" => m.string(4, text(v)),
            "schemes" => m.strings(5, v),
            "consumes" => m.strings(6, v),
            "produces" => m.strings(7, v),
            "paths" => m.message(8, paths(v)),
            "definitions" => m.message(9, named(v, schema)),
            "parameters" => m.message(10, named(v, parameter)),
            "responses" => m.message(11, named(v, response)),
            "security" => {
                for req in v.as_array().into_iter().flatten() {
                    m.message(12, security_requirement(req));
                }
            }
            "securityDefinitions" => m.message(13, named(v, security_definition)),
            _ => {}
        }
    }
    m.vendor_extensions(16, obj);
    m.0
}

/// A map message (`Definitions`, `Properties`, `ParameterDefinitions`, …): its entries as
/// repeated field 1 of `{name = 1, value = 2}` pairs.
fn named(v: &Value, value: fn(&Value) -> Msg) -> Msg {
    let mut m = Msg::default();
    for (k, item) in object(v) {
        let mut pair = Msg::default();
        pair.string(1, k);
        pair.message(2, value(item));
        m.message(1, pair);
    }
    m
}

fn info(v: &Value) -> Msg {
    let mut m = Msg::default();
    let obj = object(v);
    for (k, v) in obj {
        match k.as_str() {
            "title" => m.string(1, text(v)),
            "version" => m.string(2, text(v)),
            "description" => m.string(3, text(v)),
            "termsOfService" => m.string(4, text(v)),
            _ => {}
        }
    }
    m.vendor_extensions(7, obj);
    m
}

fn paths(v: &Value) -> Msg {
    let mut m = Msg::default();
    let obj = object(v);
    m.vendor_extensions(1, obj);
    for (k, item) in obj.iter().filter(|(k, _)| !k.starts_with("x-")) {
        let mut pair = Msg::default();
        pair.string(1, k);
        pair.message(2, path_item(item));
        m.message(2, pair);
    }
    m
}

fn path_item(v: &Value) -> Msg {
    let mut m = Msg::default();
    let obj = object(v);
    for (k, v) in obj {
        match k.as_str() {
            "$ref" => m.string(1, text(v)),
            "get" => m.message(2, operation(v)),
            "put" => m.message(3, operation(v)),
            "post" => m.message(4, operation(v)),
            "delete" => m.message(5, operation(v)),
            "options" => m.message(6, operation(v)),
            "head" => m.message(7, operation(v)),
            "patch" => m.message(8, operation(v)),
            "parameters" => {
                for p in v.as_array().into_iter().flatten() {
                    m.message(9, parameters_item(p));
                }
            }
            _ => {}
        }
    }
    m.vendor_extensions(10, obj);
    m
}

fn operation(v: &Value) -> Msg {
    let mut m = Msg::default();
    let obj = object(v);
    for (k, v) in obj {
        match k.as_str() {
            "tags" => m.strings(1, v),
            "summary" => m.string(2, text(v)),
            "description" => m.string(3, text(v)),
            "operationId" => m.string(5, text(v)),
            "produces" => m.strings(6, v),
            "consumes" => m.strings(7, v),
            "parameters" => {
                for p in v.as_array().into_iter().flatten() {
                    m.message(8, parameters_item(p));
                }
            }
            "responses" => m.message(9, responses(v)),
            "schemes" => m.strings(10, v),
            "deprecated" => m.boolean(11, v),
            _ => {}
        }
    }
    m.vendor_extensions(13, obj);
    m
}

/// `ParametersItem`: a reference (`json_reference = 2`) or a parameter (`parameter = 1`).
fn parameters_item(v: &Value) -> Msg {
    let mut m = Msg::default();
    match v.get("$ref") {
        Some(r) => {
            let mut reference = Msg::default();
            reference.string(1, text(r));
            m.message(2, reference);
        }
        None => m.message(1, parameter(v)),
    }
    m
}

/// `Parameter`: a body parameter (`body_parameter = 1`) or one of the non-body kinds
/// (`non_body_parameter = 2`, itself a oneof by `in`).
fn parameter(v: &Value) -> Msg {
    let mut m = Msg::default();
    let obj = object(v);
    let place = obj.get("in").map(text).unwrap_or_default();
    if place == "body" {
        let mut body = Msg::default();
        for (k, v) in obj {
            match k.as_str() {
                "description" => body.string(1, text(v)),
                "name" => body.string(2, text(v)),
                "in" => body.string(3, text(v)),
                "required" => body.boolean(4, v),
                "schema" => body.message(5, schema(v)),
                _ => {}
            }
        }
        body.vendor_extensions(6, obj);
        m.message(1, body);
        return m;
    }
    // Query and form parameters have `allowEmptyValue` (field 5) and so number every later
    // field one higher than header and path parameters do.
    let (which, shift) = match place {
        "header" => (1, 0),
        "formData" => (2, 1),
        "query" => (3, 1),
        _ => (4, 0),
    };
    let mut sub = Msg::default();
    for (k, v) in obj {
        match k.as_str() {
            "required" => sub.boolean(1, v),
            "in" => sub.string(2, text(v)),
            "description" => sub.string(3, text(v)),
            "name" => sub.string(4, text(v)),
            "allowEmptyValue" if shift == 1 => sub.boolean(5, v),
            "type" => sub.string(5 + shift, text(v)),
            "format" => sub.string(6 + shift, text(v)),
            "items" => sub.message(7 + shift, primitives_items(v)),
            "collectionFormat" => sub.string(8 + shift, text(v)),
            "default" => sub.any(9 + shift, v),
            "uniqueItems" => sub.boolean(19 + shift, v),
            "enum" => {
                for e in v.as_array().into_iter().flatten() {
                    sub.any(20 + shift, e);
                }
            }
            _ => {}
        }
    }
    sub.vendor_extensions(22 + shift, obj);
    let mut non_body = Msg::default();
    non_body.message(which, sub);
    m.message(2, non_body);
    m
}

fn primitives_items(v: &Value) -> Msg {
    let mut m = Msg::default();
    let obj = object(v);
    for (k, v) in obj {
        match k.as_str() {
            "type" => m.string(1, text(v)),
            "format" => m.string(2, text(v)),
            "items" => m.message(3, primitives_items(v)),
            "collectionFormat" => m.string(4, text(v)),
            "default" => m.any(5, v),
            _ => {}
        }
    }
    m.vendor_extensions(18, obj);
    m
}

fn responses(v: &Value) -> Msg {
    let mut m = Msg::default();
    let obj = object(v);
    for (code, r) in obj.iter().filter(|(k, _)| !k.starts_with("x-")) {
        let mut value = Msg::default();
        match r.get("$ref") {
            Some(reference) => {
                let mut jr = Msg::default();
                jr.string(1, text(reference));
                value.message(2, jr);
            }
            None => value.message(1, response(r)),
        }
        let mut pair = Msg::default();
        pair.string(1, code);
        pair.message(2, value);
        m.message(1, pair);
    }
    m.vendor_extensions(2, obj);
    m
}

fn response(v: &Value) -> Msg {
    let mut m = Msg::default();
    let obj = object(v);
    for (k, v) in obj {
        match k.as_str() {
            "description" => m.string(1, text(v)),
            "schema" => {
                // `SchemaItem`: a schema (1) or a file schema (2).
                let mut item = Msg::default();
                item.message(1, schema(v));
                m.message(2, item);
            }
            _ => {}
        }
    }
    m.vendor_extensions(5, obj);
    m
}

fn security_requirement(v: &Value) -> Msg {
    let mut m = Msg::default();
    for (name, scopes) in object(v) {
        let mut array = Msg::default();
        array.strings(1, scopes);
        let mut pair = Msg::default();
        pair.string(1, name);
        pair.message(2, array);
        m.message(1, pair);
    }
    m
}

/// `SecurityDefinitionsItem`: only the kinds kube-apiserver publishes (`apiKey`, `basic`).
fn security_definition(v: &Value) -> Msg {
    let mut m = Msg::default();
    let obj = object(v);
    let mut sec = Msg::default();
    match obj.get("type").map(text) {
        Some("basic") => {
            sec.string(1, "basic");
            if let Some(d) = obj.get("description") {
                sec.string(2, text(d));
            }
            sec.vendor_extensions(3, obj);
            m.message(1, sec);
        }
        _ => {
            for (k, v) in obj {
                match k.as_str() {
                    "type" => sec.string(1, text(v)),
                    "name" => sec.string(2, text(v)),
                    "in" => sec.string(3, text(v)),
                    "description" => sec.string(4, text(v)),
                    _ => {}
                }
            }
            sec.vendor_extensions(5, obj);
            m.message(2, sec);
        }
    }
    m
}

/// The `Schema` message.
fn schema(v: &Value) -> Msg {
    let mut m = Msg::default();
    let obj = object(v);
    for (k, v) in obj {
        match k.as_str() {
            "$ref" => m.string(1, text(v)),
            "format" => m.string(2, text(v)),
            "title" => m.string(3, text(v)),
            "description" => m.string(4, text(v)),
            "default" => m.any(5, v),
            "multipleOf" => m.double(6, v),
            "maximum" => m.double(7, v),
            "exclusiveMaximum" => m.boolean(8, v),
            "minimum" => m.double(9, v),
            "exclusiveMinimum" => m.boolean(10, v),
            "maxLength" => m.int64(11, v),
            "minLength" => m.int64(12, v),
            "pattern" => m.string(13, text(v)),
            "maxItems" => m.int64(14, v),
            "minItems" => m.int64(15, v),
            "uniqueItems" => m.boolean(16, v),
            "maxProperties" => m.int64(17, v),
            "minProperties" => m.int64(18, v),
            "required" => m.strings(19, v),
            "enum" => {
                for e in v.as_array().into_iter().flatten() {
                    m.any(20, e);
                }
            }
            "additionalProperties" => {
                // `AdditionalPropertiesItem`: a schema (1) or a boolean (2).
                let mut item = Msg::default();
                match v {
                    Value::Bool(b) => {
                        item.key(2, VARINT);
                        item.varint(u64::from(*b));
                    }
                    _ => item.message(1, schema(v)),
                }
                m.message(21, item);
            }
            "type" => {
                let mut item = Msg::default();
                item.strings(1, v);
                m.message(22, item);
            }
            "items" => {
                // `ItemsItem`: one schema, or several for tuple-like arrays.
                let mut item = Msg::default();
                match v {
                    Value::Array(schemas) => {
                        for s in schemas {
                            item.message(1, schema(s));
                        }
                    }
                    _ => item.message(1, schema(v)),
                }
                m.message(23, item);
            }
            "allOf" => {
                for s in v.as_array().into_iter().flatten() {
                    m.message(24, schema(s));
                }
            }
            "properties" => m.message(25, named(v, schema)),
            "discriminator" => m.string(26, text(v)),
            "readOnly" => m.boolean(27, v),
            "example" => m.any(30, v),
            _ => {}
        }
    }
    m.vendor_extensions(31, obj);
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn varints_and_fields_are_written_as_protobuf_does() {
        let mut m = Msg::default();
        m.varint(300);
        assert_eq!(m.0, vec![0xac, 0x02]);
        let doc = document(&json!({"swagger": "2.0"}));
        assert_eq!(doc, b"\x0a\x032.0".to_vec());
    }

    #[test]
    fn presence_of_empty_messages_and_false_oneof_members_is_kept() {
        let s = schema(&json!({"properties": {}, "additionalProperties": false}));
        // additionalProperties (21) holding boolean (2) = false, then properties (25, empty).
        assert_eq!(s.0, vec![0xaa, 0x01, 0x02, 0x10, 0x00, 0xca, 0x01, 0x00]);
    }

    #[test]
    fn query_parameters_number_their_fields_after_allow_empty_value() {
        let p = parameter(&json!({"name": "dryRun", "in": "query", "type": "string"}));
        // non_body_parameter (2) { query_parameter_sub_schema (3) { in=2, name=4, type=6 } }
        let expected_sub: Vec<u8> = [
            &[0x12, 0x05][..],
            b"query",
            &[0x22, 0x06],
            b"dryRun",
            &[0x32, 0x06],
            b"string",
        ]
        .concat();
        let mut expected = vec![0x12, expected_sub.len() as u8 + 2, 0x1a];
        expected.push(expected_sub.len() as u8);
        expected.extend_from_slice(&expected_sub);
        assert_eq!(p.0, expected);
    }
}
