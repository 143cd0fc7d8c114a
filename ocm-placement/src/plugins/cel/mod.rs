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
//! The environment is the SDK's shared one, [`ocm_api::cel::environment`]: the standard
//! library, the strings, lists and math extensions and all the Kubernetes libraries upstream
//! enables (`Lists`, `Regex`, `URLs`, `Quantity`, `IP`, `CIDR`, `Format`, `Semver`), with
//! Kubernetes' names, types and errors. Parsing and evaluation are bounded there too: an
//! expression nested too deep or too long is a compile error (`compilation failed: ERROR:
//! <input>:-1:0: expression recursion limit exceeded: 250`), never a crash. Compiled
//! expressions are cached by source.
//!
//! The variable is not converted as a whole: each expression has the paths it reads below
//! `managedCluster` (`metadata.labels["env"]`, `status.clusterClaims`, …) replaced by hidden
//! variables, and only those parts are built, once per snapshot and cluster, the first time they are read (see
//! `cluster.rs`). The results are those the whole object would give.
//!
//! A result that is not `true`, an evaluation error or a cost overrun is "no match"; a compile
//! error makes the placement misconfigured with a message starting `compilation failed: `.
//!
//! **Cost**: each expression is given a static cost when compiled (our approximation): one per
//! AST node, with the nodes inside a comprehension (`all`, `exists`, `filter`, `map`, …)
//! counted [`COMPREHENSION_ITERATIONS`] times per nesting level. An expression costing more
//! than the per-expression limit never matches; the expressions of one predicate are
//! evaluated in order while their running total stays within the per-cluster budget. On top
//! of that, evaluation is metered at runtime (see [`ocm_api::cel::Budget`]): an evaluation
//! past the per-expression limit, or past what the predicate's expressions have left of the
//! per-cluster budget, stops and does not match. Upstream's limits are the defaults (see
//! [`CelLimits`]).

mod cluster;
mod native;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

use cel::common::ast::{EntryExpr, Expr, IdedEntryExpr, IdedExpr};
use cel::extractors::This;

pub(crate) use self::cluster::{CelCache, ClusterInput, ClusterReads, Read, ScoresInput};
pub(crate) use self::native::{Escapes, NativeInput};
use cel::objects::{Key, Map};
use cel::{Context, ExecutionError, FunctionContext, Value};
use ocm_api::cel::{Budget, Cache, Program};

/// The variable expressions read.
pub const VARIABLE: &str = "managedCluster";

/// Hidden variable carrying the current cluster's AddOn scores (not a valid CEL identifier, so
/// expressions cannot name it).
const SCORES_VARIABLE: &str = "@ocm_addon_scores";

/// How many iterations a comprehension body is assumed to run, for the static cost.
pub const COMPREHENSION_ITERATIONS: u64 = 10;

/// Cost limits of CEL selectors; the default is upstream's.
///
/// ```
/// let tight = ocm_placement::plugins::CelLimits::default().per_cluster_budget(2);
/// assert_eq!(tight.per_expression, 1_000_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
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

ocm_api::setters!(CelLimits {
    /// With this as the largest cost of one expression.
    per_expression: u64,
    /// With this as the budget of one predicate for one cluster.
    per_cluster_budget: u64,
});

/// One compiled expression.
#[derive(Debug)]
pub(crate) struct CompiledExpression {
    /// The expression as written (evaluated against the whole object by the tests).
    #[cfg_attr(not(test), allow(dead_code))]
    program: Program,
    /// The expression with its reads below `managedCluster` replaced by hidden identifiers
    /// (see [`cluster::rewrite_reads`]); what is evaluated.
    rewritten: Program,
    cost: u64,
    uses_scores: bool,
    /// Paths below `managedCluster` the expression reads (see [`cluster`]).
    reads: BTreeSet<Read>,
    /// The rewritten expression compiled for native evaluation (see [`native`]), when it can
    /// be.
    native: Option<native::NativeProgram>,
}

/// Compiles one expression, returning upstream-style error text on failure; cached by
/// source.
///
/// Parsing and every walk of the tree are bounded (see [`ocm_api::cel`]): an expression
/// nested too deep or too long is a compile error, never a crash.
pub(crate) fn compile(source: &str) -> Result<Arc<CompiledExpression>, String> {
    static CACHE: OnceLock<Cache<Result<Arc<CompiledExpression>, String>>> = OnceLock::new();
    CACHE
        .get_or_init(Cache::default)
        .get_or_insert_with(source, || compile_uncached(source).map(Arc::new))
}

fn compile_uncached(source: &str) -> Result<CompiledExpression, String> {
    let failed = |e: ocm_api::cel::CompileError| format!("compilation failed: {e}");
    let program = ocm_api::cel::compile(source).map_err(failed)?;
    program.check_references(&[VARIABLE]).map_err(failed)?;
    let cost = program.walk(static_cost);
    let uses_scores = program.walk(|e| e.references().has_function("scores"));
    let mut reads = BTreeSet::new();
    let mut rewritten = program.clone();
    rewritten
        .rewrite(|e| cluster::rewrite_reads(e, &mut Vec::new(), &mut reads))
        .map_err(failed)?;
    let native = native::compile(&rewritten, &reads);
    Ok(CompiledExpression {
        program,
        rewritten,
        cost,
        uses_scores,
        reads,
        native,
    })
}

/// The expressions of one predicate.
#[derive(Debug, Default)]
pub(crate) struct CelSelector {
    expressions: Vec<Arc<CompiledExpression>>,
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

    /// Whether any expression the interpreter evaluates calls `scores()`.
    pub(crate) fn uses_scores(&self) -> bool {
        self.expressions
            .iter()
            .any(|e| e.uses_scores && e.native.is_none())
    }

    /// Whether some expression is evaluated natively.
    pub(crate) fn has_native(&self) -> bool {
        self.expressions.iter().any(|e| e.native.is_some())
    }

    /// The paths below `managedCluster` whose values the expressions need from the snapshot's
    /// cache: all the reads of those the interpreter evaluates, the reads a native one does not
    /// build itself.
    pub(crate) fn reads(&self) -> impl Iterator<Item = &Read> {
        self.expressions
            .iter()
            .flat_map(|e| -> Box<dyn Iterator<Item = &Read> + '_> {
                match &e.native {
                    Some(n) => Box::new(n.cached_reads()),
                    None => Box::new(e.reads.iter()),
                }
            })
    }

    /// Evaluates the expressions in order against one cluster: natively where they compiled
    /// so (`native` given), else with the interpreter. Returns whether all matched and the
    /// cost spent.
    pub(crate) fn evaluate<'a>(
        &'a self,
        root: &Context<'_, '_>,
        cluster: &ClusterInput<'_>,
        native: Option<(NativeInput<'a>, &'a Escapes<'a>)>,
        limits: CelLimits,
    ) -> (bool, u64) {
        let (matched, spent, _) = self.evaluate_as(root, cluster, native, limits, true);
        (matched, spent)
    }

    /// [`Self::evaluate`], of the rewritten expressions or of the compiled ones as written
    /// (which read `managedCluster` as a whole).
    fn evaluate_as<'a>(
        &'a self,
        root: &Context<'_, '_>,
        cluster: &ClusterInput<'_>,
        native: Option<(NativeInput<'a>, &'a Escapes<'a>)>,
        limits: CelLimits,
        rewritten: bool,
    ) -> (bool, u64, u64) {
        let mut spent: u64 = 0;
        // The runtime cost, with upstream's limits: one budget for the expressions of the
        // predicate, a limit for each.
        let mut budget = Budget::new(limits.per_cluster_budget, limits.per_expression);
        if self.expressions.is_empty() {
            return (true, 0, budget.remaining());
        }
        // The interpreter's scope, made when an expression needs it.
        let mut scope: Option<Context<'_, '_>> = None;
        for expr in &self.expressions {
            spent = spent.saturating_add(expr.cost);
            if expr.cost > limits.per_expression || spent > limits.per_cluster_budget {
                return (false, spent, budget.remaining());
            }
            if rewritten && let (Some(program), Some((input, escapes))) = (&expr.native, native) {
                if !program.evaluate(input, escapes, &mut budget) {
                    return (false, spent, budget.remaining());
                }
                continue;
            }
            let scope = scope.get_or_insert_with(|| {
                let mut scope = root.new_inner_scope();
                scope.set_variable_resolver(cluster);
                scope
            });
            let result = if rewritten {
                expr.rewritten.evaluate(scope, &mut budget)
            } else {
                expr.program.evaluate(scope, &mut budget)
            };
            match result {
                Ok(Value::Bool(true)) => {}
                _ => return (false, spent, budget.remaining()),
            }
        }
        (true, spent, budget.remaining())
    }
}

/// The map `scores()` reads for one cluster: each AddOnPlacementScore of the cluster, by
/// name, as the list of its `{name, value}` items.
pub(crate) fn scores_value(
    snapshot: &crate::snapshot::Snapshot,
    id: crate::snapshot::ClusterId,
) -> Box<dyn cel::common::value::Val> {
    let mut map: HashMap<Key, Value> = HashMap::new();
    for (resource, table) in &snapshot.scores {
        if let Some(row) = table.row(id) {
            let items: Vec<(&str, i32)> = table
                .items(row)
                .iter()
                .map(|&(n, v)| (snapshot.symbols.resolve(n), v))
                .collect();
            map.insert(
                Key::String(Arc::new(resource.clone())),
                score_items_value(&items),
            );
        }
    }
    to_val(Value::Map(Map { map: Arc::new(map) }))
}

pub(crate) use ocm_api::cel::{json_to_val, value_to_val as to_val};

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
    let mut ctx = ocm_api::cel::context();
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
        .map(|v| ocm_api::cel::json_to_value(&v))
        .map_err(|e| ftx.error(format!("failed to parse JSON: {e}")))
}

/// The key and value expressions of map or struct literal entries.
pub(crate) fn entry_exprs(entries: &[IdedEntryExpr]) -> impl Iterator<Item = &IdedExpr> {
    entries
        .iter()
        .flat_map(|entry| match &entry.expr {
            EntryExpr::StructField(f) => [Some(&f.value), None],
            EntryExpr::MapEntry(me) => [Some(&me.key), Some(&me.value)],
        })
        .flatten()
}

/// [`entry_exprs`], mutably.
pub(crate) fn entry_exprs_mut(
    entries: &mut [IdedEntryExpr],
) -> impl Iterator<Item = &mut IdedExpr> {
    entries
        .iter_mut()
        .flat_map(|entry| match &mut entry.expr {
            EntryExpr::StructField(f) => [Some(&mut f.value), None],
            EntryExpr::MapEntry(me) => [Some(&mut me.key), Some(&mut me.value)],
        })
        .flatten()
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
        Expr::Map(m) => sum(&mut entry_exprs(&m.entries)),
        Expr::Select(s) => static_cost(&s.operand),
        Expr::Struct(s) => sum(&mut entry_exprs(&s.entries)),
    };
    own.saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use ocm_api::cluster::v1::ManagedCluster;

    /// A snapshot of one cluster (and its AddOnPlacementScore, if any).
    type Input = crate::snapshot::Snapshot;

    fn cluster(json: serde_json::Value, scores: Option<(&str, Vec<(&str, i32)>)>) -> Input {
        let cluster: ManagedCluster = serde_json::from_value(json).expect("a ManagedCluster");
        let name = cluster.metadata.name.clone().unwrap_or_default();
        let mut b = crate::snapshot::Snapshot::builder().cluster(cluster);
        if let Some((resource, items)) = scores {
            let items: Vec<serde_json::Value> = items
                .iter()
                .map(|(n, v)| json!({"name": n, "value": v}))
                .collect();
            let score = serde_json::from_value(json!({
                "metadata": {"name": resource, "namespace": name},
                "status": {"scores": items}
            }))
            .expect("a score");
            b.add_addon_score(&score);
        }
        b.build()
    }

    /// How an expression is evaluated.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Mode {
        /// Natively where it compiles so, else as the interpreter runs it in production.
        Native,
        /// The rewritten expression, by the interpreter, on the values of its reads.
        Rewritten,
        /// The expression as written, by the interpreter, on the whole object.
        Whole,
    }

    /// Evaluates in `mode` (a fresh cache each time): whether it matched, the static cost and
    /// the runtime budget left.
    fn eval_with(sel: &CelSelector, c: &Input, limits: CelLimits, mode: Mode) -> (bool, u64, u64) {
        let whole = [Read::Path(Vec::new())];
        let reads: Vec<&Read> = match mode {
            Mode::Native => sel.reads().collect(),
            Mode::Rewritten => sel
                .expressions
                .iter()
                .flat_map(|e| e.reads.iter())
                .collect(),
            Mode::Whole => whole.iter().collect(),
        };
        let cache = CelCache::new(1);
        let reads = ClusterReads::new(reads, &cache);
        let id = crate::snapshot::ClusterId(0);
        let source = crate::snapshot::ClusterRef {
            entry: c.clusters.first().expect("one cluster"),
            symbols: &c.symbols,
        };
        let input = ClusterInput {
            reads: &reads,
            index: 0,
            source,
            scores: ScoresInput::Lazy {
                snapshot: c,
                id,
                value: OnceLock::new(),
            },
        };
        let escapes = Escapes::new(root_context());
        let native = (mode == Mode::Native).then_some((
            NativeInput {
                cluster: source,
                entry: &c.clusters[0],
                id,
                snapshot: c,
                reads: &reads,
            },
            &escapes,
        ));
        sel.evaluate_as(&root_context(), &input, native, limits, mode != Mode::Whole)
    }

    /// Evaluates natively, with the interpreter on the paths the expressions read and with the
    /// interpreter on the whole object, checks that all three agree (the runtime cost of the
    /// first two too), and returns the result.
    fn eval(exprs: &[&str], c: &Input) -> bool {
        let sel =
            CelSelector::compile(&exprs.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        let native = eval_with(&sel, c, CelLimits::default(), Mode::Native);
        let lazy = eval_with(&sel, c, CelLimits::default(), Mode::Rewritten);
        let whole = eval_with(&sel, c, CelLimits::default(), Mode::Whole);
        assert_eq!(native, lazy, "native and interpreted: {exprs:?}");
        assert_eq!(lazy.0, whole.0, "{exprs:?}");
        assert_eq!(lazy.1, whole.1, "{exprs:?}");
        lazy.0
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
        // Paths built directly, below them, and through the JSON form agree with the object.
        assert!(eval(
            &["managedCluster.metadata.labels.region == 'us-east-1'"],
            &c
        ));
        assert!(eval(&["managedCluster.status.allocatable.cpu == '16'"], &c));
        assert!(!eval(
            &["managedCluster.status.allocatable.memory == '1'"],
            &c
        ));
        assert!(eval(&["!has(managedCluster.status.capacity)"], &c));
        assert!(!eval(&["managedCluster.status.capacity.cpu == '1'"], &c));
        assert!(eval(
            &["managedCluster.metadata.name.startsWith('cluster')"],
            &c
        ));
        assert!(!eval(&["managedCluster.metadata.name.x == 1"], &c));
        assert!(eval(
            &["managedCluster.status.clusterClaims[0].value == 'Amazon'"],
            &c
        ));
        assert!(eval(
            &["managedCluster.metadata.labels.all(k, k != managedCluster.metadata.name)"],
            &c
        ));
        assert!(eval(&["managedCluster.scores('a') == [] || true"], &c));
        assert!(eval(
            &["managedCluster.?metadata.?labels.region == optional.of('us-east-1')"],
            &c
        ));
        // Constant indexes are reads too, whatever the key.
        assert!(eval(
            &["managedCluster['metadata']['labels']['region'] == 'us-east-1'"],
            &c
        ));
        assert!(eval(
            &["managedCluster.metadata.labels['missing'] == 'x' || true"],
            &c
        ));
        assert!(!eval(
            &["managedCluster.metadata.labels['missing'] == 'x' || false"],
            &c
        ));
        assert!(!eval(&["managedCluster.metadata.labels['a.b'] == 'x'"], &c));
        assert!(eval(
            &["managedCluster.status.allocatable['cpu'] == '16'"],
            &c
        ));
        assert!(!eval(&["managedCluster.metadata.name['x'] == 'c'"], &c));
        assert!(!eval(
            &["managedCluster.status.clusterClaims['x'] == 'c'"],
            &c
        ));
        assert!(eval(
            &[
                "[managedCluster.metadata.labels['region']].all(r, r == managedCluster.metadata.labels.region)"
            ],
            &c
        ));
        let dotted = cluster(
            json!({"metadata": {"name": "x", "labels": {"a.b/c": "1", "a": "2"}}}),
            None,
        );
        assert!(eval(
            &["managedCluster.metadata.labels['a.b/c'] == '1'"],
            &dotted
        ));
        assert!(eval(
            &[
                "managedCluster.metadata.labels['a'] == '2' && managedCluster.metadata.labels.a == '2'"
            ],
            &dotted
        ));
        let bare = cluster(json!({"metadata": {"name": "x"}}), None);
        assert!(!eval(
            &["managedCluster.metadata.labels['a'] == '2'"],
            &bare
        ));
        assert!(!eval(
            &["managedCluster.status.clusterClaims.size() == 0"],
            &bare
        ));
        assert!(!eval(&["has(managedCluster.status.clusterClaims)"], &bare));
        assert!(eval(&["!has(managedCluster.metadata.annotations)"], &bare));
        assert!(!eval(
            &["managedCluster.metadata.labels.size() == 0"],
            &bare
        ));
        assert!(eval(&["!has(managedCluster.metadata.labels)"], &bare));
    }

    #[test]
    fn comprehensions_by_position_agree_with_the_object() {
        let mixed = cluster(
            json!({"metadata": {"name": "m", "labels": {"a": "1", "b": "2"}},
                   "status": {"clusterClaims": [{"name": "n", "value": "v"}, {"name": "only-name"}, {}],
                              "allocatable": {"cpu": "4"}}}),
            None,
        );
        let c = cluster(sample(), None);
        for (exprs, expected) in [
            (
                "managedCluster.status.clusterClaims.exists(c, c.name == 'n' && c.value == 'v')",
                true,
            ),
            (
                "managedCluster.status.clusterClaims.exists(c, c.value == 'v')",
                true,
            ),
            (
                "managedCluster.status.clusterClaims.exists(c, c.value == 'x')",
                false,
            ),
            (
                "managedCluster.status.clusterClaims.all(c, c.name != '')",
                false,
            ),
            (
                "managedCluster.status.clusterClaims.all(c, c.name != '' || true)",
                true,
            ),
            (
                "managedCluster.status.clusterClaims.exists_one(c, c.name == 'n')",
                false,
            ),
            (
                "managedCluster.status.clusterClaims.map(c, c.value).size() == 3",
                false,
            ),
            (
                "managedCluster.status.clusterClaims.filter(c, c.name == 'n').size() == 1",
                false,
            ),
            (
                "managedCluster.status.clusterClaims.filter(c, has(c.name)).size() == 2",
                true,
            ),
            (
                "managedCluster.status.clusterClaims.all(c, [1].all(c, c > 0))",
                true,
            ),
            (
                "managedCluster.status.clusterClaims.exists(c, c.x == 1 || c.name == 'n')",
                true,
            ),
            (
                "managedCluster.status.clusterClaims.exists(c, c.name.startsWith('only'))",
                true,
            ),
            ("managedCluster.metadata.labels.exists(k, k.x == 1)", false),
            (
                "managedCluster.metadata.labels.all(k, k.x == 1 || true)",
                true,
            ),
            ("managedCluster.metadata.labels.exists(k, k == 'a')", true),
            ("managedCluster.metadata.name.exists(k, k.x == 1)", false),
            (
                "managedCluster.status.allocatable.all(k, k.size() == 3)",
                true,
            ),
            (
                "managedCluster.status.clusterClaims.all(c, managedCluster.status.clusterClaims.exists(d, d.name == c.name || true))",
                true,
            ),
        ] {
            assert_eq!(eval(&[exprs], &mixed), expected, "{exprs}");
            eval(&[exprs], &c);
        }
        assert!(eval(
            &["managedCluster.status.clusterClaims.map(c, c.value) == ['Amazon']"],
            &c
        ));
        // `exists()` with its loop condition simplified, errors included.
        for (expr, expected) in [
            ("[1, 'a'].exists(x, x > 0)", true),
            ("['a', 1].exists(x, x > 0)", true),
            ("['a', 0].exists(x, x > 0)", false),
            ("[0, 0].exists(x, x > 0)", false),
            ("[].exists(x, x > 0)", false),
            ("[1, 2].exists(x, [x].exists(y, y == 2))", true),
            (
                "[1, 2].exists(x, x == 1) && ![1, 2].exists(x, x == 3)",
                true,
            ),
        ] {
            assert_eq!(eval(&[expr], &c), expected, "{expr}");
        }
        assert!(eval(
            &["managedCluster.status.clusterClaims.exists_one(c, c.name == 'cloud')"],
            &c
        ));
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

    /// Runs `f` on a thread with the stack of a tokio worker.
    fn on_worker_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(f)
            .expect("thread")
            .join()
            .expect("no crash")
    }

    #[test]
    fn deep_expressions_compile_or_fail_cleanly_on_a_worker_stack() {
        let nest = |n: usize| {
            format!(
                "{}managedCluster.metadata.name == 'cluster1'{}",
                "(".repeat(n),
                ")".repeat(n)
            )
        };
        let thirty = nest(30);
        assert!(on_worker_stack(move || {
            let c = cluster(sample(), None);
            eval(&[thirty.as_str()], &c)
        }));
        for source in [
            nest(10_000),
            format!("{}true{}", "[1].all(x, ".repeat(5_000), ")".repeat(5_000)),
            format!("{}true{}", "size(".repeat(10_000), ")".repeat(10_000)),
            format!("1{}", " + 1".repeat(10_000)),
            format!("managedCluster{}", ".metadata".repeat(10_000)),
        ] {
            let err = on_worker_stack(move || compile(&source).map(|_| ()).unwrap_err());
            assert_eq!(
                err,
                "compilation failed: ERROR: <input>:-1:0: expression recursion limit exceeded: 250"
            );
        }
    }

    #[test]
    fn undeclared_references_have_upstream_positions() {
        let err = compile("managedCluster.metadata.name == 'a' &&\n  other.x").unwrap_err();
        assert_eq!(
            err,
            "compilation failed: ERROR: <input>:2:3: undeclared reference to 'other' (in container '')\n |   other.x\n | ..^"
        );
    }

    #[test]
    fn runtime_cost_stops_expensive_expressions() {
        let c = cluster(sample(), None);
        // 10^9 iterations: past the per-expression limit at runtime (the static estimate,
        // which counts ten iterations per loop, lets it through).
        let cube =
            "lists.range(1000).all(a, lists.range(1000).all(b, lists.range(1000).all(c, true)))";
        assert!(compile(cube).unwrap().cost < 1_000_000);
        assert!(!eval(&[cube], &c));
        // The runtime budget is shared by the expressions of the predicate.
        let loop_ = "lists.range(100).all(x, x >= 0)";
        let sel = CelSelector::compile(&[loop_.to_string()]).unwrap();
        let limits = |budget| CelLimits {
            per_expression: 1_000_000,
            per_cluster_budget: budget,
        };
        assert!(eval_with(&sel, &c, limits(2_000), Mode::Native).0);
        assert!(eval_with(&sel, &c, limits(2_000), Mode::Rewritten).0);
        let twice = CelSelector::compile(&[loop_.to_string(), loop_.to_string()]).unwrap();
        for mode in [Mode::Native, Mode::Rewritten] {
            assert!(eval_with(&twice, &c, limits(2_000), mode).0);
            assert!(!eval_with(&twice, &c, limits(1_200), mode).0);
        }
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
        let (ok, spent, _) = eval_with(&sel, &c, CelLimits::default(), Mode::Native);
        assert!(ok);
        assert_eq!(spent, 1 + 3 + 3);
        let tight = CelLimits {
            per_expression: 1_000_000,
            per_cluster_budget: 5,
        };
        let (ok, spent, _) = eval_with(&sel, &c, tight, Mode::Native);
        assert!(!ok);
        assert!(spent > 5);
        let tiny = CelLimits {
            per_expression: 2,
            per_cluster_budget: 100,
        };
        assert!(!eval_with(&sel, &c, tiny, Mode::Native).0);
        // Comprehension bodies weigh more.
        assert!(compile("[1].all(x, x > 0)").unwrap().cost > 10);
    }
}
