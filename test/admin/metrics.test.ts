import { afterEach, describe, expect, it } from "vitest";
import { startGateway } from "../../src/gateway/start-gateway.ts";
import { PermanentError } from "../../src/handlers/errors.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { hangingEffect, manualClock, processingInbox, until } from "../helpers/processing.ts";
import { type StoreFactory, storeFactories } from "../helpers/stores.ts";

// /metrics against what the test did: exact counts on both stores, store-derived gauges equal in
// a second inbox on the same store (another process, or this one after a restart).

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The value of one series in a Prometheus text exposition (undefined when absent). */
function metricValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    const wanted = Object.entries(labels);
    if (wanted.length === Object.keys(found).length && wanted.every(([k, v]) => found[k] === v)) {
      return Number(match[3]);
    }
  }
  return undefined;
}

async function setup(factory: StoreFactory) {
  const store = await factory.open();
  cleanups.push(() => store.cleanup());
  const clock = manualClock();
  const handlers = {
    "std:ok": async () => {},
    "std:fail": async () => {
      throw new PermanentError("refused for good");
    },
    "std:later": async () => {
      throw new Error("try again in an hour");
    },
  };
  const config = {
    store: store.url,
    handlers,
    retry: { schedule: ["1h"], jitter: "none" },
    worker: { pollInterval: "20ms", lease: "30s" },
  };
  const env = processingInbox(config, { now: clock.now });
  cleanups.push(env.cleanup);
  return { env, clock, config, store };
}

describe.each(storeFactories())("/metrics ($name)", (factory) => {
  it("counts exactly what arrived and ran, and reads queue figures from the store", async () => {
    const { env, clock, config } = await setup(factory);
    const worker = env.inbox.startWorker();
    // 4 new events, one of them sent three times (2 duplicates).
    await env.post("msg_ok_1", { type: "ok" });
    await env.post("msg_ok_1", { type: "ok" });
    await env.post("msg_ok_1", { type: "ok" });
    await env.post("msg_ok_2", { type: "ok" });
    await env.post("msg_fail", { type: "fail" });
    await env.post("msg_later", { type: "later" });
    // One forged request (signature mismatch) and one to a source that does not exist.
    expect(await env.postForged("msg_forged", { type: "ok" })).toBe(401);
    const unknown = await env.inbox.handle({
      method: "POST",
      url: "/webhooks/nope-1234",
      headers: {},
      body: new Uint8Array(0),
    });
    expect(unknown.status).toBe(404);

    await worker.idle();
    clock.advance(90_000);
    const { body: text, contentType } = await env.inbox.metrics!.render();
    expect(contentType).toMatch(/^text\/plain/);
    const value = (name: string, labels: Record<string, string> = {}) =>
      metricValue(text, name, labels);

    expect(value("hookinbox_webhooks_received_total", { source: "std" })).toBe(7);
    expect(value("hookinbox_webhooks_received_total", { source: "(unknown)" })).toBe(1);
    expect(text).not.toContain("nope-1234");
    expect(value("hookinbox_events_accepted_total", { source: "std" })).toBe(4);
    expect(value("hookinbox_duplicates_total", { source: "std" })).toBe(2);
    expect(
      value("hookinbox_rejected_total", { source: "std", reason: "HOOKINBOX_SIGNATURE_MISMATCH" }),
    ).toBe(1);
    expect(
      value("hookinbox_rejected_total", {
        source: "(unknown)",
        reason: "HOOKINBOX_SOURCE_NOT_FOUND",
      }),
    ).toBe(1);
    expect(value("hookinbox_ingest_duration_seconds_count", { source: "std" })).toBe(7);
    expect(value("hookinbox_attempts_total", { target: "std:ok" })).toBe(2);
    expect(value("hookinbox_attempts_total", { target: "std:fail" })).toBe(1);
    expect(value("hookinbox_attempts_total", { target: "std:later" })).toBe(1);
    expect(value("hookinbox_deliveries_total", { target: "std:ok", outcome: "done" })).toBe(2);
    expect(value("hookinbox_deliveries_total", { target: "std:fail", outcome: "dead" })).toBe(1);
    expect(value("hookinbox_deliveries_total", { target: "std:later", outcome: "retry" })).toBe(1);
    expect(value("hookinbox_delivery_duration_seconds_count", { target: "std:ok" })).toBe(2);
    expect(value("hookinbox_dead_letters_total", { target: "std:fail" })).toBe(1);
    expect(value("hookinbox_leases_rescued_total")).toBe(0);
    // From the store: one delivery waits an hour for its retry; one is dead.
    expect(
      value("hookinbox_queue_depth", { source: "std", target: "std:later", status: "pending" }),
    ).toBe(1);
    expect(
      value("hookinbox_queue_depth", { source: "std", target: "std:ok", status: "pending" }),
    ).toBeUndefined();
    expect(
      value("hookinbox_oldest_unprocessed_age_seconds", { source: "std", target: "std:later" }),
    ).toBe(90);
    expect(value("hookinbox_dead_letters", { source: "std", target: "std:fail" })).toBe(1);

    // Another process on the same store (or this one restarted) reads the same store figures,
    // and its own counters start at zero.
    await worker.stop();
    const other = processingInbox(config, { now: clock.now });
    cleanups.push(other.cleanup);
    await other.inbox.ready();
    const otherText = (await other.inbox.metrics!.render()).body;
    expect(
      metricValue(otherText, "hookinbox_queue_depth", {
        source: "std",
        target: "std:later",
        status: "pending",
      }),
    ).toBe(1);
    expect(
      metricValue(otherText, "hookinbox_oldest_unprocessed_age_seconds", {
        source: "std",
        target: "std:later",
      }),
    ).toBe(90);
    expect(
      metricValue(otherText, "hookinbox_dead_letters", { source: "std", target: "std:fail" }),
    ).toBe(1);
    expect(
      metricValue(otherText, "hookinbox_events_accepted_total", { source: "std" }),
    ).toBeUndefined();
  });

  it("counts rescued leases and held effects", async () => {
    const store = await factory.open();
    cleanups.push(() => store.cleanup());
    const clock = manualClock();
    const { handler, release, makeHeld } = hangingEffect();
    const env = processingInbox(
      {
        store: store.url,
        handlers: { "std:*": handler },
        worker: { pollInterval: "20ms", lease: "1s" },
      },
      { now: clock.now },
    );
    cleanups.push(env.cleanup);
    const second = await makeHeld(env, clock);
    await until(async () => (await env.inbox.store.listEffects({ status: "held" })).length === 1);
    await until(async () =>
      metricValue((await env.inbox.metrics!.render()).body, "hookinbox_effects_held_total", {
        target: "std:*",
      }),
    );
    const text = (await env.inbox.metrics!.render()).body;
    expect(metricValue(text, "hookinbox_leases_rescued_total")).toBe(1);
    expect(metricValue(text, "hookinbox_effects_held_total", { target: "std:*" })).toBe(1);
    expect(metricValue(text, "hookinbox_effects_held", { target: "std:*" })).toBe(1);
    release();
    await second.stop(1000);
  });
});

describe("the metrics listener", () => {
  it("serves /metrics on its own port, never on the webhook listener; admins read /api/metrics", async () => {
    const [sqlite] = storeFactories().filter((f) => f.kind === "sqlite");
    const store = await sqlite!.open();
    cleanups.push(() => store.cleanup());
    const gateway = await startGateway(
      { store: store.url, sources: {}, metrics: { port: 0 } },
      { env: {}, port: 0, adminToken: testAdminToken },
    );
    cleanups.push(() => gateway.close());
    expect(gateway.metrics?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const scraped = await fetch(gateway.metrics!.url);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain("# TYPE hookinbox_webhooks_received_total counter");
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${gateway.url}/api/metrics`)).status).toBe(401);
    const admin = await fetch(`${gateway.url}/api/metrics`, {
      headers: { authorization: `Bearer ${testAdminToken}` },
    });
    expect(admin.status).toBe(200);
    expect(await admin.text()).toContain("hookinbox_queue_depth");
  });

  it("is absent when metrics are disabled", async () => {
    const [sqlite] = storeFactories().filter((f) => f.kind === "sqlite");
    const store = await sqlite!.open();
    cleanups.push(() => store.cleanup());
    const gateway = await startGateway(
      { store: store.url, sources: {}, metrics: { enabled: false, port: 0 } },
      { env: {}, port: 0, adminToken: testAdminToken },
    );
    cleanups.push(() => gateway.close());
    expect(gateway.metrics).toBeNull();
    expect(gateway.inbox.metrics).toBeNull();
    const response = await fetch(`${gateway.url}/api/metrics`, {
      headers: { authorization: `Bearer ${testAdminToken}` },
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      "HOOKINBOX_METRICS_DISABLED",
    );
  });
});
