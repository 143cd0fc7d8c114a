//! The text a simulator input keeps of a ManagedCluster, cut from the list item as it was
//! read: the item without insignificant whitespace, without `metadata.labels`,
//! `status.clusterClaims` and `spec.taints` (the cluster's entry holds those) and without
//! `apiVersion` and `kind` (the same for every cluster; the type does not read them). Writing the decoded object back
//! out as JSON gave the same text at several times the cost (times and quantities formatted
//! again, every string escaped again).
//!
//! Only an item whose decoding added no schema default may be kept so: its text then says
//! exactly what the decoded object holds.

use super::stream::quote_or_backslash;

/// Where an object's members are, for the two members left out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    /// The item itself.
    Top,
    /// Its `metadata`.
    Metadata,
    /// Its `status`.
    Status,
    /// Its `spec`.
    Spec,
    /// Anywhere else.
    Other,
}

/// Writes `item`, the text of one JSON object, into `out` (cleared first) compacted and
/// without `apiVersion`, `kind`, `metadata.labels`, `status.clusterClaims` and
/// `spec.taints`. `item` must be well-formed JSON
/// (the caller has decoded it): the text is not validated again, though most malformed text
/// gives `None` (the caller then writes the decoded object out instead).
pub(super) fn cluster_text(item: &[u8], out: &mut Vec<u8>) -> Option<()> {
    out.clear();
    let mut reader = Reader { text: item, pos: 0 };
    reader.skip_whitespace();
    reader.value(At::Top, out)?;
    reader.skip_whitespace();
    (reader.pos == item.len()).then_some(())
}

struct Reader<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        const SPACES: u64 = 0x2020_2020_2020_2020;
        loop {
            // Spaces eight at a time (indentation is most of a pretty-printed List's
            // whitespace): the lowest byte that is not a space ends the run.
            if let Some(chunk) = self
                .text
                .get(self.pos..self.pos + 8)
                .and_then(|c| <[u8; 8]>::try_from(c).ok())
            {
                let other = u64::from_le_bytes(chunk) ^ SPACES;
                self.pos += (other.trailing_zeros() / 8) as usize;
                if other == 0 {
                    continue;
                }
            }
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                _ => return,
            }
        }
    }

    /// Copies the value at the reader (no whitespace before it) into `out`.
    fn value(&mut self, at: At, out: &mut Vec<u8>) -> Option<()> {
        match self.peek()? {
            b'{' if at != At::Other => self.object(at, out),
            b'{' | b'[' => self.nested(out),
            b'"' => self.string(out),
            _ => self.literal(out),
        }
    }

    /// Copies an object whose members may include one to leave out.
    fn object(&mut self, at: At, out: &mut Vec<u8>) -> Option<()> {
        self.pos += 1;
        out.push(b'{');
        self.skip_whitespace();
        if self.peek()? == b'}' {
            self.pos += 1;
            out.push(b'}');
            return Some(());
        }
        let mut empty = true;
        loop {
            let mark = out.len();
            if !empty {
                out.push(b',');
            }
            let key_start = out.len();
            if self.peek()? != b'"' {
                return None;
            }
            self.string(out)?;
            let key = out.get(key_start..)?;
            let (child, left_out) = member(at, key)?;
            self.skip_whitespace();
            if self.peek()? != b':' {
                return None;
            }
            self.pos += 1;
            out.push(b':');
            self.skip_whitespace();
            self.value(child, out)?;
            if left_out {
                out.truncate(mark);
            } else {
                empty = false;
            }
            self.skip_whitespace();
            match self.peek()? {
                b',' => {
                    self.pos += 1;
                    self.skip_whitespace();
                }
                b'}' => {
                    self.pos += 1;
                    out.push(b'}');
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Copies an object or array with nothing left out.
    fn nested(&mut self, out: &mut Vec<u8>) -> Option<()> {
        let mut depth = 0usize;
        // The text since the last whitespace, copied in one piece when whitespace or the end
        // of the value comes.
        let mut run = self.pos;
        loop {
            match self.peek()? {
                b' ' | b'\t' | b'\n' | b'\r' => {
                    out.extend_from_slice(self.text.get(run..self.pos)?);
                    self.skip_whitespace();
                    run = self.pos;
                }
                b'"' => self.pos = self.string_end()?,
                b'{' | b'[' => {
                    depth += 1;
                    self.pos += 1;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    self.pos += 1;
                    if depth == 0 {
                        out.extend_from_slice(self.text.get(run..self.pos)?);
                        return Some(());
                    }
                }
                _ => self.pos += 1,
            }
        }
    }

    /// Where the string at the reader ends (after its closing quote).
    fn string_end(&self) -> Option<usize> {
        let mut i = self.pos + 1;
        loop {
            i += quote_or_backslash(self.text.get(i..)?)?;
            if *self.text.get(i)? == b'\\' {
                i += 2;
                continue;
            }
            return Some(i + 1);
        }
    }

    /// Copies a string, quotes and escapes as they are.
    fn string(&mut self, out: &mut Vec<u8>) -> Option<()> {
        let end = self.string_end()?;
        out.extend_from_slice(self.text.get(self.pos..end)?);
        self.pos = end;
        Some(())
    }

    /// Copies a number, `true`, `false` or `null`.
    fn literal(&mut self, out: &mut Vec<u8>) -> Option<()> {
        let start = self.pos;
        while let Some(b) = self.peek() {
            if matches!(
                b,
                b',' | b'}' | b']' | b':' | b' ' | b'\t' | b'\n' | b'\r' | b'"' | b'{' | b'['
            ) {
                break;
            }
            self.pos += 1;
        }
        let literal = self.text.get(start..self.pos)?;
        if literal.is_empty() {
            return None;
        }
        out.extend_from_slice(literal);
        Some(())
    }
}

/// Where the value of the member whose key (quoted, as written) is `key` is, and whether
/// the member is left out.
fn member(at: At, key: &[u8]) -> Option<(At, bool)> {
    if at == At::Other {
        return Some((At::Other, false));
    }
    let decoded;
    let name = match key.get(1..key.len().checked_sub(1)?)? {
        name if !name.contains(&b'\\') => name,
        _ => {
            decoded = serde_json::from_slice::<String>(key).ok()?;
            decoded.as_bytes()
        }
    };
    Some(match (at, name) {
        (At::Top, b"metadata") => (At::Metadata, false),
        (At::Top, b"status") => (At::Status, false),
        (At::Top, b"spec") => (At::Spec, false),
        // The same for every cluster: the type says them.
        (At::Top, b"apiVersion" | b"kind") => (At::Other, true),
        (At::Metadata, b"labels") | (At::Status, b"clusterClaims") | (At::Spec, b"taints") => {
            (At::Other, true)
        }
        _ => (At::Other, false),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn kept(text: &str) -> Option<String> {
        let mut out = b"left over".to_vec();
        cluster_text(text.as_bytes(), &mut out)?;
        Some(String::from_utf8(out).unwrap())
    }

    /// What the text should read as: the value without the members left out.
    fn without(mut value: Value) -> Value {
        if let Some(top) = value.as_object_mut() {
            top.remove("apiVersion");
            top.remove("kind");
        }
        if let Some(m) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("labels");
        }
        if let Some(s) = value.get_mut("status").and_then(Value::as_object_mut) {
            s.remove("clusterClaims");
        }
        if let Some(s) = value.get_mut("spec").and_then(Value::as_object_mut) {
            s.remove("taints");
        }
        value
    }

    #[test]
    fn items_are_compacted_without_the_members_left_out() {
        let values = [
            json!({"apiVersion": "v1", "kind": "ManagedCluster",
                "metadata": {"labels": {"a": "b"}, "name": "n", "annotations": {"labels": "x"}},
                "spec": {"taints": [{"key": "k", "value": "v \" } ] \\ \u{e9}", "effect": "NoSelect"}],
                    "leaseDurationSeconds": 60, "hubAcceptsClient": true},
                "status": {"conditions": [], "clusterClaims": [{"name": "a", "value": "b"}],
                    "allocatable": {"cpu": "1.5", "memory": "-2e3"}, "version": null,
                    "n": -2, "f": 1.5e3, "t": true}}),
            // The left-out members first, last, alone; values that are not objects.
            json!({"metadata": {"name": "n", "labels": {}}, "status": {"clusterClaims": []}}),
            json!({"metadata": {"labels": null}, "status": null, "spec": [1, {"taints": 2}]}),
            json!({"spec": {"taints": [{"key": "k"}], "x": {"taints": 1}}, "metadata": null}),
            json!({"metadata": {"labels": {"x": "y"}}, "status": {"clusterClaims": null, "x": false}}),
            // Deeper members of the same names stay.
            json!({"spec": {"metadata": {"labels": {"x": "y"}}, "status": {"clusterClaims": 1}}}),
            json!({}),
        ];
        for value in values {
            for text in [
                value.to_string(),
                serde_json::to_string_pretty(&value).unwrap(),
            ] {
                let got = kept(&format!("  {text}\n")).unwrap();
                assert_eq!(got, without(value.clone()).to_string(), "{text}");
            }
        }
    }

    /// A key is read as JSON reads it: escapes in it still name the member.
    #[test]
    fn escaped_keys_are_matched_as_decoded() {
        let text = r#"{"kin\u0064": "K", "met\u0061data": {"l\u0061bels": {"a": "b"}, "n\"": 1}, "status": {"clusterCl\u0061ims": [], "a": 1}}"#;
        assert_eq!(
            kept(text).unwrap(),
            r#"{"met\u0061data":{"n\"":1},"status":{"a":1}}"#
        );
    }

    /// Whitespace runs of every length and mix, at every offset.
    #[test]
    fn whitespace_runs_are_skipped() {
        for len in 0..20 {
            for mix in [b" ", b"\n", b"\t", b"\r"] {
                for head in 0..9 {
                    let mut text = vec![b' '; head];
                    text.push(b'[');
                    text.extend((0..len).map(|i| if i % 5 == 4 { mix[0] } else { b' ' }));
                    text.extend_from_slice(b"1 ,\n  \"a b\"  ]");
                    text.extend(std::iter::repeat_n(b' ', len));
                    let mut out = Vec::new();
                    cluster_text(&text, &mut out).unwrap();
                    assert_eq!(out, b"[1,\"a b\"]", "{text:?}");
                }
            }
        }
    }

    #[test]
    fn malformed_text_is_refused() {
        for text in [
            "",
            "{",
            "{\"a\" 1}",
            "{\"a\": }",
            "{\"a\": 1,}",
            "{\"a\": [1}",
            "{\"a\": \"x}",
            "{} {}",
            "{1: 2}",
            "{\"status\": {\"a\": tru\"e\"}}",
        ] {
            assert_eq!(kept(text), None, "{text}");
        }
    }
}
