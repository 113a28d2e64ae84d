/**
 * The package as it ships: the checked-in types are what `npm run generate`
 * makes from docs/openapi.json today, and `import "mds-client"` resolves to
 * the built ESM with its declarations.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { PACKAGE, REPO, readGenerated } from "./helpers.js";

const run = promisify(execFile);

test("src/generated/openapi.ts is up to date with docs/openapi.json", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mds-ts-gen-"));
  try {
    const out = join(dir, "openapi.ts");
    const cli = join(PACKAGE, "node_modules", "openapi-typescript", "bin", "cli.js");
    await run(process.execPath, [cli, join(REPO, "docs", "openapi.json"), "--output", out], { cwd: PACKAGE });
    assert.ok(
      readFileSync(out, "utf8") === readGenerated(),
      "the checked-in types differ from docs/openapi.json: run `npm run generate` in clients/typescript",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

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
