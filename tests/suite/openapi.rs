//! The OpenAPI document and the reference page: the committed snapshot
//! `docs/openapi.json` matches what the code generates, the server serves
//! that document without a key, and `/docs` with its assets loads from this
//! server alone.
//!
//! After an intended API change, refresh the snapshot with
//! `UPDATE_OPENAPI=1 cargo test -p mds --test suite openapi::` and commit it.

use crate::common;

use std::path::PathBuf;

use common::{TestApp, spawn};
use mds_domain::news::NewsQueryParams;
use mds_domain::params::{CompaniesQueryParams, QueryParams};

fn snapshot_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/openapi.json")
}

#[test]
fn committed_document_matches_the_code() {
    let generated = mds_http::routes::document_json();
    let path = snapshot_path();
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, generated).expect("write docs/openapi.json");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let first = committed.lines().zip(generated.lines()).position(|(a, b)| a != b);
        let hint = match first {
            Some(i) => format!(
                "first difference at line {}:\n  committed: {}\n  generated: {}",
                i + 1,
                committed.lines().nth(i).unwrap_or(""),
                generated.lines().nth(i).unwrap_or("")
            ),
            None => format!(
                "one is a prefix of the other ({} vs {} lines)",
                committed.lines().count(),
                generated.lines().count()
            ),
        };
        panic!(
            "docs/openapi.json is out of date with the code; {hint}\n\
             If the change is intended, run `UPDATE_OPENAPI=1 cargo test -p mds --test suite openapi::` and commit the file."
        );
    }
}

/// A server and its answer to `GET path` without a key, asserted `200`
/// with `content_type`.
async fn get_open_ok(path: &str, content_type: &str) -> (TestApp, reqwest::Response) {
    let app = spawn().await;
    let r = app.get_open(path).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], content_type);
    (app, r)
}

#[tokio::test]
async fn served_document_is_the_generated_one_without_a_key() {
    let (_app, r) = get_open_ok("/v1/openapi.json", "application/json").await;
    assert!(r.headers().contains_key("x-request-id"));
    assert!(!r.headers().contains_key("ratelimit"), "the document is not rate limited");
    let served: serde_json::Value = r.json().await.unwrap();
    let generated: serde_json::Value = serde_json::from_str(mds_http::routes::document_json()).unwrap();
    assert_eq!(served, generated);

    assert_eq!(served["openapi"], "3.1.0");
    let mut ops = Vec::new();
    for (path, item) in served["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys().filter(|k| *k != "parameters") {
            ops.push(format!("{method} {path}"));
        }
    }
    // Every keyed route of the route table is documented, and nothing else.
    ops.sort_unstable();
    let mut keyed: Vec<String> = mds_http::routes::ROUTES
        .iter()
        .filter(|r| matches!(r.access, mds_http::route::Access::Keyed(_)))
        .flat_map(|r| r.operations().map(|o| format!("{} {}", format!("{:?}", o.verb).to_lowercase(), r.path)))
        .collect();
    keyed.sort_unstable();
    assert_eq!(ops, keyed);
    assert_eq!(served["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");

    // Every parameter /v1/companies and /v1/news accept is documented, and nothing else.
    for (path, names) in [("/v1/companies", CompaniesQueryParams::NAMES), ("/v1/news", NewsQueryParams::NAMES)] {
        let mut params: Vec<&str> = served["paths"][path]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        params.sort_unstable();
        let mut defined = names.to_vec();
        defined.sort_unstable();
        assert_eq!(params, defined, "{path}");
    }
}

#[tokio::test]
async fn docs_page_and_its_assets_load_from_this_server() {
    let (app, r) = get_open_ok("/docs", "text/html; charset=utf-8").await;
    assert!(r.headers()["cache-control"].to_str().unwrap().starts_with("public"));
    let html = r.text().await.unwrap();

    // Every URL the page references is local (a path on this server).
    let mut urls = Vec::new();
    for attr in ["src=\"", "href=\"", "spec-url=\""] {
        for (i, _) in html.match_indices(attr) {
            let rest = &html[i + attr.len()..];
            urls.push(rest[..rest.find('"').unwrap()].to_owned());
        }
    }
    assert!(!html.contains("://"), "the page names an absolute URL:\n{html}");
    assert!(urls.contains(&"/v1/openapi.json".to_owned()), "{urls:?}");
    for url in &urls {
        assert!(url.starts_with('/') && !url.starts_with("//"), "not local: {url}");
        let r = app.client.get(format!("{}{url}", app.base)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{url}");
        let ct = r.headers()["content-type"].to_str().unwrap().to_owned();
        if url.ends_with(".js") {
            assert_eq!(ct, "text/javascript; charset=utf-8");
            assert!(r.headers()["cache-control"].to_str().unwrap().contains("max-age=86400"));
            let body = r.bytes().await.unwrap();
            assert_eq!(&body[..], mds_http::docs::redoc_js());
            assert!(!String::from_utf8_lossy(&body).contains("cdn.redoc.ly"));
        } else {
            assert_eq!(ct, "application/json", "{url}");
        }
    }
    assert!(urls.iter().any(|u| u.ends_with(".js")), "{urls:?}");

    let r = app.client.get(format!("{}/docs/nope.js", app.base)).send().await.unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(r.headers()["content-type"], "application/problem+json");
}

/// Every record carries every field (`null` when it has no value), so every
/// property of every schema is required, at any depth; `Problem` alone
/// leaves out members that do not apply (`param`, `violated_policies`), and
/// a company list's row its `match`, which only a search's results carry,
/// and the company and news pages their `hint`, which only an empty page of
/// an unknown exact-match value carries (contract section 15).
#[test]
fn every_property_is_required_but_the_problem_extensions() {
    fn check(name: &str, schema: &serde_json::Value) {
        if let Some(props) = schema["properties"].as_object() {
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(|x| x.as_str()).collect())
                .unwrap_or_default();
            for (key, property) in props {
                let only_on_a_search = name == "V1CompanyListItem" && key == "match";
                let only_when_unknown = matches!(name, "V1CompanyPage" | "V1NewsPage") && key == "hint";
                assert!(
                    required.contains(&key.as_str()) || only_on_a_search || only_when_unknown,
                    "{name}.{key} is not required"
                );
                check(&format!("{name}.{key}"), property);
            }
        }
        for nested in ["items", "allOf", "oneOf"].iter().filter_map(|k| schema.get(k)) {
            match nested.as_array() {
                Some(all) => all.iter().for_each(|s| check(name, s)),
                None => check(name, nested),
            }
        }
    }
    let doc: serde_json::Value = serde_json::from_str(mds_http::routes::document_json()).unwrap();
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let bodies = mds_http::openapi::REQUEST_BODIES;
    for (name, schema) in schemas.iter().filter(|(n, _)| *n != "Problem" && !bodies.contains(&n.as_str())) {
        check(name, schema);
    }
    let problem = &schemas["Problem"];
    let required = problem["required"].as_array().unwrap();
    for optional in ["param", "violated_policies"] {
        assert!(!required.contains(&serde_json::json!(optional)), "Problem.{optional}");
    }
    let row = &schemas["V1CompanyListItem"];
    assert!(row["properties"]["match"].is_object(), "{row}");
    assert!(!row["required"].as_array().unwrap().contains(&serde_json::json!("match")));
}
