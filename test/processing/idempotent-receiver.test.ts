import { afterEach, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import type { HandlerContext, HandlerEvent } from "../../src/handlers/types.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { until } from "../helpers/processing.ts";
import { stripeRequest, testSources } from "../helpers/signers.ts";
import { type StoreFactory, storeFactories, type TestStore } from "../helpers/stores.ts";

// The four tests every idempotent receiver needs, over real HTTP with Stripe-signed requests.
// (The fourth, a worker killed between an effect's claim and its completion, is in
// effect-crash.test.ts since it needs a real process to kill.) On both stores: the handler's
// SQL runs in the store's own dialect, in the transaction that completes the delivery.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Env {
  gateway: Gateway;
  store: TestStore;
  emails: string[];
  calls: string[];
}

async function start(factory: StoreFactory): Promise<Env> {
  const store = await factory.open();
  cleanups.push(() => store.cleanup());
  const { sql, double } = store.dialect;
  const emails: string[] = [];
  const calls: string[] = [];
  const gateway = await startGateway(
    {
      store: store.url,
      sources: { stripe: testSources.stripe },
      handlers: {
        "stripe:invoice.paid": async (
          event: HandlerEvent<{ data: { object: { id: string } } }>,
          ctx: HandlerContext,
        ) => {
          calls.push(event.dedupKey);
          await ctx.effect(
            "receipt-email",
            async () => {
              emails.push(event.dedupKey);
              return { messageId: `m-${emails.length}` };
            },
            { onStale: "reclaim" },
          );
          await ctx.transaction(async (tx) => {
            await tx.query(sql("INSERT INTO credits (event_id, invoice) VALUES (?, ?)"), [
              event.dedupKey,
              event.payload.data.object.id,
            ]);
          });
        },
        "stripe:customer.subscription.updated": async (
          event: HandlerEvent<{ data: { object: { id: string; status: string } } }>,
          ctx: HandlerContext,
        ) => {
          calls.push(event.dedupKey);
          await ctx.transaction(async (tx) => {
            const sub = event.payload.data.object;
            await tx.query(
              sql(`INSERT INTO subscriptions (id, status, version) VALUES (?, ?, ?)
               ON CONFLICT (id) DO UPDATE SET status = excluded.status, version = excluded.version`),
              [sub.id, sub.status, event.version],
            );
          });
        },
      },
      worker: { concurrency: 8 },
    },
    { env: {}, port: 0, adminToken: testAdminToken },
  );
  cleanups.push(() => gateway.close());
  await store.exec("CREATE TABLE credits (event_id TEXT NOT NULL, invoice TEXT NOT NULL)");
  await store.exec(
    `CREATE TABLE subscriptions (id TEXT PRIMARY KEY, status TEXT NOT NULL, version ${double})`,
  );
  return { gateway, store, emails, calls };
}

const post = (env: Env, request: { body: string; headers: Record<string, string> }) =>
  fetch(`${env.gateway.url}/webhooks/stripe`, { method: "POST", ...request }).then(async (r) => ({
    status: r.status,
    json: (await r.json()) as { eventId: string; duplicate: boolean },
  }));

const rows = (env: Env, sql: string) => env.store.rows(sql);

async function settled(env: Env, eventId: string) {
  return until(async () => {
    const event = await env.gateway.inbox.store.getEvent(eventId);
    return event && event.status !== "pending" ? event : null;
  });
}

describe.each(storeFactories())("idempotent receiver ($name)", (factory) => {
  it("the same event twice in a row → one effect, one credit", async () => {
    const env = await start(factory);
    const request = stripeRequest("evt_twice");
    const first = await post(env, request);
    await settled(env, first.json.eventId);
    const second = await post(env, request);
    expect([first.status, second.status, second.json.duplicate]).toEqual([200, 200, true]);
    await env.gateway.worker!.idle();
    expect(env.emails).toEqual(["evt_twice"]);
    expect(env.calls).toEqual(["evt_twice"]);
    expect(await rows(env, "SELECT event_id FROM credits")).toEqual([{ event_id: "evt_twice" }]);
  });

  it("the same event 50 times in parallel → one effect, one credit", async () => {
    const env = await start(factory);
    const request = stripeRequest("evt_fifty");
    const results = await Promise.all(Array.from({ length: 50 }, () => post(env, request)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(50);
    await settled(env, results[0]!.json.eventId);
    await env.gateway.worker!.idle();
    expect(env.emails).toHaveLength(1);
    expect(env.calls).toHaveLength(1);
    expect(await rows(env, "SELECT count(*) AS n FROM credits")).toEqual([{ n: 1 }]);
  });

  it("two events of one resource out of order (newer first) → the newer state wins, the older is stale", async () => {
    const env = await start(factory);
    const t = Math.floor(Date.now() / 1000);
    const subscription = (id: string, status: string, created: number) =>
      stripeRequest(id, {
        type: "customer.subscription.updated",
        timestamp: t,
        extra: { created, data: { object: { id: "sub_1", status } } },
      });
    const newer = await post(env, subscription("evt_newer", "canceled", t - 10));
    await settled(env, newer.json.eventId);
    const older = await post(env, subscription("evt_older", "active", t - 60));
    const olderEvent = await settled(env, older.json.eventId);
    expect(olderEvent.deliveries.map((d) => d.status)).toEqual(["stale"]);
    expect(env.calls).toEqual(["evt_newer"]);
    expect(await rows(env, "SELECT id, status, version FROM subscriptions")).toEqual([
      { id: "sub_1", status: "canceled", version: t - 10 },
    ]);
  });
});
