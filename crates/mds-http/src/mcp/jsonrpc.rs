//! JSON-RPC 2.0 as MCP uses it: one message at a time (MCP 2025-06-18
//! removed batches, so an array is refused as an invalid request), a
//! request with an `id` is answered, a notification is not, and a
//! response sent to us (we send no requests) is ignored.

use serde_json::{Map, Value, json};

/// Invalid JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON, but not a JSON-RPC 2.0 message (or a batch).
pub const INVALID_REQUEST: i64 = -32600;
/// No such method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// The method's parameters are wrong (an unknown tool, a missing argument).
pub const INVALID_PARAMS: i64 = -32602;

/// One message read from a client.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// A request, to answer with its `id`.
    Request {
        /// Its id (a string or a number), echoed in the answer.
        id: Value,
        /// The method.
        method: String,
        /// Its parameters (an empty object when none were sent).
        params: Map<String, Value>,
    },
    /// A notification (no `id`) or a response: nothing to answer.
    Silent,
    /// Not a message we can read: the error to answer with (id `null`, or
    /// the request's when it had a readable one).
    Invalid(Value),
}

impl Incoming {
    /// Reads one message from `bytes`.
    pub fn read(bytes: &[u8]) -> Incoming {
        let value: Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(_) => return Incoming::Invalid(error(Value::Null, PARSE_ERROR, "the message is not valid JSON")),
        };
        let Value::Object(mut m) = value else {
            let why = if value.is_array() {
                "batches are not supported (MCP 2025-06-18 removed them): send one message per request"
            } else {
                "a message is a JSON-RPC 2.0 object"
            };
            return Incoming::Invalid(error(Value::Null, INVALID_REQUEST, why));
        };
        let id = m.remove("id");
        let readable_id = id.clone().filter(|i| i.is_string() || i.is_number());
        if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Incoming::Invalid(error(
                readable_id.unwrap_or(Value::Null),
                INVALID_REQUEST,
                "jsonrpc must be \"2.0\"",
            ));
        }
        let method = match m.remove("method") {
            Some(Value::String(s)) => s,
            // A response (`result` or `error`) to a request we never send.
            None if id.is_some() && (m.contains_key("result") || m.contains_key("error")) => return Incoming::Silent,
            _ => {
                return Incoming::Invalid(error(
                    readable_id.unwrap_or(Value::Null),
                    INVALID_REQUEST,
                    "method must be a string",
                ));
            }
        };
        if id.is_none() {
            return Incoming::Silent;
        }
        let Some(id) = readable_id else {
            return Incoming::Invalid(error(Value::Null, INVALID_REQUEST, "id must be a string or a number"));
        };
        match m.remove("params") {
            None | Some(Value::Null) => Incoming::Request { id, method, params: Map::new() },
            Some(Value::Object(params)) => Incoming::Request { id, method, params },
            Some(_) => Incoming::Invalid(error(id, INVALID_PARAMS, "params must be an object")),
        }
    }
}

/// The answer to request `id`: `result`.
pub fn result(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// The error answer to request `id` (`null` when it could not be read).
pub fn error(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(i: &Incoming) -> Option<i64> {
        match i {
            Incoming::Invalid(e) => e["error"]["code"].as_i64(),
            _ => None,
        }
    }

    #[test]
    fn reads_requests_notifications_and_refuses_the_rest() {
        let r = Incoming::read(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#);
        assert_eq!(r, Incoming::Request { id: json!(7), method: "ping".into(), params: Map::new() });
        assert_eq!(Incoming::read(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), Incoming::Silent);
        assert_eq!(Incoming::read(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#), Incoming::Silent);
        assert_eq!(code(&Incoming::read(b"{nope")), Some(PARSE_ERROR));
        assert_eq!(code(&Incoming::read(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)), Some(INVALID_REQUEST));
        assert_eq!(code(&Incoming::read(br#"{"id":1,"method":"ping"}"#)), Some(INVALID_REQUEST));
        assert_eq!(code(&Incoming::read(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#)), Some(INVALID_REQUEST));
        assert_eq!(
            code(&Incoming::read(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#)),
            Some(INVALID_PARAMS)
        );
    }
}
