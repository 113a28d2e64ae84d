//! The tools ([`TOOLS`]): each stands for one route of the route table and
//! is defined from it. Its input schema is the route's parameters as the
//! OpenAPI document states them ([`crate::routes::document_json`]; the
//! `$ref`s inlined, since a tool's schema stands alone), so a parameter is
//! described once, for the REST clients and the agents alike; its
//! description is what the tool is for, then the operation's own
//! description (which says how the route counts). A call becomes the
//! route's `GET` request (the arguments named as the route's parameters:
//! path parameters into the path, the rest into the query), made by an
//! [`Upstream`]; the route's answer becomes the tool's result (its
//! `outputSchema` the route's `200` schema, its text [`super::text`]), a
//! `4xx` (or any failure) a result with `isError: true` carrying the
//! problem. Arguments that break the input schema are such a result too,
//! and call no route ([`super::arguments`]).

use std::future::Future;
use std::sync::LazyLock;

use serde_json::{Map, Value, json};

use super::arguments;
use super::text;
use crate::routes;
use mds_domain::{ErrorCode, Problem};

/// What makes a tool call's requests: a route's `GET` to the service, with
/// the caller's key.
pub trait Upstream: Sync {
    /// `GET path_and_query` (`/v1/companies?limit=5`): the route's answer,
    /// or why none came (the service could not be reached).
    fn get(&self, path_and_query: &str) -> impl Future<Output = Result<Reply, String>> + Send;
}

/// A route's answer.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The body (JSON: the route's answer, or a problem).
    pub body: Vec<u8>,
}

/// A tool.
#[derive(Debug)]
pub struct Tool {
    /// Its name (`search_companies`).
    pub name: &'static str,
    /// Its title, for people.
    pub title: &'static str,
    /// The `operationId` of the route it stands for (a row of
    /// [`routes::ROUTES`], where its template is written).
    pub operation: &'static str,
    /// What it is for, in the words an agent chooses a tool by.
    pub guide: &'static str,
    /// A second route the tool may also call, asked for by a boolean
    /// argument.
    pub also: Option<Also>,
    /// The route the tool calls instead when the path parameter of
    /// [`Tool::route`] is not given (its arguments are then that route's).
    pub otherwise: Option<Otherwise>,
    /// Arguments the tool requires that its route leaves optional
    /// (`search_news`: `q`).
    pub requires: &'static [&'static str],
}

/// The route a tool calls when its `route`'s path parameter is left out:
/// `list_corporate_actions` is a company's actions with `isin`, the
/// calendar without.
#[derive(Debug)]
pub struct Otherwise {
    /// The path parameter that chooses (`isin`).
    pub argument: &'static str,
    /// The `operationId` of the route called without it.
    pub operation: &'static str,
}

/// A second route a tool calls when its boolean argument is `true`, with
/// the same path parameters; its answer goes in the result under the
/// argument's name.
#[derive(Debug)]
pub struct Also {
    /// The argument (and the result's member): `history`.
    pub argument: &'static str,
    /// The route's `operationId`.
    pub operation: &'static str,
    /// What the route answers, in the argument's description ("the
    /// company's identity history").
    pub what: &'static str,
}

impl Tool {
    /// The template of the route it stands for.
    pub fn route(&self) -> &'static str {
        routes::path_of(self.operation)
    }
}

impl Otherwise {
    /// The template of the route called without the argument.
    pub fn route(&self) -> &'static str {
        routes::path_of(self.operation)
    }
}

impl Also {
    /// The template of the route.
    pub fn route(&self) -> &'static str {
        routes::path_of(self.operation)
    }

    /// The argument's description.
    pub fn description(&self) -> String {
        format!(
            "Also return {} (the API's `{}`) under `{}`: one more request, counted as that route. Default false.",
            self.what,
            self.route(),
            self.argument
        )
    }
}

/// Every tool (contract section 12).
pub static TOOLS: &[Tool] = &[
    Tool {
        name: "search_companies",
        title: "Search companies",
        operation: "listCompanies",
        guide: "Find listed Indian companies (NSE, BSE) by ticker, by a substring of name or ticker, \
                by industry, exchange, market-capitalisation band, first letter or status, optionally \
                as they stood at the end of a past day (`as_of`). Answers one page: `data`, `has_more` \
                and `next_cursor`; for the next page call again with `cursor` set to `next_cursor` \
                and the same filters.",
        also: None,
        otherwise: None,
        requires: &[],
    },
    Tool {
        name: "get_company",
        title: "Get a company",
        operation: "getCompany",
        guide: "One company by its ISIN: name, ticker, listings, classification, market cap, status \
                and what superseded it, optionally as it stood at the end of a past day (`as_of`). \
                With `history: true` the result also has its identity history (symbol and name \
                changes, listings and delistings, supersessions) under `history`.",
        also: Some(Also {
            argument: "history",
            operation: "getCompanyHistory",
            what: "the company's identity history",
        }),
        otherwise: None,
        requires: &[],
    },
    Tool {
        name: "resolve_symbol",
        title: "Resolve a symbol",
        operation: "getSymbol",
        guide: "Which companies (ISINs) carried an NSE symbol or a BSE security id, and over which \
                days: resolves a ticker, a current or an old one, to the company behind it.",
        also: None,
        otherwise: None,
        requires: &[],
    },
    Tool {
        name: "list_news",
        title: "List news",
        operation: "listNews",
        guide: "News articles about listed companies, newest first, filtered by company (`isin` or \
                `ticker`), category, tag or publication window. Answers one page of summaries; for \
                the next page call again with `cursor` set to `next_cursor` and the same filters; \
                an article's full text is `get_article` with its `slug`.",
        also: None,
        otherwise: None,
        requires: &[],
    },
    Tool {
        name: "search_news",
        title: "Search news",
        operation: "listNews",
        guide: "Full-text search of news articles about listed companies: `q` is matched against \
                each article's headline, sub-headline, excerpt and body. Every word of `q` must \
                appear; put words in double quotes for an exact phrase (`\"net profit\"`); end a word \
                with `*` for any word beginning so (`infra*`); case and accents do not matter. The \
                most relevant come first (BM25: a match in the headline weighs most); \
                `sort: \"published_at\"` gives the newest first instead. Combine with `isin`, \
                `ticker`, `category`, `tag` and the publication window to narrow it. Answers one \
                page of summaries; for the next page call again with `cursor` set to `next_cursor` \
                and the same arguments; an article's full text is `get_article` with its `slug`.",
        also: None,
        otherwise: None,
        requires: &["q"],
    },
    Tool {
        name: "get_article",
        title: "Get an article",
        operation: "getArticle",
        guide: "One news article, with its full text, by its slug (as `list_news` gives it).",
        also: None,
        otherwise: None,
        requires: &[],
    },
    Tool {
        name: "list_corporate_actions",
        title: "List corporate actions",
        operation: "listCompanyActions",
        guide: "Corporate actions of Indian listed companies (splits, bonuses, dividends, rights, \
                buybacks, demergers), typed, with the exchange's own text and the price adjustment \
                `factor`, merged across NSE and BSE. With `isin`: that company's actions, newest \
                first, with (`lineage`, default true) those of the ISINs it replaced, bounded by \
                `from` and `to`, all at once. Without `isin`: the calendar of every company's \
                actions, oldest ex-date first, bounded by `ex_date_from` and `ex_date_to`, one page \
                at a time (`data`, `has_more`, `next_cursor`; for the next page call again with \
                `cursor` set to `next_cursor` and the same filters). `type` works both ways.",
        also: None,
        otherwise: Some(Otherwise { argument: "isin", operation: "listActions" }),
        requires: &[],
    },
    Tool {
        name: "get_prices",
        title: "Get prices",
        operation: "listCompanyPrices",
        guide: "End-of-day prices (NSE daily bars: open, high, low, close, volume, turnover, trades, \
                delivery) of one security by its ISIN, oldest first, from `from` to `to` (by default \
                the year to the last day loaded). `adjust` is `split` by default (prices before a \
                split, consolidation or bonus multiplied by its factor, so the series is comparable \
                across it), `total` also adjusts for dividends and rights, `none` gives the prices \
                as published. With `lineage` (default true) the series continues through the ISINs \
                this one replaced, each bar naming its `isin`. `adjustments` lists every factor \
                applied (the action in `list_corporate_actions`). Days without trading have no bar.",
        also: None,
        otherwise: None,
        requires: &[],
    },
    Tool {
        name: "get_usage",
        title: "Get usage",
        operation: "getUsage",
        guide: "How much of the calling API key's monthly quota is used and how much remains, and \
                its per-minute limit: check it before a long walk through pages.",
        also: None,
        otherwise: None,
        requires: &[],
    },
];

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The answer to `tools/list`: every tool's definition, made once from
/// the OpenAPI document.
pub fn list() -> &'static Value {
    static LIST: LazyLock<Value> = LazyLock::new(|| {
        let doc: Value = serde_json::from_str(routes::document_json()).expect("the OpenAPI document is JSON");
        json!({ "tools": TOOLS.iter().map(|t| t.definition(&doc)).collect::<Vec<_>>() })
    });
    &LIST
}

impl Tool {
    /// Its definition in `tools/list`, from the OpenAPI document `doc`.
    fn definition(&self, doc: &Value) -> Value {
        let schemas = &doc["components"]["schemas"];
        let mut properties = Map::new();
        let mut required = Vec::new();
        let params = |route: &str| doc["paths"][route]["get"]["parameters"].as_array().cloned().unwrap_or_default();
        let named = |ps: &[Value], name: &str| ps.iter().any(|p| p["name"] == name);
        let (own, other) = (params(self.route()), self.otherwise.as_ref().map(|o| params(o.route())));
        let both: Vec<(&Value, Option<String>)> = match (&other, &self.otherwise) {
            (Some(other), Some(o)) => own
                .iter()
                .map(|p| {
                    let only = p["name"] != o.argument && !named(other, p["name"].as_str().unwrap_or_default());
                    (p, only.then(|| format!("With `{}`: ", o.argument)))
                })
                .chain(
                    other
                        .iter()
                        .filter(|p| !named(&own, p["name"].as_str().unwrap_or_default()))
                        .map(|p| (p, Some(format!("Without `{}`: ", o.argument)))),
                )
                .collect(),
            _ => own.iter().map(|p| (p, None)).collect(),
        };
        for (p, only) in both {
            let Some(name) = p["name"].as_str() else { continue };
            let mut schema = inline(&p["schema"], schemas);
            if let Value::Object(s) = &mut schema {
                if let Some(d) = p["description"].as_str() {
                    let d = for_a_model(d);
                    let d = match (&self.otherwise, only) {
                        (_, Some(only)) => format!("{only}{d}"),
                        (Some(o), None) if name == o.argument => {
                            format!("{d} Leave it out for every company's actions (the calendar).")
                        }
                        _ => d,
                    };
                    s.insert("description".into(), d.into());
                }
                if let Some(e) = p.get("example") {
                    s.insert("examples".into(), json!([e]));
                }
            }
            if properties.contains_key(name) {
                continue;
            }
            properties.insert(name.into(), schema);
            let chooses = self.otherwise.as_ref().is_some_and(|o| o.argument == name);
            if (p["required"] == true || self.requires.contains(&name)) && !chooses {
                required.push(name.to_owned());
            }
        }
        if let Some(also) = &self.also {
            properties.insert(
                also.argument.into(),
                json!({ "type": "boolean", "default": false, "description": also.description() }),
            );
        }
        let mut input = json!({ "type": "object", "properties": properties, "additionalProperties": false });
        if !required.is_empty() {
            input["required"] = json!(required);
        }
        let said = |route: &str| {
            let op = &doc["paths"][route]["get"];
            let summary = op["summary"].as_str().unwrap_or_default();
            format!("{summary} (the API's `{route}`). {}", for_a_model(op["description"].as_str().unwrap_or_default()))
        };
        let mut described = said(self.route());
        if let Some(o) = &self.otherwise {
            described = format!("With `{}`: {described}\n\nWithout it: {}", o.argument, said(o.route()));
        }
        json!({
            "name": self.name,
            "title": self.title,
            "description": format!("{}\n\n{described}", self.guide),
            "inputSchema": input,
            "outputSchema": self.output_schema(doc),
            "annotations": { "title": self.title, "readOnlyHint": true, "idempotentHint": true, "openWorldHint": false },
        })
    }

    /// The schema of the tool's `structuredContent`: the route's `200`
    /// answer as the OpenAPI document states it, with the [`Also`] route's
    /// under its argument's name.
    fn output_schema(&self, doc: &Value) -> Value {
        let schemas = &doc["components"]["schemas"];
        let answer = |route: &str| {
            inline(&doc["paths"][route]["get"]["responses"]["200"]["content"]["application/json"]["schema"], schemas)
        };
        let mut out = answer(self.route());
        if let Some(o) = &self.otherwise {
            out = merged(out, answer(o.route()));
        }
        // MCP wants an object schema at the top (a detail is an `allOf`).
        if let Value::Object(m) = &mut out {
            m.entry("type").or_insert_with(|| "object".into());
        }
        if let Some(a) = &self.also {
            let mut also = answer(a.route());
            if let Value::Object(m) = &mut also {
                m.insert("description".into(), a.description().into());
            }
            out["properties"][a.argument] = also;
        }
        out
    }

    /// Its input schema (in [`list`]).
    fn input_schema(&self) -> &'static Value {
        let tools = list()["tools"].as_array().expect("tools/list has tools");
        &tools.iter().find(|t| t["name"] == self.name).expect("every tool is listed")["inputSchema"]
    }

    /// The requests a call with `args` makes: the route's, then the
    /// [`Also`] route's when asked for; or why the arguments cannot make
    /// one (a path parameter missing, a value that is not a scalar).
    pub fn requests(&self, args: &Map<String, Value>) -> Result<Vec<String>, String> {
        let route = match &self.otherwise {
            Some(o) if args.get(o.argument).is_none_or(Value::is_null) => o.route(),
            _ => self.route(),
        };
        let (path, in_path) = fill(route, args)?;
        let mut query = form_urlencoded::Serializer::new(String::new());
        let mut also = None;
        for (name, value) in args {
            if in_path.contains(&name.as_str()) {
                continue;
            }
            if let Some(a) = self.also.as_ref().filter(|a| a.argument == name) {
                match value {
                    Value::Bool(true) => also = Some(a),
                    Value::Bool(false) | Value::Null => {}
                    _ => return Err(format!("argument `{name}` must be true or false")),
                }
                continue;
            }
            if let Some(v) = scalar(name, value)? {
                query.append_pair(name, &v);
            }
        }
        let query = query.finish();
        let mut out = vec![if query.is_empty() { path } else { format!("{path}?{query}") }];
        if let Some(a) = also {
            out.push(fill(a.route(), args)?.0);
        }
        Ok(out)
    }

    /// Calls the tool with `args` through `upstream`: the tool's result;
    /// arguments that break the input schema are a result with `isError`
    /// and the problem naming the argument, and call no route.
    pub async fn call<U: Upstream>(&self, args: &Map<String, Value>, upstream: &U) -> Value {
        let requests = match arguments::check(args, self.input_schema()).and_then(|args| {
            self.requests(&args).map_err(|why| Box::new(Problem::new(ErrorCode::InvalidParameter, why)))
        }) {
            Ok(r) => r,
            Err(problem) => return refused(&problem),
        };
        let mut answer: Option<Value> = None;
        for request in &requests {
            let reply = match upstream.get(request).await {
                Ok(r) => r,
                // Cut: a request that could not be made may quote itself.
                Err(why) => return refused(&Problem::new(ErrorCode::Unavailable, arguments::prefix(&why))),
            };
            let body = match serde_json::from_slice::<Value>(&reply.body) {
                Ok(v) if v.is_object() => v,
                // Not JSON (a proxy's page): a problem quoting its start.
                _ => {
                    let start = arguments::prefix(&String::from_utf8_lossy(&reply.body));
                    let mut p =
                        Problem::new(ErrorCode::Unavailable, format!("the API answered {} with {start}", reply.status));
                    p.status = reply.status;
                    return refused(&p);
                }
            };
            if !(200..300).contains(&reply.status) {
                return outcome(body, true);
            }
            answer = Some(match (answer, &self.also) {
                (None, _) => body,
                (Some(mut first), Some(a)) => {
                    first[a.argument] = body;
                    first
                }
                (Some(first), None) => first,
            });
        }
        outcome(answer.unwrap_or_else(|| json!({})), false)
    }
}

/// One object schema of two answers' (a tool that calls one route or
/// another): the properties of both, required what both require.
fn merged(mut a: Value, b: Value) -> Value {
    if let (Some(pa), Some(pb)) = (a["properties"].as_object_mut(), b["properties"].as_object()) {
        for (k, v) in pb {
            pa.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    let both: Vec<Value> = a["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| b["required"].as_array().is_some_and(|rb| rb.contains(r)))
        .cloned()
        .collect();
    a["required"] = Value::Array(both);
    if let Value::Object(m) = &mut a {
        m.insert(
            "description".into(),
            "A company's actions (`isin`, `data`), or one page of the calendar (`data`, `has_more`, `next_cursor`)."
                .into(),
        );
    }
    a
}

/// A tool result refused with `problem` (no route answered it).
fn refused(problem: &Problem) -> Value {
    outcome(serde_json::to_value(problem).expect("a problem is JSON"), true)
}

/// A tool result: `structured` (an object, as MCP requires) as its
/// `structuredContent`, and compact as its text.
fn outcome(structured: Value, is_error: bool) -> Value {
    json!({
        "content": [{ "type": "text", "text": text::compact(&structured) }],
        "structuredContent": structured,
        "isError": is_error,
    })
}

/// An OpenAPI description said to a model calling a tool rather than to
/// an HTTP client: no URL encoding, no conditional requests, no query
/// strings.
fn for_a_model(text: &str) -> String {
    const REWRITES: &[(&str, &str)] = &[
        (
            "Counts against the monthly quota, whatever the outcome, except a `304` or a `5xx`.",
            "Counts one request against the API key's monthly quota, whatever the outcome, except a server error.",
        ),
        (" Takes no query parameters.", ""),
        (" (digits only, no sign, no leading zero)", ""),
        ("; send `+` as `%2B`", ""),
        ("`GET /v1/news/{slug}` gives an article with its body.", "`get_article` gives an article with its body."),
        (
            " With `Accept: text/csv` the answer is the bars as CSV: a header line of the bar's field names and a line \
             a bar (no adjustments), tagged apart from the JSON form.",
            "",
        ),
    ];
    REWRITES.iter().fold(text.to_owned(), |t, (from, to)| t.replace(from, to))
}

/// `template` with its `{name}`s replaced by the arguments of those
/// names, each a path segment, and the names it used.
fn fill<'t>(template: &'t str, args: &Map<String, Value>) -> Result<(String, Vec<&'t str>), String> {
    let mut path = String::new();
    let mut used = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = open + rest[open..].find('}').expect("templates close their braces");
        let name = &rest[open + 1..close];
        let value = args.get(name).map(|v| scalar(name, v)).transpose()?.flatten();
        let value = value.filter(|v| !v.is_empty()).ok_or_else(|| format!("argument `{name}` is required"))?;
        path.push_str(&rest[..open]);
        encode_segment(&value, &mut path);
        used.push(name);
        rest = &rest[close + 1..];
    }
    path.push_str(rest);
    Ok((path, used))
}

/// An argument's value as text (`None` for `null`, left out).
fn scalar(name: &str, value: &Value) -> Result<Option<String>, String> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        _ => Err(format!("argument `{name}` must be a string, a number or a boolean")),
    }
}

/// Appends `value` to `out` as one path segment: every byte but the
/// unreserved ones (RFC 3986) percent-encoded, so `M&M` or `a/b` stays one
/// segment.
fn encode_segment(value: &str, out: &mut String) {
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// `schema` with every `#/components/schemas/…` reference replaced by the
/// schema it names (its siblings, like a `description`, kept over it).
fn inline(schema: &Value, schemas: &Value) -> Value {
    match schema {
        Value::Object(m) => {
            let named = m.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/schemas/"));
            let mut out = match named {
                Some(name) => match inline(&schemas[name], schemas) {
                    Value::Object(o) => o,
                    _ => Map::new(),
                },
                None => Map::new(),
            };
            for (k, v) in m.iter().filter(|(k, _)| *k != "$ref") {
                out.insert(k.clone(), inline(v, schemas));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|v| inline(v, schemas)).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn every_tool_stands_for_a_documented_route() {
        let tools = list()["tools"].as_array().unwrap();
        assert_eq!(tools.len(), TOOLS.len());
        for (tool, def) in TOOLS.iter().zip(tools) {
            // Every operation a tool names is a row's (path_of panics otherwise).
            let (route, others) =
                (tool.route(), (tool.also.as_ref().map(Also::route), tool.otherwise.as_ref().map(Otherwise::route)));
            assert!(routes::ROUTES.iter().any(|r| r.path == route && r.operation.is_some()), "{}", tool.name);
            assert!(others.0.into_iter().chain(others.1).all(|p| p.starts_with("/v1/")), "{}", tool.name);
            let text = def.to_string();
            assert!(!text.contains("$ref"), "{}: {text}", tool.name);
            let described = def["description"].as_str().unwrap();
            assert!(described.contains(route));
            // Said to a model, not to an HTTP client.
            let said = format!("{described} {}", def["inputSchema"]);
            for http in ["304", "%2B", "digits only", "query parameter", "URL", "GET "] {
                assert!(!said.contains(http), "{}: {http:?} in {said}", tool.name);
            }
            let output = &def["outputSchema"];
            assert_eq!(output["type"], "object", "{}: {output}", tool.name);
            assert!(output["properties"].is_object() || output["allOf"].is_array(), "{}", tool.name);
        }
        assert!(tools[0]["outputSchema"]["properties"]["data"]["items"]["properties"]["isin"].is_object());
        assert!(tools[1]["outputSchema"]["properties"]["history"]["properties"].is_object());
        let company = &tools[1]["inputSchema"];
        assert_eq!(company["required"], json!(["isin"]));
        assert!(company["properties"]["as_of"]["description"].is_string());
        assert_eq!(company["properties"]["history"]["type"], "boolean");
        let search = &tools[0]["inputSchema"]["properties"];
        for p in
            ["search", "ticker", "industry", "exchange", "market_cap", "letter", "status", "as_of", "limit", "cursor"]
        {
            assert!(search[p].is_object(), "{p}");
        }
        assert!(search["exchange"]["enum"].is_array(), "{search}");
    }

    #[test]
    fn arguments_make_the_routes_requests() {
        let t = find("get_company").unwrap();
        assert_eq!(t.requests(&args(json!({"isin": "INE002A01018"}))).unwrap(), ["/v1/companies/INE002A01018"]);
        assert_eq!(
            t.requests(&args(json!({"isin": "INE002A01018", "as_of": "2020-01-01", "history": true}))).unwrap(),
            ["/v1/companies/INE002A01018?as_of=2020-01-01", "/v1/companies/INE002A01018/history"]
        );
        assert!(t.requests(&args(json!({}))).is_err());
        assert!(t.requests(&args(json!({"isin": "X", "history": "yes"}))).is_err());
        let s = find("resolve_symbol").unwrap();
        assert_eq!(
            s.requests(&args(json!({"symbol": "M&M", "exchange": "nse"}))).unwrap(),
            ["/v1/symbols/M%26M?exchange=nse"]
        );
        let n = find("list_news").unwrap();
        assert_eq!(
            n.requests(&args(json!({"limit": 5, "published_after": "2026-01-01T00:00:00+05:30", "tag": null})))
                .unwrap(),
            ["/v1/news?limit=5&published_after=2026-01-01T00%3A00%3A00%2B05%3A30"]
        );
        assert!(n.requests(&args(json!({"tag": ["a"]}))).is_err());
        // With `isin` a company's actions; without it the calendar.
        let a = find("list_corporate_actions").unwrap();
        assert_eq!(
            a.requests(&args(json!({"isin": "INE296A01032", "lineage": false}))).unwrap(),
            ["/v1/companies/INE296A01032/actions?lineage=false"]
        );
        assert_eq!(
            a.requests(&args(json!({"ex_date_from": "2026-07-01", "type": "dividend"}))).unwrap(),
            ["/v1/actions?ex_date_from=2026-07-01&type=dividend"]
        );
        assert_eq!(a.requests(&args(json!({"isin": null}))).unwrap(), ["/v1/actions"]);
        let q = find("search_news").unwrap();
        assert_eq!(
            q.requests(&args(json!({"q": "\"net profit\" infra*", "sort": "published_at"}))).unwrap(),
            ["/v1/news?q=%22net+profit%22+infra*&sort=published_at"]
        );
    }

    #[test]
    fn the_news_search_requires_q() {
        let tools = list()["tools"].as_array().unwrap();
        let def = tools.iter().find(|t| t["name"] == "search_news").unwrap();
        assert_eq!(def["inputSchema"]["required"], json!(["q"]), "{def}");
        let p = &def["inputSchema"]["properties"];
        for name in ["q", "sort", "isin", "ticker", "category", "tag", "published_after", "limit", "cursor"] {
            assert!(p[name].is_object(), "{name}: {def}");
        }
        assert!(def["outputSchema"]["properties"]["data"].is_object());
    }

    #[test]
    fn the_actions_tool_takes_both_routes_arguments() {
        let tools = list()["tools"].as_array().unwrap();
        let def = tools.iter().find(|t| t["name"] == "list_corporate_actions").unwrap();
        let input = &def["inputSchema"];
        assert!(input.get("required").is_none(), "isin chooses the route: not required: {input}");
        let p = &input["properties"];
        for name in
            ["isin", "type", "from", "to", "lineage", "ex_date_from", "ex_date_to", "exchange", "limit", "cursor"]
        {
            assert!(p[name].is_object(), "{name}: {input}");
        }
        assert!(p["lineage"]["description"].as_str().unwrap().starts_with("With `isin`: "));
        assert!(p["ex_date_from"]["description"].as_str().unwrap().starts_with("Without `isin`: "));
        assert!(!p["type"]["description"].as_str().unwrap().starts_with("With"), "both routes take `type`");
        let out = &def["outputSchema"];
        assert_eq!(out["required"], json!(["data"]), "{out}");
        for name in ["isin", "data", "has_more", "next_cursor"] {
            assert!(out["properties"][name].is_object(), "{name}: {out}");
        }
    }
}
