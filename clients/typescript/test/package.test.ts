/**
 * The package as it ships: `import "mds-client"` resolves to the
 * built ESM with its declarations; a copy of this folder alone (no
 * ../../docs: the generated types are committed) installs, builds and packs;
 * and its tarball, whose package.json has no lifecycle script, installs in
 * another project with and without scripts, where TypeScript (strict,
 * Node's types, no DOM library) compiles against it and runs.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
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

/** npm's lifecycle scripts: run by `npm install`, `npm ci`, `npm pack` or `npm publish` of their own accord. */
const LIFECYCLE = new Set([
  "preinstall",
  "install",
  "postinstall",
  "preprepare",
  "prepare",
  "postprepare",
  "prepublish",
  "prepublishOnly",
  "publish",
  "postpublish",
  "prepack",
  "postpack",
  "dependencies",
]);

/** The scripts npm runs without being asked: lifecycle ones, and the pre/post hooks of the others. */
function unasked(scripts: Record<string, string>): string[] {
  const names = Object.keys(scripts);
  return names.filter((n) => LIFECYCLE.has(n) || names.some((m) => n === `pre${m}` || n === `post${m}`));
}

/** Copies the package's files as a clone has them (tracked, or new and not ignored) into `to`. */
async function copyPackage(to: string): Promise<void> {
  const { stdout } = await run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "."], {
    cwd: PACKAGE,
  });
  for (const file of stdout.split("\0").filter(Boolean)) {
    if (!existsSync(join(PACKAGE, file))) continue; // deleted, not yet committed
    mkdirSync(dirname(join(to, file)), { recursive: true });
    cpSync(join(PACKAGE, file), join(to, file));
  }
}

test("a copy of the package's folder alone builds, packs, and its tarball installs with and without scripts", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mds-ts-copy-"));
  try {
    // Two levels down, so that ../../docs/openapi.json is not there (as in a
    // Docker build that copies only this folder).
    const copy = join(dir, "work", "mds-client");
    await copyPackage(copy);
    assert.ok(!existsSync(join(copy, "..", "..", "docs")));
    assert.ok(existsSync(join(copy, "src", "generated", "openapi.ts")), "src/generated/openapi.ts is not committed");
    const quiet = ["--no-audit", "--no-fund", "--loglevel=error"];
    await run("npm", ["ci", "--prefer-offline", ...quiet], { cwd: copy });
    await run("npm", ["run", "--silent", "build"], { cwd: copy });
    const { stdout: packed } = await run("npm", ["pack", "--json", "--pack-destination", dir], { cwd: copy });
    const [tarball] = JSON.parse(packed) as Array<{ filename: string; files: Array<{ path: string }> }>;
    assert.ok(tarball, "npm pack made no tarball");
    assert.ok(
      tarball.files.some((f) => f.path === "dist/index.d.ts"),
      "the tarball has no dist/index.d.ts: run `npm run build` before `npm pack`",
    );
    const { stdout: manifest } = await run("tar", ["-xOzf", tarball.filename, "package/package.json"], { cwd: dir });
    const pkg = JSON.parse(manifest) as { scripts?: Record<string, string> };
    assert.deepEqual(unasked(pkg.scripts ?? {}), [], "the packed package.json has lifecycle scripts");

    const types = join(copy, "node_modules", "@types");
    const tsc = join(copy, "node_modules", "typescript", "bin", "tsc");
    const flags = ["--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext"];
    for (const scripts of [["--ignore-scripts"], []]) {
      const consumer = join(dir, `consumer${scripts.length ? "-ignore-scripts" : ""}`);
      mkdirSync(consumer);
      writeFileSync(
        join(consumer, "package.json"),
        JSON.stringify({ name: "consumer", private: true, type: "module" }),
      );
      // No dependency to fetch: --offline holds.
      await run("npm", ["install", "--offline", ...scripts, ...quiet, join(dir, tarball.filename)], { cwd: consumer });
      writeFileSync(join(consumer, "consumer.ts"), CONSUMER);
      await run(
        process.execPath,
        [tsc, ...flags, "--lib", "es2022", "--types", "node", "--typeRoots", types, "consumer.ts"],
        { cwd: consumer },
      );
      const { stdout } = await run(process.execPath, ["consumer.js"], { cwd: consumer });
      assert.deepEqual(
        JSON.parse(stdout),
        {
          n: 2432232314,
          shown: "Client(baseUrl=http://127.0.0.1:9/mds, apiKey=***)",
          nse: "function",
          error: "NotFoundError",
        },
        consumer,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
