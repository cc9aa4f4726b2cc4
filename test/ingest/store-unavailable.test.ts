import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { stripeRequest, testSources } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function gatewayOn(path: string): Promise<Gateway> {
  const gateway = await startGateway(
    { sources: testSources },
    { env: {}, port: 0, adminToken: null, store: openSqliteStore({ path, busyTimeoutMs: 200 }) },
  );
  cleanups.push(() => gateway.close());
  return gateway;
}

async function post(gateway: Gateway, request: { body: string; headers: Record<string, string> }) {
  const response = await fetch(`${gateway.url}/webhooks/stripe`, { method: "POST", ...request });
  return { status: response.status, json: (await response.json()) as any };
}

function count(path: string, table: "events" | "receipts"): number {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe("store cannot commit", () => {
  it("answers 503 while another writer holds the database, acknowledges nothing, then stores the retry", async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const path = join(tmp.dir, "locked.db");
    const gateway = await gatewayOn(path);
    const locker = new Database(path);
    locker.exec("BEGIN EXCLUSIVE");
    const request = stripeRequest("evt_locked");
    const whileLocked = await Promise.all([
      post(gateway, request),
      post(gateway, request),
      post(gateway, stripeRequest("evt_other")),
    ]);
    expect(whileLocked.map((r) => r.status)).toEqual([503, 503, 503]);
    expect(whileLocked.map((r) => r.json.error.code)).toEqual(
      Array(3).fill("HOOKINBOX_STORE_UNAVAILABLE"),
    );
    locker.exec("COMMIT");
    locker.close();
    expect(count(path, "events")).toBe(0);
    expect(count(path, "receipts")).toBe(0);

    const retry = await post(gateway, request);
    expect(retry.status).toBe(200);
    expect(retry.json.duplicate).toBe(false);
    expect(count(path, "events")).toBe(1);
    expect(count(path, "receipts")).toBe(1);
  });

  it("answers 503 after the store is closed, and a restarted gateway stores the provider's retry", async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const path = join(tmp.dir, "closed.db");
    const first = await gatewayOn(path);
    await first.inbox.store.close();
    const request = stripeRequest("evt_closed");
    const refused = await post(first, request);
    expect(refused.status).toBe(503);
    expect(refused.json.error.code).toBe("HOOKINBOX_STORE_CLOSED");
    const ready = await fetch(`${first.url}/readyz`);
    expect(ready.status).toBe(503);

    const second = await gatewayOn(path);
    const retry = await post(second, request);
    expect(retry).toEqual({
      status: 200,
      json: { ok: true, eventId: expect.any(String), duplicate: false },
    });
    expect(count(path, "events")).toBe(1);
  });
});
