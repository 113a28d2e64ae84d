/**
 * The TypeScript in the package's README (the walkthrough) and in the
 * project README's "From TypeScript" compiles, strict, against the built
 * package as a user imports it (`"mds-client"`). The "Adding a route"
 * example is indented and left out: its routes do not exist yet.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { PACKAGE, REPO } from "./helpers.js";

const run = promisify(execFile);

/** The fenced `ts` blocks that start at the beginning of a line. */
function blocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? "");
}

/** Names the walkthrough uses without defining them: the reader's own code. */
const PREAMBLE = `
declare function loadCopy(): Promise<Array<[string, CompanyDetail]>>;
declare function loadToken(): Promise<string | null>;
declare function loadMark(): Promise<string | undefined>;
declare function saveCopy(copy: Map<string, CompanyDetail>): Promise<void>;
declare function saveToken(token: string): Promise<void>;
declare const req: { headers: Record<string, string | string[] | undefined> };
declare const res: { statusCode: number };
declare const rawBody: Uint8Array;
declare const client: Client;
`;

test("the READMEs' TypeScript compiles against the package", async () => {
  const own = blocks(readFileSync(join(PACKAGE, "README.md"), "utf8"));
  const project = readFileSync(join(REPO, "README.md"), "utf8");
  const fromTs = project.slice(project.indexOf("### From TypeScript"), project.indexOf("### From the command line"));
  const all = [...own, ...blocks(fromTs)];
  assert.ok(own.length >= 10 && all.length > own.length, `found ${own.length} + ${all.length - own.length} blocks`);

  // One import of every name the blocks import; each block in its own scope.
  const names = new Set<string>(["Client", "type CompanyDetail"]);
  const bodies = all.map((b) =>
    b
      .split("\n")
      .filter((line) => {
        const m = /^import (type )?\{([^}]*)\} from "mds-client";$/.exec(line);
        if (m) for (const n of (m[2] ?? "").split(",")) names.add(`${m[1] ?? ""}${n.trim()}`);
        return !m;
      })
      .join("\n"),
  );
  const source = [
    `import { ${[...names].join(", ")} } from "mds-client";`,
    PREAMBLE,
    ...bodies.map((b, i) => `// block ${i + 1}\nexport async function block${i + 1}() {\n${b}\n}`),
  ].join("\n");
  // Inside the package, so that "mds-client" resolves to it by name (dist/).
  const dir = join(PACKAGE, "build", "readme");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "readme.ts"), source);
  const tsc = join(PACKAGE, "node_modules", "typescript", "bin", "tsc");
  const flags = ["--noEmit", "--strict", "--skipLibCheck", "--target", "es2022", "--module", "nodenext"];
  try {
    await run(process.execPath, [tsc, ...flags, "--lib", "es2022,dom", "--types", "node", join(dir, "readme.ts")], {
      cwd: PACKAGE,
    });
  } catch (e) {
    assert.fail(`the READMEs' TypeScript does not compile:\n${(e as { stdout?: string }).stdout}\n${source}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
