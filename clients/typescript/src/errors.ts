/**
 * Errors: one class per family of problem, each carrying the problem body.
 *
 * ```text
 * MdsError
 * ├── ConfigurationError         no API key, a bad base URL
 * ├── TransportError             no HTTP answer (connection refused, timeout, aborted)
 * └── ApiError                   an HTTP error with an RFC 9457 problem body
 *     ├── InvalidRequestError    400 invalid_parameter, unknown_parameter, invalid_cursor, api_key_in_query
 *     ├── AuthenticationError    401 missing_api_key, invalid_api_key
 *     ├── NotFoundError          404 not_found
 *     ├── ExpiredError           410: a position older than the history kept
 *     │   ├── SyncTokenExpiredError  410 sync_token_expired
 *     │   └── EventsExpiredError     410 events_expired
 *     ├── RateLimitError         429 rate_limited, quota_exceeded (retryAfter)
 *     │   └── TooManyStreamsError    429 too_many_streams
 *     ├── UnavailableError       503 unavailable (retryAfter)
 *     └── ServerError            500 internal and any other 5xx
 * ```
 *
 * Branch with `instanceof` on the family, then on `code`. No message,
 * property or `cause` of these errors holds the API key: they are built
 * from the answer alone, never from the request's headers.
 *
 * @module
 */
import type { ResponseMeta } from "./meta.js";
import type { Problem } from "./types.js";

/** Base of every error this package throws. */
export class MdsError extends Error {
  override name = nameOf(this.constructor);
}

/** The client cannot be made as asked: no API key, or a base URL that is no URL. */
export class ConfigurationError extends MdsError {}

/** The request got no HTTP answer: connection refused or reset, timed out, or aborted. */
export class TransportError extends MdsError {}

/** An HTTP error answer; its problem body's fields are properties. */
export class ApiError extends MdsError {
  /** HTTP status. */
  readonly status: number;
  /** Stable machine-readable code (`invalid_parameter`, `rate_limited`, …); new ones may come. */
  readonly code: string;
  /** A sentence a person can act on. */
  readonly detail: string;
  /** The offending query parameter, where there is one. */
  readonly param: string | null;
  /** The request's `X-Request-Id`: quote it when reporting a problem. */
  readonly requestId: string | null;
  /** Short summary of the problem type. */
  readonly title: string | null;
  /** `/problems/<code>`. */
  readonly type: string | null;
  /** On a `429`: the policies violated (`minute`, `month`). */
  readonly violatedPolicies: string[] | null;
  /** Seconds the answer's `Retry-After` asked to wait, if it had one. */
  readonly retryAfter: number | null;
  /** The problem body as sent (with any field this version does not know). */
  readonly problem: Readonly<Record<string, unknown>>;
  /** Status, request id, ETag and rate-limit headers of the answer. */
  readonly meta: ResponseMeta;

  constructor(problem: Partial<Problem> & Record<string, unknown>, meta: ResponseMeta) {
    const code = typeof problem.code === "string" ? problem.code : `http_${meta.status}`;
    const detail = typeof problem.detail === "string" ? problem.detail : `HTTP ${meta.status}`;
    super(`${code} (HTTP ${meta.status}): ${detail}`);
    this.status = meta.status;
    this.code = code;
    this.detail = detail;
    this.param = typeof problem.param === "string" ? problem.param : null;
    this.requestId = typeof problem.request_id === "string" ? problem.request_id : meta.requestId;
    this.title = typeof problem.title === "string" ? problem.title : null;
    this.type = typeof problem.type === "string" ? problem.type : null;
    this.violatedPolicies = Array.isArray(problem.violated_policies)
      ? problem.violated_policies.filter((p): p is string => typeof p === "string")
      : null;
    this.retryAfter = meta.retryAfter;
    this.problem = Object.freeze({ ...problem });
    this.meta = meta;
  }
}

/** `400`: a bad parameter value, an unknown parameter, a bad cursor, a key in the query. */
export class InvalidRequestError extends ApiError {}
/** `401`: no key, or a key that is not an active one. */
export class AuthenticationError extends ApiError {}
/** `404`: no such company, article or route. */
export class NotFoundError extends ApiError {}
/** `410`: a position (a sync token, an event id) older than the history the service keeps. */
export class ExpiredError extends ApiError {}
/** `410 sync_token_expired`: the change feed cannot continue from this token; sync from scratch. */
export class SyncTokenExpiredError extends ExpiredError {}
/**
 * `410 events_expired`: the `since` event id is older than the event log
 * keeps (30 days by default); read the current state again, then the log
 * from its start.
 */
export class EventsExpiredError extends ExpiredError {}
/** `429`: the per-minute limit (`rate_limited`) or the monthly quota (`quota_exceeded`). */
export class RateLimitError extends ApiError {}
/** `429 too_many_streams`: the key already holds the most event streams open at once (2); close one first. */
export class TooManyStreamsError extends RateLimitError {}
/** `503 unavailable`: the service cannot reach its store, or ran out of time; retry later. */
export class UnavailableError extends ApiError {}
/** `500` and any other `5xx`: the service's fault. */
export class ServerError extends ApiError {}

/**
 * Each class's `name`, spelled out (a bundler that renames classes must not
 * change it); a class of its own takes its nearest ancestor's.
 */
const NAMES = new Map<unknown, string>([
  [MdsError, "MdsError"],
  [ConfigurationError, "ConfigurationError"],
  [TransportError, "TransportError"],
  [ApiError, "ApiError"],
  [InvalidRequestError, "InvalidRequestError"],
  [AuthenticationError, "AuthenticationError"],
  [NotFoundError, "NotFoundError"],
  [ExpiredError, "ExpiredError"],
  [SyncTokenExpiredError, "SyncTokenExpiredError"],
  [EventsExpiredError, "EventsExpiredError"],
  [RateLimitError, "RateLimitError"],
  [TooManyStreamsError, "TooManyStreamsError"],
  [UnavailableError, "UnavailableError"],
  [ServerError, "ServerError"],
]);

function nameOf(cls: unknown): string {
  for (let c = cls; c; c = Object.getPrototypeOf(c)) {
    const name = NAMES.get(c);
    if (name !== undefined) return name;
  }
  return "MdsError";
}

/** The error class for an answer's status (and code). */
export function apiErrorFor(problem: Partial<Problem> & Record<string, unknown>, meta: ResponseMeta): ApiError {
  switch (meta.status) {
    case 400:
      return new InvalidRequestError(problem, meta);
    case 401:
      return new AuthenticationError(problem, meta);
    case 404:
      return new NotFoundError(problem, meta);
    case 410:
      if (problem.code === "sync_token_expired") return new SyncTokenExpiredError(problem, meta);
      if (problem.code === "events_expired") return new EventsExpiredError(problem, meta);
      return new ExpiredError(problem, meta);
    case 429:
      return problem.code === "too_many_streams"
        ? new TooManyStreamsError(problem, meta)
        : new RateLimitError(problem, meta);
    case 503:
      return new UnavailableError(problem, meta);
    default:
      return meta.status >= 500 ? new ServerError(problem, meta) : new ApiError(problem, meta);
  }
}
