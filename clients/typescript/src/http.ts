/**
 * The one place requests are made: URL and query from a route template of
 * the generated `paths`, the key in `Authorization`, retries, and the answer
 * turned into a typed body with its {@link ResponseMeta} or a typed error.
 *
 * `Http.get` is typed by the route: its path must be a `GET` route of the
 * OpenAPI document, its `path` and `query` options are that operation's
 * parameters, and it resolves to that operation's `200` body. A route the
 * document does not have does not compile.
 *
 * @module
 */
import { apiErrorFor, MdsError, TransportError } from "./errors.js";
import type { paths } from "./generated/openapi.js";
import { metaOf, type ResponseMeta, type WithMeta, withMeta } from "./meta.js";
import type { RetryPolicy } from "./retry.js";

/** Every route template of the document that answers `GET` with a JSON `200`. */
export type GetRoute = {
  [P in keyof paths]: paths[P] extends { get: { responses: { 200: { content: { "application/json": unknown } } } } }
    ? P
    : never;
}[keyof paths];

type Op<P extends GetRoute> = paths[P]["get"];

/** The query parameters of route `P` (`never` when it takes none). */
export type QueryOf<P extends GetRoute> = Op<P> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** The path parameters of route `P` (`never` when it has none). */
export type PathParamsOf<P extends GetRoute> =
  Op<P> extends { parameters: { path: infer A } } ? ([A] extends [undefined] ? never : A) : never;

/** The JSON body of route `P`'s `200`. */
export type BodyOf<P extends GetRoute> = Op<P>["responses"][200]["content"]["application/json"];

/** Options of one request: its parameters, and an `AbortSignal`. */
export type GetOptions<P extends GetRoute> = ([PathParamsOf<P>] extends [never]
  ? { path?: undefined }
  : { path: PathParamsOf<P> }) &
  ([QueryOf<P>] extends [never] ? { query?: undefined } : { query?: QueryOf<P> }) & {
    /** Aborts the request (and any wait before a retry). */
    signal?: AbortSignal;
  };

/** What {@link Http} needs; the client resolves it from its options. */
export interface HttpConfig {
  baseUrl: string;
  /** Returns the key; a function, so the key is not a plain property anywhere. */
  authorization: () => string;
  retry: RetryPolicy;
  /** Milliseconds one attempt may take. */
  timeout: number;
  fetch: typeof fetch;
  /** Told about each retry, in one line that never holds the key. */
  logger: ((message: string) => void) | undefined;
  /** Headers sent with every request (never `Authorization`). */
  headers: Record<string, string>;
}

/** The routes that answer with a stream of Server-Sent Events. */
export type StreamRoute = {
  [P in keyof paths]: paths[P] extends { get: { responses: { 200: { content: { "text/event-stream": unknown } } } } }
    ? P
    : never;
}[keyof paths];

/** Scalar values a query parameter may take. */
export type QueryValue = string | number | boolean | null | undefined;

/** Fills `{name}` in a route template; every value is percent-encoded. */
export function fillPath(template: string, params: Record<string, unknown> | undefined): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = params?.[name];
    if (typeof v !== "string" && typeof v !== "number") {
      throw new TypeError(`path parameter ${name} is required`);
    }
    return encodeURIComponent(String(v));
  });
}

/** Waits `ms`; an abort of `signal` meanwhile rejects with its reason. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener("abort", abort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", abort, { once: true });
  });
}

/** Makes requests for the client; see the module documentation. */
export class Http {
  readonly #config: HttpConfig;

  constructor(config: HttpConfig) {
    this.#config = config;
  }

  /** The base URL requests go to. */
  get baseUrl(): string {
    return this.#config.baseUrl;
  }

  /** How failed requests are retried (and event streams reconnected). */
  get retry(): RetryPolicy {
    return this.#config.retry;
  }

  /** Told about each retry and reconnection, in one line that never holds the key. */
  get logger(): ((message: string) => void) | undefined {
    return this.#config.logger;
  }

  /** `GET` route `route`: its `200` body with the answer's meta, or a typed error. */
  async get<P extends GetRoute>(route: P, options: GetOptions<P>): Promise<WithMeta<BodyOf<P>>> {
    const url = this.url(route, options.path as Record<string, unknown> | undefined, options.query);
    const { body, meta } = await this.send(url, `GET ${route}`, options.signal);
    return withMeta(body as BodyOf<P> & object, meta) as WithMeta<BodyOf<P>>;
  }

  /**
   * `method` on `route` (a `POST`, `PATCH` or `DELETE` of the document) with
   * a JSON `body`: the answer's body (`{}` for a `204`) with its meta, or a
   * typed error. Retried as `get` is (a `429` or `503` was not acted on).
   */
  async write<T>(
    method: "POST" | "PATCH" | "DELETE",
    route: keyof paths,
    options: { path?: Record<string, string>; body?: unknown; signal?: AbortSignal | undefined },
  ): Promise<WithMeta<T>> {
    const url = this.url(route, options.path, undefined);
    const { body, meta } = await this.send(url, `${method} ${route}`, options.signal, { method, body: options.body });
    return withMeta(body as T & object, meta) as WithMeta<T>;
  }

  /**
   * Opens `GET route` as a stream of Server-Sent Events, once (no retry, no
   * timeout: the caller watches for silence and reconnects): the answer,
   * whose body is read as it comes, or the typed error of an error answer.
   * `lastEventId` is sent as `Last-Event-ID`. A failed connection rejects
   * with what `fetch` rejected with.
   */
  async openStream(
    route: StreamRoute,
    query: Record<string, QueryValue>,
    lastEventId: string | undefined,
    signal: AbortSignal,
  ): Promise<Response & { body: ReadableStream<Uint8Array> }> {
    const response = await this.#config.fetch(this.url(route, undefined, query), {
      method: "GET",
      headers: {
        ...this.#config.headers,
        Accept: "text/event-stream",
        Authorization: this.#config.authorization(),
        ...(lastEventId === undefined ? {} : { "Last-Event-ID": lastEventId }),
      },
      signal,
    });
    if (response.status === 200 && response.body !== null) {
      return response as Response & { body: ReadableStream<Uint8Array> };
    }
    const text = await response.text();
    if (response.ok) throw new MdsError(`GET ${route}: HTTP ${response.status} without a stream`);
    throw apiErrorFor(problemOf(response, text), metaOf(response));
  }

  /** The URL of `route` with its path parameters and query. */
  private url(route: string, path: Record<string, unknown> | undefined, query: unknown): URL {
    // Appended, not resolved: a base URL with a path (https://host/mds) keeps it.
    const url = new URL(this.#config.baseUrl + fillPath(route, path));
    for (const [name, value] of Object.entries((query ?? {}) as Record<string, QueryValue>)) {
      if (value !== undefined && value !== null) url.searchParams.append(name, String(value));
    }
    return url;
  }

  /**
   * Sends `url` (`GET`, or `write`'s method and body) with retries; `label`
   * (the method and route template) names it in errors and logs. A `POST`
   * may have changed something once sent (a new endpoint, a rotated
   * secret, a ping), so it is tried again only when the service surely did
   * not act on it: after a `429` (refused before any work) or a failure to
   * connect. `PATCH` and `DELETE` set a state and are retried like reads.
   */
  private async send(
    url: URL,
    label: string,
    signal: AbortSignal | undefined,
    write?: Write,
  ): Promise<{ body: unknown; meta: ResponseMeta }> {
    const { retry, logger } = this.#config;
    const once = write?.method === "POST";
    for (let attempt = 1; ; attempt++) {
      let answer: Answer;
      try {
        answer = await this.attempt(url, signal, write);
      } catch (cause) {
        if (signal?.aborted) throw new TransportError(`${label}: aborted`, { cause: signal.reason });
        const unsure = once && !notSent(cause);
        const delay = unsure ? null : retry.delay(attempt, null);
        const why = cause instanceof Error && cause.name === "TimeoutError" ? "timed out" : "no answer";
        if (delay === null) {
          const note = unsure ? " (not retried: the service may have acted on it)" : "";
          throw new TransportError(`${label}: ${why}${note}`, { cause: scrub(cause) });
        }
        logger?.(`mds: ${label}: ${why}; retry ${attempt}/${retry.maxRetries} in ${delay.toFixed(2)} s`);
        await this.wait(delay, label, signal);
        continue;
      }
      const { response, text } = answer;
      const meta = metaOf(response);
      if (response.ok) {
        try {
          return { body: text === "" ? {} : JSON.parse(text), meta };
        } catch {
          throw new MdsError(`${label}: HTTP ${response.status} with a body that is not JSON`);
        }
      }
      const error = apiErrorFor(problemOf(response, text), meta);
      if (response.status === 429 || (response.status === 503 && !once)) {
        const delay = retry.delay(attempt, meta.retryAfter);
        if (delay !== null) {
          logger?.(
            `mds: ${label}: got ${response.status} ${error.code} (request ${meta.requestId ?? "?"}); ` +
              `retry ${attempt}/${retry.maxRetries} in ${delay.toFixed(2)} s`,
          );
          await this.wait(delay, label, signal);
          continue;
        }
      }
      throw error;
    }
  }

  /** Waits `seconds` before a retry; an abort meanwhile is a `TransportError`. */
  private async wait(seconds: number, label: string, signal: AbortSignal | undefined): Promise<void> {
    try {
      await sleep(seconds * 1000, signal);
    } catch {
      throw new TransportError(`${label}: aborted`, { cause: signal?.reason });
    }
  }

  /**
   * One attempt: the answer and its whole body, within `timeout` ms. The
   * timer is a plain `setTimeout` cleared when the body is in:
   * `AbortSignal.timeout` costs about as much CPU again as the rest of a
   * request (BENCHMARKS.md).
   */
  private async attempt(url: URL, signal: AbortSignal | undefined, write?: Write): Promise<Answer> {
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new DOMException("the request timed out", "TimeoutError")),
      this.#config.timeout,
    );
    try {
      const response = await this.#config.fetch(url, {
        method: write?.method ?? "GET",
        headers: {
          ...this.#config.headers,
          Accept: "application/json",
          Authorization: this.#config.authorization(),
          ...(write?.body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        ...(write?.body === undefined ? {} : { body: JSON.stringify(write.body) }),
        signal: signal ? AbortSignal.any([signal, controller.signal]) : controller.signal,
      });
      return { response, text: await response.text() };
    } catch (cause) {
      throw controller.signal.aborted ? controller.signal.reason : cause;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * The codes (Node's) of failures that happen before a request is sent: the
 * only failures after which a `POST` is tried again.
 */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"]);

/** Whether `fetch` failed with `cause` before sending the request. */
function notSent(cause: unknown): boolean {
  const code = (cause as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof code === "string" && NOT_SENT.has(code);
}

/** The method and JSON body of a request that is not a `GET`. */
interface Write {
  method: string;
  body: unknown;
}

/** An answer with its body read. */
interface Answer {
  response: Response;
  text: string;
}

/** The answer's problem body, or one made from its status when it has none. */
function problemOf(response: Response, text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // not JSON: a proxy's page, say
  }
  return { status: response.status, detail: `HTTP ${response.status} ${response.statusText}`.trim() };
}

/**
 * A transport failure's cause as an error that names what failed but holds
 * nothing of the request (fetch implementations may attach it).
 */
function scrub(cause: unknown): Error {
  if (cause instanceof Error) {
    const inner = (cause as { cause?: unknown }).cause;
    const code = inner && typeof inner === "object" && "code" in inner ? String((inner as { code: unknown }).code) : "";
    const e = new Error(code ? `${cause.message} (${code})` : cause.message);
    e.name = cause.name;
    return e;
  }
  return new Error(String(cause));
}
