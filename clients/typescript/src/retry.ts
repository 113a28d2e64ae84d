/**
 * How `429` and `503` answers (and connection failures) are retried.
 *
 * @module
 */

/** Retry settings; every field has a default. */
export interface RetryOptions {
  /** Retries after the first attempt; `0` turns retrying off. Default 3. */
  maxRetries?: number;
  /** First backoff in seconds when the answer has no `Retry-After`; doubles each retry. Default 0.5. */
  backoff?: number;
  /**
   * The longest wait in seconds. A `Retry-After` longer than this (a monthly
   * quota used up) is not waited for: the error is thrown at once. Default 60.
   */
  maxDelay?: number;
  /** Up to this share of `Retry-After` is added at random, so clients refused together do not return together. Default 0.1. */
  jitter?: number;
}

/** {@link RetryOptions} with every default filled in. */
export class RetryPolicy {
  readonly maxRetries: number;
  readonly backoff: number;
  readonly maxDelay: number;
  readonly jitter: number;

  constructor(options: RetryOptions = {}) {
    this.maxRetries = options.maxRetries ?? 3;
    this.backoff = options.backoff ?? 0.5;
    this.maxDelay = options.maxDelay ?? 60;
    this.jitter = options.jitter ?? 0.1;
    for (const [name, v] of Object.entries(this)) {
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
        throw new RangeError(`retry.${name} must be a finite number >= 0, not ${String(v)}`);
      }
    }
  }

  /**
   * Seconds to wait before retry number `attempt` (1-based), or `null` to
   * give up. With `retryAfter` (seconds): that, plus up to `jitter` of it;
   * without: exponential backoff with full jitter, capped at `maxDelay`.
   */
  delay(attempt: number, retryAfter: number | null, random: () => number = Math.random): number | null {
    if (attempt > this.maxRetries) return null;
    if (retryAfter !== null) {
      if (retryAfter > this.maxDelay) return null;
      return Math.min(retryAfter * (1 + random() * this.jitter), this.maxDelay);
    }
    const ceiling = Math.min(this.backoff * 2 ** (attempt - 1), this.maxDelay);
    return ceiling / 2 + (random() * ceiling) / 2;
  }
}
