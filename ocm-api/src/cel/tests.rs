//! Depth and size bounds, on threads with the stack of a tokio worker.

use std::sync::Arc;

use cel::{Context, Env, Value};
use proptest::prelude::*;

use super::*;

/// A tokio worker's default stack.
const WORKER_STACK: usize = 2 << 20;

/// The standard library alone, with the cost function.
fn env() -> &'static Arc<Env> {
    static ENV: std::sync::OnceLock<Arc<Env>> = std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        extend_environment(&mut env).expect("declared once");
        Arc::new(env)
    })
}

/// Runs `f` on a new thread with a worker-sized stack.
fn on_worker<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new()
        .stack_size(WORKER_STACK)
        .spawn(f)
        .expect("thread")
        .join()
        .expect("no panic")
}

/// Parses and evaluates `source` with the standard environment.
fn run(source: &str) -> Result<Value, String> {
    run_with(source, &Limits::default())
}

fn run_with(source: &str, limits: &Limits) -> Result<Value, String> {
    let program = Program::parse(env(), source, limits).map_err(|e| e.to_string())?;
    let ctx = Context::with_env(Arc::clone(env()));
    program
        .evaluate(&ctx, &mut Budget::default())
        .map_err(|e| e.to_string())
}

fn run_on_worker(source: String) -> Result<Value, String> {
    on_worker(move || run(&source))
}

#[test]
fn thirty_parentheses_evaluate() {
    let source = format!("{}true{}", "(".repeat(30), ")".repeat(30));
    assert_eq!(run_on_worker(source), Ok(Value::Bool(true)));
}

#[test]
fn ten_thousand_levels_of_every_kind_are_compile_errors() {
    let n = 10_000;
    let cases: Vec<(String, &str)> = vec![
        (
            format!("{}true{}", "(".repeat(n), ")".repeat(n)),
            "expression recursion limit exceeded: 250",
        ),
        (
            format!("{}1{}", "[".repeat(n), "]".repeat(n)),
            "expression recursion limit exceeded: 250",
        ),
        (
            format!("{}1{}", "{'a': ".repeat(n), "}".repeat(n)),
            "expression recursion limit exceeded: 250",
        ),
        (
            format!("{}1{}", "size(".repeat(n), ")".repeat(n)),
            "expression recursion limit exceeded: 250",
        ),
        (
            format!("{}true{}", "[1].all(x, ".repeat(n), ")".repeat(n)),
            "expression recursion limit exceeded: 250",
        ),
        (
            format!("1{}", " + 1".repeat(n)),
            "expression recursion limit exceeded: 250",
        ),
        (
            format!("1{}", " == 1".repeat(n)),
            "expression recursion limit exceeded: 250",
        ),
        (
            format!("{{'a': 1}}{}", ".a".repeat(n)),
            "expression recursion limit exceeded: 250",
        ),
        (
            format!("[1]{}", "[0]".repeat(n)),
            "expression recursion limit exceeded: 250",
        ),
        (
            format!("{}1", "true ? 1 : ".repeat(n)),
            "expression recursion limit exceeded: 250",
        ),
        (
            format!("x{}{}", ".a".repeat(n / 2), " + 1".repeat(200)),
            "expression recursion limit exceeded: 250",
        ),
        (
            format!("x{}{}", ".a".repeat(200), " + 1".repeat(200)),
            "max recursion depth exceeded",
        ),
        (
            format!("{}1", "(".repeat(n)),
            "expression recursion limit exceeded: 250",
        ),
    ];
    // Without the code point limit, so that each case reaches the limit it is about.
    let limits = Limits {
        code_points: usize::MAX,
        ..Limits::default()
    };
    for (source, message) in cases {
        let head: String = source.chars().take(40).collect();
        let err = on_worker(move || run_with(&source, &limits)).expect_err(&head);
        assert_eq!(err, format!("ERROR: <input>:-1:0: {message}"), "{head}");
    }
}

#[test]
fn deep_but_accepted_expressions_evaluate_on_a_worker_stack() {
    let n = 250;
    for (source, expected) in [
        (
            format!("{}true{}", "(".repeat(n), ")".repeat(n)),
            Value::Bool(true),
        ),
        (
            format!("{}1{}", "[".repeat(n - 1), "]".repeat(n - 1)),
            Value::Null,
        ),
        (format!("1{}", " + 1".repeat(n)), Value::Int(251)),
        (
            format!("{}0{}", "(1 + ".repeat(n - 1), ")".repeat(n - 1)),
            Value::Int(249),
        ),
        (
            format!("{}true{}", "[1].all(x, ".repeat(n - 1), ")".repeat(n - 1)),
            Value::Bool(true),
        ),
        (format!("{}1", "true ? 1 : ".repeat(n - 1)), Value::Int(1)),
        (vec!["1 == 1"; 10_000].join(" && "), Value::Bool(true)),
    ] {
        let head: String = source.chars().take(40).collect();
        eprintln!("case {head}");
        let result = run_on_worker(source);
        if expected == Value::Null {
            assert!(result.is_ok(), "{head}: {result:?}");
        } else {
            assert_eq!(result, Ok(expected), "{head}");
        }
    }
}

#[test]
fn the_tree_depth_is_bounded_after_parsing() {
    let limits = Limits {
        depth: 10,
        ..Limits::default()
    };
    let err = Program::parse(env(), "[[[[[[[[[[[1]]]]]]]]]]]", &limits).unwrap_err();
    assert_eq!(
        err.to_string(),
        "ERROR: <input>:-1:0: max recursion depth exceeded"
    );
    assert!(Program::parse(env(), "[[[[[[[[[1]]]]]]]]]", &limits).is_ok());
    // A rewrite that deepens the tree is checked too.
    let mut program = Program::parse(env(), "[[[[[[[[[1]]]]]]]]]", &limits).unwrap();
    let err = program
        .rewrite(|e| {
            let inner = std::mem::take(e);
            *e = cel::common::ast::IdedExpr {
                id: 0,
                expr: cel::common::ast::Expr::List(cel::common::ast::ListExpr::new(vec![
                    cel::common::ast::IdedExpr {
                        id: 0,
                        expr: cel::common::ast::Expr::List(cel::common::ast::ListExpr::new(vec![
                            inner,
                        ])),
                    },
                ])),
            };
        })
        .unwrap_err();
    assert!(err.to_string().ends_with("max recursion depth exceeded"));
}

#[test]
fn the_code_point_limit_is_upstreams() {
    let source = format!("'{}'", "a".repeat(100_000));
    assert_eq!(
        run(&source).unwrap_err(),
        "ERROR: <input>:-1:0: expression code point size exceeds limit: size: 100002, limit 100000"
    );
    assert!(run(&format!("'{}'", "é".repeat(99_998))).is_ok());
}

#[test]
fn syntax_errors_render_as_cel_go_does() {
    assert_eq!(
        run("a.b ==").unwrap_err(),
        "ERROR: <input>:1:7: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | a.b ==\n | ......^"
    );
    // Columns count code points; wide characters get wide dots and carets.
    let err = run("'é' ==").unwrap_err();
    assert!(err.ends_with("\n | 'é' ==\n | .\u{ff0e}....^"), "{err}");
    let err = run("1 +\n\t2 +").unwrap_err();
    assert!(err.starts_with("ERROR: <input>:2:5: "), "{err}");
    assert!(err.ends_with("\n |  2 +\n | ....^"), "{err}");
}

#[test]
fn positions_are_lines_and_columns() {
    let program = Program::parse(env(), "1 +\n  ab", &Limits::default()).unwrap();
    let cel::common::ast::Expr::Call(call) = &program.expression().expr else {
        panic!("a call")
    };
    assert_eq!(program.position(call.args[1].id), Some((2, 3)));
    assert_eq!(
        program
            .error_at(
                call.args[1].id,
                "undeclared reference to 'ab' (in container '')"
            )
            .to_string(),
        "ERROR: <input>:2:3: undeclared reference to 'ab' (in container '')\n |   ab\n | ..^"
    );
}

/// Inputs the parser's error recovery (which drops tokens) or lexer (which drops what it cannot
/// read) would nest deeper than their brackets say; each once overflowed a stack.
#[test]
fn syntax_errors_that_nest_never_crash() {
    for source in [
        "()2u||".repeat(1_000),
        "{`}&&".repeat(1_000),
        "[\"]// c\n".repeat(1_000),
        "exists!=[}:'''t\n'''+ in {)".repeat(1_000),
        "(1 +)".repeat(1_000),
        "x[@]".repeat(1_000),
        "f(1,)".repeat(1_000),
        format!("{}a &(b", "(".repeat(250)),
    ] {
        let head: String = source.chars().take(30).collect();
        let err = run_on_worker(source).expect_err(&head);
        assert!(err.starts_with("ERROR: <input>:"), "{head}: {err}");
    }
}

/// Tokens that exercise every branch of the scan and the parser.
fn token() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ",",
        ":",
        "?",
        ".",
        ".?",
        "+",
        "-",
        "*",
        "/",
        "%",
        "==",
        "!=",
        "<",
        "<=",
        ">",
        ">=",
        "!",
        "&&",
        "||",
        " in ",
        "1",
        "1.5",
        "0x1F",
        "2u",
        "'s'",
        "\"d\"",
        "r'\\'",
        "b'x'",
        "'''t\n'''",
        "x",
        "true",
        "null",
        "// c\n",
        "`e`",
        " ",
        "\n",
        "all",
        "exists",
        "map",
        "size",
        "'",
        "\"",
        "@",
        "é",
        "\\",
        "&",
        "|",
        "=",
        "()",
        "f(",
        "[?",
        "{?",
        ".?a",
        ")(",
        "][",
        "\\q",
        "\\x4",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any mix of tokens, repeated to deep nesting, compiles or fails with an error; it never
    /// panics or overflows a worker stack.
    #[test]
    fn token_soup_never_crashes(tokens in prop::collection::vec(token(), 0..40), repeat in 1usize..400) {
        let source = tokens.concat().repeat(repeat);
        let _ = run_on_worker(source);
    }
}

/// Evaluates `source` in the shared environment within `budget`.
fn run_shared(source: &str, budget: &mut Budget) -> Result<Value, EvalError> {
    let program = compile(source).expect("compiles");
    program.evaluate(&context(), budget)
}

#[test]
fn costs_stop_long_evaluations() {
    // 10^9 iterations: stopped after the per-evaluation limit.
    let cube = "lists.range(1000).all(a, lists.range(1000).all(b, lists.range(1000).all(c, true)))";
    assert_eq!(
        run_shared(cube, &mut Budget::default()),
        Err(EvalError::CostLimit)
    );
    assert_eq!(
        EvalError::CostLimit.to_string(),
        "operation cancelled: actual cost limit exceeded"
    );
    // Even where the expression absorbs the failing step.
    assert_eq!(
        run_shared(&format!("{cube} || true"), &mut Budget::default()),
        Err(EvalError::CostLimit)
    );
    // Strings that grow at every step.
    let grow = format!("'a'{}.size()", ".replace('a', 'aaaaaaaaaa')".repeat(9));
    assert_eq!(
        run_shared(&grow, &mut Budget::default()),
        Err(EvalError::CostLimit)
    );
    // Work per iteration that grows with the data, not the expression.
    let scan = "lists.range(100000).map(i, 'x').join('').contains('y') && lists.range(1000).all(i, lists.range(100000).map(j, 'x').join('').contains('y') == false)";
    assert_eq!(
        run_shared(scan, &mut Budget::default()),
        Err(EvalError::CostLimit)
    );
    // A loop is paid in full before it runs, even one that ends early (ours; cel-go charges
    // the iterations run): fine for ranges of tens of thousands of elements, not for millions.
    let mut budget = Budget::default();
    assert_eq!(
        run_shared("lists.range(50000).exists(x, x == 2)", &mut budget),
        Ok(Value::Bool(true))
    );
    assert!(Budget::RUNTIME_COST_BUDGET - budget.remaining() < 600_000);
    assert_eq!(
        run_shared(
            "lists.range(1000000).exists(x, x == 2)",
            &mut Budget::default()
        ),
        Err(EvalError::CostLimit)
    );
}

#[test]
fn the_budget_is_shared_and_reported() {
    let mut budget = Budget::new(100, 60);
    // A constant: one node.
    assert_eq!(run_shared("true", &mut budget), Ok(Value::Bool(true)));
    assert_eq!(budget.remaining(), 99);
    // Iterations charge their nodes each: 8 + 3 * 5 here, within the limit of each.
    assert_eq!(
        run_shared("[1, 2, 3].all(x, x > 0)", &mut budget),
        Ok(Value::Bool(true))
    );
    let after = budget.remaining();
    assert!(after < 99 - 15, "{after}");
    // Past the limit of one evaluation: cel-go's error; past what is left: upstream's.
    assert_eq!(
        run_shared("lists.range(100).all(x, x >= 0)", &mut budget),
        Err(EvalError::CostLimit)
    );
    let mut small = Budget::new(30, 1_000);
    assert_eq!(
        run_shared("lists.range(100).all(x, x >= 0)", &mut small),
        Err(EvalError::BudgetExceeded)
    );
    assert_eq!(
        EvalError::BudgetExceeded.to_string(),
        "CEL evaluation budget exceeded"
    );
    assert_eq!(small.remaining(), 0);
}

#[test]
fn charges_keep_results() {
    for (source, expected) in [
        ("[1, 2, 3].map(x, x * 2) == [2, 4, 6]", true),
        ("[1, 2, 3, 4].map(x, x % 2 == 0, x * 10) == [20, 40]", true),
        ("[1, 2, 3, 4].filter(x, x > 2) == [3, 4]", true),
        ("[1, 2, 3].exists_one(x, x == 2)", true),
        ("[1, 2, 3].all(x, x > 1)", false),
        ("{'a': 1, 'b': 2}.exists(k, k == 'b')", true),
        ("[2, 0].exists(e, 6 / (2 - e) == 3)", true),
        (
            "'abc'.contains('b') && 'abc' + 'd' == 'abcd' && size('abc') == 3",
            true,
        ),
        (
            "math.greatest(1, 2) == 2 && optional.of(1).hasValue()",
            true,
        ),
        ("quantity('1Gi').isGreaterThan(quantity('1Mi'))", true),
        (
            "'a' in ['a', 'b'] && [[1], [2]].map(l, l.map(x, x + 1)) == [[2], [3]]",
            true,
        ),
    ] {
        assert_eq!(
            run_shared(source, &mut Budget::default()),
            Ok(Value::Bool(expected)),
            "{source}"
        );
    }
    // Errors are those of the expression as written.
    assert!(matches!(
        run_shared("[2, 1].all(e, 6 / (2 - e) == 6)", &mut Budget::default()),
        Err(EvalError::Execution(_))
    ));
}

/// Runtime errors read as cel-go words them (see the message module).
#[test]
fn runtime_errors_read_in_cel_gos_words() {
    let object = json_to_value(&serde_json::json!({"spec": {"replicas": 2, "name": "x",
        "list": [1, 2], "map": {"a": 1}, "f": 1.5, "b": true}}));
    for (source, message) in [
        ("object.missing", "no such key: missing"),
        ("object.spec['missing']", "no such key: missing"),
        ("object.spec.map[1]", "no such key: 1"),
        ("object.spec.list[5]", "index out of bounds: 5"),
        ("object.spec.list[-1]", "index out of bounds: -1"),
        (
            "object.spec.list['a']",
            "unsupported index type 'string' in list",
        ),
        (
            "object.spec.list[1.5]",
            "unsupported index value 1.5 in list",
        ),
        ("object.spec.replicas / 0", "division by zero"),
        ("object.spec.replicas % 0", "modulus by zero"),
        (
            "9223372036854775807 + object.spec.replicas",
            "integer overflow",
        ),
        (
            "object.spec.replicas * 9223372036854775807",
            "integer overflow",
        ),
        ("1u - 2u", "unsigned integer overflow"),
        ("uint(-1)", "unsigned integer overflow"),
        // The first operand has the operation, not for the second's type.
        ("object.spec.replicas + 'a'", "no such overload"),
        ("object.spec.name + 1", "no such overload"),
        ("object.spec.replicas < 'a'", "no such overload"),
        // The first operand has no such operation.
        ("object.spec.b + 1", "no such overload: _+_"),
        ("object.spec.name / 2", "no such overload: _/_"),
        ("object.spec.f % 2.0", "no such overload: _%_"),
        ("object.spec.map < 1", "no such overload: _<_"),
        ("-object.spec.name", "no such overload: -_"),
        ("size(object.spec.replicas)", "no such overload: size"),
        ("object.spec.replicas.size()", "no such overload: size"),
        // Logic on values that are not bools.
        ("!object.spec.replicas", "no such overload"),
        ("object.spec.replicas && true", "no such overload"),
        ("object.spec.list.all(x, x)", "no such overload"),
        ("object.spec.replicas ? 1 : 2", "no such overload"),
        // Other functions name themselves and the argument types.
        (
            "object.spec.replicas.startsWith('a')",
            "no such overload: startsWith(int, string)",
        ),
        (
            "object.spec.name.split(1)",
            "no such overload: split(string, int)",
        ),
        // A function's own error, without the crate's prefix.
        ("object.spec.name.substring(5)", "index out of range: 5"),
        (
            "quantity('x')",
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            "nofn(1)",
            "undeclared reference to 'nofn' (in container '')",
        ),
    ] {
        let program = compile(source).expect(source);
        let mut ctx = context();
        ctx.add_variable_from_value("object", object.clone());
        let error = program
            .evaluate(&ctx, &mut Budget::default())
            .expect_err(source);
        assert_eq!(error.to_string(), message, "{source}");
    }
}
