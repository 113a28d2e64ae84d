//! A tool call's arguments checked against the tool's input schema before
//! any route is called (contract section 12.1, the MCP spec's SEP-1303):
//! an unknown argument, a missing required one or one of the wrong type
//! is a [`Problem`] naming it, which the tool answers as a result with
//! `isError`, so the model can correct itself. Nothing is coerced: a
//! number is not a string, and a string not a number; an integral float
//! (`5.0`) is the integer it equals. `null` is an argument left out. The
//! values (patterns, ranges) are the route's to judge, as for a REST
//! client.

use mds_domain::{ErrorCode, Problem};
use serde_json::{Map, Value};

/// The most characters of a bad value a problem echoes.
pub const ECHOED: usize = 100;

/// `args` checked against `schema` (a tool's `inputSchema`): the
/// arguments to call the route with (nulls dropped, integral floats made
/// integers), or the problem with the first bad one.
pub fn check(args: &Map<String, Value>, schema: &Value) -> Result<Map<String, Value>, Box<Problem>> {
    let properties = schema["properties"].as_object();
    let mut out = Map::new();
    for (name, value) in args {
        let Some(declared) = properties.and_then(|p| p.get(name)) else {
            let known: Vec<&str> = properties.into_iter().flat_map(|p| p.keys().map(String::as_str)).collect();
            let takes = if known.is_empty() { "none".to_owned() } else { format!("`{}`", known.join("`, `")) };
            return Err(problem(
                ErrorCode::UnknownParameter,
                name,
                format!("this tool has no argument `{}`; its arguments: {takes}", brief(&Value::String(name.clone()))),
            ));
        };
        if value.is_null() {
            continue;
        }
        let value = typed(name, value, declared)?;
        out.insert(name.clone(), value);
    }
    for name in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        match out.get(name) {
            Some(Value::String(s)) if s.is_empty() => {
                return Err(problem(ErrorCode::InvalidParameter, name, format!("argument `{name}` must not be empty")));
            }
            Some(_) => {}
            None => {
                return Err(problem(ErrorCode::InvalidParameter, name, format!("argument `{name}` is required")));
            }
        }
    }
    Ok(out)
}

/// `value` if it has the type `declared` states (an integral float made
/// the integer it equals), else the problem naming argument `name`.
fn typed(name: &str, value: &Value, declared: &Value) -> Result<Value, Box<Problem>> {
    let Some(want) = type_of(declared) else { return Ok(value.clone()) };
    let ok = match (want, value) {
        ("string", Value::String(_)) | ("boolean", Value::Bool(_)) | ("number", Value::Number(_)) => {
            Some(value.clone())
        }
        ("integer", Value::Number(n)) => integral(n),
        _ => None,
    };
    ok.ok_or_else(|| {
        let article = if want == "integer" { "an" } else { "a" };
        problem(
            ErrorCode::InvalidParameter,
            name,
            format!("argument `{name}` must be {article} {want}, not {} ({})", kind(value), brief(value)),
        )
    })
}

/// `n` as an integer when it is one (`5`, `5.0`), else `None`.
fn integral(n: &serde_json::Number) -> Option<Value> {
    if n.is_i64() || n.is_u64() {
        return Some(Value::Number(n.clone()));
    }
    let f = n.as_f64()?;
    // Within ±2^53 a float is exactly the integer it prints as.
    (f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0).then(|| Value::from(f as i64))
}

/// The JSON type a property's schema declares (through a one-member
/// `oneOf`/`allOf`, as a referenced enumeration is written), if one.
fn type_of(schema: &Value) -> Option<&str> {
    if let Some(t) = schema["type"].as_str() {
        return Some(t);
    }
    ["oneOf", "allOf", "anyOf"]
        .iter()
        .find_map(|k| schema[k].as_array().filter(|a| a.len() == 1).and_then(|a| type_of(&a[0])))
}

/// What `value` is, in the schema's words.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a fractional number",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `value` as compact JSON, cut to its first [`ECHOED`] characters (an
/// argument may be as large as a message).
pub fn brief(value: &Value) -> String {
    prefix(&value.to_string())
}

/// `text` cut to its first [`ECHOED`] characters, saying how long it was.
pub fn prefix(text: &str) -> String {
    match text.char_indices().nth(ECHOED) {
        Some((end, _)) => format!("{}… ({} characters)", &text[..end], text.chars().count()),
        None => text.to_owned(),
    }
}

/// The problem `code` naming argument `param`.
fn problem(code: ErrorCode, param: &str, detail: String) -> Box<Problem> {
    let mut p = Problem::new(code, detail);
    p.param = Some(brief(&Value::String(param.to_owned())).trim_matches('"').to_owned());
    Box::new(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "isin": {"type": "string"},
                "limit": {"type": "integer"},
                "history": {"type": "boolean"},
                "exchange": {"oneOf": [{"type": "string", "enum": ["bse", "nse"]}]},
            },
            "required": ["isin"],
        })
    }

    fn run(v: Value) -> Result<Value, (String, String)> {
        check(v.as_object().unwrap(), &schema())
            .map(Value::Object)
            .map_err(|p| (p.code.clone(), p.param.clone().unwrap_or_default()))
    }

    #[test]
    fn refuses_what_breaks_the_schema_and_coerces_nothing() {
        assert_eq!(run(json!({"isin": "X", "tag": null})).unwrap_err().0, "unknown_parameter");
        assert_eq!(run(json!({"isin": "X", "limit": 5.0})).unwrap(), json!({"isin": "X", "limit": 5}));
        assert_eq!(run(json!({"isin": "X", "limit": null})).unwrap(), json!({"isin": "X"}));
        assert_eq!(run(json!({"isin": 12345})).unwrap_err(), ("invalid_parameter".into(), "isin".into()));
        assert_eq!(run(json!({"isin": "X", "limit": 5.5})).unwrap_err(), ("invalid_parameter".into(), "limit".into()));
        assert_eq!(run(json!({"isin": "X", "limit": "5"})).unwrap_err().1, "limit");
        assert_eq!(run(json!({"isin": "X", "history": "yes"})).unwrap_err().1, "history");
        assert_eq!(run(json!({"isin": "X", "exchange": 1})).unwrap_err().1, "exchange");
        assert_eq!(run(json!({})).unwrap_err(), ("invalid_parameter".into(), "isin".into()));
        assert_eq!(run(json!({"isin": ""})).unwrap_err().1, "isin");
        assert_eq!(run(json!({"isin": "X", "nope": 1})).unwrap_err(), ("unknown_parameter".into(), "nope".into()));
    }

    #[test]
    fn echoes_a_short_prefix_of_a_large_value() {
        let big = "9".repeat(70_000);
        let p = check(json!({"isin": "X", "history": big}).as_object().unwrap(), &schema()).unwrap_err();
        assert!(p.detail.len() < 300, "{}", p.detail.len());
        assert!(p.detail.contains("70002 characters"), "{}", p.detail);
    }
}
