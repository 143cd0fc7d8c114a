//! The pre-parse scan: bounds the size and nesting of an expression before the parser sees it.
//!
//! The `cel` crate's parser and interpreter recurse once or more per level of the syntax tree,
//! so an expression nested thousands of levels deep would overflow any stack. This scan reads
//! the source once, iteratively, as a stream of tokens (string, bytes and raw literals and
//! comments skipped whole, so brackets inside them do not count) and rejects, with cel-go's
//! messages:
//!
//! * more code points than [`Limits::code_points`](super::Limits::code_points);
//! * bracket nesting (parentheses, lists, maps, calls, indexes) plus nested conditionals
//!   deeper than [`Limits::nesting`](super::Limits::nesting), which cel-go's parse listener
//!   counts as the depth of its `expr` rule;
//! * more than [`Limits::recursion`](super::Limits::recursion) left-recursive operators of one
//!   kind (arithmetic `+ - * / %`, relations `== != < <= > >= in`, member accesses `.f`,
//!   `.f()`, `[i]`, calls) on one path of the tree, which cel-go's listener counts per grammar
//!   rule;
//! * more than the same number of such operators and conditionals together, which cel-go's
//!   visitor counts.
//!
//! A chain of operators parses left-deep, so the scan counts every operator of a chain as one
//! level: an upper bound of the depth the parser produces (`&&` and `||` chains are balanced by
//! the parser and do not count; unary `!` and `-` fold and do not count either). Counts add up
//! through brackets: `(a + (b + c))` has two arithmetic levels on the path to `c`. Separators
//! (`,`, `:`) start a new sibling, which does not add to the levels of the previous one.

use super::Limits;

/// Why the scan rejected a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScanError {
    /// More code points than the limit.
    CodePoints { size: usize, limit: usize },
    /// One kind of nesting deeper than the limit (cel-go's parse listener).
    Nesting { limit: usize },
    /// All left-recursive levels together deeper than the limit (cel-go's visitor).
    Recursion,
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScanError::CodePoints { size, limit } => write!(
                f,
                "expression code point size exceeds limit: size: {size}, limit {limit}"
            ),
            ScanError::Nesting { limit } => {
                write!(f, "expression recursion limit exceeded: {limit}")
            }
            ScanError::Recursion => f.write_str("max recursion depth exceeded"),
        }
    }
}

/// What the scan measured of an accepted source: enough to size the parser's stack.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    /// The deepest bracket (and conditional) nesting.
    pub(crate) nesting: usize,
    /// The most left-recursive levels on one path.
    pub(crate) levels: usize,
}

/// Levels of left-recursive operators on one path, by kind.
#[derive(Debug, Clone, Copy, Default)]
struct Levels {
    calc: usize,
    relation: usize,
    member: usize,
    /// Of every kind together, conditionals included.
    total: usize,
}

impl Levels {
    fn max(self, o: Levels) -> Levels {
        Levels {
            calc: self.calc.max(o.calc),
            relation: self.relation.max(o.relation),
            member: self.member.max(o.member),
            total: self.total.max(o.total),
        }
    }

    fn plus(self, o: Levels) -> Levels {
        Levels {
            calc: self.calc + o.calc,
            relation: self.relation + o.relation,
            member: self.member + o.member,
            total: self.total + o.total,
        }
    }

    fn check(&self, limits: &Limits) -> Result<(), ScanError> {
        if self.calc.max(self.relation).max(self.member) > limits.recursion {
            return Err(ScanError::Nesting {
                limit: limits.recursion,
            });
        }
        if self.total > limits.recursion {
            return Err(ScanError::Recursion);
        }
        Ok(())
    }
}

/// One bracket group (the whole source being the outermost).
#[derive(Debug, Default)]
struct Group {
    /// The closing bracket expected (0 for the outermost group).
    closer: u8,
    /// Whether the group may be empty: a call's arguments, a list, a map or a message.
    empty_ok: bool,
    /// Whether a comma may end it: a list, a map or a message.
    trailing_comma_ok: bool,
    /// The deepest segment, without its inner groups.
    own: Levels,
    /// Operators of the current segment (between separators).
    segment: Levels,
    /// The deepest group closed inside the current segment.
    inner: Levels,
    /// The deepest finished segment (with its inner groups).
    deepest: Levels,
    /// Conditionals (`? :`) of the group: each nests the rest of the group one level.
    conditionals: usize,
}

impl Group {
    fn end_segment(&mut self) {
        self.own = self.own.max(self.segment);
        self.deepest = self.deepest.max(self.segment.plus(self.inner));
        self.segment = Levels::default();
        self.inner = Levels::default();
    }

    /// The group's levels, seen from its parent, and its own (without inner groups).
    fn close(mut self) -> (Levels, Levels) {
        self.end_segment();
        let mut levels = self.deepest;
        levels.total += self.conditionals;
        let mut own = self.own;
        own.total += self.conditionals;
        (levels, own)
    }
}

/// Closes the innermost group, checking its levels and passing them to its parent; adds its
/// own levels to `merged`.
fn close(
    groups: &mut Vec<Group>,
    limits: &Limits,
    shape: &mut Shape,
    merged: &mut Levels,
) -> Result<(), ScanError> {
    if let Some(group) = groups.pop() {
        let (levels, own) = group.close();
        *merged = merged.plus(own);
        levels.check(limits)?;
        shape.levels = shape.levels.max(levels.total);
        if let Some(parent) = groups.last_mut() {
            parent.inner = parent.inner.max(levels);
        }
    }
    Ok(())
}

/// Counts one operator in the current segment (checked when its group closes).
fn add(groups: &mut [Group], kind: impl Fn(&mut Levels)) {
    if let Some(group) = groups.last_mut() {
        kind(&mut group.segment);
        group.segment.total += 1;
    }
}

fn end_segment(groups: &mut [Group]) {
    if let Some(group) = groups.last_mut() {
        group.end_segment();
    }
}

/// What the previous token was, as far as a closing bracket after it is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prev {
    /// The end of an operand: an identifier, a literal or a closing bracket.
    Operand,
    /// An opening bracket.
    Open,
    /// A comma.
    Comma,
    /// The start, an operator, `.`, `?` or `:`: an operand must follow.
    Other,
}

/// A token of CEL's lexer, as far as the scan is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    /// Spacing, a comment, or what the lexer drops as an error: no token for the parser.
    Hidden,
    /// An identifier (the field name after `.` included) or keyword other than `in`.
    Identifier,
    /// A number, string or bytes literal.
    Literal,
    /// `in`.
    In,
    /// A one- or two-character operator or punctuation, by its first character (`=` for `==`,
    /// `!` and `<`/`>` with or without `=`, `&` for `&&`, `|` for `||`).
    Punct(u8, bool),
}

/// Reads the token at `i` as CEL's ANTLR lexer does: the longest match of any rule; where no
/// rule matches, the lexer reports an error and drops everything from `i` through the
/// character at which the last candidate rule failed (so `&x`, an unterminated `'abc` up to
/// its line end, or `'\q` vanish whole). Returns the token and the index after it.
fn next_token(bytes: &[u8], i: usize) -> (Token, usize) {
    let at = |j: usize| bytes.get(j).copied().unwrap_or(0);
    // What the lexer drops when no rule matched and the last one failed at `fail`.
    let dropped = |fail: usize| (Token::Hidden, (fail + 1).min(bytes.len()));
    let c = at(i);
    match c {
        b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => {
            let mut j = i;
            while matches!(at(j), b' ' | b'\t' | b'\n' | b'\r' | b'\x0c') && j < bytes.len() {
                j += 1;
            }
            (Token::Hidden, j)
        }
        b'/' if at(i + 1) == b'/' => {
            let mut j = i;
            while j < bytes.len() && bytes[j] != b'\n' {
                j += 1;
            }
            (Token::Hidden, j)
        }
        b'0'..=b'9' => (Token::Literal, skip_number(bytes, i)),
        b'.' if at(i + 1).is_ascii_digit() => (Token::Literal, skip_number(bytes, i)),
        b'\'' | b'"' => match string(bytes, i, false) {
            Ok(end) => (Token::Literal, end),
            Err(fail) => dropped(fail),
        },
        b'`' => match escaped_identifier(bytes, i) {
            Ok(end) => (Token::Identifier, end),
            Err(fail) => dropped(fail),
        },
        b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
            let mut j = i;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                j += 1;
            }
            let word = &bytes[i..j];
            // String and bytes prefixes: `r`, `b`, `br` (any case); not `rb`. A prefixed
            // literal that does not lex leaves the identifier, the longest match.
            let prefix = matches!(
                word,
                [b'r' | b'R' | b'b' | b'B'] | [b'b' | b'B', b'r' | b'R']
            );
            let raw = word.iter().any(|b| matches!(b, b'r' | b'R'));
            if prefix
                && matches!(at(j), b'\'' | b'"')
                && let Ok(end) = string(bytes, j, raw)
            {
                return (Token::Literal, end);
            }
            if word == b"in" {
                (Token::In, j)
            } else {
                (Token::Identifier, j)
            }
        }
        b'=' | b'&' | b'|' => {
            if at(i + 1) == c {
                (Token::Punct(c, true), i + 2)
            } else {
                dropped(i + 1)
            }
        }
        b'!' | b'<' | b'>' => {
            if at(i + 1) == b'=' {
                (Token::Punct(c, true), i + 2)
            } else {
                (Token::Punct(c, false), i + 1)
            }
        }
        b'[' | b']' | b'{' | b'}' | b'(' | b')' | b'.' | b',' | b'-' | b'?' | b':' | b'+'
        | b'*' | b'/' | b'%' => (Token::Punct(c, false), i + 1),
        _ => dropped(i),
    }
}

/// Scans `source` (see the module documentation).
///
/// The parser recovers from syntax errors by dropping or inserting tokens; dropping a closing
/// bracket nests what follows it one level deeper than the brackets say (`()()()…` reads as
/// `(((…`). Where a closing bracket is unmatched, or follows a token that needs an operand
/// after it (so the parser may drop it), the whole expression is measured as if every
/// bracket were left open: its nesting as the number of its opening brackets and conditionals,
/// its levels as the sum of those of every group.
// Long on purpose: one pass over the tokens, one match arm per token kind, and every arm
// updates the same running state (open groups, nesting, what the previous token was, whether
// a bracket may be dropped); split into functions, each would take all of it in and out.
pub(crate) fn scan(source: &str, limits: &Limits) -> Result<Shape, ScanError> {
    let size = source.chars().count();
    if size > limits.code_points {
        return Err(ScanError::CodePoints {
            size,
            limit: limits.code_points,
        });
    }
    let bytes = source.as_bytes();
    let mut groups: Vec<Group> = vec![Group::default()];
    // Nesting of `expr` rules: open brackets plus the conditionals of the open groups.
    let mut nesting = 0usize;
    let mut shape = Shape::default();
    // Opening brackets and conditionals in all, and the levels of every group added up: the
    // bounds when a closing bracket may be dropped.
    let mut opened = 0usize;
    let mut merged = Levels::default();
    let mut droppable = false;
    let deeper = |nesting: usize, shape: &mut Shape| {
        shape.nesting = shape.nesting.max(nesting);
        if nesting > limits.nesting {
            Err(ScanError::Nesting {
                limit: limits.nesting,
            })
        } else {
            Ok(())
        }
    };
    let mut prev = Prev::Other;
    // Whether the previous token is `.`, and whether it is a field name after `.` (so `(`
    // makes it a member call, already counted at the `.`).
    let mut after_dot = false;
    let mut member_name = false;
    let mut i = 0usize;
    while i < bytes.len() {
        let (token, end) = next_token(bytes, i);
        i = end.max(i + 1);
        let operand = prev == Prev::Operand;
        let (was_dot, was_member_name) = (after_dot, member_name);
        if token != Token::Hidden {
            (after_dot, member_name) = (false, false);
        }
        match token {
            Token::Hidden => {}
            Token::Literal => prev = Prev::Operand,
            Token::Identifier => {
                prev = Prev::Operand;
                member_name = was_dot;
            }
            Token::In => {
                if operand {
                    add(&mut groups, |l| l.relation += 1);
                }
                prev = Prev::Other;
            }
            Token::Punct(c @ (b'(' | b'[' | b'{'), _) => {
                let call_or_index = operand && c != b'{';
                if call_or_index && !(c == b'(' && was_member_name) {
                    // A call or an index: one member level.
                    add(&mut groups, |l| l.member += 1);
                }
                let literal = c == b'{' || (c == b'[' && !operand);
                groups.push(Group {
                    closer: match c {
                        b'(' => b')',
                        b'[' => b']',
                        _ => b'}',
                    },
                    empty_ok: literal || (c == b'(' && operand),
                    trailing_comma_ok: literal,
                    ..Group::default()
                });
                nesting += 1;
                opened += 1;
                deeper(nesting, &mut shape)?;
                prev = Prev::Open;
            }
            Token::Punct(c @ (b')' | b']' | b'}'), _) => {
                let kept = groups.len() > 1
                    && groups.last().is_some_and(|g| {
                        g.closer == c
                            && match prev {
                                Prev::Operand => true,
                                Prev::Open => g.empty_ok,
                                Prev::Comma => g.trailing_comma_ok,
                                Prev::Other => false,
                            }
                    });
                droppable |= !kept;
                if groups.len() > 1 {
                    let conditionals = groups.last().map_or(0, |g| g.conditionals);
                    nesting = nesting.saturating_sub(1 + conditionals);
                    close(&mut groups, limits, &mut shape, &mut merged)?;
                }
                prev = Prev::Operand;
            }
            Token::Punct(b',', _) => {
                end_segment(&mut groups);
                prev = Prev::Comma;
            }
            Token::Punct(b':', _) => {
                end_segment(&mut groups);
                prev = Prev::Other;
            }
            Token::Punct(b'?', _) => {
                // After an operand, a conditional; else the `?` of an optional entry, index
                // or selection.
                if operand {
                    end_segment(&mut groups);
                    if let Some(g) = groups.last_mut() {
                        g.conditionals += 1;
                    }
                    nesting += 1;
                    opened += 1;
                    deeper(nesting, &mut shape)?;
                }
                prev = Prev::Other;
            }
            Token::Punct(b'&' | b'|', _) => {
                // `&&` and `||` are balanced by the parser: they only separate segments.
                end_segment(&mut groups);
                prev = Prev::Other;
            }
            Token::Punct(b'.', _) => {
                add(&mut groups, |l| l.member += 1);
                prev = Prev::Other;
                after_dot = true;
            }
            Token::Punct(b'!', false) => {
                // A logical not, folded by the parser.
                prev = Prev::Other;
            }
            Token::Punct(b'=' | b'!' | b'<' | b'>', _) => {
                add(&mut groups, |l| l.relation += 1);
                prev = Prev::Other;
            }
            Token::Punct(b'-', _) => {
                // Binary after an operand; a negation (folded by the parser) otherwise.
                if operand {
                    add(&mut groups, |l| l.calc += 1);
                }
                prev = Prev::Other;
            }
            Token::Punct(_, _) => {
                // `+`, `*`, `/`, `%`.
                add(&mut groups, |l| l.calc += 1);
                prev = Prev::Other;
            }
        }
    }
    while !groups.is_empty() {
        close(&mut groups, limits, &mut shape, &mut merged)?;
    }
    if droppable {
        if opened > limits.nesting {
            return Err(ScanError::Nesting {
                limit: limits.nesting,
            });
        }
        merged.check(limits)?;
        shape = Shape {
            nesting: opened,
            levels: merged.total,
        };
    }
    Ok(shape)
}

/// The index after the string or bytes literal whose opening quote is at `start` (after its
/// prefix), as the lexer reads it; `Err` with the index of the character at which the lexer
/// gives up when there is none (unterminated, or with an invalid escape). An opening `''`
/// (or `""`) is an empty string when what follows is not a valid triple-quoted one.
fn string(bytes: &[u8], start: usize, raw: bool) -> Result<usize, usize> {
    let quote = bytes[start];
    let doubled = bytes.get(start + 1) == Some(&quote);
    let tripled = doubled && bytes.get(start + 2) == Some(&quote);
    if tripled {
        let mut i = start + 3;
        loop {
            match bytes.get(i) {
                None => break,
                Some(b'\\') if !raw => match escape(bytes, i) {
                    Ok(next) => i = next,
                    Err(_) => break,
                },
                Some(&c)
                    if c == quote
                        && bytes.get(i + 1) == Some(&quote)
                        && bytes.get(i + 2) == Some(&quote) =>
                {
                    return Ok(i + 3);
                }
                Some(_) => i += 1,
            }
        }
        // The triple-quoted literal fails; the longest match is the empty string.
        return Ok(start + 2);
    }
    if doubled {
        return Ok(start + 2);
    }
    let mut i = start + 1;
    loop {
        match bytes.get(i) {
            None => return Err(i),
            Some(b'\n' | b'\r') => return Err(i),
            Some(b'\\') if !raw => i = escape(bytes, i)?,
            Some(&c) if c == quote => return Ok(i + 1),
            Some(_) => i += 1,
        }
    }
}

/// The index after the escape sequence at `start` (a backslash); `Err` with the index of the
/// character that makes it invalid.
fn escape(bytes: &[u8], start: usize) -> Result<usize, usize> {
    let expect = |j: usize, ok: fn(&u8) -> bool| {
        if bytes.get(j).is_some_and(ok) {
            Ok(())
        } else {
            Err(j)
        }
    };
    let hex = |j: usize, n: usize| -> Result<usize, usize> {
        for k in j..j + n {
            expect(k, u8::is_ascii_hexdigit)?;
        }
        Ok(j + n)
    };
    let c = start + 1;
    match bytes.get(c) {
        Some(
            b'a' | b'b' | b'f' | b'n' | b'r' | b't' | b'v' | b'"' | b'\'' | b'\\' | b'?' | b'`',
        ) => Ok(c + 1),
        Some(b'0'..=b'3') => {
            let octal = |b: &u8| (b'0'..=b'7').contains(b);
            expect(c + 1, octal)?;
            expect(c + 2, octal)?;
            Ok(c + 3)
        }
        Some(b'x' | b'X') => hex(c + 1, 2),
        Some(b'u') => hex(c + 1, 4),
        Some(b'U') => hex(c + 1, 8),
        _ => Err(c),
    }
}

/// The index after the backquoted identifier at `start`; `Err` with the index at which the
/// lexer gives up when there is none.
fn escaped_identifier(bytes: &[u8], start: usize) -> Result<usize, usize> {
    let mut i = start + 1;
    loop {
        match bytes.get(i) {
            Some(b'`') if i > start + 1 => return Ok(i + 1),
            Some(b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'/' | b' ') => {
                i += 1
            }
            _ => return Err(i),
        }
    }
}

/// The index after the number literal starting at `start` (a digit, or `.` before a digit),
/// as the lexer reads it.
fn skip_number(bytes: &[u8], start: usize) -> usize {
    let digits = |mut i: usize, hex: bool| {
        while bytes.get(i).is_some_and(|b| {
            if hex {
                b.is_ascii_hexdigit()
            } else {
                b.is_ascii_digit()
            }
        }) {
            i += 1;
        }
        i
    };
    let uint_suffix = |i: usize| i + usize::from(matches!(bytes.get(i), Some(b'u' | b'U')));
    if bytes.get(start) == Some(&b'0')
        && matches!(bytes.get(start + 1), Some(b'x'))
        && bytes.get(start + 2).is_some_and(u8::is_ascii_hexdigit)
    {
        return uint_suffix(digits(start + 2, true));
    }
    let mut i = digits(start, false);
    let mut float = false;
    if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i = digits(i + 1, false);
        float = true;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(i + 1), Some(b'+' | b'-')));
        if bytes.get(i + 1 + sign).is_some_and(u8::is_ascii_digit) {
            i = digits(i + 1 + sign, false);
            float = true;
        }
    }
    if float { i } else { uint_suffix(i) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits::default()
    }

    #[track_caller]
    fn ok(s: &str) {
        assert!(scan(s, &limits()).is_ok(), "{}", &s[..s.len().min(80)]);
    }

    #[track_caller]
    fn nesting(s: &str) {
        assert_eq!(
            scan(s, &limits()),
            Err(ScanError::Nesting { limit: 250 }),
            "{}",
            &s[..s.len().min(80)]
        );
    }

    #[test]
    fn brackets_nest() {
        let parens = |n: usize| format!("{}true{}", "(".repeat(n), ")".repeat(n));
        ok(&parens(30));
        ok(&parens(250));
        nesting(&parens(251));
        nesting(&parens(10_000));
        nesting(&format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000)));
        nesting(&format!("{}1", "{'a': ".repeat(10_000)));
        nesting(&format!("{}true", "f(".repeat(10_000)));
        // Unbalanced, or closed in the wrong order: still counted, never a crash.
        nesting(&"(".repeat(10_000));
        // Closing brackets the parser may drop: measured as if all were left open.
        ok(&")".repeat(10_000));
        nesting(&"(], ".repeat(10_000));
        nesting(&"()2u||".repeat(1_000));
        nesting(&"(1 +)".repeat(300));
        nesting(&"f(1,)".repeat(300));
        nesting(&"x[]".repeat(300));
        // Characters the lexer drops are no tokens: `["]` is `[]`, here an index.
        nesting(&"[\"]// c\n".repeat(300));
        nesting(&"x[@]".repeat(300));
        ok(&format!("[{}]", "(1 +), ".repeat(200)));
        // Empty calls, lists and maps, and trailing commas in lists and maps, are fine.
        ok(&format!(
            "[{}]",
            "f(), [], {}, [1,], {1: 2,}, a.b(), M{}, ".repeat(1_000)
        ));
    }

    #[test]
    fn chains_count_per_kind_and_together() {
        ok(&format!("1{}", " + 1".repeat(250)));
        nesting(&format!("1{}", " + 1".repeat(251)));
        nesting(&format!("1{}", "+1".repeat(10_000)));
        nesting(&format!("x{}", ".a".repeat(10_000)));
        nesting(&format!("x{}", "[0]".repeat(10_000)));
        nesting(&format!("x{}", "()".repeat(10_000)));
        nesting(&format!("1{}", " == 1".repeat(10_000)));
        nesting(&format!("{}1", "t ? 1 : ".repeat(10_000)));
        ok(&format!(
            "{}true{}",
            "[1].all(x, ".repeat(249),
            ")".repeat(249)
        ));
        ok(&format!(
            "{}true{}",
            "x . all (y, ".repeat(249),
            ")".repeat(249)
        ));
        // 200 of two kinds: within each kind's limit, beyond the total.
        assert_eq!(
            scan(
                &format!("x{}{}", ".a".repeat(200), " + 1".repeat(200)),
                &limits()
            ),
            Err(ScanError::Recursion)
        );
        // Through brackets, on the left or on the right.
        nesting(&format!("{}1{}", "(1 + 1 + ".repeat(130), ")".repeat(130)));
        nesting(&format!("{}1{}", "(".repeat(130), " + 1 + 1)".repeat(130)));
        ok(&format!("{}1{}", "(1 + ".repeat(200), ")".repeat(200)));
    }

    #[test]
    fn separators_and_balanced_operators_do_not_add_up() {
        // Long lists, maps, argument lists and `&&`/`||` chains are wide, not deep.
        ok(&format!("[{}]", vec!["1 + 1"; 10_000].join(", ")));
        ok(&format!(
            "{{{}}}",
            (0..5_000)
                .map(|i| format!("'k{i}': {i} + 1"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        ok(&vec!["x == 1"; 10_000].join(" || "));
        ok(&vec!["x.a.b == 1"; 5_000].join(" && "));
        ok(&format!("{}true", "!".repeat(10_000)));
        ok(&format!("{}1", "-".repeat(10_000)));
        ok("[1, 2, 3].exists(x, x > 1 && x < 3) ? a.b.c[0] : {'k': [1, -2]}.k[1] - 3");
    }

    #[test]
    fn literals_and_comments_are_skipped() {
        let many = "(".repeat(10_000);
        ok(&format!("'{many}'"));
        ok(&format!("\"{many}\""));
        ok(&format!("'''{many}\n{many}'''"));
        ok(&format!("r'{many}\\'"));
        ok(&format!("b\"{many}\""));
        ok(&format!("R\"\"\"{many}\"\"\""));
        ok(&format!("true // {many}\n"));
        ok(&format!("x.`a.b-c/d e` + 1 + {}", "`a`.".repeat(10)));
        // What the lexer does not read as a literal, it reads on after the quote: so does
        // the scan (unterminated literals, invalid escapes, invalid backquoted names).
        nesting(&format!("`{many}`"));
        ok(&format!("'{many}\n'"));
        nesting(&format!("'\\q{many}'"));
        nesting(&format!("'''\\q{many}'''"));
        ok(&format!("\"{many}"));
        // A lone `&`, `|` or `=` is dropped with the character after it.
        let deep = "(".repeat(250);
        ok(&format!("{deep}a &(b"));
        nesting(&format!("{deep}a & (b"));
        // `rb` is no prefix: an identifier, then a (valid) string.
        ok(&format!("rb'{many}'"));
        ok(&format!("br'\\q{many}'"));
        ok(&format!("'\\x41\\101\\u0041\\U00000041{many}'"));
        nesting(&format!("'\\x4{many}'"));
        ok(&format!("'\\'{many}'"));
        // A raw string ends at its first quote: what follows counts.
        nesting(&format!("r'\\'{many}"));
        ok("1.5e+10 + 0x1F - .5 - 1u");
    }

    #[test]
    fn code_points() {
        let limits = Limits {
            code_points: 10,
            ..Limits::default()
        };
        assert_eq!(
            scan("ééééééééééé", &limits).unwrap_err().to_string(),
            "expression code point size exceeds limit: size: 11, limit 10"
        );
        assert!(scan("éééééééééé", &limits).is_ok());
        assert_eq!(
            scan("((a.b + 1) * 2)", &Limits::default()),
            Ok(Shape {
                nesting: 2,
                levels: 3
            })
        );
    }
}
