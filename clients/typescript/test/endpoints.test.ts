/**
 * Webhook endpoints (contract 11.2) against a real `mds demo`: create (the
 * secret shown once), list, get, update, rotate, test, attempts, replay,
 * delete; the refusals typed.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { InvalidRequestError, NotFoundError } from "../src/index.js";
import { serverWithClient } from "./helpers.js";

const URL_ = "https://hooks.example.com/mds";
const { server, client } = await serverWithClient();
after(() => server.stop());

test("an endpoint's lifecycle", async () => {
  const created = await client.webhooks.create({ url: URL_, types: ["article.published"], description: "ts" });
  assert.match(created.id, /^we_/);
  assert.match(created.secret, /^whsec_/);
  assert.equal(created.meta.status, 201);
  assert.deepEqual([created.url, created.types, created.status], [URL_, ["article.published"], "enabled"]);
  const listed = await client.webhooks.list();
  assert.deepEqual(
    listed.map((e) => e.id),
    [created.id],
  );
  assert.ok(!("secret" in (listed[0] ?? {})), "the secret is shown only at creation");
  assert.equal((await client.webhooks.get(created.id)).description, "ts");
  const updated = await client.webhooks.update(created.id, { description: "renamed", tags: ["results"] });
  assert.deepEqual([updated.description, updated.tags, updated.types], ["renamed", ["results"], ["article.published"]]);
  const rotated = await client.webhooks.rotateSecret(created.id, { expires_in: 60 });
  assert.ok(rotated.secret.startsWith("whsec_") && rotated.secret !== created.secret);
  const ping = await client.webhooks.test(created.id);
  assert.match(ping.event_id, /^evt_/);
  const attempts = await client.webhooks.attempts(created.id);
  assert.ok(attempts.every((a) => a.event_id.startsWith("evt_")));
  const since = (await client.events.list({ limit: 1 })).data[0]?.id ?? "";
  assert.equal((await client.webhooks.replay(created.id, since)).id, created.id);
  await client.webhooks.delete(created.id);
  await assert.rejects(client.webhooks.get(created.id), NotFoundError);
  assert.deepEqual(await client.webhooks.list(), []);
});

test("refusals are typed", async () => {
  await assert.rejects(client.webhooks.create({ url: "http://hooks.example.com/mds" }), (e: unknown) => {
    assert.ok(e instanceof InvalidRequestError);
    assert.deepEqual([e.status, e.param], [400, "url"]);
    return true;
  });
  await assert.rejects(client.webhooks.create({ url: "https://127.0.0.1/mds" }), InvalidRequestError);
  await assert.rejects(client.webhooks.get("we_nosuchendpoint"), NotFoundError);
});
