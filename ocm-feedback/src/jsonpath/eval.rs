//! The evaluator: kubectl's semantics over a `serde_json::Value`.
//!
//! Every step mirrors what client-go does with Go reflection over the decoded JSON, including
//! the `range`/`end` bookkeeping, which client-go keeps as counters shared by the whole
//! evaluation. Map keys are visited in `serde_json`'s map order (sorted by key unless the
//! `preserve_order` feature is on); kubectl's own order for `*` over a map and for `..` is Go's
//! random map order, so any fixed order is one kubectl could print.

use serde_json::{Map, Value};

use super::ast::{Filter, FilterOp, Node, SliceBound};
use super::error::EvalError;
use super::matches::{Kind, Match};

/// How deeply `range` blocks may nest at evaluation time.
const MAX_RANGE_DEPTH: u32 = 64;

/// An evaluation error together with whether client-go would have returned a non-empty value
/// list alongside it (an existence filter keeps elements whose operand failed that way).
pub(crate) struct Fail {
    pub(crate) error: EvalError,
    partial: bool,
}

impl Fail {
    fn new(error: EvalError, partial: bool) -> Self {
        Self { error, partial }
    }
}

type Step<'a> = Result<Vec<Match<'a>>, Fail>;

/// State of one evaluation (client-go keeps it in the `JSONPath` object).
pub(crate) struct Evaluator {
    allow_missing_keys: bool,
    begin_range: u32,
    in_range: u32,
    end_range: u32,
    last_end: Option<usize>,
    depth: u32,
}

impl Evaluator {
    pub(crate) fn new(allow_missing_keys: bool) -> Self {
        Self {
            allow_missing_keys,
            begin_range: 0,
            in_range: 0,
            end_range: 0,
            last_end: None,
            depth: 0,
        }
    }

    /// client-go's `FindResults`: one result list per top-level node from `start` on, with
    /// `range` bodies expanded per element.
    pub(crate) fn find_results<'a>(
        &mut self,
        nodes: &'a [Node],
        start: usize,
        cursor: Match<'a>,
    ) -> Result<Vec<Vec<Match<'a>>>, EvalError> {
        if self.depth > MAX_RANGE_DEPTH {
            return Err(EvalError::TooDeep);
        }
        let current = [cursor];
        let mut out = Vec::with_capacity(nodes.len() - start.min(nodes.len()));
        let mut i = start;
        while i < nodes.len() {
            let results = self.walk(&current, &nodes[i]).map_err(|f| f.error)?;
            if self.end_range > 0 && self.end_range <= self.in_range {
                self.end_range -= 1;
                self.last_end = Some(i);
                break;
            }
            if self.begin_range > 0 {
                self.begin_range -= 1;
                self.in_range += 1;
                self.depth += 1;
                if results.is_empty() {
                    self.find_results(nodes, i + 1, Match::Nil)?;
                } else {
                    for value in results {
                        let body = self.find_results(nodes, i + 1, value.range_cursor())?;
                        out.extend(body);
                    }
                }
                self.depth -= 1;
                self.in_range -= 1;
                if let Some(end) = self.last_end.filter(|&end| end > i) {
                    i = end;
                }
                i += 1;
                continue;
            }
            out.push(results);
            i += 1;
        }
        Ok(out)
    }

    fn walk<'a>(&mut self, input: &[Match<'a>], node: &'a Node) -> Step<'a> {
        match node {
            Node::List(nodes) => self.list(input, nodes),
            Node::Text(text) => Ok(vec![Match::Text(text)]),
            Node::Field(name) => self.field(input, name),
            Node::Array(bounds) => array(input, bounds),
            Node::Filter(filter) => self.filter(input, filter),
            Node::Int(v) => Ok(vec![Match::Int(*v); input.len()]),
            Node::Float(v) => Ok(vec![Match::Float(*v); input.len()]),
            Node::Bool(v) => Ok(vec![Match::Bool(*v); input.len()]),
            Node::Wildcard => Ok(wildcard(input)),
            Node::Recursive => Ok(recursive(input)),
            Node::Union(members) => {
                let mut out = Vec::new();
                for member in members {
                    let part = self
                        .list(input, member)
                        .map_err(|f| Fail::new(f.error, !input.is_empty()))?;
                    out.extend(part);
                }
                Ok(out)
            }
            Node::Identifier(name) => self.identifier(input, name),
        }
    }

    fn list<'a>(&mut self, input: &[Match<'a>], nodes: &'a [Node]) -> Step<'a> {
        let Some((first, rest)) = nodes.split_first() else {
            return Ok(input.to_vec());
        };
        let mut current = self.walk(input, first)?;
        for node in rest {
            current = self.walk(&current, node)?;
        }
        Ok(current)
    }

    fn identifier<'a>(&mut self, input: &[Match<'a>], name: &str) -> Step<'a> {
        match name {
            "range" => {
                self.begin_range += 1;
                Ok(input.to_vec())
            }
            "end" => {
                if self.in_range > 0 {
                    self.end_range += 1;
                    Ok(Vec::new())
                } else {
                    Err(Fail::new(EvalError::EndWithoutRange, false))
                }
            }
            other => Err(Fail::new(
                EvalError::UnknownIdentifier(other.to_owned()),
                !input.is_empty(),
            )),
        }
    }

    fn field<'a>(&mut self, input: &[Match<'a>], name: &str) -> Step<'a> {
        if input.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = Vec::with_capacity(input.len());
        for value in input {
            if let Match::Json(Value::Object(map)) = value
                && let Some(found) = map.get(name)
            {
                out.push(Match::Json(found));
            }
        }
        if out.is_empty() && !self.allow_missing_keys {
            return Err(Fail::new(EvalError::KeyNotFound(name.to_owned()), false));
        }
        Ok(out)
    }

    fn filter<'a>(&mut self, input: &[Match<'a>], filter: &'a Filter) -> Step<'a> {
        let mut out = Vec::new();
        for value in input {
            let items = match value {
                Match::Json(Value::Array(items)) => items,
                other => {
                    return Err(Fail::new(
                        EvalError::NotFilterable {
                            value: other.go_debug_string(),
                        },
                        true,
                    ));
                }
            };
            for item in items {
                let element = Match::Json(item);
                let left = self.operand(element, &filter.left);
                if filter.op == FilterOp::Exists {
                    let keep = match left {
                        Ok(Operand::Nothing) => false,
                        Ok(_) => true,
                        Err(fail) => fail.partial,
                    };
                    if keep {
                        out.push(element);
                    }
                    continue;
                }
                let left = match left.map_err(|f| Fail::new(f.error, true))? {
                    Operand::Nothing => continue,
                    Operand::Many => return Err(Fail::new(EvalError::AmbiguousOperand, true)),
                    Operand::One(m) => m,
                };
                let right = match self
                    .operand(element, &filter.right)
                    .map_err(|f| Fail::new(f.error, true))?
                {
                    Operand::Nothing => continue,
                    Operand::Many => return Err(Fail::new(EvalError::AmbiguousOperand, true)),
                    Operand::One(m) => m,
                };
                let partial = !out.is_empty();
                let pass = compare(&filter.op, left, right).map_err(|e| Fail::new(e, partial))?;
                if pass {
                    out.push(element);
                }
            }
        }
        Ok(out)
    }

    /// Evaluates a filter operand against one list element, without allocating in the usual
    /// cases (a chain of fields, or a literal).
    fn operand<'a>(&mut self, element: Match<'a>, nodes: &'a [Node]) -> Result<Operand<'a>, Fail> {
        if self.allow_missing_keys || !nodes.iter().all(|n| matches!(n, Node::Field(_))) {
            if let Some(operand) = simple_operand(element, nodes) {
                return Ok(operand);
            }
        } else {
            // A chain of fields where a missing key is an error.
            let mut current = element;
            for node in nodes {
                let Node::Field(name) = node else { break };
                match current {
                    Match::Json(Value::Object(map)) if map.contains_key(&**name) => {
                        current = map.get(&**name).map_or(Match::Nil, Match::Json);
                    }
                    _ => {
                        return Err(Fail::new(EvalError::KeyNotFound(name.to_string()), false));
                    }
                }
            }
            return Ok(Operand::One(current));
        }
        let values = self.list(&[element], nodes)?;
        Ok(match values.as_slice() {
            [] => Operand::Nothing,
            [one] => Operand::One(*one),
            _ => Operand::Many,
        })
    }
}

/// Whether a filter operand is a literal or a chain of fields (evaluated without allocating).
fn is_simple_operand(nodes: &[Node]) -> bool {
    matches!(
        nodes,
        [Node::Text(_)] | [Node::Int(_)] | [Node::Float(_)] | [Node::Bool(_)]
    ) || nodes.iter().all(|n| matches!(n, Node::Field(_)))
}

/// A literal or field-chain operand evaluated against one element, missing keys giving
/// nothing; `None` for other operands.
fn simple_operand<'a>(element: Match<'a>, nodes: &'a [Node]) -> Option<Operand<'a>> {
    if !is_simple_operand(nodes) {
        return None;
    }
    Some(match operand_value(element, nodes) {
        Some(value) => Operand::One(value),
        None => Operand::Nothing,
    })
}

/// The value of a literal or field-chain operand (see [`is_simple_operand`]) for one
/// element; `None` when a key is missing. Inlined so that the filter loop keeps values in
/// registers.
#[inline(always)]
fn operand_value<'a>(element: Match<'a>, nodes: &'a [Node]) -> Option<Match<'a>> {
    match nodes {
        [Node::Text(text)] => return Some(Match::Text(text)),
        [Node::Int(v)] => return Some(Match::Int(*v)),
        [Node::Float(v)] => return Some(Match::Float(*v)),
        [Node::Bool(v)] => return Some(Match::Bool(*v)),
        _ => {}
    }
    let mut current = element;
    for node in nodes {
        let (Node::Field(name), Match::Json(Value::Object(map))) = (node, current) else {
            return None;
        };
        current = Match::Json(map.get(&**name)?);
    }
    Some(current)
}

/// Whether a template can be evaluated by [`stream`]: one action made of fields, indexes and
/// slices, and filters with literal or field-chain operands.
pub(crate) fn streamable(nodes: &[Node]) -> Option<&[Node]> {
    let [Node::List(steps)] = nodes else {
        return None;
    };
    steps
        .iter()
        .all(|step| match step {
            Node::Field(_) | Node::Array(_) => true,
            Node::Filter(f) => {
                is_simple_operand(&f.left)
                    && (f.op == FilterOp::Exists || is_simple_operand(&f.right))
            }
            _ => false,
        })
        .then_some(steps.as_slice())
}

/// Depth-first evaluation of a [`streamable`] template with missing keys allowed, into one
/// result list without intermediate lists. For these steps depth-first order equals
/// client-go's step-by-step order. Anything that client-go reports as an error, and the empty
/// slice (which in client-go drops the remaining inputs of the step), returns `Err(())`: the
/// caller then evaluates step by step to get client-go's exact outcome.
pub(crate) fn stream<'a>(
    steps: &'a [Node],
    value: Match<'a>,
    out: &mut Vec<Match<'a>>,
) -> Result<(), ()> {
    let Some((step, rest)) = steps.split_first() else {
        out.push(value);
        return Ok(());
    };
    match step {
        Node::Field(name) => {
            if let Match::Json(Value::Object(map)) = value
                && let Some(found) = map.get(&**name)
            {
                stream(rest, Match::Json(found), out)?;
            }
            Ok(())
        }
        Node::Array(bounds) => {
            let items = match value {
                Match::Json(Value::Null) => return Ok(()),
                Match::Json(Value::Array(items)) => items,
                _ => return Err(()),
            };
            let len = items.len() as i64;
            let [start, end, step] = *bounds;
            let mut from = if start.known { start.value } else { 0 };
            if from < 0 {
                from = from.wrapping_add(len);
            }
            let mut to = if end.known { end.value } else { len };
            if to < 0 || (to == 0 && end.derived) {
                to = to.wrapping_add(len);
            }
            if from == to || from < 0 || from >= len || to < 0 || to > len || from > to {
                return Err(());
            }
            let step = if step.known {
                if step.value <= 0 {
                    return Err(());
                }
                usize::try_from(step.value).unwrap_or(usize::MAX)
            } else {
                1
            };
            for item in items[from as usize..to as usize].iter().step_by(step) {
                stream(rest, Match::Json(item), out)?;
            }
            Ok(())
        }
        Node::Filter(filter) => {
            let Match::Json(Value::Array(items)) = value else {
                return Err(());
            };
            let exists = matches!(filter.op, FilterOp::Exists);
            for item in items {
                let element = Match::Json(item);
                let Some(left) = operand_value(element, &filter.left) else {
                    continue;
                };
                let pass = exists || {
                    let Some(right) = operand_value(element, &filter.right) else {
                        continue;
                    };
                    compare(&filter.op, left, right).map_err(|_| ())?
                };
                if pass {
                    stream(rest, element, out)?;
                }
            }
            Ok(())
        }
        _ => Err(()),
    }
}

/// A filter operand's values: none, exactly one, or several.
enum Operand<'a> {
    Nothing,
    One(Match<'a>),
    Many,
}

/// `[i]`, `[a:b:c]` and `[*]` over each input list.
fn array<'a>(input: &[Match<'a>], bounds: &[SliceBound; 3]) -> Step<'a> {
    let mut out = Vec::new();
    for value in input {
        let items = match value {
            Match::Json(Value::Null) => continue,
            Match::Json(Value::Array(items)) => items,
            Match::Nil => return Err(Fail::new(EvalError::NilValue, true)),
            other => {
                return Err(Fail::new(
                    EvalError::NotAList {
                        go_type: other.go_type_name(),
                    },
                    true,
                ));
            }
        };
        let len = items.len() as i64;
        let [mut start, mut end, step] = *bounds;
        if !start.known {
            start.value = 0;
        }
        if start.value < 0 {
            start.value = start.value.wrapping_add(len);
        }
        if !end.known {
            end.value = len;
        }
        if end.value < 0 || (end.value == 0 && end.derived) {
            end.value = end.value.wrapping_add(len);
        }
        let oob = |index: i64| {
            Fail::new(
                EvalError::IndexOutOfBounds {
                    index,
                    length: items.len(),
                },
                true,
            )
        };
        if end.value == start.value {
            // Asking for nothing stops the whole step, dropping later inputs (as client-go).
            return Ok(out);
        }
        if start.value >= len || start.value < 0 {
            return Err(oob(start.value));
        }
        if end.value > len || end.value < 0 {
            return Err(oob(end.value.wrapping_sub(1)));
        }
        if start.value > end.value {
            return Err(Fail::new(
                EvalError::StartAfterEnd {
                    start: start.value,
                    end: end.value,
                },
                true,
            ));
        }
        let step = if step.known {
            if step.value <= 0 {
                return Err(Fail::new(EvalError::StepNotPositive, true));
            }
            usize::try_from(step.value).unwrap_or(usize::MAX)
        } else {
            1
        };
        // Both bounds are within 0..=len here.
        let (from, to) = (start.value as usize, end.value as usize);
        out.extend(items[from..to].iter().step_by(step).map(Match::Json));
    }
    Ok(out)
}

/// The children client-go's wildcard yields: map values, list items, and the bytes of a string.
fn children<'a>(value: &Match<'a>, out: &mut Vec<Match<'a>>) {
    match value {
        Match::Json(Value::Object(map)) => out.extend(map_values(map)),
        Match::Json(Value::Array(items)) => out.extend(items.iter().map(Match::Json)),
        Match::Json(Value::String(s)) => out.extend(s.bytes().map(Match::Byte)),
        Match::Text(s) => out.extend(s.bytes().map(Match::Byte)),
        _ => {}
    }
}

fn map_values(map: &Map<String, Value>) -> impl Iterator<Item = Match<'_>> {
    map.values().map(Match::Json)
}

fn wildcard<'a>(input: &[Match<'a>]) -> Vec<Match<'a>> {
    let mut out = Vec::new();
    for value in input {
        children(value, &mut out);
    }
    out
}

/// `..`: every value that has children (maps, lists, non-empty strings), in pre-order.
fn recursive<'a>(input: &[Match<'a>]) -> Vec<Match<'a>> {
    let mut out = Vec::new();
    // An explicit stack of pending siblings keeps deep documents off the call stack.
    let mut stack: Vec<std::vec::IntoIter<Match<'a>>> = vec![Vec::from(input).into_iter()];
    let mut kids = Vec::new();
    while let Some(top) = stack.last_mut() {
        let Some(value) = top.next() else {
            stack.pop();
            continue;
        };
        kids.clear();
        children(&value, &mut kids);
        if !kids.is_empty() {
            out.push(value);
            // Bytes never have children; skip pushing them.
            if !matches!(value, Match::Json(Value::String(_)) | Match::Text(_)) {
                stack.push(std::mem::take(&mut kids).into_iter());
            }
        }
    }
    out
}

/// The six comparisons of Go templates (`eq`, `ne`, `lt`, `le`, `gt`, `ge`).
#[inline]
fn compare(op: &FilterOp, left: Match<'_>, right: Match<'_>) -> Result<bool, EvalError> {
    match op {
        FilterOp::Eq => equal(left, right),
        FilterOp::Ne => equal(left, right).map(|eq| !eq),
        FilterOp::Lt => less(left, right),
        FilterOp::Le => less_equal(left, right),
        FilterOp::Gt => less_equal(left, right).map(|le| !le),
        FilterOp::Ge => less(left, right).map(|lt| !lt),
        FilterOp::Exists => Ok(true),
        FilterOp::Other(op) => Err(EvalError::UnknownOperator(op.to_string())),
    }
}

#[inline]
fn equal(left: Match<'_>, right: Match<'_>) -> Result<bool, EvalError> {
    let a = left.kind().ok_or(EvalError::InvalidComparisonType)?;
    let b = right.kind().ok_or(EvalError::InvalidComparisonType)?;
    Ok(match (a, b) {
        (Kind::Bool(x), Kind::Bool(y)) => x == y,
        (Kind::Int(x), Kind::Int(y)) => x == y,
        (Kind::Uint(x), Kind::Uint(y)) => x == y,
        (Kind::Float(x), Kind::Float(y)) => x == y,
        (Kind::Str(x), Kind::Str(y)) => x == y,
        (Kind::Int(x), Kind::Uint(y)) | (Kind::Uint(y), Kind::Int(x)) => x >= 0 && x as u64 == y,
        _ => return Err(EvalError::IncompatibleTypes),
    })
}

fn less(left: Match<'_>, right: Match<'_>) -> Result<bool, EvalError> {
    let a = left.kind().ok_or(EvalError::InvalidComparisonType)?;
    let b = right.kind().ok_or(EvalError::InvalidComparisonType)?;
    Ok(match (a, b) {
        (Kind::Bool(_), Kind::Bool(_)) => return Err(EvalError::InvalidComparisonType),
        (Kind::Int(x), Kind::Int(y)) => x < y,
        (Kind::Uint(x), Kind::Uint(y)) => x < y,
        (Kind::Float(x), Kind::Float(y)) => x < y,
        (Kind::Str(x), Kind::Str(y)) => x < y,
        (Kind::Int(x), Kind::Uint(y)) => x < 0 || (x as u64) < y,
        (Kind::Uint(x), Kind::Int(y)) => y >= 0 && x < y as u64,
        _ => return Err(EvalError::IncompatibleTypes),
    })
}

fn less_equal(left: Match<'_>, right: Match<'_>) -> Result<bool, EvalError> {
    if less(left, right)? {
        return Ok(true);
    }
    equal(left, right)
}
