//! The expression language end to end, against pgbench 15 itself: every expected value
//! below is what PostgreSQL 15.20's pgbench printed, captured with
//!
//! ```text
//! \set x EXPR
//! \set y debug(:x)
//! select 1;
//! ```
//!
//! run by `pgbench -n -t 1 -f FILE --random-seed=5432` (one run per expression, so each
//! starts from client 0's fresh generator): `V` and what `debug()` printed, `E` and the
//! run-time error, or `P`, where pgbench's caret pointed (a byte offset in the expression)
//! and its parse error. Then the hostile inputs pgbench's own parser is not asked to survive,
//! and a property: parsing never panics.

use super::expr::{Env, EvalError, Expr, MAX_DEPTH, MAX_OPS};
use super::prng::{Prng, Seeds};
use super::value::Value;
use std::collections::HashMap;

/// A client as pgbench 15 sets one up under `--random-seed=5432`, one client, no `-D`.
struct Client {
    vars: HashMap<String, Value>,
    rng: Prng,
    default_seed: i64,
    debugged: Vec<String>,
}

impl Client {
    fn new() -> Client {
        let seeds = Seeds::new(5432, 1, 1, false);
        let default_seed = seeds.default_seed.unwrap_or(0);
        let mut vars = HashMap::new();
        vars.insert("client_id".to_string(), Value::Int(0));
        vars.insert("scale".to_string(), Value::Int(1));
        vars.insert("random_seed".to_string(), Value::Int(seeds.random_seed));
        vars.insert("default_seed".to_string(), Value::Int(default_seed));
        Client {
            vars,
            rng: seeds.clients[0].clone(),
            default_seed,
            debugged: Vec::new(),
        }
    }

    /// `\set name EXPR`: the value, or the error as the golden tables write it.
    fn set(&mut self, name: &str, text: &str) -> Result<Value, String> {
        let expr = Expr::parse(text).map_err(|e| format!("P {} {}", e.offset, e.message))?;
        let v = expr.eval(self).map_err(|e| format!("E {e}"))?;
        self.vars.insert(name.to_string(), v);
        Ok(v)
    }
}

impl Env for Client {
    fn var(&mut self, name: &str) -> Result<Value, EvalError> {
        self.vars
            .get(name)
            .copied()
            .ok_or_else(|| EvalError::undefined_variable(name))
    }
    fn rng(&mut self) -> &mut Prng {
        &mut self.rng
    }
    fn default_seed(&self) -> i64 {
        self.default_seed
    }
    fn debug(&mut self, v: &Value) {
        self.debugged.push(v.debug_form().to_string());
    }
}

fn outcome(text: &str) -> String {
    match Client::new().set("x", text) {
        Ok(v) => format!("V {}", v.debug_form()),
        Err(e) => e,
    }
}

/// pgbench 15.20's outcome for each expression.
const GOLDEN: &[(&str, &str)] = &[
    ("1 + 2 * 3", "V int 7"),
    ("(1 + 2) * 3", "V int 9"),
    ("7 / 2", "V int 3"),
    ("-7 / 2", "V int -3"),
    ("7 / -2", "V int -3"),
    ("7.0 / 2", "V double 3.5"),
    ("1 / 0", "E division by zero"),
    ("1.0 / 0", "V double Infinity"),
    ("-1.0 / 0", "V double -Infinity"),
    ("0.0 / 0", "V double NaN"),
    ("1 / 0.0", "V double Infinity"),
    ("-9223372036854775808 / -1", "E bigint div out of range"),
    ("-9223372036854775808 % -1", "V int 0"),
    ("7 % -1", "V int 0"),
    ("-7 % 3", "V int -1"),
    ("7 % -3", "V int 1"),
    ("7.5 % 2", "V int 0"),
    ("6.5 % 4", "V int 2"),
    ("7.6 % 3", "V int 2"),
    ("5 % 0", "E division by zero"),
    ("5 % 0.4", "E division by zero"),
    ("9223372036854775807 + 1", "E bigint add out of range"),
    ("-9223372036854775807 - 2", "E bigint sub out of range"),
    ("4611686018427387904 * 2", "E bigint mul out of range"),
    ("-4611686018427387904 * 2", "V int -9223372036854775808"),
    ("-9223372036854775808", "V int -9223372036854775808"),
    ("- 9223372036854775808", "V int -9223372036854775808"),
    ("-9223372036854775808 - 1", "E bigint sub out of range"),
    ("9223372036854775808", "P 18 syntax error"),
    ("-(9223372036854775808)", "P 20 syntax error"),
    ("-(-9223372036854775807 - 1)", "E bigint sub out of range"),
    ("9223372036854775807", "V int 9223372036854775807"),
    (
        "99999999999999999999",
        "P 19 bigint constant overflow (99999999999999999999)",
    ),
    ("1.", "V double 1"),
    (".5", "V double 0.5"),
    ("1e3", "V double 1000"),
    ("1E+3", "V double 1000"),
    ("2e-1", "V double 0.2"),
    ("1.5e308 * 10", "V double Infinity"),
    ("1e308", "V double 1e+308"),
    ("1e309", "P 4 double constant overflow (1e309)"),
    ("1e-320", "P 5 double constant overflow (1e-320)"),
    ("1.0e-307", "V double 1e-307"),
    ("123456789012345678", "V int 123456789012345678"),
    ("0.1 + 0.2", "V double 0.3"),
    ("1 - 0.9", "V double 0.1"),
    ("-0.0", "V double 0"),
    ("-0", "V int 0"),
    ("0.0 * -1", "V double -0"),
    ("3 * 1.5", "V double 4.5"),
    ("1 + 1.5", "V double 2.5"),
    ("10 - 2.5", "V double 7.5"),
    ("2.5 - 10", "V double -7.5"),
    ("-(1.5)", "V double -1.5"),
    ("+5", "V int 5"),
    ("- - 5", "V int 5"),
    ("--5", "V int 5"),
    ("- -9223372036854775808", "E bigint sub out of range"),
    ("1 < 2", "V boolean true"),
    ("2 < 1", "V boolean false"),
    ("1 <= 1", "V boolean true"),
    ("1 > 2", "V boolean false"),
    ("2 >= 2", "V boolean true"),
    ("1 = 1", "V boolean true"),
    ("1 = 1.0", "V boolean true"),
    ("1 <> 2", "V boolean true"),
    ("1 != 1", "V boolean false"),
    ("1.5 > 1", "V boolean true"),
    ("0.1 + 0.2 = 0.3", "V boolean false"),
    ("1 < 2 < 3", "P 6 syntax error"),
    ("1 = 1 = 1", "P 6 syntax error"),
    ("1 < 2 = true", "P 6 syntax error"),
    ("true = true", "E cannot coerce boolean to int"),
    ("(1 < 2) = (2 < 3)", "E cannot coerce boolean to int"),
    ("null = null", "V null"),
    ("1 < null", "V null"),
    ("true", "V boolean true"),
    ("false", "V boolean false"),
    ("TRUE AND false", "V boolean false"),
    ("true and true", "V boolean true"),
    ("true or false", "V boolean true"),
    ("false or false", "V boolean false"),
    ("not true", "V boolean false"),
    ("NOT false", "V boolean true"),
    ("NOT 0", "E cannot coerce int to boolean"),
    ("NOT 0.0", "E cannot coerce double to boolean"),
    ("5 or 0", "E cannot coerce int to boolean"),
    ("0 and 1", "E cannot coerce int to boolean"),
    ("1 and true", "E cannot coerce int to boolean"),
    ("true and 1", "E cannot coerce int to boolean"),
    ("false and 1", "V boolean false"),
    ("true or 1", "V boolean true"),
    ("null and false", "V null"),
    ("false and null", "V boolean false"),
    ("null or true", "V null"),
    ("true or null", "V boolean true"),
    ("false or null", "V null"),
    ("null and true", "V null"),
    ("not null", "V null"),
    ("true and null", "V null"),
    ("1 IS NULL", "V boolean false"),
    ("null IS NULL", "V boolean true"),
    ("null is not null", "V boolean false"),
    ("1 is not null", "V boolean true"),
    ("1 ISNULL", "V boolean false"),
    ("null isnull", "V boolean true"),
    ("1 notnull", "V boolean true"),
    ("null notnull", "V boolean false"),
    ("true IS TRUE", "V boolean true"),
    ("1 IS TRUE", "V boolean false"),
    ("false is false", "V boolean true"),
    ("false is not true", "V boolean true"),
    ("true is not false", "V boolean true"),
    ("null is true", "V boolean false"),
    ("null is not true", "V boolean true"),
    ("0 is false", "V boolean false"),
    ("1 IS NULL IS NULL", "V boolean false"),
    ("1 < 2 IS TRUE", "V boolean true"),
    ("1 < 2 IS NULL < 3", "E cannot coerce boolean to int"),
    ("1 IS 1", "P 5 syntax error"),
    ("not 1 is null", "V boolean true"),
    ("5 & 3", "V int 1"),
    ("5 | 3", "V int 7"),
    ("5 # 3", "V int 6"),
    ("~0", "V int -1"),
    ("~5", "V int -6"),
    ("~1+2", "V int -4"),
    ("~1|2", "V int -2"),
    ("~1.5", "V int -3"),
    ("1 << 3", "V int 8"),
    ("1 << 63", "V int -9223372036854775808"),
    ("1 << 64", "V int 1"),
    ("1 << 65", "V int 2"),
    ("8 >> 1", "V int 4"),
    ("-8 >> 1", "V int -4"),
    ("8 >> -1", "V int 0"),
    ("1 << -1", "V int -9223372036854775808"),
    ("-1 >> 70", "V int -1"),
    ("5.5 & 3", "V int 2"),
    ("2.5 | 0", "V int 2"),
    ("3.5 | 0", "V int 4"),
    ("-2.5 | 0", "V int -2"),
    ("1 & 2 | 4", "V int 4"),
    ("1 | 2 << 3", "V int 24"),
    ("1 << 2 + 1", "V int 8"),
    ("true & 1", "E cannot coerce boolean to int"),
    ("1 + 2 & 3", "V int 3"),
    ("2 + 3 * 4 - 5 / 2", "V int 12"),
    ("2 * 3 % 4", "V int 2"),
    ("-2 * 3", "V int -6"),
    ("- 2 ^ 3", "P 4 unexpected character (^)"),
    ("2 -3", "V int -1"),
    ("1 +", "P 3 syntax error"),
    ("(1", "P 2 syntax error"),
    ("1)", "P 1 syntax error"),
    ("()", "P 1 syntax error"),
    ("1 2", "P 2 syntax error"),
    ("abs(,5)", "V int 5"),
    ("abs(1,,2)", "P 6 syntax error"),
    ("abs()", "P 4 unexpected number of arguments (abs)"),
    ("abs(1,2)", "P 7 unexpected number of arguments (abs)"),
    ("least()", "P 6 at least one argument expected (least)"),
    ("foo(1)", "P 2 unexpected function name (foo)"),
    ("foo", "P 2 unexpected function name (foo)"),
    ("1 $ 2", "P 2 unexpected character ($)"),
    (":", "P 0 unexpected character (:)"),
    ("a ! b", "P 2 unexpected character (!)"),
    ("1.5.3", "P 4 syntax error"),
    ("1e", "P 1 syntax error"),
    ("case when true then 1 end", "V int 1"),
    ("case when false then 1 end", "V null"),
    ("case when false then 1 else 2 end", "V int 2"),
    ("case when 0 then 1 when 2 then 3 else 4 end", "V int 3"),
    ("case when null then 1 else 2 end", "V int 2"),
    ("case when 0.0 then 1 when 0.5 then 2 end", "V int 2"),
    ("case when 1 then 1 else 1/0 end", "V int 1"),
    ("case when 0 then 1/0 else 7 end", "V int 7"),
    (
        "CASE WHEN 1 < 2 THEN 'x' END",
        "P 23 unexpected character (')",
    ),
    ("case 1 when 1 then 2 end", "P 5 syntax error"),
    ("case when 1 then 2", "P 18 syntax error"),
    ("case end", "P 7 syntax error"),
    ("case when 1 then 2 else 3 else 4 end", "P 29 syntax error"),
    ("1 + case when true then 1 else 2 end * 3", "V int 4"),
    ("abs(-5)", "V int 5"),
    ("abs(5)", "V int 5"),
    ("abs(-5.5)", "V double 5.5"),
    ("abs(-0.0)", "V double 0"),
    ("abs(-9223372036854775808)", "V int -9223372036854775808"),
    ("abs(true)", "V double 4.94065645841247e-324"),
    ("abs(false)", "V double 0"),
    ("abs(null)", "V null"),
    ("debug(5)", "V int 5"),
    ("double(5)", "V double 5"),
    ("double(5.5)", "V double 5.5"),
    ("double(true)", "E cannot coerce boolean to double"),
    ("double(null)", "V null"),
    ("exp(1)", "V double 2.71828182845905"),
    ("exp(0)", "V double 1"),
    ("exp(1000)", "V double Infinity"),
    ("ln(1)", "V double 0"),
    ("ln(0)", "V double -Infinity"),
    ("ln(-1)", "V double NaN"),
    ("ln(10)", "V double 2.30258509299405"),
    ("sqrt(2)", "V double 1.4142135623731"),
    ("sqrt(-1)", "V double NaN"),
    ("sqrt(16)", "V double 4"),
    ("pow(2, 10)", "V double 1024"),
    ("power(2, 0.5)", "V double 1.4142135623731"),
    ("pow(-8, 1.0/3)", "V double NaN"),
    ("pow(0, -1)", "V double Infinity"),
    ("pow(2, 1024)", "V double Infinity"),
    ("POW(2,3)", "V double 8"),
    ("pi()", "V double 3.14159265358979"),
    ("pi(1)", "P 4 unexpected number of arguments (pi)"),
    ("int(7.6)", "V int 8"),
    ("int(7.5)", "V int 8"),
    ("int(8.5)", "V int 8"),
    ("int(-7.5)", "V int -8"),
    ("int(-0.5)", "V int 0"),
    ("int(5)", "V int 5"),
    (
        "int(9.3e18)",
        "E double to int overflow for 9300000000000000000.000000",
    ),
    ("int(-9223372036854775808.0)", "V int -9223372036854775808"),
    (
        "int(9223372036854775807.0)",
        "E double to int overflow for 9223372036854775808.000000",
    ),
    ("int(1e400)", "P 8 double constant overflow (1e400)"),
    ("int(true)", "E cannot coerce boolean to int"),
    ("int(null)", "V null"),
    ("int(0.0/0)", "E double to int overflow for NaN"),
    ("least(1, 2, 3)", "V int 1"),
    ("least(3, 1.5, 2)", "V double 1.5"),
    ("greatest(1, 2, 3)", "V int 3"),
    ("greatest(1, 2.5)", "V double 2.5"),
    ("greatest(7)", "V int 7"),
    ("least(null, 1)", "V null"),
    ("least(1, true)", "E cannot coerce boolean to int"),
    (
        "least(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)",
        "V int 1",
    ),
    (
        "least(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17)",
        "E too many function arguments, maximum is 16",
    ),
    (
        "least(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 1/0, 17)",
        "E division by zero",
    ),
    (
        "least(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 1/0)",
        "E too many function arguments, maximum is 16",
    ),
    ("greatest(0.0/0, 1)", "V double 1"),
    ("greatest(1, 0.0/0)", "V double NaN"),
    ("least(0.0/0, 1)", "V double 1"),
    ("least(1, 0.0/0)", "V double NaN"),
    ("mod(7, 3)", "V int 1"),
    ("mod(-7, 3)", "V int -1"),
    ("mod(7.5, 2)", "V int 0"),
    ("mod(5, 0)", "E division by zero"),
    ("mod(-9223372036854775808, -1)", "V int 0"),
    ("mod(1)", "P 5 unexpected number of arguments (mod)"),
    ("mod(null, 0)", "V null"),
    ("mod(1, 0) + null", "E division by zero"),
    ("null + mod(1,0)", "E division by zero"),
    ("null + 1", "V null"),
    ("1 + null", "V null"),
    ("null * 0", "V null"),
    ("hash(10, 5432)", "V int -5817877081768721676"),
    ("hash_murmur2(10, 5432)", "V int -5817877081768721676"),
    ("hash_fnv1a(10, 5432)", "V int -7793829335365542153"),
    ("hash(10)", "V int 4313776982099445391"),
    ("hash_fnv1a(10)", "V int 1738298496642736203"),
    ("hash(1.5, 2.5)", "V int 8628357597987678224"),
    ("hash(-1, 0)", "V int 4219408603045787357"),
    ("hash(0, 0)", "V int 8217090173679840641"),
    ("hash(123456789, 987654321)", "V int -3046098614147007385"),
    (
        "hash_fnv1a(-9223372036854775808, -1)",
        "V int 4052607191188198810",
    ),
    ("hash_fnv1a(0, 0)", "V int -6284781860667377211"),
    ("hash(1,2,3)", "P 10 unexpected number of arguments (hash)"),
    ("hash()", "P 5 unexpected number of arguments (hash)"),
    ("hash(true)", "E cannot coerce boolean to int"),
    ("hash(null)", "V null"),
    ("permute(0, 10, 5432)", "V int 6"),
    ("permute(3, 10, 5432)", "V int 8"),
    ("permute(9, 10, 5432)", "V int 2"),
    ("permute(-3, 7, 1)", "V int 3"),
    ("permute(5, 1)", "V int 0"),
    (
        "permute(5, 0)",
        "E permute size parameter must be greater than zero",
    ),
    (
        "permute(5, -1, 3)",
        "E permute size parameter must be greater than zero",
    ),
    ("permute(100, 1000000007, -42)", "V int 698140877"),
    (
        "permute(9223372036854775807, 9223372036854775807, 0)",
        "V int 6827909720952040287",
    ),
    ("permute(1, 2)", "V int 0"),
    ("permute(3, 7)", "V int 0"),
    ("permute(1)", "P 9 unexpected number of arguments (permute)"),
    (
        "permute(1, 2, 3, 4)",
        "P 18 unexpected number of arguments (permute)",
    ),
    (":random_seed", "V int 5432"),
    (":default_seed", "V int 7590783070443337668"),
    (":client_id", "V int 0"),
    (":scale", "V int 1"),
    ("random(1, 10)", "V int 8"),
    ("random(10, 19)", "V int 17"),
    ("random(1, 1)", "V int 1"),
    ("random(2, 1)", "E empty range given to random"),
    ("random(1.5, 2.5)", "V int 2"),
    (
        "random(-9223372036854775808, 9223372036854775807)",
        "E random range is too large",
    ),
    (
        "random(-9223372036854775808, 9223372036854775806)",
        "E random range is too large",
    ),
    (
        "random(0, 9223372036854775807)",
        "E random range is too large",
    ),
    (
        "random(-1, 9223372036854775807)",
        "E random range is too large",
    ),
    ("random(1)", "P 8 unexpected number of arguments (random)"),
    ("random(true, 2)", "E cannot coerce boolean to int"),
    ("random(null, 2)", "V null"),
    (
        "random_exponential(1, 10, 0)",
        "E exponential parameter must be greater than zero (not 0.000000)",
    ),
    (
        "random_exponential(1, 10, -1)",
        "E exponential parameter must be greater than zero (not -1.000000)",
    ),
    ("random_exponential(1, 10, 0.5)", "V int 8"),
    ("random_exponential(100, 199, 10.0)", "V int 116"),
    (
        "random_exponential(1, 10, 0.0/0)",
        "V int -9223372036854775807",
    ),
    (
        "random_gaussian(1, 10, 1.9)",
        "E gaussian parameter must be at least 2.000000 (not 1.900000)",
    ),
    ("random_gaussian(1, 10, 2)", "V int 4"),
    ("random_gaussian(1000, 1999, 10.0)", "V int 1471"),
    (
        "random_gaussian(1, 10, 0.0/0)",
        "V int -9223372036854775807",
    ),
    (
        "random_zipfian(1, 10, 1)",
        "E zipfian parameter must be in range [1.001, 1000] (not 1.000000)",
    ),
    ("random_zipfian(1, 10, 1.001)", "V int 7"),
    ("random_zipfian(1, 10, 1000)", "V int 1"),
    (
        "random_zipfian(1, 10, 1000.5)",
        "E zipfian parameter must be in range [1.001, 1000] (not 1000.500000)",
    ),
    ("random_zipfian(1, 1000, 1.07)", "V int 18"),
    ("random_zipfian(2, 1, 1.5)", "E empty range given to random"),
    ("random_gaussian(2, 1, 0)", "E empty range given to random"),
    (
        "random_exponential(1, 2)",
        "P 23 unexpected number of arguments (random_exponential)",
    ),
    ("random(1, 2) > random(1, 2)", "V boolean false"),
    ("random(1, 1000) - random(1, 1000)", "V int 376"),
    (
        "random(1, 1000) >= random(1, 1000) * 0 + 500",
        "V boolean false",
    ),
    ("debug(1) > debug(2)", "V boolean false"),
    ("ABS(-3)", "V int 3"),
    ("Random(1, 3)", "V int 2"),
    ("Hash_Fnv1a(1, 2)", "V int -4052466453699787802"),
    ("PI()", "V double 3.14159265358979"),
    (":x", "E undefined variable \"x\""),
    ("abs (1)", "V int 1"),
    ("1/0 + 1/0.0", "E division by zero"),
    ("(1/0) is null", "E division by zero"),
    ("null and 1/0", "V null"),
    ("false and 1/0", "V boolean false"),
    ("true or 1/0", "V boolean true"),
    ("1/0 and false", "E division by zero"),
    ("1/3.0", "V double 0.333333333333333"),
    ("100000000000000.5", "V double 100000000000000"),
    ("1e15 + 0.0", "V double 1e+15"),
    ("1e16 + 0.0", "V double 1e+16"),
    ("1.5e-5", "V double 1.5e-05"),
    ("0.0001", "V double 0.0001"),
    ("0.00001", "V double 1e-05"),
    ("123456789012345.67", "V double 123456789012346"),
    ("1234567890123456.7", "V double 1.23456789012346e+15"),
    ("2 * 0.1", "V double 0.2"),
    ("1e300 * 1e10", "V double Infinity"),
    ("-1e300 * 1e10", "V double -Infinity"),
    // Errors: pgbench reads the rest of the line before reporting, and a token it
    // cannot read there is what it reports.
    ("a ! b", "P 2 unexpected character (!)"),
    (
        "1 + ) 99999999999999999999",
        "P 25 bigint constant overflow (99999999999999999999)",
    ),
    ("foo(1) $ 2 $ 3", "P 11 unexpected character ($)"),
    ("1 + ) 1e999 + 1", "P 10 double constant overflow (1e999)"),
    ("( $", "P 2 unexpected character ($)"),
    ("abs(1, 2) !", "P 10 unexpected character (!)"),
    ("1 +", "P 3 syntax error"),
    ("1 ++", "P 4 syntax error"),
    ("case when 1 then 2 els 3 end", "P 21 syntax error"),
    ("abs(1", "P 5 syntax error"),
    ("1 = 1 = 1 $", "P 10 unexpected character ($)"),
    ("least(1, 2", "P 10 syntax error"),
    (":a :b", "P 4 syntax error"),
    ("1 is 2", "P 5 syntax error"),
    ("1 is not 2", "P 9 syntax error"),
    ("not", "P 3 syntax error"),
];

#[test]
fn every_expression_as_pgbench_computes_it() {
    let mut wrong = Vec::new();
    for (text, want) in GOLDEN {
        let got = outcome(text);
        if got != *want {
            wrong.push(format!("{text:?}: got {got:?}, pgbench {want:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// One pgbench 15.20 run, `--random-seed=5432`, client 0: these sixteen expressions three
/// times over, each `\set vN debug(EXPR)`, in order; what `debug()` printed.
#[test]
fn a_run_of_draws_as_pgbench_draws_them() {
    let exprs = [
        "random(1, 1000)",
        "random(-5, 5)",
        "random_exponential(1, 1000, 2.5)",
        "random_gaussian(1, 1000, 2.5)",
        "random_zipfian(1, 1000, 1.07)",
        "random(1, 100000) * 2 > random(1, 100000)",
        "random_zipfian(1, 10, 3.5)",
        "hash(random(1, 1000))",
        "permute(random(0, 99), 100)",
        "random(-4611686018427387904, 4611686018427387902)",
        "case when random(0, 1) = 1 then random(1, 6) else random(100, 106) end",
        "random(1, 10) = 3 or random(1, 10) = 4",
        "random_gaussian(0, 9, 2.0)",
        "random_exponential(0, 9223372036854775806, 0.001)",
        "random_zipfian(1, 9223372036854775806, 1.5)",
        "greatest(random(1, 5), random(1, 5), random(1, 5))",
    ];
    let want = [
        "int 837",
        "int 2",
        "int 150",
        "int 495",
        "int 222",
        "boolean true",
        "int 1",
        "int 7229704769623417888",
        "int 7",
        "int 4323430213407144434",
        "int 6",
        "boolean true",
        "int 4",
        "int 8308436870268509184",
        "int 6",
        "int 5",
        "int 337",
        "int 5",
        "int 264",
        "int 625",
        "int 30",
        "boolean false",
        "int 1",
        "int 625003012896009981",
        "int 96",
        "int 3688833403353395178",
        "int 100",
        "boolean false",
        "int 3",
        "int 1428334034731569664",
        "int 1",
        "int 3",
        "int 901",
        "int -2",
        "int 869",
        "int 703",
        "int 314",
        "boolean true",
        "int 1",
        "int 7917313021420785876",
        "int 71",
        "int 2421219762674335586",
        "int 102",
        "boolean true",
        "int 3",
        "int 6256292013893187584",
        "int 5",
        "int 5",
    ];
    let mut client = Client::new();
    for (n, text) in exprs.iter().cycle().take(want.len()).enumerate() {
        client
            .set(&format!("v{}", n + 1), &format!("debug({text})"))
            .unwrap();
    }
    assert_eq!(client.debugged, want);
}

/// `debug()` prints even a NULL, and before the NULL rule; `debug(1) > debug(2)` prints 2
/// first, as pgbench's `2 < 1` does.
#[test]
fn debug_order_is_pgbenchs() {
    let mut client = Client::new();
    client.set("x", "debug(1) > debug(2)").unwrap();
    client.set("y", "debug(null) + 1").unwrap();
    assert_eq!(client.debugged, ["int 2", "int 1", "null"]);
}

/// A script's `\set default_seed` is what the seedless hashes read, as in pgbench.
#[test]
fn seedless_hashes_read_the_variable() {
    let mut client = Client::new();
    client.set("default_seed", "5432").unwrap();
    assert_eq!(
        client.set("h", "hash(10)"),
        Ok(Value::Int(-5817877081768721676))
    );
    assert_eq!(
        client.set("h", "hash_fnv1a(10)"),
        Ok(Value::Int(-7793829335365542153))
    );
    assert_eq!(client.set("p", "permute(0, 10)"), Ok(Value::Int(6)));
    client.vars.remove("default_seed");
    assert_eq!(
        client.set("h", "hash(10)"),
        Err("E undefined variable \"default_seed\"".to_string())
    );
}

/// The API's promises: an expression is shared between clients' threads.
#[test]
fn expressions_are_shareable() {
    fn shareable<T: Clone + Send + Sync + std::fmt::Debug>() {}
    shareable::<Expr>();
    let e = EvalError("from a String".to_string());
    assert_eq!(e.to_string(), "from a String");
    let r: Result<Value, String> = Err("x".to_string());
    assert_eq!(r.map_err(EvalError), Err(EvalError("x".to_string())));
}

fn parse_error(text: &str) -> String {
    match Expr::parse(text) {
        Ok(_) => "parsed".to_string(),
        Err(e) => e.message,
    }
}

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    let too_deep = MAX_DEPTH * 10;
    for (open, close) in [
        ("(", ")"),
        ("abs(", ")"),
        ("-", ""),
        ("~", ""),
        ("not ", ""),
    ] {
        let text = format!("{}1{}", open.repeat(too_deep), close.repeat(too_deep));
        assert!(
            parse_error(&text).starts_with("expression too deeply nested"),
            "{open}"
        );
    }
    let cases = "case when true then ".repeat(too_deep) + "1" + &" end".repeat(too_deep);
    assert!(parse_error(&cases).starts_with("expression too deeply nested"));
    // Just within the bound: parsed, and evaluated without recursion.
    let ok = format!(
        "{}1{}",
        "(".repeat(MAX_DEPTH - 2),
        ")".repeat(MAX_DEPTH - 2)
    );
    assert_eq!(Client::new().set("x", &ok), Ok(Value::Int(1)));
    let negs = format!("{}7", "-".repeat(MAX_DEPTH - 2));
    assert_eq!(Client::new().set("x", &negs), Ok(Value::Int(7)));
}

#[test]
fn long_flat_chains_are_bounded() {
    // pgbench's recursive evaluator would overflow its stack on these; refused here.
    let ten_mb = "1 + ".repeat(2_500_000) + "1";
    assert!(parse_error(&ten_mb).starts_with("expression too long"));
    let long_or = "true or ".repeat(200_000) + "true";
    assert!(parse_error(&long_or).starts_with("expression too long"));
    // Below the bound, a long chain evaluates (no recursion in parse, eval or drop).
    let terms = MAX_OPS / 2 - 1;
    let chain = "1 + ".repeat(terms - 1) + "1";
    assert_eq!(Client::new().set("x", &chain), Ok(Value::Int(terms as i64)));
    let vars: Vec<String> = (0..terms).map(|i| format!(":v{i}")).collect();
    let mut client = Client::new();
    for i in 0..terms {
        client.vars.insert(format!("v{i}"), Value::Int(2));
    }
    assert_eq!(
        client.set("x", &vars.join(" + ")),
        Ok(Value::Int(2 * terms as i64))
    );
    let ands = "true and ".repeat(terms / 2) + "false";
    assert_eq!(Client::new().set("x", &ands), Ok(Value::Bool(false)));
    // `>` moves its left side; a chain of them is refused before it turns quadratic.
    let swaps = "1".to_string() + &" > 1 is null".repeat(MAX_OPS / 5);
    assert!(parse_error(&swaps).starts_with("expression too long"));
    let many_swaps = "1".to_string() + &" > 1 is null".repeat(200) + " > 1";
    assert_eq!(
        Client::new().set("x", &many_swaps),
        Err("E cannot coerce boolean to int".to_string())
    );
}

#[test]
fn huge_literals_and_arithmetic_traps_are_errors() {
    let long_int = "9".repeat(100_000);
    assert!(parse_error(&long_int).starts_with("bigint constant overflow"));
    let long_double = format!("{}.5", "9".repeat(400));
    assert!(parse_error(&long_double).starts_with("double constant overflow"));
    let long_exponent = format!("1e{}", "9".repeat(50));
    assert!(parse_error(&long_exponent).starts_with("double constant overflow"));
    let tiny = format!("0.{}1", "0".repeat(100_000));
    assert!(parse_error(&tiny).starts_with("double constant overflow"));
    let zeros = format!("0.{}", "0".repeat(100_000));
    assert_eq!(Client::new().set("x", &zeros), Ok(Value::Double(0.0)));
    for (text, want) in [
        ("-9223372036854775808 / -1", "E bigint div out of range"),
        ("1 / 0", "E division by zero"),
        ("1 % 0", "E division by zero"),
        (
            "int(1e300)",
            "E double to int overflow for 1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160.000000",
        ),
        (
            "9223372036854775807 * 9223372036854775807",
            "E bigint mul out of range",
        ),
        (
            "random(1, 2, 3)",
            "P 14 unexpected number of arguments (random)",
        ),
    ] {
        assert_eq!(
            Client::new().set("x", text),
            Err(want.to_string()),
            "{text}"
        );
    }
}

#[test]
fn a_newline_ends_the_expression_and_stray_bytes_are_errors() {
    assert_eq!(Client::new().set("x", "1 + 2\n* 3"), Ok(Value::Int(3)));
    assert_eq!(Client::new().set("x", "1 + \\\n2"), Ok(Value::Int(3)));
    assert_eq!(
        Client::new().set("x", ""),
        Err("P 0 syntax error".to_string())
    );
    assert_eq!(
        Client::new().set("x", "1 \u{0} 2"),
        Err("P 2 unexpected character (\u{0})".to_string())
    );
    assert!(Expr::parse("é(1)").is_err());
    assert!(Expr::parse(":é").is_ok());
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    /// Pieces of the language, so random strings reach deep into the grammar.
    fn piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "1",
            "0",
            "-",
            "+",
            "*",
            "/",
            "%",
            "(",
            ")",
            ",",
            "<",
            ">",
            "=",
            "<=",
            ">=",
            "<>",
            "!=",
            "&",
            "|",
            "#",
            "~",
            "<<",
            ">>",
            " and ",
            " or ",
            " not ",
            " is ",
            " null ",
            " true ",
            " false ",
            " isnull ",
            " notnull ",
            "case ",
            " when ",
            " then ",
            " else ",
            " end",
            "abs(",
            "least(",
            "hash(",
            "permute(",
            "random(",
            "random_zipfian(",
            "random_gaussian(",
            "random_exponential(",
            "int(",
            "pi()",
            "pow(",
            "mod(",
            ":x",
            ":default_seed",
            "1.5",
            ".5",
            "1e3",
            "9223372036854775807",
            "9223372036854775808",
            "1e309",
            " ",
            "\\\n",
            "\n",
            "é",
            "$",
            "'",
        ])
    }

    proptest! {
        #[test]
        fn parsing_and_evaluating_any_text_never_panics(text in ".{0,200}") {
            if let Ok(e) = Expr::parse(&text) {
                let _ = e.eval(&mut Client::new());
            }
        }

        #[test]
        fn parsing_and_evaluating_token_soup_never_panics(
            pieces in prop::collection::vec(piece(), 0..60),
        ) {
            let text: String = pieces.concat();
            if let Ok(e) = Expr::parse(&text) {
                let mut client = Client::new();
                client.vars.insert("x".to_string(), Value::Double(2.5));
                let _ = e.eval(&mut client);
            }
        }
    }
}
