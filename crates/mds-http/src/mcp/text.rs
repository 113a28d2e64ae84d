//! A tool result's text content (contract section 12.1): the route's
//! answer, compact, for a model to read; `structuredContent` carries it in
//! full. A page (an object whose `data` is a list of objects) or a price
//! series (whose `bars` is) is a table:
//! a header line of the columns, then one line per row, cells separated by
//! a tab, empty for a null, and a column null in every row left out; then
//! the answer's other members (a page's `has_more` and `next_cursor`, a
//! series' `isin`, `adjust` and `adjustments`) as one line of JSON. Anything else is compact JSON without its null members.

use serde_json::{Map, Value};

/// The members whose list of objects is an answer's table: a page's rows,
/// a price series' bars.
const TABLES: &[&str] = &["data", "bars"];

/// The text of `answer`.
pub fn compact(answer: &Value) -> String {
    for &member in TABLES {
        match answer.get(member).and_then(Value::as_array) {
            Some(rows) if rows.iter().all(Value::is_object) => return table(answer, member, rows),
            _ => {}
        }
    }
    without_nulls(answer).to_string()
}

/// `rows` (the answer's `member`) as a table, then the answer's other
/// members.
fn table(page: &Value, member: &str, rows: &[Value]) -> String {
    let mut columns: Vec<&str> = Vec::new();
    for row in rows.iter().filter_map(Value::as_object) {
        for (k, v) in row {
            if !v.is_null() && !columns.contains(&k.as_str()) {
                columns.push(k);
            }
        }
    }
    let mut out = columns.join("\t");
    for row in rows {
        out.push('\n');
        let cells: Vec<String> = columns.iter().map(|c| cell(&row[*c])).collect();
        out.push_str(&cells.join("\t"));
    }
    let rest: Map<String, Value> = page
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| *k != member && !v.is_null())
        .map(|(k, v)| (k.clone(), without_nulls(v)))
        .collect();
    if !rest.is_empty() {
        out.push('\n');
        out.push_str(&Value::Object(rest).to_string());
    }
    out
}

/// One cell: empty for null, a string as is unless it holds a tab, a line
/// break or a quote at its start (then as JSON), anything else compact
/// JSON.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) if !s.contains(['\t', '\n', '\r']) && !s.starts_with('"') => s.clone(),
        other => without_nulls(other).to_string(),
    }
}

/// `v` without its objects' null members.
fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), without_nulls(v))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_page_is_a_table_and_the_rest_compact_json() {
        let page = json!({
            "data": [
                {"isin": "A", "name": "Acme\tLtd", "logo": null, "sector": null, "listings": ["nse"]},
                {"isin": "B", "name": "Beta", "logo": null, "sector": "Banks", "listings": []},
            ],
            "has_more": true,
            "next_cursor": "c1",
            "hint": null,
        });
        assert_eq!(
            compact(&page),
            "isin\tlistings\tname\tsector\nA\t[\"nse\"]\t\"Acme\\tLtd\"\t\nB\t[]\tBeta\tBanks\n{\"has_more\":true,\"next_cursor\":\"c1\"}"
        );
        assert_eq!(compact(&json!({"a": null, "b": {"c": null, "d": 1}})), r#"{"b":{"d":1}}"#);
    }

    #[test]
    fn a_series_bars_are_a_table() {
        let series = json!({
            "isin": "INE592B01024",
            "adjust": "split",
            "bars": [
                {"date": "2025-02-11", "close": 14.529, "delivery_qty": null},
                {"date": "2025-02-12", "close": 14.01, "delivery_qty": null},
            ],
            "adjustments": [{"ex_date": "2025-02-12", "factor": 0.1}],
        });
        assert_eq!(
            compact(&series),
            "close\tdate\n14.529\t2025-02-11\n14.01\t2025-02-12\n\
             {\"adjust\":\"split\",\"adjustments\":[{\"ex_date\":\"2025-02-12\",\"factor\":0.1}],\"isin\":\"INE592B01024\"}"
        );
    }
}
