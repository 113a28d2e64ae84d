/**
 * Test fixtures: a real `mds demo` on a free loopback port over a SQLite
 * store in a temp dir, and real keys issued with the `mds` CLI on that store.
 *
 * The binary is `$MDS_BIN`, else `target/debug/mds` of the repository
 * (`$CARGO_TARGET_DIR/debug/mds` when that is set). With `$MDS_DEMO_SEED`
 * (a SQLite file a demo has loaded, as `scripts/demo-seed.sh` makes it),
 * each demo starts on a copy of it and skips loading the files again.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "../src/index.js";

const run = promisify(execFile);

/** The repository's root (this file runs from clients/typescript/build/test). */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
/** The package's root. */
export const PACKAGE = join(REPO, "clients", "typescript");

/** The `mds` binary the tests run. */
export function mdsBinary(): string {
  if (process.env.MDS_BIN) return process.env.MDS_BIN;
  const target = process.env.CARGO_TARGET_DIR ?? join(REPO, "target");
  return join(target, "debug", "mds");
}

/** A running `mds demo` (or `mds serve`) and the CLI on its store. */
export interface Server {
  baseUrl: string;
  /** The demo key (tier `pro`); empty for `mds serve`. */
  demoKey: string;
  /** The work directory, removed at `stop` when the server made it. */
  workdir: string;
  /** The store's URL. */
  database: string;
  /** Runs `mds --database <the store> ...args`; its stdout (throws with its stderr on failure). */
  mds(...args: string[]): Promise<string>;
  /** Issues a key on a new account; with limits, on a tier of its own made with them. */
  makeKey(limits?: { ratePerMinute: number; quota: number }): Promise<string>;
  /** SIGTERM, then waits for the exit; removes the workdir the server made unless `keepFiles`. */
  stop(options?: { keepFiles?: boolean }): Promise<void>;
}

let names = 0;

/** Copies `$MDS_DEMO_SEED` (and its -wal and -shm files) to `db`, if set. */
function copyDemoSeed(db: string): void {
  const seed = process.env.MDS_DEMO_SEED;
  if (!seed || !existsSync(seed)) return;
  for (const suffix of ["", "-wal", "-shm"]) {
    if (existsSync(seed + suffix)) copyFileSync(seed + suffix, db + suffix);
  }
}

/**
 * Starts `mds demo` on 127.0.0.1:0 over a new store in a new temp dir, or
 * with `serveFile`, `mds serve` over that SQLite file (its directory is the
 * workdir, kept at `stop`); waits until it serves.
 */
export async function startServer(serveFile?: string): Promise<Server> {
  const binary = mdsBinary();
  if (!existsSync(binary)) {
    throw new Error(`no mds binary at ${binary}: run \`cargo build --bin mds\` (or set MDS_BIN)`);
  }
  const workdir = serveFile ? dirname(serveFile) : mkdtempSync(join(tmpdir(), "mds-ts-"));
  const database = `sqlite://${serveFile ?? join(workdir, "mds.db")}?mode=rwc`;
  if (!serveFile) copyDemoSeed(join(workdir, "mds.db"));
  const env = { ...process.env, MDS_LOG: "warn" };
  const command = serveFile ? "serve" : "demo";
  const child: ChildProcess = spawn(
    binary,
    ["--database", database, command, "--listen", "127.0.0.1:0", "--shutdown-grace", "1"],
    // `serve` says its address in its log only.
    { env: serveFile ? { ...env, MDS_LOG: "info", NO_COLOR: "1" } : env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  child.stdout?.on("data", (b: Buffer) => {
    out += b.toString();
  });
  child.stderr?.on("data", (b: Buffer) => {
    err += b.toString();
  });
  const deadline = Date.now() + 120_000;
  let baseUrl: string | undefined;
  while (baseUrl === undefined) {
    const m = /^Serving on (http:\/\/\S+)/m.exec(out);
    const served = /serving addr=(\S+)/.exec(err);
    if (m || served) {
      baseUrl = m ? m[1] : `http://${served?.[1]}`;
      break;
    }
    if (child.exitCode !== null) throw new Error(`mds ${command} exited: ${err}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error("mds demo did not start within 120 s");
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const demoKey = out.split(/\s+/).find((w) => /^mds_(live|test)_/.test(w)) ?? "";
  if (!baseUrl || (!serveFile && !demoKey)) throw new Error(`no key in the demo's output: ${out}`);

  const mds = async (...args: string[]): Promise<string> => {
    try {
      const { stdout } = await run(binary, ["--database", database, ...args], { env, timeout: 120_000 });
      return stdout;
    } catch (e) {
      const stderr = (e as { stderr?: string }).stderr ?? String(e);
      throw new Error(`mds ${args[0]} failed: ${stderr.trim()}`);
    }
  };
  const makeKey = async (limits?: { ratePerMinute: number; quota: number }): Promise<string> => {
    const n = `${process.pid}-${names++}`;
    let tier = "pro";
    if (limits) {
      tier = `ts-${n}`;
      await mds(
        "tiers",
        "set",
        tier,
        "--rate-limit-per-minute",
        String(limits.ratePerMinute),
        "--monthly-quota",
        String(limits.quota),
      );
    }
    await mds("accounts", "create", `ts-${n}`);
    const key = (await mds("keys", "create", "--account", `ts-${n}`, "--tier", tier)).trim().split("\n").pop()?.trim();
    if (!key?.startsWith("mds_")) throw new Error("keys create printed no key");
    return key;
  };
  const stop = async (options: { keepFiles?: boolean } = {}): Promise<void> => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 20_000)))]);
      clearTimeout(timer);
      if (child.exitCode === null) child.kill("SIGKILL");
    }
    if (!serveFile && !options.keepFiles) rmSync(workdir, { recursive: true, force: true });
  };
  return { baseUrl, demoKey, workdir, database, mds, makeKey, stop };
}

/** A started server and a client of it with a key of its own. */
export async function serverWithClient(): Promise<{ server: Server; client: Client }> {
  const server = await startServer();
  return { server, client: new Client({ apiKey: await server.makeKey(), baseUrl: server.baseUrl }) };
}

/** Every page of a list by plain `fetch`, following `next_cursor`; the rows. */
export async function plainWalk<T>(
  server: Server,
  path: string,
  params: Record<string, string> = {},
  limit = 200,
): Promise<T[]> {
  const rows: T[] = [];
  let cursor: string | null = null;
  for (;;) {
    const q = new URLSearchParams({ ...params, limit: String(limit), ...(cursor ? { cursor } : {}) });
    const r = await fetch(`${server.baseUrl}${path}?${q}`, { headers: { Authorization: `Bearer ${server.demoKey}` } });
    if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
    const page = (await r.json()) as { data: T[]; has_more: boolean; next_cursor: string | null };
    rows.push(...page.data);
    if (!page.has_more) return rows;
    cursor = page.next_cursor;
  }
}
