/**
 * The package as it ships: `import "mds-client"` resolves to the
 * built ESM with its declarations; and the tarball `npm pack` makes installs
 * in another project, whose TypeScript (strict, Node's types, no DOM
 * library) compiles against it and runs.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { PACKAGE } from "./helpers.js";

const run = promisify(execFile);

test("the package resolves to dist/ with types, and exports the client", async () => {
  const pkg = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8")) as {
    type: string;
    exports: { ".": { types: string; default: string } };
    dependencies?: Record<string, string>;
  };
  assert.equal(pkg.type, "module");
  assert.equal(pkg.dependencies, undefined, "no runtime dependency");
  assert.ok(existsSync(join(PACKAGE, pkg.exports["."].types)), "run `npm run build`");
  // By name, as a user imports it (Node resolves a package's own name through its "exports").
  const name = "mds-client";
  const mod = (await import(name)) as Record<string, unknown>;
  for (const exported of ["Client", "verifyWebhook", "ApiError", "RateLimitError", "RetryPolicy", "NotFoundError"]) {
    assert.ok(exported in mod, exported);
  }
  const version = (mod as { VERSION: string }).VERSION;
  assert.equal(
    version,
    (JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8")) as { version: string }).version,
  );
});

const CONSUMER = `import { Client, type Company, NotFoundError, verifyWebhook } from "mds-client";
const client = new Client({ apiKey: "mds_live_consumer", baseUrl: "http://127.0.0.1:9/mds" });
const nse = (): Promise<Company[]> => client.companies.all({ exchange: "nse" });
// The example's body is no mds event: read it as what it is.
const event = await verifyWebhook(
  "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  {
    "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
    "webhook-timestamp": "1614265330",
    "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
  },
  '{"test": 2432232314}',
  { now: 1614265330000 },
);
const n: number = (event as unknown as { test: number }).test;
console.log(JSON.stringify({ n, shown: String(client), nse: typeof nse, error: NotFoundError.name }));
`;

test("the packed tarball installs in another project, type-checks there and runs", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mds-ts-consumer-"));
  try {
    await run("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", dir], { cwd: PACKAGE });
    const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"));
    assert.ok(tarball, "npm pack made no tarball");
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    // No dependency to fetch: --offline holds.
    await run("npm", ["install", "--offline", "--no-audit", "--no-fund", `./${tarball}`], { cwd: dir });
    writeFileSync(join(dir, "consumer.ts"), CONSUMER);
    const types = join(PACKAGE, "node_modules", "@types");
    const tsc = join(PACKAGE, "node_modules", "typescript", "bin", "tsc");
    const flags = ["--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext"];
    await run(
      process.execPath,
      [tsc, ...flags, "--lib", "es2022", "--types", "node", "--typeRoots", types, "consumer.ts"],
      {
        cwd: dir,
      },
    );
    const { stdout } = await run(process.execPath, ["consumer.js"], { cwd: dir });
    assert.deepEqual(JSON.parse(stdout), {
      n: 2432232314,
      shown: "Client(baseUrl=http://127.0.0.1:9/mds, apiKey=***)",
      nse: "function",
      error: "NotFoundError",
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
