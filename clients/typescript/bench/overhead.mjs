// A request's overhead through the client against plain fetch, on the same
// server, in one run; and the package's size.
//
// Starts `mds demo` ($MDS_BIN, else the repository's target/debug/mds) on a
// free loopback port over a temp SQLite store, issues a key on a tier with
// limits no run reaches, then times sequential requests (one in flight, both
// on Node's global keep-alive pool), plain and client alternating:
//   plain:  await (await fetch(url, { headers })).json()
//   client: await client.companies.get(isin)  /  client.companies.list({ limit: 50 })
// and prints microseconds per request (mean and median), the ratio of the
// medians and their difference (the median, since a busy machine's
// scheduling pauses land in the mean); then the same with a fetch that answers at
// once (the client's own CPU per request, no network). Then the size of what `npm pack` ships and of
// the JavaScript a bundler would take (dist/*.js, raw and gzip -9).
//
// Usage (from clients/typescript): npm run bench [-- REQUESTS_EACH_WAY]
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { Client } from "../dist/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, "..");
const repo = resolve(pkg, "../..");
const bin = process.env.MDS_BIN ?? join(process.env.CARGO_TARGET_DIR ?? join(repo, "target"), "debug", "mds");
const n = Number(process.argv[2] ?? 3000);

const work = mkdtempSync(join(tmpdir(), "mds-ts-bench-"));
const database = `sqlite://${work}/mds.db?mode=rwc`;
const env = { ...process.env, MDS_LOG: "warn" };
const mds = (...args) => execFileSync(bin, ["--database", database, ...args], { env, encoding: "utf8" });
const child = spawn(bin, ["--database", database, "demo", "--listen", "127.0.0.1:0", "--shutdown-grace", "1"], {
  env,
  stdio: ["ignore", "pipe", "inherit"],
});
let out = "";
child.stdout.on("data", (b) => {
  out += b;
});
try {
  let base;
  for (let i = 0; i < 1200 && !base; i++) {
    base = /^Serving on (http:\/\/\S+)/m.exec(out)?.[1];
    if (!base) await new Promise((r) => setTimeout(r, 50));
  }
  if (!base) throw new Error(`mds demo did not start: ${out}`);
  mds("tiers", "set", "bench", "--rate-limit-per-minute", "100000000", "--monthly-quota", "1000000000");
  mds("accounts", "create", "bench");
  const key = mds("keys", "create", "--account", "bench", "--tier", "bench").trim().split("\n").pop().trim();
  const headers = { Authorization: `Bearer ${key}`, Accept: "application/json" };
  const client = new Client({ apiKey: key, baseUrl: base });
  const isin = "INE002A01018";

  const cases = [
    {
      name: `GET /v1/companies/${isin}`,
      plain: async () => (await fetch(`${base}/v1/companies/${isin}`, { headers })).json(),
      client: () => client.companies.get(isin),
    },
    {
      name: "GET /v1/companies?limit=50",
      plain: async () => (await fetch(`${base}/v1/companies?limit=50`, { headers })).json(),
      client: () => client.companies.list({ limit: 50 }),
    },
  ];
  // Plain and client requests alternate one by one, so drift (the server's
  // caches, the machine's other load) falls on both alike.
  const stats = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return { mean: xs.reduce((a, b) => a + b, 0) / xs.length, median: s[Math.floor(s.length / 2)] };
  };
  const once = async (f) => {
    const t0 = performance.now();
    await f();
    return (performance.now() - t0) * 1000; // µs
  };
  console.log(`node ${process.version}; ${n} requests each way, plain and client alternating, one in flight`);
  console.log(
    "| request | plain fetch µs (mean / median) | client µs (mean / median) | ratio (medians) | overhead µs (medians) |",
  );
  console.log("|---|---:|---:|---:|---:|");
  const measure = async (c) => {
    for (let i = 0; i < 300; i++) {
      await c.plain();
      await c.client();
    }
    const plain = [];
    const viaClient = [];
    for (let i = 0; i < n; i++) {
      plain.push(await once(c.plain));
      viaClient.push(await once(c.client));
    }
    const p = stats(plain);
    const q = stats(viaClient);
    console.log(
      `| ${c.name} | ${p.mean.toFixed(0)} / ${p.median.toFixed(0)} | ${q.mean.toFixed(0)} / ${q.median.toFixed(0)} | ` +
        `${(q.median / p.median).toFixed(3)} | ${(q.median - p.median).toFixed(0)} |`,
    );
  };
  for (const c of cases) await measure(c);

  // The client's own work, without the network: a fetch that answers at
  // once with the headers and body mds sent for the same request.
  const real = await fetch(`${base}/v1/companies?limit=50`, { headers });
  const realBody = await real.text();
  const realHeaders = Object.fromEntries(real.headers);
  delete realHeaders["content-encoding"];
  const instant = async () => new Response(realBody, { status: 200, headers: realHeaders });
  const offline = new Client({ apiKey: key, baseUrl: base, fetch: instant });
  const inProcess = {
    name: "in process (a fetch that answers at once), ?limit=50",
    plain: async () => (await instant(`${base}/v1/companies?limit=50`, { headers })).json(),
    client: () => offline.companies.list({ limit: 50 }),
  };
  await measure(inProcess);

  const pack = JSON.parse(
    execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: pkg, encoding: "utf8" }),
  )[0];
  const js = readdirSync(join(pkg, "dist"), { recursive: true })
    .filter((f) => String(f).endsWith(".js"))
    .map((f) => readFileSync(join(pkg, "dist", String(f))));
  const all = Buffer.concat(js);
  console.log(
    `\npackage: ${pack.filename}: ${pack.size} B packed, ${pack.unpackedSize} B unpacked, ${pack.entryCount} files; ` +
      `dist/*.js ${all.length} B, ${gzipSync(all, { level: 9 }).length} B gzip -9; runtime dependencies: 0`,
  );
} finally {
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  rmSync(work, { recursive: true, force: true });
}
