//! `x-kubernetes-validations`: CEL rules in CRD schemas.
//!
//! Each rule sees the value it is declared on as `self` (and, for transition
//! rules, the correlated old value as `oldSelf`; those rules run on updates
//! only). A rule that is not `true` fails with its `message`, the result of its
//! `messageExpression`, or `failed rule: <rule>`, at the path plus its
//! `fieldPath`, with its `reason` (`FieldValueInvalid` by default).
//!
//! The environment is the SDK's shared one ([`ocm_api::cel::environment`]):
//! the standard library, the strings, lists and math extensions and
//! Kubernetes' CEL libraries (quantity, url, ip, cidr, semver, format, regex,
//! lists). Rules that do not compile, use identifiers other than `self` and
//! `oldSelf`, or exceed the CEL limits of [`ocm_api::cel`] are skipped
//! (kube-apiserver would have refused the CRD).

use std::sync::{Arc, OnceLock};

use cel::Context;
use cel::common::value::Val;
use ocm_api::cel::{Budget, Cache, EvalError, Program};
use serde_json::Value;

use crate::api_error::Cause;

/// A compiled rule, cached by its source (`None` when it does not compile).
fn program(source: &str) -> Option<Arc<Program>> {
    static CACHE: OnceLock<Cache<Option<Arc<Program>>>> = OnceLock::new();
    CACHE
        .get_or_init(Cache::default)
        .get_or_insert_with(source, || {
            let program = ocm_api::cel::compile(source).ok()?;
            program.check_references(&["self", "oldSelf"]).ok()?;
            Some(Arc::new(program))
        })
}

/// What a root-level rule sees as `self`: the object with only `name` and
/// `generateName` of its metadata.
fn root_view(v: &Value) -> Value {
    let mut out = v.clone();
    if let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.retain(|k, _| k == "name" || k == "generateName");
    }
    out
}

enum Outcome {
    Pass,
    Fail,
    Error(String),
    /// The budget of the node's rules ran out: the rest are not run.
    OutOfBudget,
}

/// kube-apiserver's message for a rule past the per-call cost limit.
fn over_limit(rule: &str) -> String {
    format!("call cost exceeds limit for rule: {rule}")
}

fn run(
    program: &Program,
    source: &str,
    this: &Value,
    old: Option<&Value>,
    budget: &mut Budget,
) -> (Outcome, Option<Context<'static, 'static>>) {
    let mut ctx = ocm_api::cel::context();
    let val: Box<dyn Val> = ocm_api::cel::json_to_val(this);
    ctx.add_variable_as_val("self".to_string(), val);
    if let Some(o) = old {
        ctx.add_variable_as_val("oldSelf".to_string(), ocm_api::cel::json_to_val(o));
    }
    let outcome = match program.evaluate(&ctx, budget) {
        Ok(cel::Value::Bool(true)) => Outcome::Pass,
        Ok(cel::Value::Bool(false)) => Outcome::Fail,
        Ok(other) => Outcome::Error(format!("rule did not evaluate to a bool: {other:?}")),
        Err(EvalError::CostLimit) => Outcome::Error(over_limit(source)),
        Err(EvalError::BudgetExceeded) => Outcome::OutOfBudget,
        Err(e) => Outcome::Error(e.to_string()),
    };
    (outcome, Some(ctx))
}

fn join(path: &str, field_path: &str) -> String {
    let rel = field_path.trim_start_matches('.');
    match (path.is_empty(), rel.is_empty()) {
        (true, true) => "<nil>".into(),
        (true, false) => rel.to_string(),
        (false, true) => path.to_string(),
        (false, false) => format!("{path}.{rel}"),
    }
}

/// Run the rules declared on `schema` against `v` (at `path`, with the
/// correlated `old` value on update), appending failures to `out`.
pub(crate) fn check(
    v: &Value,
    schema: &Value,
    path: &str,
    old: Option<&Value>,
    out: &mut Vec<Cause>,
) {
    let Some(rules) = schema
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
    else {
        return;
    };
    let type_name = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let root = path.is_empty();
    let this = if root { root_view(v) } else { v.clone() };
    let old_view = old.map(|o| if root { root_view(o) } else { o.clone() });
    // kube-apiserver's limits (our approximation: one budget per schema node, not per object).
    let mut budget = Budget::default();
    for r in rules {
        let Some(source) = r.get("rule").and_then(Value::as_str) else {
            continue;
        };
        let transition = source.contains("oldSelf");
        if transition && old_view.is_none() {
            continue;
        }
        let Some(program) = program(source) else {
            continue;
        };
        let (outcome, ctx) = run(
            &program,
            source,
            &this,
            if transition { old_view.as_ref() } else { None },
            &mut budget,
        );
        let field = join(
            path,
            r.get("fieldPath")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        );
        let detail = match outcome {
            Outcome::Pass => continue,
            Outcome::OutOfBudget => {
                out.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: \"{type_name}\": validation failed due to running out of cost budget, no further validation rules will be run"
                    ),
                    field,
                });
                return;
            }
            Outcome::Error(e) => {
                out.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!("Invalid value: \"{type_name}\": {e}"),
                    field,
                });
                continue;
            }
            Outcome::Fail => failure_message(r, source, ctx, &mut budget),
        };
        out.push(rule_cause(r, type_name, &detail, field));
    }
}

/// The message of a failed rule `r`: its `messageExpression` evaluated in `ctx` when that
/// gives a non-blank string, else its `message`, else the rule's source.
fn failure_message(
    r: &Value,
    source: &str,
    ctx: Option<Context<'static, 'static>>,
    budget: &mut Budget,
) -> String {
    let from_expression = r
        .get("messageExpression")
        .and_then(Value::as_str)
        .and_then(program_for_message)
        .zip(ctx)
        .and_then(|(p, ctx)| match p.evaluate(&ctx, budget) {
            Ok(cel::Value::String(s)) if !s.trim().is_empty() => Some(s.as_ref().clone()),
            _ => None,
        });
    from_expression
        .or_else(|| {
            r.get("message")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .map(str::to_string)
        })
        .unwrap_or_else(|| format!("failed rule: {source}"))
}

/// The cause a failed rule `r` reports at `field`: its `reason` (forbidden, required or
/// duplicate; anything else is invalid) with the message kube words for it.
fn rule_cause(r: &Value, type_name: &str, detail: &str, field: String) -> Cause {
    let reason = r
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("FieldValueInvalid");
    let message = match reason {
        "FieldValueForbidden" => format!("Forbidden: {detail}"),
        "FieldValueRequired" => format!("Required value: {detail}"),
        "FieldValueDuplicate" => format!("Duplicate value: \"{type_name}\""),
        _ => format!("Invalid value: \"{type_name}\": {detail}"),
    };
    let reason = match reason {
        "FieldValueForbidden" | "FieldValueRequired" | "FieldValueDuplicate" => reason,
        _ => "FieldValueInvalid",
    };
    Cause {
        reason: reason.into(),
        message,
        field,
    }
}

fn program_for_message(source: &str) -> Option<Arc<Program>> {
    program(source)
}
