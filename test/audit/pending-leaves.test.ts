import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { verifyInclusion } from "../../src/audit/merkle.ts";
import { sequenceAll } from "../../src/audit/sequencer.ts";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { openStore } from "../../src/store/open-store.ts";
import type { Store } from "../../src/store/types.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { stripeRequest, testSources } from "../helpers/signers.ts";
import { storeFactories, type TestStore } from "../helpers/stores.ts";

// On PostgreSQL an accept queues its leaf (migration 014) and the sequencer appends it within
// audit.maxMergeDelay (here an hour, so nothing sequences by itself during the test): until then
// its proof answers 409 HOOKINBOX_AUDIT_LEAF_PENDING, a duplicate's receipt leaf waits too, and
// after one sequencing both are leaves 0 and 1 whose proofs verify against a signed head.

const seed = "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb";
let gateway: Gateway;
let db: TestStore;
let store: Store;

async function api(path: string, method = "GET") {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${testAdminToken}` },
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function post(id: string) {
  const { body, headers } = stripeRequest(id);
  const response = await fetch(`${gateway.url}/webhooks/stripe`, { method: "POST", headers, body });
  expect(response.status).toBe(200);
  return (await response.json()) as { eventId: string; receiptId?: string };
}

const postgres = storeFactories().filter((f) => f.name === "postgres");

describe.each(postgres)("pending audit leaves ($name)", ({ open }) => {
  beforeEach(async () => {
    db = await open();
    gateway = await startGateway(
      { store: db.url, sources: testSources, audit: { maxMergeDelay: "1h" } },
      { port: 0, adminToken: testAdminToken, env: { HOOKINBOX_AUDIT_KEY: seed } },
    );
    store = openStore(db.url);
  });

  afterEach(async () => {
    await store.close();
    await gateway.close();
    await db.cleanup();
  });

  it("answers 409 HOOKINBOX_AUDIT_LEAF_PENDING until sequenced, then a proof that verifies", async () => {
    const { eventId } = await post("evt_pending_1");
    await post("evt_pending_1");
    expect(await store.auditPendingCount()).toBe(2);
    expect(await store.auditLeafPending(eventId)).toBe(true);
    expect((await store.auditTree()).size).toBe(0);

    const pending = await api(`/api/audit/proof/${eventId}?size=0`);
    expect(pending.status).toBe(409);
    expect(pending.body.error.code).toBe("HOOKINBOX_AUDIT_LEAF_PENDING");

    expect(await sequenceAll(store)).toBe(2);
    expect(await store.auditPendingCount()).toBe(0);
    expect(await store.auditLeafPending(eventId)).toBe(false);
    expect((await store.auditTree()).size).toBe(2);
    // Sequencing again finds nothing: every leaf is in the log exactly once.
    expect(await sequenceAll(store)).toBe(0);

    const head = await api("/api/audit/head", "POST");
    expect(head.body.size).toBe(2);
    const proof = await api(`/api/audit/proof/${eventId}`);
    expect(proof.status).toBe(200);
    expect(proof.body.leafIndex).toBe(0);
    expect(
      verifyInclusion(
        proof.body.leafIndex,
        proof.body.treeSize,
        Buffer.from(proof.body.leafHash, "hex"),
        proof.body.proof.map((h: string) => Buffer.from(h, "hex")),
        Buffer.from(head.body.rootHash, "hex"),
      ),
    ).toBe(true);
  });

  it("signing a head on demand sequences first: the head covers every accept before it", async () => {
    for (const id of ["evt_a", "evt_b", "evt_c"]) await post(id);
    expect(await store.auditPendingCount()).toBe(3);
    const head = await api("/api/audit/head", "POST");
    expect(head.body.size).toBe(3);
    expect(await store.auditPendingCount()).toBe(0);
  });
});
