//! The in-process cost of one request through the whole application (every
//! layer, the handler, no socket), against an axum router that answers the
//! same bytes with no work: what `bench/run.sh` measures over loopback,
//! without the kernel and the load generator, on one thread.
//!
//! Usage: `MDS_DATABASE_URL=… [MDS_PAGE_CACHE_MIB=0] [MDS_NO_LIMITS=1] cargo run --release -p mds-http --example request_cost -- KEY PATH [N [mds|baseline]]`
//! (`MDS_NO_LIMITS=1`: the node as `serve --no-limits` runs it, to count
//! what rate limiting and metering cost a request)
//! (with `mds` or `baseline`, only that one is timed: for counting its
//! allocations with `perf stat -e probe_libc:malloc`, say).

use std::time::Instant;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::header;
use axum::response::IntoResponse;
use mds_http::{AppState, HttpConfig};
use mds_store::DatabaseUrl;
use tower::{Service, ServiceExt};

async fn time<S>(svc: S, key: &str, path: &str, n: u32) -> f64
where
    S: Service<Request, Response = axum::response::Response> + Clone,
    S::Error: std::fmt::Debug,
{
    let start = Instant::now();
    for _ in 0..n {
        let req =
            Request::get(path).header(header::AUTHORIZATION, format!("Bearer {key}")).body(Body::empty()).unwrap();
        let resp = svc.clone().oneshot(req).await.unwrap();
        assert!(resp.status().is_success(), "{}", resp.status());
        drop(resp);
    }
    start.elapsed().as_nanos() as f64 / f64::from(n)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let key = args.next().expect("usage: request_cost KEY PATH [N]");
    let path = args.next().expect("usage: request_cost KEY PATH [N]");
    let n: u32 = args.next().map_or(200_000, |s| s.parse().expect("N"));
    let only = args.next();
    let url = DatabaseUrl::new(&std::env::var("MDS_DATABASE_URL").expect("MDS_DATABASE_URL"));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let store = mds_store::open(&url).await.expect("open the store");
        // MDS_PAGE_CACHE_MIB=0 measures pages made on every request.
        let mut config = HttpConfig::default();
        if let Ok(mib) = std::env::var("MDS_PAGE_CACHE_MIB") {
            config.node.page_cache_bytes = mib.parse::<usize>().expect("MiB") << 20;
        }
        if std::env::var_os("MDS_NO_LIMITS").is_some() {
            config.node.limits = false;
        }
        let state = AppState::load(store, config).await.expect("load");
        let app = mds_http::router(state);
        let req =
            Request::get(&path).header(header::AUTHORIZATION, format!("Bearer {key}")).body(Body::empty()).unwrap();
        let body: &'static [u8] =
            to_bytes(app.clone().oneshot(req).await.unwrap().into_body(), usize::MAX).await.unwrap().to_vec().leak();
        let baseline = Router::new()
            .fallback(move || async move { ([(header::CONTENT_TYPE, "application/json")], body).into_response() });
        match only.as_deref() {
            Some("mds") => println!("mds {:.0} ns", time(app, &key, &path, n).await),
            Some("baseline") => println!("baseline {:.0} ns", time(baseline, &key, &path, n).await),
            _ => {
                for round in 0..3 {
                    let a = time(app.clone(), &key, &path, n).await;
                    let b = time(baseline.clone(), &key, &path, n).await;
                    println!(
                        "round {round}: mds {a:.0} ns, baseline {b:.0} ns, difference {:.0} ns ({} bytes)",
                        a - b,
                        body.len()
                    );
                }
            }
        }
    });
}
