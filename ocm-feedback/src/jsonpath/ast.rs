//! The parsed form of a Kubernetes JSONPath template.
//!
//! The node kinds follow client-go's parser one for one, so that evaluation can reproduce
//! kubectl's behaviour, quirks included.

/// One node of a parsed template.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Node {
    /// Literal text: outside `{}` or a quoted string inside an action.
    Text(Box<str>),
    /// A sequence of nodes applied one after the other (an action, a union member, a filter
    /// operand).
    List(Vec<Node>),
    /// `.name`: a map key (with `\` escapes removed).
    Field(Box<str>),
    /// `[i]`, `[a:b:c]`, `[*]`.
    Array([SliceBound; 3]),
    /// `[?(left op right)]` or `[?(left)]`.
    Filter(Box<Filter>),
    /// An integer literal.
    Int(i64),
    /// A floating-point literal.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
    /// `.*` and `[*]` on maps: every value.
    Wildcard,
    /// `..`: every container below (and including) the current values.
    Recursive,
    /// `[a,b,…]`: each member evaluated against the same input, results concatenated.
    Union(Vec<Vec<Node>>),
    /// A bare word: `range`, `end`, or anything else (an error when evaluated).
    Identifier(Box<str>),
}

/// One of the three numbers of an array selector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct SliceBound {
    /// The number (meaningful when `known`).
    pub(crate) value: i64,
    /// Whether the number was written.
    pub(crate) known: bool,
    /// The end bound of a plain index `[i]`, derived as `i + 1`.
    pub(crate) derived: bool,
}

/// A filter expression.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Filter {
    /// The left operand.
    pub(crate) left: Vec<Node>,
    /// The right operand (empty for an existence test).
    pub(crate) right: Vec<Node>,
    /// The operator text, or `exists`.
    pub(crate) op: FilterOp,
}

/// A filter operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FilterOp {
    /// `[?(@.x)]`.
    Exists,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `>`.
    Gt,
    /// `<=`.
    Le,
    /// `>=`.
    Ge,
    /// Any other run of `!<>=` characters: accepted by the parser, rejected when evaluated.
    Other(Box<str>),
}

impl FilterOp {
    pub(crate) fn from_text(op: &str) -> Self {
        match op {
            "==" => Self::Eq,
            "!=" => Self::Ne,
            "<" => Self::Lt,
            ">" => Self::Gt,
            "<=" => Self::Le,
            ">=" => Self::Ge,
            other => Self::Other(other.into()),
        }
    }
}
