//! The protocol, the same on both transports: [`handle`] answers one
//! message. The server is stateless: it issues no session id, keeps nothing
//! between messages and sends nothing of its own accord, so `initialize`
//! is answered but not required before the other requests.

use serde_json::{Value, json};

use super::jsonrpc::{self, INVALID_PARAMS, Incoming, METHOD_NOT_FOUND};
use super::tools::{self, Upstream};
use super::{ACCEPTED_VERSIONS, PROTOCOL_VERSION};

/// What the server tells an agent on `initialize`.
const INSTRUCTIONS: &str = "Market data on listed Indian companies (NSE, BSE) and news about them. \
     Find a company with search_companies or resolve_symbol, read it with get_company (its ISIN), its \
     news with list_news (newest first) or search_news (full text, most relevant first) and \
     get_article. Every call but get_usage counts one request against the \
     API key's monthly quota, exactly as the REST route it stands for; get_usage shows what is left. \
     A tool result with isError carries the API's problem (its `code` and `detail` say what to fix).";

/// Answers the message in `bytes`: the answer to send, or `None` for a
/// notification or a response (nothing to send).
pub async fn handle<U: Upstream>(bytes: &[u8], upstream: &U) -> Option<Value> {
    let (id, method, params) = match Incoming::read(bytes) {
        Incoming::Request { id, method, params } => (id, method, params),
        Incoming::Silent => return None,
        Incoming::Invalid(error) => return Some(error),
    };
    Some(match method.as_str() {
        "initialize" => {
            // The client's version when we speak it, else ours (the client
            // then decides whether to go on).
            let asked = params.get("protocolVersion").and_then(Value::as_str);
            let version = asked.filter(|v| ACCEPTED_VERSIONS.contains(v)).unwrap_or(PROTOCOL_VERSION);
            jsonrpc::result(
                id,
                json!({
                    "protocolVersion": version,
                    "capabilities": { "tools": { "listChanged": false } },
                    "serverInfo": { "name": "mds", "title": "mds market data", "version": env!("CARGO_PKG_VERSION") },
                    "instructions": INSTRUCTIONS,
                }),
            )
        }
        "ping" => jsonrpc::result(id, json!({})),
        "tools/list" => jsonrpc::result(id, tools::list().clone()),
        "tools/call" => {
            let Some(tool) = params.get("name").and_then(Value::as_str).and_then(tools::find) else {
                return Some(jsonrpc::error(id, INVALID_PARAMS, "unknown tool: see tools/list for the tools"));
            };
            let args = match params.get("arguments") {
                None | Some(Value::Null) => serde_json::Map::new(),
                Some(Value::Object(a)) => a.clone(),
                Some(_) => return Some(jsonrpc::error(id, INVALID_PARAMS, "arguments must be an object")),
            };
            jsonrpc::result(id, tool.call(&args, upstream).await)
        }
        _ => jsonrpc::error(id, METHOD_NOT_FOUND, "method not found: this server has tools only"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::tools::Reply;

    /// Answers every request `404` with a problem, and records nothing.
    struct NotFound;

    impl Upstream for NotFound {
        async fn get(&self, _: &str) -> Result<Reply, String> {
            Ok(Reply { status: 404, body: br#"{"code":"not_found","status":404}"#.to_vec() })
        }
    }

    fn run(msg: &str) -> Option<Value> {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(handle(msg.as_bytes(), &NotFound))
    }

    #[test]
    fn answers_the_protocol() {
        let init = run(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2099-01-01"}}"#);
        assert_eq!(init.unwrap()["result"]["protocolVersion"], PROTOCOL_VERSION);
        assert_eq!(run(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), None);
        assert_eq!(run(r#"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#).unwrap()["error"]["code"], -32601);
        let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_article","arguments":{"slug":"x"}}}"#;
        let r = run(call).unwrap();
        assert_eq!(r["id"], 3);
        assert_eq!(r["result"]["isError"], true);
        assert_eq!(r["result"]["structuredContent"]["code"], "not_found");
        let unknown = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}"#;
        assert_eq!(run(unknown).unwrap()["error"]["code"], -32602);
        // Arguments breaking the input schema: a tool result naming the
        // argument, not a protocol error.
        let wrong = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_company","arguments":{"isin":12345}}}"#;
        let r = run(wrong).unwrap();
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert_eq!(r["result"]["structuredContent"]["param"], "isin", "{r}");
    }
}
