/**
 * What an answer says besides its body: status, request id, ETag and where
 * the key stands against its limits. Every result of the client carries it
 * as `meta` (a non-enumerable property, so `JSON.stringify` and deep
 * equality see the body alone; Stripe's Node client does the same with
 * `lastResponse`), and so does every {@link ApiError}.
 *
 * @module
 */

/** The headers of one answer that a caller acts on. */
export interface ResponseMeta {
  /** HTTP status. */
  readonly status: number;
  /** `X-Request-Id`: quote it when reporting a problem. */
  readonly requestId: string | null;
  /** `ETag` of a successful answer. */
  readonly etag: string | null;
  /** `X-RateLimit-Limit`: requests allowed per minute. */
  readonly limit: number | null;
  /** `X-RateLimit-Remaining`: requests left in the current minute. */
  readonly remaining: number | null;
  /** `X-RateLimit-Reset`: seconds until the per-minute limit is whole again. */
  readonly reset: number | null;
  /** `RateLimit` as sent (`"minute";r=598;t=1`: the policy closest to its limit). */
  readonly rateLimit: string | null;
  /** `RateLimit-Policy` as sent (`"minute";q=600;w=60, "month";q=1000000`). */
  readonly rateLimitPolicy: string | null;
  /** `Retry-After` in seconds (a `429` or `503`), else `null`. */
  readonly retryAfter: number | null;
}

/** A result with the {@link ResponseMeta} of the answer that carried it. */
export type WithMeta<T> = T & { readonly meta: ResponseMeta };

function intHeader(headers: Headers, name: string): number | null {
  const v = headers.get(name);
  if (v === null || !/^\d+$/.test(v.trim())) return null;
  return Number(v.trim());
}

/** Seconds to wait from a `Retry-After` value: delay-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, (at - now) / 1000);
}

/** The {@link ResponseMeta} of an answer. */
export function metaOf(response: Response): ResponseMeta {
  const h = response.headers;
  return Object.freeze({
    status: response.status,
    requestId: h.get("x-request-id"),
    etag: h.get("etag"),
    limit: intHeader(h, "x-ratelimit-limit"),
    remaining: intHeader(h, "x-ratelimit-remaining"),
    reset: intHeader(h, "x-ratelimit-reset"),
    rateLimit: h.get("ratelimit"),
    rateLimitPolicy: h.get("ratelimit-policy"),
    retryAfter: parseRetryAfter(h.get("retry-after")),
  });
}

/** `value` with `meta` attached as a non-enumerable, read-only property. */
export function withMeta<T extends object>(value: T, meta: ResponseMeta): WithMeta<T> {
  Object.defineProperty(value, "meta", { value: meta, enumerable: false });
  return value as WithMeta<T>;
}
