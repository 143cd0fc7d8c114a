//! The parser: Kubernetes JSONPath template text into [`Node`]s.
//!
//! This follows the scanning strategy of `k8s.io/client-go/util/jsonpath` step by step (it is
//! a hand-written scanner with no separate token stream), because kubectl's acceptance and
//! rejection of odd inputs falls out of that strategy: bracket contents end at the first `]`,
//! unions split on every `,`, quoted keys are re-parsed as dotted fields, and filters are cut
//! into operands at the first comparison character. Unlike client-go, the scanner loops
//! instead of recursing per token and limits how deeply rebuilt pieces nest, so no input can
//! exhaust the stack.

use super::ast::{Filter, FilterOp, Node, SliceBound};
use super::error::ParseError;

/// How deeply union members, quoted keys and filter operands may nest.
const MAX_NESTING: usize = 24;

/// Parses a whole template (text with `{…}` actions).
pub(crate) fn parse_template(text: &str) -> Result<Vec<Node>, ParseError> {
    parse_nested(text, 0)
}

fn parse_nested(text: &str, depth: usize) -> Result<Vec<Node>, ParseError> {
    if depth > MAX_NESTING {
        return Err(ParseError::new("expression nested too deeply", 0, ""));
    }
    Scanner {
        input: text,
        pos: 0,
        start: 0,
        width: 0,
        depth,
    }
    .run()
}

struct Scanner<'t> {
    input: &'t str,
    pos: usize,
    start: usize,
    width: usize,
    depth: usize,
}

impl<'t> Scanner<'t> {
    fn next(&mut self) -> Option<char> {
        match self.input[self.pos..].chars().next() {
            Some(c) => {
                self.width = c.len_utf8();
                self.pos += self.width;
                Some(c)
            }
            None => {
                self.width = 0;
                None
            }
        }
    }

    fn backup(&mut self) {
        self.pos -= self.width;
    }

    fn peek(&mut self) -> Option<char> {
        let c = self.next();
        self.backup();
        c
    }

    fn consume(&mut self) -> &'t str {
        let text = &self.input[self.start..self.pos];
        self.start = self.pos;
        text
    }

    fn rest(&self) -> &'t str {
        &self.input[self.pos..]
    }

    /// The byte before the rune just read.
    fn byte_before_last(&self) -> Option<u8> {
        self.pos
            .checked_sub(2)
            .and_then(|i| self.input.as_bytes().get(i).copied())
    }

    fn run(mut self) -> Result<Vec<Node>, ParseError> {
        let mut root = Vec::new();
        loop {
            // Text outside actions.
            loop {
                if self.rest().starts_with('{') {
                    if self.pos > self.start {
                        root.push(Node::Text(self.consume().into()));
                    }
                    break;
                }
                if self.next().is_none() {
                    if self.pos > self.start {
                        root.push(Node::Text(self.consume().into()));
                    }
                    return Ok(root);
                }
            }
            self.pos += 1;
            self.consume();
            let mut action = Vec::new();
            self.action(&mut action)?;
            root.push(Node::List(action));
        }
    }

    /// Scans the inside of an action up to and including its closing `}`.
    fn action(&mut self, cur: &mut Vec<Node>) -> Result<(), ParseError> {
        loop {
            let rest = self.rest();
            if rest.starts_with('}') {
                self.pos += 1;
                self.consume();
                return Ok(());
            }
            if rest.starts_with("[?(") {
                self.filter(cur)?;
                continue;
            }
            if rest.starts_with("..") {
                if matches!(cur.last(), Some(Node::Recursive)) {
                    return Err(ParseError::new(
                        "invalid multiple recursive descent",
                        self.pos,
                        "..",
                    ));
                }
                self.pos += 2;
                self.consume();
                cur.push(Node::Recursive);
                if self.peek().is_some_and(is_alphanumeric) {
                    self.field(cur);
                }
                continue;
            }
            let at = self.pos;
            match self.next() {
                None => return Err(ParseError::new("unclosed action", at, "")),
                Some(c @ ('\r' | '\n')) => {
                    return Err(ParseError::new("unclosed action", at, c.to_string()));
                }
                Some(' ' | '@' | '$') => {
                    self.consume();
                }
                Some('[') => self.array(cur)?,
                Some(q @ ('"' | '\'')) => self.quote(cur, q)?,
                Some('.') => self.field(cur),
                Some(c) if c == '+' || c == '-' || is_digit(c) => {
                    self.backup();
                    self.number(cur)?;
                }
                Some(c) if is_alphanumeric(c) => {
                    self.backup();
                    self.identifier(cur);
                }
                Some(c) => {
                    return Err(ParseError::new(
                        format!("unrecognized character in action: {}", go_rune(c)),
                        at,
                        c.to_string(),
                    ));
                }
            }
        }
    }

    /// `.name` (the `.` already read): a field, or `*`.
    fn field(&mut self, cur: &mut Vec<Node>) {
        self.consume();
        loop {
            match self.next() {
                Some('\\') => {
                    self.next();
                }
                r if is_terminator(r) => {
                    self.backup();
                    break;
                }
                _ => {}
            }
        }
        let value = self.consume();
        if value == "*" {
            cur.push(Node::Wildcard);
        } else {
            cur.push(Node::Field(value.replace('\\', "").into()));
        }
    }

    /// A bare word: `true`, `false`, or an identifier such as `range` and `end`.
    fn identifier(&mut self, cur: &mut Vec<Node>) {
        loop {
            let r = self.next();
            if is_terminator(r) {
                self.backup();
                break;
            }
        }
        match self.consume() {
            "true" => cur.push(Node::Bool(true)),
            "false" => cur.push(Node::Bool(false)),
            word => cur.push(Node::Identifier(word.into())),
        }
    }

    fn number(&mut self, cur: &mut Vec<Node>) -> Result<(), ParseError> {
        let at = self.pos;
        if matches!(self.peek(), Some('+' | '-')) {
            self.next();
        }
        loop {
            match self.next() {
                Some(c) if c == '.' || is_digit(c) => {}
                _ => {
                    self.backup();
                    break;
                }
            }
        }
        let value = self.consume();
        if let Ok(i) = value.parse::<i64>() {
            cur.push(Node::Int(i));
            return Ok(());
        }
        match parse_go_float(value) {
            Some(f) => {
                cur.push(Node::Float(f));
                Ok(())
            }
            None => Err(ParseError::new(
                format!("cannot parse number {value}"),
                at,
                value,
            )),
        }
    }

    /// `[...]` (the `[` already read): an index, slice, quoted key or union.
    fn array(&mut self, cur: &mut Vec<Node>) -> Result<(), ParseError> {
        let at = self.start;
        loop {
            match self.next() {
                None | Some('\n') => {
                    return Err(ParseError::new("unterminated array", at, "["));
                }
                Some(']') => break,
                Some(_) => {}
            }
        }
        let text = self.consume();
        let inner = &text[1..text.len() - 1];
        let inner_at = at + 1;
        let inner = if inner == "*" { ":" } else { inner };

        if inner.contains(',') {
            let mut members = Vec::new();
            let mut offset = inner_at;
            for part in inner.split(',') {
                let trimmed_start = part.trim_start_matches(' ');
                let member = trimmed_start.trim_end_matches(' ');
                let member_at = offset + (part.len() - trimmed_start.len());
                offset += part.len() + 1;
                let rebuilt = format!("{{[{member}]}}");
                members.push(self.sub_parse(&rebuilt, member_at, 2)?);
            }
            cur.push(Node::Union(members));
            return Ok(());
        }

        if let Some(key) = quoted_key(inner) {
            let rebuilt = format!("{{.{key}}}");
            cur.extend(self.sub_parse(&rebuilt, inner_at + 1, 2)?);
            return Ok(());
        }

        let Some(groups) = slice_groups(inner) else {
            return Err(ParseError::new(
                format!("invalid array index {inner}"),
                at,
                text,
            ));
        };
        let mut bounds = [SliceBound::default(); 3];
        for (i, group) in groups.iter().enumerate() {
            if !group.is_empty() {
                let digits = if i > 0 { &group[1..] } else { group };
                if i > 0 && digits.is_empty() {
                    bounds[i].known = false;
                } else {
                    bounds[i].known = true;
                    bounds[i].value = digits.parse::<i64>().map_err(|_| {
                        ParseError::new(format!("array index {digits} is not a number"), at, text)
                    })?;
                }
            } else if i == 1 {
                bounds[1].known = true;
                bounds[1].value = bounds[0].value.wrapping_add(1);
                bounds[1].derived = true;
            }
        }
        cur.push(Node::Array(bounds));
        Ok(())
    }

    /// `[?(...)]`, positioned at the `[`.
    fn filter(&mut self, cur: &mut Vec<Node>) -> Result<(), ParseError> {
        let at = self.pos;
        self.pos += 3;
        self.consume();
        let mut begin = false;
        let mut end = false;
        let mut pair = '"';
        loop {
            match self.next() {
                None | Some('\n') => {
                    return Err(ParseError::new("unterminated filter", at, "[?("));
                }
                Some(q @ ('"' | '\'')) => {
                    if !begin {
                        begin = true;
                        pair = q;
                        continue;
                    }
                    if self.byte_before_last() != Some(b'\\') && q == pair {
                        end = true;
                    }
                }
                Some(')') => {
                    if begin == end {
                        break;
                    }
                }
                Some(_) => {}
            }
        }
        let close_at = self.pos;
        match self.next() {
            Some(']') => {}
            other => {
                return Err(ParseError::new(
                    "unclosed array expect ]",
                    close_at,
                    other.map(String::from).unwrap_or_default(),
                ));
            }
        }
        let text = self.consume();
        let text = &text[..text.len() - 2];
        let text_at = at + 3;
        match split_filter(text) {
            None => {
                let left = self.sub_parse(&format!("{{{text}}}"), text_at, 1)?;
                cur.push(Node::Filter(Box::new(Filter {
                    left,
                    right: Vec::new(),
                    op: FilterOp::Exists,
                })));
            }
            Some((left, op, right)) => {
                let left_nodes = self.sub_parse(&format!("{{{left}}}"), text_at, 1)?;
                let right_at = text_at + left.len() + op.len();
                let right_nodes = self.sub_parse(&format!("{{{right}}}"), right_at, 1)?;
                cur.push(Node::Filter(Box::new(Filter {
                    left: left_nodes,
                    right: right_nodes,
                    op: FilterOp::from_text(op),
                })));
            }
        }
        Ok(())
    }

    /// A quoted string (the opening quote already read).
    fn quote(&mut self, cur: &mut Vec<Node>, quote: char) -> Result<(), ParseError> {
        let at = self.start;
        loop {
            match self.next() {
                None | Some('\n') => {
                    return Err(ParseError::new(
                        "unterminated quoted string",
                        at,
                        quote.to_string(),
                    ));
                }
                Some(c) if c == quote => {
                    if self.byte_before_last() != Some(b'\\') {
                        break;
                    }
                }
                Some(_) => {}
            }
        }
        let value = self.consume();
        match unquote(value) {
            Some(s) => {
                cur.push(Node::Text(s.into()));
                Ok(())
            }
            None => Err(ParseError::new(
                format!("unquote string {value} error invalid syntax"),
                at,
                value,
            )),
        }
    }

    /// Parses a piece of the template that was rebuilt as `{…}` text and returns the nodes of
    /// its first action, as client-go does. `origin` is where the piece starts in this
    /// scanner's input and `prefix` how many rebuilt characters precede it.
    fn sub_parse(
        &self,
        rebuilt: &str,
        origin: usize,
        prefix: usize,
    ) -> Result<Vec<Node>, ParseError> {
        let nodes = parse_nested(rebuilt, self.depth + 1)
            .map_err(|e| e.shifted(origin, prefix, self.input.len()))?;
        Ok(match nodes.into_iter().next() {
            Some(Node::List(list)) => list,
            _ => Vec::new(),
        })
    }
}

/// `'key'` with no other `'` inside: the key.
fn quoted_key(inner: &str) -> Option<&str> {
    let key = inner.strip_prefix('\'')?.strip_suffix('\'')?;
    (!key.contains('\'')).then_some(key)
}

/// Matches `^(-?\d*)(:-?\d*)?(:-?\d*)?$` and returns the three groups (empty when absent).
fn slice_groups(text: &str) -> Option<[&str; 3]> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let group = |i: &mut usize, lead: Option<u8>| -> (usize, usize) {
        let start = *i;
        if let Some(lead) = lead {
            if bytes.get(*i) != Some(&lead) {
                return (start, start);
            }
            *i += 1;
        }
        if bytes.get(*i) == Some(&b'-') {
            *i += 1;
        }
        while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        (start, *i)
    };
    let g0 = group(&mut i, None);
    let g1 = group(&mut i, Some(b':'));
    let g2 = group(&mut i, Some(b':'));
    (i == bytes.len()).then(|| [&text[g0.0..g0.1], &text[g1.0..g1.1], &text[g2.0..g2.1]])
}

/// Splits a filter body like client-go's `^([^!<>=]+)([!<>=]+)(.+?)$`.
fn split_filter(text: &str) -> Option<(&str, &str, &str)> {
    let is_op = |b: u8| matches!(b, b'!' | b'<' | b'>' | b'=');
    let bytes = text.as_bytes();
    let first = bytes.iter().position(|&b| is_op(b))?;
    if first == 0 {
        return None;
    }
    let mut run_end = first;
    while run_end < bytes.len() && is_op(bytes[run_end]) {
        run_end += 1;
    }
    if run_end == bytes.len() {
        // The right operand needs at least one character: give it the last operator byte.
        if run_end - first < 2 {
            return None;
        }
        run_end -= 1;
    }
    Some((&text[..first], &text[first..run_end], &text[run_end..]))
}

/// Go's `strconv.ParseFloat` on the characters the number scanner accepts (sign, digits,
/// dots): `1.`, `.5` and `+.5` are numbers; anything out of range is an error.
fn parse_go_float(text: &str) -> Option<f64> {
    let digits = text.trim_start_matches(['+', '-']);
    if digits.len() + 1 < text.len() || !digits.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    if !digits.bytes().all(|b| b.is_ascii_digit() || b == b'.') || digits.matches('.').count() > 1 {
        return None;
    }
    text.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Go's `strconv.Unquote`, extended to single quotes: the escapes of Go string literals.
/// Returns `None` for invalid syntax. Byte escapes that do not form UTF-8 are replaced with
/// U+FFFD (Go would keep the raw bytes).
fn unquote(literal: &str) -> Option<String> {
    let bytes = literal.as_bytes();
    let quote = *bytes.first()?;
    if bytes.len() < 2 || bytes[bytes.len() - 1] != quote || !matches!(quote, b'"' | b'\'') {
        return None;
    }
    let body = &literal[1..literal.len() - 1];
    if !body.bytes().any(|b| b == b'\\' || b == quote) {
        return Some(body.to_owned());
    }
    let mut out: Vec<u8> = Vec::with_capacity(body.len());
    let mut rest = body;
    while let Some(c) = rest.chars().next() {
        if c as u32 == u32::from(quote) {
            return None;
        }
        if c != '\\' {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let esc = rest.as_bytes().get(1).copied().filter(u8::is_ascii)?;
        rest = &rest[2..];
        let byte = |b: u8, out: &mut Vec<u8>| out.push(b);
        match esc {
            b'a' => byte(7, &mut out),
            b'b' => byte(8, &mut out),
            b'f' => byte(12, &mut out),
            b'n' => byte(b'\n', &mut out),
            b'r' => byte(b'\r', &mut out),
            b't' => byte(b'\t', &mut out),
            b'v' => byte(11, &mut out),
            b'x' | b'u' | b'U' => {
                let n = match esc {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let hex = rest.get(..n)?;
                if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                let v = u32::from_str_radix(hex, 16).ok()?;
                rest = &rest[n..];
                if esc == b'x' {
                    byte(u8::try_from(v).ok()?, &mut out);
                } else {
                    let ch = char::from_u32(v)?;
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
            }
            b'0'..=b'7' => {
                let digits = rest.as_bytes().get(..2)?;
                let mut v = u32::from(esc - b'0');
                for &d in digits {
                    if !(b'0'..=b'7').contains(&d) {
                        return None;
                    }
                    v = v * 8 + u32::from(d - b'0');
                }
                rest = &rest[2..];
                byte(u8::try_from(v).ok()?, &mut out);
            }
            b'\\' => byte(b'\\', &mut out),
            b'\'' | b'"' => {
                if esc != quote {
                    return None;
                }
                byte(esc, &mut out);
            }
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// Characters that end a field name or identifier.
fn is_terminator(r: Option<char>) -> bool {
    match r {
        None => true,
        Some(c) => matches!(
            c,
            ' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}'
        ),
    }
}

/// Go's `unicode.IsDigit`, approximated outside ASCII by Rust's numeric property.
fn is_digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric())
}

/// Letters, digits and `_`.
fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || is_digit(c)
}

/// Go's `%#U` rendering of a rune: `U+0026 '&'`, or just `U+0009` when not printable.
fn go_rune(c: char) -> String {
    if is_go_printable(c) {
        format!("U+{:04X} '{c}'", c as u32)
    } else {
        format!("U+{:04X}", c as u32)
    }
}

/// An approximation of Go's `strconv.IsPrint`: graphic characters and the ASCII space.
fn is_go_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(
        c,
        '\u{AD}'
            | '\u{600}'..='\u{605}'
            | '\u{61C}'
            | '\u{6DD}'
            | '\u{70F}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{FFFE}'
            | '\u{FFFF}'
            | '\u{E000}'..='\u{F8FF}'
            | '\u{F0000}'..='\u{10FFFF}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<Node> {
        match parse_template(text) {
            Ok(nodes) => nodes,
            Err(e) => panic!("{text}: {e}"),
        }
    }

    fn fields(names: &[&str]) -> Vec<Node> {
        names.iter().map(|n| Node::Field((*n).into())).collect()
    }

    #[test]
    fn plain_fields_and_text() {
        assert_eq!(
            parse("a{.b.c}d"),
            vec![
                Node::Text("a".into()),
                Node::List(fields(&["b", "c"])),
                Node::Text("d".into())
            ]
        );
        assert_eq!(parse("{$.a}"), vec![Node::List(fields(&["a"]))]);
        assert_eq!(parse("{@.a}"), vec![Node::List(fields(&["a"]))]);
    }

    #[test]
    fn escaped_dots_and_quoted_keys() {
        assert_eq!(
            parse(r"{.labels.app\.kubernetes\.io/name}"),
            vec![Node::List(fields(&["labels", "app.kubernetes.io/name"]))]
        );
        // A quoted key is re-read as dotted fields, so dots split it (as in kubectl).
        assert_eq!(
            parse("{.labels['a.b']}"),
            vec![Node::List(fields(&["labels", "a", "b"]))]
        );
        assert_eq!(
            parse(r"{.labels['a\.b']}"),
            vec![Node::List(fields(&["labels", "a.b"]))]
        );
    }

    #[test]
    fn slices() {
        let b = |value, known, derived| SliceBound {
            value,
            known,
            derived,
        };
        assert_eq!(
            parse("{[-1]}"),
            vec![Node::List(vec![Node::Array([
                b(-1, true, false),
                b(0, true, true),
                b(0, false, false)
            ])])]
        );
        assert_eq!(
            parse("{[*]}"),
            vec![Node::List(vec![Node::Array([
                b(0, false, false),
                b(0, false, false),
                b(0, false, false)
            ])])]
        );
        assert_eq!(
            parse("{[1:5:2]}"),
            vec![Node::List(vec![Node::Array([
                b(1, true, false),
                b(5, true, false),
                b(2, true, false)
            ])])]
        );
    }

    #[test]
    fn filters() {
        let nodes = parse(r#"{.c[?(@.type=="Ready")].status}"#);
        let Node::List(list) = &nodes[0] else {
            panic!("not a list")
        };
        assert_eq!(list.len(), 3);
        assert_eq!(
            list[1],
            Node::Filter(Box::new(Filter {
                left: fields(&["type"]),
                right: vec![Node::Text("Ready".into())],
                op: FilterOp::Eq,
            }))
        );
        assert_eq!(split_filter("@.a=="), Some(("@.a", "=", "=")));
        assert_eq!(split_filter("@.a="), None);
        assert_eq!(split_filter("=a"), None);
        assert_eq!(split_filter("@.a >= 3"), Some(("@.a ", ">=", " 3")));
    }

    #[test]
    fn errors_name_message_position_and_token() {
        let e = parse_template(r#"{.a[?(@.x=="1" && @.y=="2")]}"#).unwrap_err();
        assert_eq!(e.message(), "unrecognized character in action: U+0026 '&'");
        assert_eq!(e.token(), "&");
        assert_eq!(e.position(), 15);
        let e = parse_template("{.a").unwrap_err();
        assert_eq!(e.message(), "unclosed action");
        assert_eq!(e.position(), 3);
        let e = parse_template("{.a[\"x\"]}").unwrap_err();
        assert_eq!(e.message(), "invalid array index \"x\"");
        let e = parse_template("{..*}").unwrap_err();
        assert_eq!(e.message(), "unrecognized character in action: U+002A '*'");
        let e = parse_template("{....a}").unwrap_err();
        assert_eq!(e.message(), "invalid multiple recursive descent");
        let e = parse_template("{\t}").unwrap_err();
        assert_eq!(e.message(), "unrecognized character in action: U+0009");
    }

    #[test]
    fn numbers_follow_go() {
        assert_eq!(parse_go_float("1."), Some(1.0));
        assert_eq!(parse_go_float("+.5"), Some(0.5));
        assert_eq!(parse_go_float("."), None);
        assert_eq!(parse_go_float("1.2.3"), None);
        assert_eq!(parse_go_float("-"), None);
        assert_eq!(parse("{-1.5}"), vec![Node::List(vec![Node::Float(-1.5)])]);
    }

    #[test]
    fn unquote_follows_go() {
        assert_eq!(unquote(r#""a\tb""#).as_deref(), Some("a\tb"));
        assert_eq!(unquote(r"'it\'s'").as_deref(), Some("it's"));
        assert_eq!(unquote(r#"'\"'"#), None);
        assert_eq!(unquote(r#""\u00e9\x41\101""#).as_deref(), Some("éAA"));
        assert_eq!(unquote(r#""\q""#), None);
        assert_eq!(unquote("'\\Ѩ'"), None);
    }
}
