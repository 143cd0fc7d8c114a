//! CEL cluster selectors (`celSelector.celExpressions`).
//!
//! Expressions are compiled once per placement and evaluated per cluster against the variable
//! `managedCluster`, the ManagedCluster as its JSON form (field names as in the API, quantities
//! as strings). Besides the standard library and the `strings`, `lists` and `math` extensions
//! of the `cel` crate, two OCM functions are available:
//!
//! * `managedCluster.scores("<AddOnPlacementScore name>")`: the `status.scores` items of that
//!   AddOnPlacementScore in the cluster's namespace, as a list of `{name, value}` maps
//!   (`validUntil` is ignored, like upstream). A missing object is an evaluation error.
//! * `"<json>".parseJSON()`: the decoded value; invalid JSON is an evaluation error.
//!
//! A result that is not `true`, an evaluation error or a cost overrun is "no match"; a compile
//! error makes the placement misconfigured with a message starting `compilation failed: `.
//!
//! **Cost** (our approximation): the `cel` crate tracks no runtime cost, so each expression is
//! given a static cost when compiled: one per AST node, with the nodes inside a comprehension
//! (`all`, `exists`, `filter`, `map`, …) counted [`COMPREHENSION_ITERATIONS`] times per nesting
//! level. An expression costing more than the per-expression limit never matches; the
//! expressions of one predicate are evaluated in order while their running total stays within
//! the per-cluster budget. Upstream's limits are the defaults (see [`CelLimits`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

use cel::common::ast::{EntryExpr, Expr, IdedExpr};
use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use cel::extractors::This;
use cel::objects::{Key, Map};
use cel::{Context, Env, ExecutionError, FunctionContext, Program, Value};

/// The variable expressions read.
pub const VARIABLE: &str = "managedCluster";

/// Hidden variable carrying the current cluster's AddOn scores (not a valid CEL identifier, so
/// expressions cannot name it).
const SCORES_VARIABLE: &str = "@ocm_addon_scores";

/// How many iterations a comprehension body is assumed to run, for the static cost.
pub const COMPREHENSION_ITERATIONS: u64 = 10;

/// Cost limits of CEL selectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CelLimits {
    /// Largest cost of one expression (upstream `PerCallLimit`, 1 000 000).
    pub per_expression: u64,
    /// Budget shared by the expressions of one predicate for one cluster (upstream
    /// `RuntimeCELCostBudget`, 10 000 000).
    pub per_cluster_budget: u64,
}

impl Default for CelLimits {
    fn default() -> Self {
        CelLimits {
            per_expression: 1_000_000,
            per_cluster_budget: 10_000_000,
        }
    }
}

/// Names an expression may use as free identifiers besides [`VARIABLE`]: the type names of the
/// standard library.
const TYPE_IDENTIFIERS: &[&str] = &[
    "bool",
    "bytes",
    "double",
    "int",
    "list",
    "map",
    "null_type",
    "string",
    "type",
    "uint",
    "timestamp",
    "duration",
    "optional_type",
];

/// The shared CEL environment: standard library plus the extensions, built once.
pub(crate) fn environment() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        // The extensions declare distinct overloads; a failure would mean a name clash inside
        // the `cel` crate itself, in which case the environment simply lacks that extension.
        let _ = env.add_extension(cel::extensions::strings);
        let _ = env.add_extension(cel::extensions::lists);
        let _ = env.add_extension(cel::extensions::math);
        Arc::new(env)
    })
}

/// One compiled expression.
#[derive(Debug)]
pub(crate) struct CompiledExpression {
    program: Program,
    cost: u64,
    uses_scores: bool,
}

/// Compiles one expression, returning upstream-style error text on failure.
pub(crate) fn compile(source: &str) -> Result<CompiledExpression, String> {
    let env = environment();
    let program = env
        .compile(source)
        .map_err(|e| format!("compilation failed: {e}"))?;
    let mut unknown = BTreeSet::new();
    free_identifiers(program.expression(), &mut Vec::new(), &mut unknown);
    if let Some((name, id)) = unknown.into_iter().next() {
        let (line, col) = program.source_info().offset_for(id).unwrap_or((1, 1));
        return Err(format!(
            "compilation failed: ERROR: <input>:{line}:{col}: undeclared reference to '{name}' (in container '')"
        ));
    }
    let cost = static_cost(program.expression());
    let uses_scores = program.references().has_function("scores");
    Ok(CompiledExpression {
        program,
        cost,
        uses_scores,
    })
}

/// The expressions of one predicate.
#[derive(Debug, Default)]
pub(crate) struct CelSelector {
    expressions: Vec<CompiledExpression>,
}

impl CelSelector {
    /// Compiles every expression; the first error is returned.
    pub(crate) fn compile(sources: &[String]) -> Result<Self, String> {
        let expressions = sources
            .iter()
            .map(|s| compile(s))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CelSelector { expressions })
    }

    /// Whether there is nothing to evaluate.
    pub(crate) fn is_empty(&self) -> bool {
        self.expressions.is_empty()
    }

    /// Whether any expression calls `scores()`.
    pub(crate) fn uses_scores(&self) -> bool {
        self.expressions.iter().any(|e| e.uses_scores)
    }

    /// Evaluates the expressions in order against one cluster. Returns whether all matched and
    /// the cost spent.
    pub(crate) fn evaluate(
        &self,
        root: &Context<'_, '_>,
        cluster: &ClusterInput<'_>,
        limits: CelLimits,
    ) -> (bool, u64) {
        let mut spent: u64 = 0;
        if self.expressions.is_empty() {
            return (true, 0);
        }
        let mut scope = root.new_inner_scope();
        scope.set_variable_resolver(cluster);
        for expr in &self.expressions {
            spent = spent.saturating_add(expr.cost);
            if expr.cost > limits.per_expression || spent > limits.per_cluster_budget {
                return (false, spent);
            }
            match expr.program.execute(&scope) {
                Ok(Value::Bool(true)) => {}
                _ => return (false, spent),
            }
        }
        (true, spent)
    }
}

/// Path of the labels, served directly (see [`CelCluster`]).
const LABELS_PATH: &str = "managedCluster.metadata.labels";
/// Path of the claims, served directly (see [`CelCluster`]).
const CLAIMS_PATH: &str = "managedCluster.status.clusterClaims";

/// The CEL form of one cluster, built once per snapshot.
///
/// Besides the whole object, the two parts selectors read most (`metadata.labels` and
/// `status.clusterClaims`) are kept as separate small values: the interpreter asks a variable
/// resolver for the whole dotted name first, so these paths are answered without walking the
/// object, which keeps evaluation within a few cache lines per cluster.
#[derive(Debug)]
pub(crate) struct CelCluster {
    whole: Box<dyn Val>,
    labels: Option<Box<dyn Val>>,
    claims: Option<Box<dyn Val>>,
}

impl CelCluster {
    /// Converts a serialisable object (a ManagedCluster) through its JSON form.
    pub(crate) fn new<T: serde::Serialize>(object: &T) -> Self {
        let json = serde_json::to_value(object).unwrap_or(serde_json::Value::Null);
        let part = |a: &str, b: &str| json.get(a).and_then(|v| v.get(b)).map(json_to_val);
        CelCluster {
            labels: part("metadata", "labels"),
            claims: part("status", "clusterClaims"),
            whole: json_to_val(&json),
        }
    }
}

/// What a CEL evaluation needs of one cluster; serves the variables by reference, so the
/// cluster's (cached) CEL form is never copied per evaluation.
pub(crate) struct ClusterInput<'a> {
    /// The ManagedCluster as a CEL value.
    pub(crate) object: &'a CelCluster,
    /// resource name → list of `{name, value}`, when an expression calls `scores()`.
    pub(crate) scores: Option<Box<dyn Val>>,
}

impl VariableResolver for ClusterInput<'_> {
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        match variable {
            VARIABLE => Some(CowVal::Borrowed(self.object.whole.as_ref())),
            LABELS_PATH => self.object.labels.as_deref().map(CowVal::Borrowed),
            CLAIMS_PATH => self.object.claims.as_deref().map(CowVal::Borrowed),
            SCORES_VARIABLE => self.scores.as_deref().map(CowVal::Borrowed),
            _ => None,
        }
    }
}

/// Converts a CEL [`Value`] into the interpreter's value tree.
pub(crate) fn to_val(value: Value) -> Box<dyn Val> {
    Box::<dyn Val>::try_from(value).unwrap_or_else(|_| Box::new(cel::common::types::CelNull))
}

/// Converts JSON straight into the interpreter's value tree (same mapping as [`json_to_cel`]).
pub(crate) fn json_to_val(json: &serde_json::Value) -> Box<dyn Val> {
    use cel::common::types::{
        CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, CelUInt,
    };
    match json {
        serde_json::Value::Null => Box::new(CelNull),
        serde_json::Value::Bool(b) => Box::new(CelBool::from(*b)),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Box::new(CelInt::from(i)),
            (None, Some(u), _) => Box::new(CelUInt::from(u)),
            (_, _, Some(f)) => Box::new(CelDouble::from(f)),
            _ => Box::new(CelNull),
        },
        serde_json::Value::String(s) => Box::new(CelString::from(s.clone())),
        serde_json::Value::Array(items) => Box::new(CelList::from(
            items.iter().map(json_to_val).collect::<Vec<_>>(),
        )),
        serde_json::Value::Object(map) => {
            let entries: HashMap<CelMapKey<'static>, Box<dyn Val>> = map
                .iter()
                .map(|(k, v)| {
                    (
                        CelMapKey::String(CelString::from(k.clone())),
                        json_to_val(v),
                    )
                })
                .collect();
            Box::new(CelMap::from(entries))
        }
    }
}

/// Converts JSON into a CEL value (integers stay integers, other numbers become doubles).
pub(crate) fn json_to_cel(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Value::Int(i),
            (None, Some(u), _) => Value::UInt(u),
            (_, _, Some(f)) => Value::Float(f),
            _ => Value::Null,
        },
        serde_json::Value::String(s) => Value::String(Arc::new(s.clone())),
        serde_json::Value::Array(items) => {
            Value::List(Arc::new(items.iter().map(json_to_cel).collect()))
        }
        serde_json::Value::Object(map) => {
            let entries: HashMap<Key, Value> = map
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), json_to_cel(v)))
                .collect();
            Value::Map(Map {
                map: Arc::new(entries),
            })
        }
    }
}

/// Builds the list CEL `scores()` returns for one AddOnPlacementScore.
pub(crate) fn score_items_value(items: &[(&str, i32)]) -> Value {
    Value::List(Arc::new(
        items
            .iter()
            .map(|(name, value)| {
                let mut m = HashMap::with_capacity(2);
                m.insert(
                    Key::String(Arc::new("name".to_string())),
                    Value::String(Arc::new(name.to_string())),
                );
                m.insert(
                    Key::String(Arc::new("value".to_string())),
                    Value::Int(i64::from(*value)),
                );
                Value::Map(Map { map: Arc::new(m) })
            })
            .collect(),
    ))
}

/// Builds the root context with the OCM functions; create it once per placement.
pub(crate) fn root_context() -> Context<'static, 'static> {
    let mut ctx = Context::with_env(Arc::clone(environment()));
    // Neither name is declared by the environment, so adding them cannot fail.
    let _ = ctx.add_function("scores", scores_function);
    let _ = ctx.add_function("parseJSON", parse_json_function);
    ctx
}

fn scores_function(
    ftx: &FunctionContext<'_, '_>,
    This(_cluster): This<Value>,
    name: Arc<String>,
) -> Result<Value, ExecutionError> {
    let table = ftx
        .ptx
        .get_variable(SCORES_VARIABLE)
        .and_then(|v| Value::try_from(v.as_ref()).ok());
    let found = match table {
        Some(Value::Map(map)) => map.map.get(&Key::String(name.clone())).cloned(),
        _ => None,
    };
    found.ok_or_else(|| ftx.error(format!("failed to get AddOnPlacementScore {name}")))
}

fn parse_json_function(
    ftx: &FunctionContext<'_, '_>,
    This(text): This<Arc<String>>,
) -> Result<Value, ExecutionError> {
    serde_json::from_str::<serde_json::Value>(&text)
        .map(|v| json_to_cel(&v))
        .map_err(|e| ftx.error(format!("failed to parse JSON: {e}")))
}

/// Collects identifiers that are neither bound by an enclosing comprehension nor known.
fn free_identifiers(e: &IdedExpr, bound: &mut Vec<String>, out: &mut BTreeSet<(String, u64)>) {
    match &e.expr {
        Expr::Unspecified | Expr::Literal(_) => {}
        Expr::Ident(name) => {
            if name != VARIABLE
                && !name.starts_with('@')
                && !TYPE_IDENTIFIERS.contains(&name.as_str())
                && !bound.iter().any(|b| b == name)
            {
                out.insert((name.clone(), e.id));
            }
        }
        Expr::Call(call) => {
            if let Some(t) = &call.target {
                free_identifiers(t, bound, out);
            }
            for a in &call.args {
                free_identifiers(a, bound, out);
            }
        }
        Expr::Comprehension(c) => {
            free_identifiers(&c.iter_range, bound, out);
            free_identifiers(&c.accu_init, bound, out);
            let depth = bound.len();
            bound.push(c.iter_var.clone());
            if let Some(v2) = &c.iter_var2 {
                bound.push(v2.clone());
            }
            bound.push(c.accu_var.clone());
            free_identifiers(&c.loop_cond, bound, out);
            free_identifiers(&c.loop_step, bound, out);
            free_identifiers(&c.result, bound, out);
            bound.truncate(depth);
        }
        Expr::List(l) => l
            .elements
            .iter()
            .for_each(|x| free_identifiers(x, bound, out)),
        Expr::Map(m) => m.entries.iter().for_each(|entry| match &entry.expr {
            EntryExpr::StructField(f) => free_identifiers(&f.value, bound, out),
            EntryExpr::MapEntry(me) => {
                free_identifiers(&me.key, bound, out);
                free_identifiers(&me.value, bound, out);
            }
        }),
        Expr::Select(s) => free_identifiers(&s.operand, bound, out),
        Expr::Struct(s) => s.entries.iter().for_each(|entry| match &entry.expr {
            EntryExpr::StructField(f) => free_identifiers(&f.value, bound, out),
            EntryExpr::MapEntry(me) => {
                free_identifiers(&me.key, bound, out);
                free_identifiers(&me.value, bound, out);
            }
        }),
    }
}

/// Static cost of an expression (see the module documentation).
fn static_cost(e: &IdedExpr) -> u64 {
    let sum = |xs: &mut dyn Iterator<Item = &IdedExpr>| {
        xs.map(static_cost).fold(0u64, u64::saturating_add)
    };
    let own = match &e.expr {
        Expr::Unspecified | Expr::Literal(_) | Expr::Ident(_) => 0,
        Expr::Call(c) => sum(&mut c.target.iter().map(|b| &**b).chain(c.args.iter())),
        Expr::Comprehension(c) => {
            let body = static_cost(&c.loop_cond).saturating_add(static_cost(&c.loop_step));
            static_cost(&c.iter_range)
                .saturating_add(static_cost(&c.accu_init))
                .saturating_add(body.saturating_mul(COMPREHENSION_ITERATIONS))
                .saturating_add(static_cost(&c.result))
        }
        Expr::List(l) => sum(&mut l.elements.iter()),
        Expr::Map(m) => sum(&mut m.entries.iter().flat_map(|entry| match &entry.expr {
            EntryExpr::StructField(f) => vec![&f.value],
            EntryExpr::MapEntry(me) => vec![&me.key, &me.value],
        })),
        Expr::Select(s) => static_cost(&s.operand),
        Expr::Struct(s) => sum(&mut s.entries.iter().flat_map(|entry| match &entry.expr {
            EntryExpr::StructField(f) => vec![&f.value],
            EntryExpr::MapEntry(me) => vec![&me.key, &me.value],
        })),
    };
    own.saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cluster(
        json: serde_json::Value,
        scores: Option<(&str, Vec<(&str, i32)>)>,
    ) -> (CelCluster, Option<Box<dyn Val>>) {
        (
            CelCluster::new(&json),
            scores.map(|(res, items)| {
                let mut m = HashMap::new();
                m.insert(
                    Key::String(Arc::new(res.to_string())),
                    score_items_value(&items),
                );
                to_val(Value::Map(Map { map: Arc::new(m) }))
            }),
        )
    }

    type Input = (CelCluster, Option<Box<dyn Val>>);

    fn input(c: &Input) -> ClusterInput<'_> {
        ClusterInput {
            object: &c.0,
            scores: c.1.as_ref().map(|v| v.clone_as_boxed()),
        }
    }

    fn eval(exprs: &[&str], c: &Input) -> bool {
        let sel =
            CelSelector::compile(&exprs.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        sel.evaluate(&root_context(), &input(c), CelLimits::default())
            .0
    }

    fn sample() -> serde_json::Value {
        json!({
            "metadata": {"name": "cluster1", "labels": {"region": "us-east-1", "version": "1.30.0"}},
            "status": {"clusterClaims": [{"name": "cloud", "value": "Amazon"}],
                        "allocatable": {"cpu": "16"}}
        })
    }

    #[test]
    fn labels_claims_and_scores() {
        let c = cluster(sample(), Some(("test-addon", vec![("test-score", 90)])));
        assert!(eval(
            &["managedCluster.metadata.labels[\"region\"] == \"us-east-1\""],
            &c
        ));
        assert!(eval(
            &[
                "managedCluster.status.clusterClaims.exists(c, c.name == \"cloud\" && c.value == \"Amazon\")"
            ],
            &c
        ));
        assert!(eval(
            &[
                "managedCluster.scores(\"test-addon\").filter(s, s.name == 'test-score').all(e, e.value > 80)"
            ],
            &c
        ));
        let low = cluster(sample(), Some(("test-addon", vec![("test-score", 70)])));
        assert!(!eval(
            &[
                "managedCluster.scores(\"test-addon\").filter(s, s.name == 'test-score').all(e, e.value > 80)"
            ],
            &low
        ));
        // Missing score object: evaluation error, no match.
        let none = cluster(sample(), None);
        assert!(!eval(
            &["managedCluster.scores(\"test-addon\").size() == 0"],
            &none
        ));
    }

    #[test]
    fn multiple_expressions_are_anded_and_empty_matches() {
        let c = cluster(sample(), None);
        assert!(eval(
            &["true", "managedCluster.metadata.name == 'cluster1'"],
            &c
        ));
        assert!(!eval(&["true", "false"], &c));
        assert!(eval(&[], &c));
        // Missing map key: evaluation error, no match (never misconfigured).
        assert!(!eval(&["managedCluster.metadata.labels['env'] == 'x'"], &c));
        // Non-bool result: no match.
        assert!(!eval(&["1"], &c));
    }

    #[test]
    fn shortcut_paths_agree_with_the_object() {
        let c = cluster(sample(), None);
        assert!(eval(
            &["managedCluster.metadata.labels == managedCluster['metadata']['labels']"],
            &c
        ));
        assert!(eval(
            &["managedCluster.status.clusterClaims.size() == 1"],
            &c
        ));
        assert!(eval(&["has(managedCluster.metadata.labels)"], &c));
        // A comprehension variable of the same name shadows the cluster.
        assert!(eval(
            &[
                "[{'metadata': {'labels': 1}}].all(managedCluster, managedCluster.metadata.labels == 1)"
            ],
            &c
        ));
        let bare = cluster(json!({"metadata": {"name": "x"}}), None);
        assert!(!eval(
            &["managedCluster.metadata.labels.size() == 0"],
            &bare
        ));
        assert!(eval(&["!has(managedCluster.metadata.labels)"], &bare));
    }

    #[test]
    fn parse_json_member_function() {
        let c = cluster(sample(), None);
        assert!(eval(&["'{\"a\": [1, 2]}'.parseJSON().a.size() == 2"], &c));
        assert!(!eval(&["'{not json'.parseJSON() == 1"], &c));
    }

    #[test]
    fn compile_errors() {
        let err = compile("invalid.expression").unwrap_err();
        assert!(err.starts_with("compilation failed: "), "{err}");
        assert!(err.contains("undeclared reference to 'invalid'"), "{err}");
        let err = compile("managedCluster.metadata.name ==").unwrap_err();
        assert!(err.starts_with("compilation failed: "), "{err}");
        assert!(compile("[1,2].all(x, x > 0)").is_ok());
        assert!(compile("type(managedCluster) == map").is_ok());
    }

    #[test]
    fn cost_budget() {
        let c = cluster(sample(), None);
        let sel = CelSelector::compile(&[
            "true".to_string(),
            "1 == 1".to_string(),
            "2 == 2".to_string(),
        ])
        .unwrap();
        let (ok, spent) = sel.evaluate(&root_context(), &input(&c), CelLimits::default());
        assert!(ok);
        assert_eq!(spent, 1 + 3 + 3);
        let tight = CelLimits {
            per_expression: 1_000_000,
            per_cluster_budget: 5,
        };
        let (ok, spent) = sel.evaluate(&root_context(), &input(&c), tight);
        assert!(!ok);
        assert!(spent > 5);
        let tiny = CelLimits {
            per_expression: 2,
            per_cluster_budget: 100,
        };
        assert!(!sel.evaluate(&root_context(), &input(&c), tiny).0);
        // Comprehension bodies weigh more.
        assert!(compile("[1].all(x, x > 0)").unwrap().cost > 10);
    }
}
