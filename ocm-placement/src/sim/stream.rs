//! Reading a JSON `List` from a file a piece at a time.
//!
//! A `kubectl get -o json` dump of a large hub is one JSON object whose `items` array holds
//! every object. Holding the whole text in memory while decoding it costs as much as the file
//! (about 200 MiB for 100 000 clusters with their scores). [`scan_list`] instead reads the file
//! in chunks, finds where each element of the top-level `items` array starts and ends, and
//! hands each element's bytes to the caller, so that only one chunk (and the longest single
//! item) is held at a time.
//!
//! The scanner only finds boundaries: every item is decoded by the caller with `serde_json`,
//! and every other top-level value is checked to be valid JSON here, so a file that scans
//! is a valid JSON document. Anything else (a document that is not an object, an `items`
//! that is not an array, malformed JSON, text after the document) ends the scan with
//! [`Scan::NotAList`]: the caller then reads the file as a whole, which gives the same error
//! (or result) as before.

use std::io::Read;

/// How much is read from the file at a time.
const CHUNK: usize = 1 << 20;

/// What [`scan_list`] saw.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct ListHead {
    /// The top-level `kind` when it is a string (the last one when repeated).
    pub(super) kind: Option<String>,
    /// How many top-level `items` keys the document has.
    pub(super) items: usize,
}

/// How a scan ended.
#[derive(Debug)]
pub(super) enum Scan<E> {
    /// The document is a JSON object; every `items` element was handed over.
    Done(ListHead),
    /// The text is not a JSON object with array `items` (or not valid JSON): read it whole.
    NotAList,
    /// The item callback failed.
    Item(E),
    /// The file could not be read.
    Io(std::io::Error),
}

impl<E> Scan<E> {
    /// The same outcome with the item error mapped by `f`.
    pub(super) fn map_item_error<F>(self, f: impl FnOnce(E) -> F) -> Scan<F> {
        match self {
            Scan::Done(head) => Scan::Done(head),
            Scan::NotAList => Scan::NotAList,
            Scan::Item(e) => Scan::Item(f(e)),
            Scan::Io(e) => Scan::Io(e),
        }
    }
}

/// Reads the JSON document in `reader`, calling `item` with the bytes of each element of its
/// top-level `items` array (an array under any other key is not looked into). Memory stays
/// within a chunk plus the largest item.
pub(super) fn scan_list<R: Read, E>(
    reader: R,
    mut item: impl FnMut(&[u8]) -> Result<(), E>,
) -> Scan<E> {
    let mut buf = Buffer::new(reader);
    match scan(&mut buf, &mut item) {
        Ok(head) => Scan::Done(head),
        Err(Stop::Malformed) => Scan::NotAList,
        Err(Stop::Item(e)) => Scan::Item(e),
        Err(Stop::Io(e)) => Scan::Io(e),
    }
}

enum Stop<E> {
    Malformed,
    Item(E),
    Io(std::io::Error),
}

impl<E> From<std::io::Error> for Stop<E> {
    fn from(e: std::io::Error) -> Self {
        Stop::Io(e)
    }
}

/// The unread part of the file: `data[pos..end]`, refilled on demand. The buffer is allocated
/// once (it grows only for an item longer than a chunk).
struct Buffer<R> {
    reader: R,
    data: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
}

impl<R: Read> Buffer<R> {
    fn new(reader: R) -> Self {
        Self {
            reader,
            data: vec![0; CHUNK],
            pos: 0,
            end: 0,
            eof: false,
        }
    }

    /// The bytes read and not consumed.
    fn unread(&self) -> &[u8] {
        &self.data[self.pos..self.end]
    }

    /// Reads more of the file after what is buffered, dropping what was consumed. Returns
    /// `false` at the end of the file.
    fn fill(&mut self) -> std::io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.data.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.end == self.data.len() {
            self.data.resize(self.data.len() + CHUNK, 0);
        }
        let read = loop {
            match self.reader.read(&mut self.data[self.end..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        self.end += read;
        if read == 0 {
            self.eof = true;
        }
        Ok(read > 0)
    }

    /// The next byte that is not JSON whitespace, left unconsumed; `None` at the end.
    fn peek_token(&mut self) -> std::io::Result<Option<u8>> {
        loop {
            while let Some(&b) = self.unread().first() {
                if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                    return Ok(Some(b));
                }
                self.pos += 1;
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// Consumes the next token when it is `byte`.
    fn eat<E>(&mut self, byte: u8) -> Result<(), Stop<E>> {
        if self.peek_token()? == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(Stop::Malformed)
        }
    }

    /// The bytes of the JSON value that starts at the next token, consumed. Its end is found
    /// by counting brackets outside strings; whether it is valid JSON is for the caller.
    fn value<E>(&mut self) -> Result<&[u8], Stop<E>> {
        if self.peek_token()?.is_none() {
            return Err(Stop::Malformed);
        }
        let mut scanner = ValueEnd::default();
        // How much of the value (from `pos`) was scanned already.
        let mut scanned = 0;
        loop {
            let from = self.pos + scanned;
            if let Some(used) = scanner.feed(&self.data[from..self.end]) {
                let start = self.pos;
                self.pos = from + used;
                return Ok(&self.data[start..self.pos]);
            }
            scanned = self.end - self.pos;
            // `fill` moves the value's start to the front of the buffer.
            if !self.fill()? {
                // A literal (number, `true`, ...) may end the text; anything else is cut off.
                if !scanner.is_complete_at_end() {
                    return Err(Stop::Malformed);
                }
                let start = self.pos;
                self.pos = self.end;
                return Ok(&self.data[start..self.end]);
            }
        }
    }
}

/// The bytes that matter to [`ValueEnd`] outside strings: quotes and brackets.
static STRUCTURAL: [bool; 256] = {
    let mut table = [false; 256];
    table[b'"' as usize] = true;
    table[b'{' as usize] = true;
    table[b'}' as usize] = true;
    table[b'[' as usize] = true;
    table[b']' as usize] = true;
    table
};

/// Finds where one JSON value ends, fed the text piece by piece.
#[derive(Debug, Default)]
struct ValueEnd {
    started: bool,
    /// Open `{` and `[` not yet closed.
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The value is a literal (number, `true`, `false`, `null`): it ends before the next
    /// delimiter.
    literal: bool,
}

impl ValueEnd {
    /// Scans `text`, the continuation of what was fed before; `Some(n)` when the value ends
    /// after the first `n` bytes of `text`.
    fn feed(&mut self, text: &[u8]) -> Option<usize> {
        let mut i = 0;
        if !self.started {
            let &first = text.first()?;
            self.started = true;
            match first {
                b'{' | b'[' => self.depth = 1,
                b'"' => self.in_string = true,
                _ => self.literal = true,
            }
            i = 1;
        }
        if self.literal {
            return text[i..]
                .iter()
                .position(|b| {
                    matches!(
                        b,
                        b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' | b'{' | b'[' | b'"'
                    )
                })
                .map(|p| i + p);
        }
        loop {
            if self.in_string {
                if self.escaped {
                    if i >= text.len() {
                        return None;
                    }
                    self.escaped = false;
                    i += 1;
                }
                let p = quote_or_backslash(text.get(i..)?)?;
                i += p + 1;
                if text[i - 1] == b'\\' {
                    self.escaped = true;
                    continue;
                }
                self.in_string = false;
                if self.depth == 0 {
                    return Some(i);
                }
                continue;
            }
            let p = structural(text.get(i..)?)?;
            i += p + 1;
            match text[i - 1] {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                _ => {
                    // `}` or `]`.
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(i);
                    }
                }
            }
        }
    }

    /// Whether the value is complete when the text ends here (only a literal can be).
    fn is_complete_at_end(&self) -> bool {
        self.literal
    }
}

/// Where the first quote or bracket of `text` is, eight bytes at a time (between strings a
/// List's text is mostly indentation).
fn structural(text: &[u8]) -> Option<usize> {
    first_flagged(
        text,
        |x| {
            // `[` and `]` differ from `{` and `}` by the 0x20 bit alone, and no other byte
            // becomes a brace when that bit is set.
            let folded = x | (ONES * 0x20);
            zero_bytes(x ^ (ONES * u64::from(b'"')))
                | zero_bytes(folded ^ (ONES * u64::from(b'{')))
                | zero_bytes(folded ^ (ONES * u64::from(b'}')))
        },
        |b| STRUCTURAL[usize::from(b)],
    )
}

/// Where the first `"` or `\\` of `text` is, eight bytes at a time (strings are most of a
/// List's text, and byte by byte this search was most of the scan).
pub(super) fn quote_or_backslash(text: &[u8]) -> Option<usize> {
    first_flagged(
        text,
        |x| zero_bytes(x ^ (ONES * u64::from(b'"'))) | zero_bytes(x ^ (ONES * u64::from(b'\\'))),
        |b| b == b'"' || b == b'\\',
    )
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each zero byte of `v` (and possibly of bytes after the first: only the
/// lowest flagged byte is exact, and only it is used).
fn zero_bytes(v: u64) -> u64 {
    v.wrapping_sub(ONES) & !v & HIGHS
}

/// Where the first byte `is` accepts is in `text`: eight bytes at a time with `flags` (the
/// high bit of each accepted byte of a little-endian word, exact for the lowest), then byte
/// by byte for the tail.
fn first_flagged(
    text: &[u8],
    flags: impl Fn(u64) -> u64,
    is: impl Fn(u8) -> bool,
) -> Option<usize> {
    let mut i = 0;
    while let Some(chunk) = text.get(i..i + 8).and_then(|c| <[u8; 8]>::try_from(c).ok()) {
        let found = flags(u64::from_le_bytes(chunk));
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    let rest = text.get(i..)?;
    rest.iter().position(|&b| is(b)).map(|p| i + p)
}

/// Checks that `bytes` are one valid JSON value.
fn valid<E>(bytes: &[u8]) -> Result<(), Stop<E>> {
    serde_json::from_slice::<serde::de::IgnoredAny>(bytes)
        .map(|_| ())
        .map_err(|_| Stop::Malformed)
}

fn scan<R: Read, E>(
    buf: &mut Buffer<R>,
    item: &mut impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<ListHead, Stop<E>> {
    let mut head = ListHead::default();
    buf.eat(b'{')?;
    if buf.peek_token()? == Some(b'}') {
        buf.pos += 1;
    } else {
        loop {
            if buf.peek_token()? != Some(b'"') {
                return Err(Stop::Malformed);
            }
            let key: String = serde_json::from_slice(buf.value()?).map_err(|_| Stop::Malformed)?;
            buf.eat(b':')?;
            match key.as_str() {
                "items" => {
                    head.items += 1;
                    items(buf, item)?;
                }
                "kind" => {
                    let value: serde_json::Value =
                        serde_json::from_slice(buf.value()?).map_err(|_| Stop::Malformed)?;
                    head.kind = match value {
                        serde_json::Value::String(kind) => Some(kind),
                        _ => None,
                    };
                }
                _ => valid(buf.value()?)?,
            }
            match buf.peek_token()? {
                Some(b',') => buf.pos += 1,
                Some(b'}') => {
                    buf.pos += 1;
                    break;
                }
                _ => return Err(Stop::Malformed),
            }
        }
    }
    // Nothing but whitespace may follow the document.
    match buf.peek_token()? {
        None => Ok(head),
        Some(_) => Err(Stop::Malformed),
    }
}

/// The elements of an `items` array.
fn items<R: Read, E>(
    buf: &mut Buffer<R>,
    item: &mut impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), Stop<E>> {
    buf.eat(b'[')?;
    if buf.peek_token()? == Some(b']') {
        buf.pos += 1;
        return Ok(());
    }
    loop {
        let bytes = buf.value()?;
        item(bytes).map_err(Stop::Item)?;
        match buf.peek_token()? {
            Some(b',') => buf.pos += 1,
            Some(b']') => {
                buf.pos += 1;
                return Ok(());
            }
            _ => return Err(Stop::Malformed),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_and_backslashes_are_found_at_every_offset() {
        for len in 0..40 {
            for at in 0..=len {
                for (mark, filler) in [(b'"', b'a'), (b'\\', b'"' ^ 0x80), (b'"', 0x22 ^ 0x01)] {
                    let mut text = vec![filler; len];
                    if at < len {
                        text[at] = mark;
                        // A second mark later must not be reported first.
                        if at + 3 < len {
                            text[at + 3] = b'\\';
                        }
                    }
                    let expected = text.iter().position(|&b| b == b'"' || b == b'\\');
                    assert_eq!(
                        super::quote_or_backslash(&text),
                        expected,
                        "{len} {at} {text:?}"
                    );
                }
            }
        }
        // Bytes just above and below the marks, and non-ASCII text.
        let text = "#!]\u{e9}\u{1f600}[\\\"".as_bytes();
        assert_eq!(
            super::quote_or_backslash(text),
            text.iter().position(|&b| b == b'"' || b == b'\\')
        );
    }

    #[test]
    fn quotes_and_brackets_are_found_at_every_offset() {
        let marks = [b'"', b'{', b'}', b'[', b']'];
        // Fillers one bit away from a mark (0x20 and 0x80 among them), and plain text.
        let fillers = [
            b'a',
            b' ',
            b'\n',
            b'{' ^ 0x01,
            b'[' ^ 0x80,
            b'}' ^ 0x02,
            b'"' ^ 0x20,
            0xfb,
        ];
        for len in 0..40 {
            for at in 0..=len {
                for (n, &filler) in fillers.iter().enumerate() {
                    let mut text = vec![filler; len];
                    if at < len {
                        text[at] = marks[(at + n) % marks.len()];
                        if at + 3 < len {
                            text[at + 3] = b'"';
                        }
                    }
                    let expected = text.iter().position(|&b| STRUCTURAL[usize::from(b)]);
                    assert_eq!(super::structural(&text), expected, "{len} {at} {text:?}");
                }
            }
        }
        let text = "  \"a\": 1,\n  \u{e9}\u{1f600}\t]".as_bytes();
        assert_eq!(super::structural(text), Some(2));
        assert_eq!(super::structural(&text[5..]), Some(text.len() - 6));
    }

    use super::*;

    /// Hands out `step` bytes per read.
    struct Steps<'a> {
        text: &'a [u8],
        step: usize,
    }

    impl Read for Steps<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.text.len());
            buf[..n].copy_from_slice(&self.text[..n]);
            self.text = &self.text[n..];
            Ok(n)
        }
    }

    /// The items of `text` as strings and the head, read `step` bytes at a time; `None` when
    /// the text is not a list.
    fn scan_text(text: &str, step: usize) -> Option<(ListHead, Vec<String>)> {
        let mut items = Vec::new();
        let reader = Steps {
            text: text.as_bytes(),
            step,
        };
        match scan_list(reader, |bytes| {
            items.push(String::from_utf8(bytes.to_vec()).unwrap());
            Ok::<(), ()>(())
        }) {
            Scan::Done(head) => Some((head, items)),
            Scan::NotAList => None,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn items_are_cut_at_their_ends_whatever_the_chunks() {
        let text = r#" {"apiVersion":"v1", "items" : [ {"a":"}]\"{["},
            [1, {"b": []}] ,"x\\",-1.5e3,true,null, {} ],
            "kind":"List","metadata":{"n":[{}]}}
        "#;
        for step in [1, 2, 3, 7, 64, 1 << 20] {
            let (head, items) = scan_text(text, step).expect("a list");
            assert_eq!(head.kind.as_deref(), Some("List"), "step {step}");
            assert_eq!(head.items, 1);
            assert_eq!(
                items,
                [
                    r#"{"a":"}]\"{["}"#,
                    r#"[1, {"b": []}]"#,
                    r#""x\\""#,
                    "-1.5e3",
                    "true",
                    "null",
                    "{}"
                ],
                "step {step}"
            );
        }
    }

    #[test]
    fn heads_count_items_and_keep_the_last_string_kind() {
        let (head, items) =
            scan_text(r#"{"kind":"List","items":[1],"items":[2],"kind":3}"#, 1).expect("an object");
        assert_eq!(
            head,
            ListHead {
                kind: None,
                items: 2
            }
        );
        assert_eq!(items, ["1", "2"]);
        let (head, items) = scan_text("{}", 1).expect("an object");
        assert_eq!(head, ListHead::default());
        assert!(items.is_empty());
        let (head, _) = scan_text(r#"{"items":[],"kind":"PlacementList"}"#, 4).unwrap();
        assert_eq!(head.kind.as_deref(), Some("PlacementList"));
    }

    #[test]
    fn anything_but_a_well_formed_object_is_not_a_list() {
        for text in [
            "",
            "   ",
            "[1]",
            "null",
            r#"{"items": {"a": 1}}"#,
            r#"{"items": 3}"#,
            r#"{"items": [1, 2"#,
            r#"{"items": [1 2]}"#,
            r#"{"items": [1,]}"#,
            r#"{"items": [], }"#,
            r#"{"items": []"#,
            r#"{"items": []} x"#,
            r#"{"items": []}{}"#,
            r#"{"kind": "List", "metadata": {"a": tru}, "items": []}"#,
            r#"{"kind": "Li\qst", "items": []}"#,
            r#"{"kind" "List"}"#,
            r#"{kind: "List"}"#,
            r#"{"items": ["unterminated]}"#,
        ] {
            for step in [1, 5, 1 << 20] {
                assert!(scan_text(text, step).is_none(), "{text:?} step {step}");
            }
        }
    }

    #[test]
    fn an_item_error_stops_the_scan() {
        let mut seen = 0;
        let scan = scan_list(&br#"{"items": [1, 2, 3]}"#[..], |bytes| {
            seen += 1;
            if bytes == b"2" { Err("two") } else { Ok(()) }
        });
        assert!(matches!(scan, Scan::Item("two")), "{scan:?}");
        assert_eq!(seen, 2);
    }

    #[test]
    fn read_errors_are_returned() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk on fire"))
            }
        }
        let scan = scan_list(Broken, |_| Ok::<(), ()>(()));
        assert!(
            matches!(&scan, Scan::Io(e) if e.to_string() == "disk on fire"),
            "{scan:?}"
        );
    }
}
