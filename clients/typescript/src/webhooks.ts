/**
 * `verifyWebhook`: checks a delivery signed by the Standard Webhooks scheme
 * (contract 11.2) with WebCrypto, so it runs in Node 20+, browsers, Deno,
 * Bun and edge runtimes alike.
 *
 * The signature is `v1,` + base64 of HMAC-SHA256 over
 * `"{webhook-id}.{webhook-timestamp}.{body}"`, keyed by the secret's
 * base64-decoded bytes (`whsec_` + base64). While a secret is being rotated
 * the header holds two signatures, space-separated; one match is enough.
 * A timestamp more than 5 minutes from now is refused, so a captured
 * delivery cannot be replayed later.
 *
 * @module
 */
import { MdsError } from "./errors.js";

/** A delivery was not verified: a header is missing or malformed, the timestamp is off, or no signature matches. */
export class WebhookVerificationError extends MdsError {
  override name = "WebhookVerificationError";
}

/** An event as the service sends it (contract 11.1). */
export interface WebhookEvent<D = unknown> {
  /** `evt_…`; the same on every retry of one delivery (also in `webhook-id`). */
  id: string;
  /** `article.published`, `article.updated`, `company.changed`, `corporate_action.added`, `corporate_action.changed`, `corporate_action.removed`, `prices.published`, `ping`. */
  type: string;
  /** RFC 3339. */
  created_at: string;
  /** The event's payload. */
  data: D;
}

/** A request's headers: a fetch `Headers`, or Node's `req.headers` (any case; arrays allowed). */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

/** Options of {@link verifyWebhook}. */
export interface VerifyWebhookOptions {
  /** Seconds the timestamp may be off from now, either way. Default 300. */
  tolerance?: number;
  /** "Now", for tests: a `Date` or milliseconds since the epoch. Default the clock. */
  now?: Date | number;
}

const PREFIX = "whsec_";
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function header(headers: HeadersLike, name: string): string | null {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name);
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(" ") : (v ?? null);
  }
  return null;
}

function base64(text: string): Uint8Array<ArrayBuffer> | null {
  if (!BASE64.test(text)) return null;
  const bin = atob(text);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

function bytesOf(body: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof body === "string") return new TextEncoder().encode(body);
  return body instanceof Uint8Array ? body : new Uint8Array(body);
}

/**
 * Verifies a webhook delivery and returns its parsed JSON body.
 *
 * Pass the body exactly as received (the raw bytes or text, not a parsed
 * and re-serialised object). Throws {@link WebhookVerificationError} when it
 * cannot be trusted.
 *
 * ```ts
 * const event = await verifyWebhook(process.env.MDS_WEBHOOK_SECRET!, req.headers, rawBody);
 * ```
 */
export async function verifyWebhook<D = unknown>(
  secret: string,
  headers: HeadersLike,
  body: string | Uint8Array | ArrayBuffer,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent<D>> {
  const keyBytes = base64(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret);
  if (keyBytes === null || keyBytes.length === 0) {
    throw new WebhookVerificationError("the secret is not `whsec_` followed by base64");
  }
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id) throw new WebhookVerificationError("missing webhook-id header");
  if (!timestamp) throw new WebhookVerificationError("missing webhook-timestamp header");
  if (!signatures) throw new WebhookVerificationError("missing webhook-signature header");
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError("webhook-timestamp is not Unix seconds");

  const now = options.now === undefined ? Date.now() : Number(options.now);
  const tolerance = options.tolerance ?? 300;
  const skew = Number(timestamp) - now / 1000;
  if (skew < -tolerance) throw new WebhookVerificationError("webhook-timestamp is too old");
  if (skew > tolerance) throw new WebhookVerificationError("webhook-timestamp is in the future");

  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const payload = bytesOf(body);
  const signed = new Uint8Array(prefix.length + payload.length);
  signed.set(prefix);
  signed.set(payload, prefix.length);

  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  let verified = false;
  for (const entry of signatures.split(" ")) {
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== "v1") continue;
    const signature = base64(entry.slice(comma + 1));
    if (signature === null || signature.length !== 32) continue;
    // crypto.subtle.verify compares in constant time.
    if (await crypto.subtle.verify("HMAC", key, signature, signed)) {
      verified = true;
      break;
    }
  }
  if (!verified) throw new WebhookVerificationError("no signature matches");
  try {
    return JSON.parse(new TextDecoder().decode(payload)) as WebhookEvent<D>;
  } catch {
    throw new WebhookVerificationError("the body is signed but is not JSON");
  }
}
