//! Condition rules: conditions computed from the live object of a manifest.
//!
//! A manifest config's `conditionRules` turn the applied resource's state into conditions on
//! the manifest (and, aggregated, on the work; see [`crate::status::work_rule_conditions`]).
//!
//! * `WellKnownConditions` uses a built-in rule for the live object's kind and the rule's
//!   `condition`: `Complete` for `batch/v1` Jobs (finished, successfully or not) and `v1` Pods
//!   (phase `Succeeded` or `Failed`). Without a built-in rule no condition is produced.
//! * `CEL` evaluates the rule's expressions in order with the variable `object`; the condition
//!   is `True` when all are true. `hasConditions(x)` tells whether `x` has a non-empty
//!   `conditions` list.
//!
//! Statuses, reasons and the message rules are upstream's. Expressions compile and run in the
//! SDK's shared CEL environment ([`ocm_api::cel::environment`]): the standard library,
//! optional values, the strings extension and the Kubernetes CEL libraries upstream's work
//! agent enables (quantity, semver, IP, CIDR, URL, format, regex, lists), plus our additions
//! listed there. As with cel-go, an identifier other than `object` (and `result` in a
//! message expression) is a compile error, `undeclared reference to 'x' (in container '')`,
//! and compile errors carry cel-go's position format. Expressions too deep or too long are
//! compile errors too (see [`ocm_api::cel`]), never a crash.

use std::sync::{Arc, OnceLock};

use cel::extractors::This;
use cel::{Context, Value};
use ocm_api::cel::{Cache, CompileError, Program};
use ocm_api::conditions::{ConditionStatus, NewCondition};
use ocm_api::constants::work as wc;
use ocm_api::work::v1::{ConditionRule, ConditionRuleType};

const JOB_COMPLETE: &str = "hasConditions(object.status) ? object.status.conditions.filter(c, c.type == 'Complete' || c.type == 'Failed').exists(c, c.status == 'True') : false";
const JOB_COMPLETE_MESSAGE: &str = "result ? \"Job is finished\" : \"Job is not finished\"";
const POD_COMPLETE: &str = "object.status.phase in ['Succeeded', 'Failed']";
const POD_COMPLETE_MESSAGE: &str = "\"Pod is in phase \" + object.status.phase";

/// The built-in expressions for `kind` and `condition`: `(expressions, message expression)`.
fn well_known(
    api_version: &str,
    kind: &str,
    condition: &str,
) -> Option<(&'static str, &'static str)> {
    match (api_version, kind, condition) {
        ("batch/v1", "Job", wc::CONDITION_COMPLETE) => Some((JOB_COMPLETE, JOB_COMPLETE_MESSAGE)),
        ("v1", "Pod", wc::CONDITION_COMPLETE) => Some((POD_COMPLETE, POD_COMPLETE_MESSAGE)),
        _ => None,
    }
}

fn has_conditions(This(value): This<Value>) -> bool {
    match value {
        Value::Map(map) => map.map.iter().any(|(k, v)| {
            matches!(k, cel::objects::Key::String(s) if s.as_str() == "conditions")
                && matches!(v, Value::List(l) if !l.is_empty())
        }),
        _ => false,
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Bool(_) => "bool",
        Value::Int(_) => "int",
        Value::UInt(_) => "uint",
        Value::Float(_) => "double",
        Value::String(_) => "string",
        Value::Bytes(_) => "bytes",
        Value::List(_) => "list",
        Value::Map(_) => "map",
        Value::Null => "null_type",
        _ => "unknown",
    }
}

/// Compiles an expression that may use `variables` (bounded, see [`ocm_api::cel`]); the
/// parse is cached by source.
fn compile(source: &str, variables: &[&str]) -> Result<Arc<Program>, CompileError> {
    static CACHE: OnceLock<Cache<Result<Arc<Program>, CompileError>>> = OnceLock::new();
    let program = CACHE
        .get_or_init(Cache::default)
        .get_or_insert_with(source, || ocm_api::cel::compile(source).map(Arc::new))?;
    program.check_references(variables)?;
    Ok(program)
}

fn context(object: &Value, result: Option<bool>) -> Context<'static, 'static> {
    let mut ctx = ocm_api::cel::context();
    ctx.add_variable_from_value("object", object.clone());
    if let Some(result) = result {
        ctx.add_variable_from_value("result", Value::Bool(result));
    }
    // `hasConditions` is not a standard function, so declaring it cannot conflict.
    let _ = ctx.add_function("hasConditions", has_conditions);
    ctx
}

/// Evaluates one rule against the live `object` (as JSON); `None` when the rule produces no
/// condition (a well-known rule without a built-in for this kind).
pub fn evaluate(
    rule: &ConditionRule,
    object: &serde_json::Value,
    generation: i64,
) -> Option<NewCondition> {
    let (expressions, message_expression): (Vec<String>, Option<String>) = match rule.type_ {
        ConditionRuleType::WellKnownConditions => {
            let api_version = object
                .get("apiVersion")
                .and_then(|v| v.as_str())
                .unwrap_or_default();
            let kind = object
                .get("kind")
                .and_then(|v| v.as_str())
                .unwrap_or_default();
            let (expr, message) = well_known(api_version, kind, &rule.condition)?;
            let message = rule
                .message_expression
                .clone()
                .filter(|m| !m.is_empty())
                .or_else(|| {
                    (rule.message.as_deref().unwrap_or_default().is_empty())
                        .then(|| message.to_string())
                });
            (vec![expr.to_string()], message)
        }
        ConditionRuleType::Cel => (
            rule.cel_expressions.clone().unwrap_or_default(),
            rule.message_expression.clone().filter(|m| !m.is_empty()),
        ),
    };
    let object = ocm_api::cel::json_to_value(object);
    let condition = |status: ConditionStatus, reason: &str, message: String| {
        Some(
            NewCondition::new(rule.condition.clone(), status, reason, message)
                .observed_generation(generation),
        )
    };
    let ctx = context(&object, None);
    let mut result = true;
    for expression in &expressions {
        let program = match compile(expression, &["object"]) {
            Ok(p) => p,
            Err(e) => {
                return condition(
                    ConditionStatus::False,
                    wc::REASON_CONDITION_RULE_EXPRESSION_ERROR,
                    e.to_string(),
                );
            }
        };
        match program.evaluate(&ctx) {
            Ok(Value::Bool(true)) => {}
            Ok(Value::Bool(false)) => {
                result = false;
                break;
            }
            Ok(other) => {
                return condition(
                    ConditionStatus::False,
                    wc::REASON_CONDITION_RULE_EXPRESSION_ERROR,
                    format!("expected bool result, got {}", type_name(&other)),
                );
            }
            Err(e) => {
                return condition(
                    ConditionStatus::False,
                    wc::REASON_CONDITION_RULE_EXPRESSION_ERROR,
                    e.to_string(),
                );
            }
        }
    }
    let message = match message_expression {
        Some(expression) => match compile(&expression, &["object", "result"]) {
            // Upstream keeps the text before the first source line.
            Err(e) => e
                .to_string()
                .split("\n | ")
                .next()
                .unwrap_or_default()
                .to_string(),
            Ok(program) => match program.evaluate(&context(&object, Some(result))) {
                Ok(Value::String(s)) => s.to_string(),
                Ok(other) => format!(
                    "expected message expression to have a string result, got {}",
                    type_name(&other)
                ),
                Err(e) => e.to_string(),
            },
        },
        None => String::new(),
    };
    let message = if !message.is_empty() {
        message
    } else if let Some(m) = rule.message.clone().filter(|m| !m.is_empty()) {
        m
    } else if result {
        format!("Manifest is {}", rule.condition)
    } else {
        format!("Manifest is not {}", rule.condition)
    };
    condition(
        ConditionStatus::from(result),
        wc::REASON_CONDITION_RULE_EVALUATED,
        message,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(type_: ConditionRuleType, condition: &str, exprs: &[&str]) -> ConditionRule {
        ConditionRule {
            condition: condition.into(),
            type_,
            cel_expressions: (!exprs.is_empty())
                .then(|| exprs.iter().map(|s| s.to_string()).collect()),
            message: None,
            message_expression: None,
        }
    }

    fn show(c: Option<NewCondition>) -> (String, ConditionStatus, String, String) {
        let c = c.expect("a condition");
        (c.type_, c.status, c.reason, c.message)
    }

    #[test]
    fn well_known_job_and_pod() {
        let job = json!({"apiVersion": "batch/v1", "kind": "Job", "status": {"conditions": [{"type": "Complete", "status": "True"}]}});
        let r = rule(ConditionRuleType::WellKnownConditions, "Complete", &[]);
        assert_eq!(
            show(evaluate(&r, &job, 3)),
            (
                "Complete".into(),
                ConditionStatus::True,
                "ConditionRuleEvaluated".into(),
                "Job is finished".into()
            )
        );
        let running = json!({"apiVersion": "batch/v1", "kind": "Job", "status": {}});
        assert_eq!(show(evaluate(&r, &running, 3)).2, "ConditionRuleEvaluated");
        assert_eq!(show(evaluate(&r, &running, 3)).3, "Job is not finished");
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "status": {"phase": "Succeeded"}});
        assert_eq!(show(evaluate(&r, &pod, 1)).3, "Pod is in phase Succeeded");
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment"});
        assert!(
            evaluate(&r, &deployment, 1).is_none(),
            "no built-in rule: no condition"
        );
        assert_eq!(evaluate(&r, &job, 3).unwrap().observed_generation, Some(3));
    }

    #[test]
    fn cel_rules() {
        let obj = json!({"status": {"readyReplicas": 2, "replicas": 2}});
        let ok = rule(
            ConditionRuleType::Cel,
            "Ready",
            &["object.status.readyReplicas == object.status.replicas"],
        );
        assert_eq!(
            show(evaluate(&ok, &obj, 1)),
            (
                "Ready".into(),
                ConditionStatus::True,
                "ConditionRuleEvaluated".into(),
                "Manifest is Ready".into()
            )
        );
        let no = rule(
            ConditionRuleType::Cel,
            "Ready",
            &["true", "object.status.readyReplicas > 5", "undefined_thing"],
        );
        assert_eq!(show(evaluate(&no, &obj, 1)).1, ConditionStatus::False);
        assert_eq!(show(evaluate(&no, &obj, 1)).3, "Manifest is not Ready");
        let not_bool = rule(ConditionRuleType::Cel, "Ready", &["'yes'"]);
        assert_eq!(
            show(evaluate(&not_bool, &obj, 1)).3,
            "expected bool result, got string"
        );
        let missing = rule(
            ConditionRuleType::Cel,
            "Ready",
            &["object.spec.missing == 1"],
        );
        let (_, status, reason, _) = show(evaluate(&missing, &obj, 1));
        assert_eq!(
            (status, reason.as_str()),
            (ConditionStatus::False, "ConditionRuleExpressionError")
        );
        let bad = rule(ConditionRuleType::Cel, "Ready", &["object.status.(("]);
        assert_eq!(
            show(evaluate(&bad, &obj, 1)).2,
            "ConditionRuleExpressionError"
        );
        let empty = rule(ConditionRuleType::Cel, "Ready", &[]);
        assert_eq!(show(evaluate(&empty, &obj, 1)).1, ConditionStatus::True);
        assert!(
            matches!(evaluate(&ok, &json!({"status": {"conditions": [1]}}), 1), Some(c) if c.status == ConditionStatus::False)
        );
    }

    #[test]
    fn deep_expressions_are_conditions_not_crashes() {
        let run = |exprs: Vec<String>, message_expression: Option<String>| {
            std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn(move || {
                    let obj = json!({"status": {"ready": true}});
                    let refs: Vec<&str> = exprs.iter().map(String::as_str).collect();
                    let mut r = rule(ConditionRuleType::Cel, "Ready", &refs);
                    r.message_expression = message_expression;
                    show(evaluate(&r, &obj, 1))
                })
                .expect("thread")
                .join()
                .expect("no crash")
        };
        let nest = |n: usize, inner: &str| format!("{}{inner}{}", "(".repeat(n), ")".repeat(n));
        let (_, status, reason, message) = run(vec![nest(30, "object.status.ready")], None);
        assert_eq!(
            (status, reason.as_str(), message.as_str()),
            (
                ConditionStatus::True,
                "ConditionRuleEvaluated",
                "Manifest is Ready"
            )
        );
        for deep in [
            nest(10_000, "true"),
            format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000)),
            format!("1{}", " + 1".repeat(10_000)),
            format!("object{}", ".status".repeat(10_000)),
        ] {
            let (_, status, reason, message) = run(vec![deep], None);
            assert_eq!(
                (status, reason.as_str(), message.as_str()),
                (
                    ConditionStatus::False,
                    "ConditionRuleExpressionError",
                    "ERROR: <input>:-1:0: expression recursion limit exceeded: 250"
                )
            );
        }
        // A deep message expression: the first line of its error is the message.
        let (_, status, _, message) = run(vec!["true".into()], Some(nest(10_000, "'ready'")));
        assert_eq!(status, ConditionStatus::True);
        assert_eq!(
            message,
            "ERROR: <input>:-1:0: expression recursion limit exceeded: 250"
        );
    }

    #[test]
    fn kubernetes_libraries_and_compile_errors() {
        let obj = json!({"spec": {"memory": "2Gi", "version": "1.30.0"}});
        let r = rule(
            ConditionRuleType::Cel,
            "Big",
            &[
                "quantity(object.spec.memory).isGreaterThan(quantity('1Gi'))",
                "semver(object.spec.version).isGreaterThan(semver('1.29.0'))",
            ],
        );
        assert_eq!(show(evaluate(&r, &obj, 1)).1, ConditionStatus::True);
        let r = rule(ConditionRuleType::Cel, "Big", &["object.spec.memory == x"]);
        assert_eq!(
            show(evaluate(&r, &obj, 1)),
            (
                "Big".into(),
                ConditionStatus::False,
                "ConditionRuleExpressionError".into(),
                "ERROR: <input>:1:23: undeclared reference to 'x' (in container '')\n | object.spec.memory == x\n | ......................^".into()
            )
        );
        let mut r = rule(ConditionRuleType::Cel, "Big", &["true"]);
        r.message_expression = Some("result ? badcel : 'no'".into());
        assert_eq!(
            show(evaluate(&r, &obj, 1)).3,
            "ERROR: <input>:1:10: undeclared reference to 'badcel' (in container '')"
        );
    }

    #[test]
    fn messages() {
        let obj = json!({"status": {"replicas": 3}});
        let mut r = rule(
            ConditionRuleType::Cel,
            "Big",
            &["object.status.replicas > 1"],
        );
        r.message = Some("static".into());
        assert_eq!(show(evaluate(&r, &obj, 1)).3, "static");
        r.message_expression =
            Some("result ? 'big: ' + string(object.status.replicas) : 'small'".into());
        assert_eq!(show(evaluate(&r, &obj, 1)).3, "big: 3");
        r.message_expression = Some("1".into());
        assert_eq!(
            show(evaluate(&r, &obj, 1)).3,
            "expected message expression to have a string result, got int"
        );
        let has = rule(
            ConditionRuleType::Cel,
            "HasConditions",
            &["hasConditions(object.status)"],
        );
        assert_eq!(
            show(evaluate(
                &has,
                &json!({"status": {"conditions": [{"type": "A"}]}}),
                1
            ))
            .1,
            ConditionStatus::True
        );
        assert_eq!(
            show(evaluate(&has, &json!({"status": {"conditions": []}}), 1)).1,
            ConditionStatus::False
        );
    }
}
