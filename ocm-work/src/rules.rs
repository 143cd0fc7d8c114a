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
//!
//! Cost is metered as upstream does (see [`evaluate_all`]): each evaluation stops past
//! 1,000,000 units (`operation cancelled: actual cost limit exceeded`) and the rules of one
//! manifest share 10,000,000 (`CEL evaluation budget exceeded`), with `ConditionRuleExpressionError`
//! as the reason. The units approximate cel-go's (see [`ocm_api::cel::Budget`]).
//!
//! Condition messages longer than the API accepts (32,768 bytes) are cut and end with
//! ` ... (truncated)` (our addition, see [`truncate`]): upstream writes them whole and the API
//! server rejects the status update, so the work would show no status at all.

use std::sync::{Arc, OnceLock};

use cel::extractors::This;
use cel::{Context, Value};
use ocm_api::cel::{Budget, Cache, CompileError, EvalError, Program};
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

/// Evaluates the condition rules of one manifest against its live `object` (as JSON), in
/// order, sharing upstream's cost budget ([`Budget::RUNTIME_COST_BUDGET`], each evaluation
/// limited to [`Budget::PER_CALL_LIMIT`]); rules that produce no condition (a well-known rule
/// without a built-in for this kind) are left out.
///
/// The accounting is upstream's, quirks included: an expression that fails (budget exceeded
/// included) leaves the budget as it was, while a message expression that runs out of budget
/// leaves nothing for the rules after it.
pub fn evaluate_all(
    rules: &[ConditionRule],
    object: &serde_json::Value,
    generation: i64,
) -> Vec<NewCondition> {
    let json = object;
    let object = ocm_api::cel::json_to_value(json);
    let mut budget = RUNTIME_BUDGET;
    rules
        .iter()
        .filter_map(|rule| evaluate_value(rule, json, &object, generation, &mut budget))
        .collect()
}

/// Evaluates one rule against the live `object` (as JSON) with a budget of its own; `None`
/// when the rule produces no condition (a well-known rule without a built-in for this kind).
/// See [`evaluate_all`] for the rules of one manifest.
pub fn evaluate(
    rule: &ConditionRule,
    object: &serde_json::Value,
    generation: i64,
) -> Option<NewCondition> {
    let converted = ocm_api::cel::json_to_value(object);
    let mut budget = RUNTIME_BUDGET;
    evaluate_value(rule, object, &converted, generation, &mut budget)
}

/// The longest condition message the API server accepts (`maxLength` of
/// `metav1.Condition.message`).
pub const MAX_MESSAGE_LENGTH: usize = 32_768;

/// What ends a message cut to [`MAX_MESSAGE_LENGTH`].
const TRUNCATED: &str = " ... (truncated)";

/// `message`, cut to at most [`MAX_MESSAGE_LENGTH`] bytes on a character boundary and marked
/// so when longer (our addition: upstream writes longer messages as they are, and the API
/// server then rejects the whole status update).
pub fn truncate(message: String) -> String {
    if message.len() <= MAX_MESSAGE_LENGTH {
        return message;
    }
    let mut end = MAX_MESSAGE_LENGTH - TRUNCATED.len();
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{TRUNCATED}", &message[..end])
}

/// Upstream's budget per manifest, signed: upstream marks an exhausted budget with -1.
const RUNTIME_BUDGET: i64 = Budget::RUNTIME_COST_BUDGET as i64;

/// Evaluates `program` as upstream's `evaluate` does, with what is left of the budget: the
/// result (an error as its message) and what is left after it (-1 once exceeded).
fn evaluate_cel(
    program: &Program,
    ctx: &Context<'_, '_>,
    budget: i64,
) -> (Result<Value, String>, i64) {
    const BUDGET_EXCEEDED: &str = "CEL evaluation budget exceeded";
    let cap = u64::try_from(budget).unwrap_or(0);
    let limit = Budget::PER_CALL_LIMIT.min(cap);
    let (result, cost) = program.evaluate_with_limit(ctx, limit);
    let left = budget.saturating_sub(i64::try_from(cost).unwrap_or(i64::MAX));
    match result {
        Ok(value) => (Ok(value), left),
        Err(EvalError::CostLimit) if limit < Budget::PER_CALL_LIMIT => {
            (Err(BUDGET_EXCEEDED.to_string()), -1)
        }
        Err(EvalError::CostLimit) if left < 0 => (
            Err(format!("[{}, {BUDGET_EXCEEDED}]", EvalError::CostLimit)),
            -1,
        ),
        Err(e) => (Err(e.to_string()), left),
    }
}

/// [`evaluate`] with the object converted and the manifest's budget.
fn evaluate_value(
    rule: &ConditionRule,
    json: &serde_json::Value,
    object: &Value,
    generation: i64,
    budget: &mut i64,
) -> Option<NewCondition> {
    let (expressions, message_expression): (Vec<String>, Option<String>) = match &rule.type_ {
        ConditionRuleType::WellKnownConditions => {
            let api_version = json
                .get("apiVersion")
                .and_then(|v| v.as_str())
                .unwrap_or_default();
            let kind = json
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
        // A type a newer OCM added (or any this agent does not know): upstream's message.
        other => {
            return Some(
                NewCondition::new(
                    rule.condition.clone(),
                    ConditionStatus::Unknown,
                    wc::REASON_CONDITION_RULE_INVALID,
                    truncate(format!("unrecognized condition rule type {other}")),
                )
                .observed_generation(generation),
            );
        }
    };
    let condition = |status: ConditionStatus, reason: &str, message: String| {
        Some(
            NewCondition::new(rule.condition.clone(), status, reason, truncate(message))
                .observed_generation(generation),
        )
    };
    let ctx = context(object, None);
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
        let (outcome, left) = evaluate_cel(&program, &ctx, *budget);
        if outcome.is_ok() {
            // Upstream keeps the budget as it was when an expression fails.
            *budget = left;
        }
        match outcome {
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
            Err(message) => {
                return condition(
                    ConditionStatus::False,
                    wc::REASON_CONDITION_RULE_EXPRESSION_ERROR,
                    message,
                );
            }
        }
    }
    let message = rule_message(rule, message_expression, object, result, budget);
    condition(
        ConditionStatus::from(result),
        wc::REASON_CONDITION_RULE_EVALUATED,
        message,
    )
}

/// The message of an evaluated rule: its message expression's result (or its error), else
/// its message, else upstream's `Manifest is [not] <condition>`.
fn rule_message(
    rule: &ConditionRule,
    message_expression: Option<String>,
    object: &Value,
    result: bool,
    budget: &mut i64,
) -> String {
    let message = match message_expression {
        Some(expression) => match compile(&expression, &["object", "result"]) {
            // Upstream keeps the text before the first source line.
            Err(e) => e
                .to_string()
                .split("\n | ")
                .next()
                .unwrap_or_default()
                .to_string(),
            Ok(program) => {
                let (outcome, left) =
                    evaluate_cel(&program, &context(object, Some(result)), *budget);
                *budget = left;
                match outcome {
                    Ok(Value::String(s)) => s.to_string(),
                    Ok(other) => format!(
                        "expected message expression to have a string result, got {}",
                        type_name(&other)
                    ),
                    Err(message) => message,
                }
            }
        },
        None => String::new(),
    };
    if !message.is_empty() {
        message
    } else if let Some(m) = rule.message.clone().filter(|m| !m.is_empty()) {
        m
    } else if result {
        format!("Manifest is {}", rule.condition)
    } else {
        format!("Manifest is not {}", rule.condition)
    }
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
    fn an_unknown_rule_type_reports_the_rule_invalid_as_upstream_does() {
        let job = json!({"apiVersion": "batch/v1", "kind": "Job", "status": {}});
        let r = rule(ConditionRuleType::from("Rego"), "Complete", &["true"]);
        assert_eq!(
            show(evaluate(&r, &job, 2)),
            (
                "Complete".into(),
                ConditionStatus::Unknown,
                "ConditionRuleInvalid".into(),
                "unrecognized condition rule type Rego".into()
            )
        );
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
        let (_, status, reason, message) = show(evaluate(&missing, &obj, 1));
        assert_eq!(
            (status, reason.as_str(), message.as_str()),
            (
                ConditionStatus::False,
                "ConditionRuleExpressionError",
                "no such key: spec"
            )
        );
        // Upstream's vector "condition rule invalid expression": cel-go's words.
        let invalid = rule(
            ConditionRuleType::Cel,
            "Active",
            &["object.invalid.key == 'Active'"],
        );
        assert_eq!(
            show(evaluate(&invalid, &json!({"spec": {"key1": "val1"}}), 1)),
            (
                "Active".into(),
                ConditionStatus::False,
                "ConditionRuleExpressionError".into(),
                "no such key: invalid".into()
            )
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
    fn costs_and_the_shared_budget_are_upstreams() {
        let obj = json!({"status": {}});
        let cel = |exprs: &[&str]| rule(ConditionRuleType::Cel, "Done", exprs);
        // 10^9 iterations: stopped at the per-evaluation limit, with cel-go's message.
        let cube = cel(&[
            "lists.range(1000).all(a, lists.range(1000).all(b, lists.range(1000).all(c, true)))",
        ]);
        assert_eq!(
            show(evaluate(&cube, &obj, 1)),
            (
                "Done".into(),
                ConditionStatus::False,
                "ConditionRuleExpressionError".into(),
                "operation cancelled: actual cost limit exceeded".into()
            )
        );
        // About 800,000 units each (a string is charged a unit per ten bytes it is read):
        // twelve of them pass the manifest's budget of 10,000,000.
        let obj = json!({"status": {}, "big": "x".repeat(8_000_000)});
        let heavy = "object.big.size() > 0";
        let mut rules: Vec<ConditionRule> = (0..13).map(|_| cel(&[heavy])).collect();
        rules.push(cel(&["true"]));
        let results = evaluate_all(&rules, &obj, 1);
        let statuses: Vec<(ConditionStatus, String)> = results
            .iter()
            .map(|c| (c.status, c.message.clone()))
            .collect();
        let ok = (ConditionStatus::True, "Manifest is Done".to_string());
        let over = (
            ConditionStatus::False,
            "CEL evaluation budget exceeded".to_string(),
        );
        let passed = statuses.iter().take_while(|s| **s == ok).count();
        assert!((11..=12).contains(&passed), "{statuses:?}");
        // Upstream leaves the budget as it was when an expression fails: what is left still
        // pays for a cheap rule after the ones that ran out.
        assert!(
            statuses[passed..13].iter().all(|s| *s == over),
            "{statuses:?}"
        );
        assert_eq!(statuses[13], ok);
        // A message expression that runs out leaves nothing for the rules after it.
        let mut spent: Vec<ConditionRule> = (0..12).map(|_| cel(&[heavy])).collect();
        let mut last = cel(&["true"]);
        last.message_expression = Some(format!("{heavy} ? 'a' : 'b'"));
        spent.push(last);
        spent.push(cel(&["true"]));
        let results = evaluate_all(&spent, &obj, 1);
        let tail: Vec<&str> = results[12..].iter().map(|c| c.message.as_str()).collect();
        assert!(
            tail == [
                "CEL evaluation budget exceeded",
                "CEL evaluation budget exceeded"
            ] || tail[1] == "CEL evaluation budget exceeded",
            "{tail:?}"
        );
    }

    #[test]
    fn long_messages_are_truncated_to_what_the_api_accepts() {
        // A 2 KB expression full of syntax errors: 100 issues, each with its source line.
        let bad = format!("object.a{}", " && )".repeat(400));
        let r = rule(ConditionRuleType::Cel, "Ready", &[bad.as_str()]);
        let (_, status, reason, message) = show(evaluate(&r, &json!({}), 1));
        assert_eq!(
            (status, reason.as_str()),
            (ConditionStatus::False, "ConditionRuleExpressionError")
        );
        assert!(message.len() <= MAX_MESSAGE_LENGTH, "{}", message.len());
        assert!(message.starts_with("ERROR: <input>:1:"), "{message:.80}");
        assert!(message.ends_with(" ... (truncated)"));
        // A long static message too, on a character boundary.
        let mut r = rule(ConditionRuleType::Cel, "Ready", &["true"]);
        r.message = Some("é".repeat(20_000));
        let message = show(evaluate(&r, &json!({}), 1)).3;
        assert!(message.len() <= MAX_MESSAGE_LENGTH);
        assert!(message.starts_with("éé") && message.ends_with(" ... (truncated)"));
        assert_eq!(truncate("short".into()), "short");
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
