/**
 * `verifyWebhook` against the Standard Webhooks specification's published
 * example (the standard-webhooks repository: secret, message id, timestamp,
 * body and the signature its reference libraries produce), and what it
 * must refuse.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, test } from "node:test";
import { verifyWebhook, WebhookVerificationError } from "../src/index.js";

// The published example.
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const TIMESTAMP = 1614265330;
const BODY = '{"test": 2432232314}';
const SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
const AT = TIMESTAMP * 1000; // "now" for the example

function headers(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const h: Record<string, string | undefined> = {
    "webhook-id": ID,
    "webhook-timestamp": String(TIMESTAMP),
    "webhook-signature": SIGNATURE,
    ...overrides,
  };
  return Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<string, string>;
}

/** Signs as the service does (node:crypto, independent of the WebCrypto code under test). */
function sign(secret: string, id: string, ts: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${ts}.${body}`).digest("base64")}`;
}

async function refused(p: Promise<unknown>, why: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof WebhookVerificationError && why.test(e.message));
}

describe("verifyWebhook", () => {
  test("accepts the published example and returns the parsed body", async () => {
    assert.equal(sign(SECRET, ID, TIMESTAMP, BODY), SIGNATURE, "the independent signer agrees");
    assert.deepEqual(await verifyWebhook(SECRET, headers(), BODY, { now: AT }), { test: 2432232314 });
    // a fetch Headers, bytes, an ArrayBuffer, the secret without its prefix, header names in any case
    const bytes = new TextEncoder().encode(BODY);
    assert.ok(await verifyWebhook(SECRET, new Headers(headers()), bytes, { now: AT }));
    assert.ok(await verifyWebhook(SECRET, headers(), bytes.buffer, { now: new Date(AT) }));
    assert.ok(await verifyWebhook(SECRET.slice(6), headers(), BODY, { now: AT }));
    const upper = Object.fromEntries(Object.entries(headers()).map(([k, v]) => [k.toUpperCase(), v]));
    assert.ok(await verifyWebhook(SECRET, upper, BODY, { now: AT }));
  });

  test("two signatures while a secret rotates: one match is enough", async () => {
    const other = "whsec_c2VjcmV0LW9mLWEtcm90YXRlZC1lbmRwb2ludA==";
    const both = `${sign(other, ID, TIMESTAMP, BODY)} ${SIGNATURE}`;
    assert.ok(await verifyWebhook(SECRET, headers({ "webhook-signature": both }), BODY, { now: AT }));
    assert.ok(await verifyWebhook(other, headers({ "webhook-signature": both }), BODY, { now: AT }));
    const noise = `v2,${SIGNATURE.slice(3)} v1,!!! v1 ${SIGNATURE}`;
    assert.ok(await verifyWebhook(SECRET, headers({ "webhook-signature": noise }), BODY, { now: AT }));
  });

  test("refuses an altered body, id or timestamp, another secret, a bad signature", async () => {
    await refused(verifyWebhook(SECRET, headers(), '{"test": 2432232315}', { now: AT }), /no signature matches/);
    await refused(verifyWebhook(SECRET, headers({ "webhook-id": "msg_other" }), BODY, { now: AT }), /no signature/);
    const ts = String(TIMESTAMP + 1);
    await refused(verifyWebhook(SECRET, headers({ "webhook-timestamp": ts }), BODY, { now: AT }), /no signature/);
    await refused(verifyWebhook("whsec_c2VjcmV0", headers(), BODY, { now: AT }), /no signature matches/);
    for (const sig of ["v1,", "v1,dawfeoifkpqwoekfpqoekf", SIGNATURE.slice(0, 8), `v2,${SIGNATURE.slice(3)}`]) {
      await refused(verifyWebhook(SECRET, headers({ "webhook-signature": sig }), BODY, { now: AT }), /no signature/);
    }
  });

  test("refuses a timestamp more than 5 minutes off, either way", async () => {
    await refused(verifyWebhook(SECRET, headers(), BODY, { now: AT + 301_000 }), /too old/);
    await refused(verifyWebhook(SECRET, headers(), BODY, { now: AT - 301_000 }), /future/);
    assert.ok(await verifyWebhook(SECRET, headers(), BODY, { now: AT + 299_000 }));
    assert.ok(await verifyWebhook(SECRET, headers(), BODY, { now: AT - 299_000 }));
    // and by default against the clock: the example is from 2021
    await refused(verifyWebhook(SECRET, headers(), BODY), /too old/);
    const now = Math.floor(Date.now() / 1000);
    const fresh = headers({ "webhook-timestamp": String(now), "webhook-signature": sign(SECRET, ID, now, BODY) });
    assert.ok(await verifyWebhook(SECRET, fresh, BODY));
  });

  test("refuses missing or malformed headers and secrets", async () => {
    for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
      await refused(verifyWebhook(SECRET, headers({ [name]: undefined }), BODY, { now: AT }), new RegExp(name));
    }
    await refused(
      verifyWebhook(SECRET, headers({ "webhook-timestamp": "hello" }), BODY, { now: AT }),
      /not Unix seconds/,
    );
    for (const secret of ["", "whsec_", "whsec_not base64!"]) {
      await refused(verifyWebhook(secret, headers(), BODY, { now: AT }), /secret/);
    }
    const notJson = "not json";
    const sig = sign(SECRET, ID, TIMESTAMP, notJson);
    await refused(
      verifyWebhook(SECRET, headers({ "webhook-signature": sig }), notJson, { now: AT }),
      /signed but is not JSON/,
    );
  });
});
