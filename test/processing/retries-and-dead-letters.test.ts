import { afterEach, describe, expect, it } from "vitest";
import { PermanentError } from "../../src/handlers/errors.ts";
import type { DeadLetterAlert } from "../../src/store/queue-types.ts";
import { manualClock, processingInbox, until } from "../helpers/processing.ts";
import { type StoreFactory, storeFactories } from "../helpers/stores.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh store of the factory's kind, cleaned up after the test. */
async function storeUrl(factory: StoreFactory): Promise<string> {
  const store = await factory.open();
  cleanups.push(() => store.cleanup());
  return store.url;
}

async function setup(
  factory: StoreFactory,
  handler: () => Promise<void>,
  retry: Record<string, unknown>,
  clock = manualClock(),
) {
  const alerts: DeadLetterAlert[] = [];
  const store = await storeUrl(factory);
  const env = processingInbox(
    {
      store,
      handlers: { "std:*": handler },
      retry,
      worker: { pollInterval: "20ms", lease: "30s" },
      alerts: { onDeadLetter: (alert: DeadLetterAlert) => void alerts.push(alert) },
    },
    { now: clock.now },
  );
  cleanups.push(env.cleanup);
  return { ...env, clock, alerts };
}

async function deliveryOf(env: Awaited<ReturnType<typeof setup>>, eventId: string) {
  const event = await env.inbox.store.getEvent(eventId);
  return event!.deliveries[0]!;
}

describe.each(storeFactories())("retries with a controllable clock ($name)", (factory) => {
  it("follows the backoff schedule exactly, then dead-letters after maxAttempts and alerts once", async () => {
    let calls = 0;
    const env = await setup(
      factory,
      async () => {
        calls++;
        throw new Error(`boom ${calls}`);
      },
      { schedule: ["1s", "2s", "4s"], maxAttempts: 4, jitter: "none" },
    );
    const worker = env.inbox.startWorker();
    const start = env.clock.now();
    const { eventId } = await env.post("msg_backoff", { type: "t" });
    await until(() => calls === 1, 5000, "attempt 1");
    await until(async () => (await deliveryOf(env, eventId)).status === "pending");
    expect((await deliveryOf(env, eventId)).runAt).toBe(new Date(start + 1000).toISOString());

    // Just before the due time nothing runs; at the due time attempt 2 runs.
    env.clock.advance(999);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(calls).toBe(1);
    env.clock.advance(1);
    await until(() => calls === 2, 5000, "attempt 2");
    await until(
      async () =>
        (await deliveryOf(env, eventId)).runAt === new Date(start + 1000 + 2000).toISOString(),
    );
    env.clock.advance(2000);
    await until(() => calls === 3, 5000, "attempt 3");
    await until(
      async () =>
        (await deliveryOf(env, eventId)).runAt === new Date(start + 3000 + 4000).toISOString(),
    );
    env.clock.advance(4000);
    await until(() => calls === 4, 5000, "attempt 4");
    const dead = await until(async () => {
      const d = await deliveryOf(env, eventId);
      return d.status === "dead" ? d : null;
    });
    expect(dead.attempts).toBe(4);
    expect(dead.lastError).toBe("Error: boom 4");
    expect(dead.attemptLog!.map((a) => a.outcome)).toEqual(["error", "error", "error", "error"]);
    await until(() => env.alerts.length === 1, 5000, "alert");
    // Time passes, sweeps run: still exactly one alert and no fifth call.
    env.clock.advance(3_600_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(env.alerts).toHaveLength(1);
    expect(env.alerts[0]).toMatchObject({
      eventId,
      target: "std:*",
      source: "std",
      attempts: 4,
      lastError: "Error: boom 4",
    });
    expect(calls).toBe(4);
    expect((await env.inbox.store.getEvent(eventId))!.status).toBe("dead");
    await worker.stop();
  });

  it("dead-letters a PermanentError at once, with one alert", async () => {
    let calls = 0;
    const env = await setup(
      factory,
      async () => {
        calls++;
        throw new PermanentError("order does not exist");
      },
      { schedule: ["1s"], maxAttempts: 5 },
    );
    env.inbox.startWorker();
    const { eventId } = await env.post("msg_permanent", { type: "t" });
    const dead = await until(async () => {
      const d = await deliveryOf(env, eventId);
      return d.status === "dead" ? d : null;
    });
    expect(calls).toBe(1);
    expect(dead.attemptLog!.map((a) => a.outcome)).toEqual(["permanent"]);
    expect(dead.lastError).toBe("PermanentError: order does not exist");
    await until(() => env.alerts.length === 1);
    env.clock.advance(60_000);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(env.alerts).toHaveLength(1);
  });

  it("retries with full jitter drawn from the injected randomness", async () => {
    let calls = 0;
    const clock = manualClock();
    const alerts: DeadLetterAlert[] = [];
    const env = processingInbox(
      {
        store: await storeUrl(factory),
        handlers: {
          "std:*": async () => {
            calls++;
            throw new Error("x");
          },
        },
        retry: { schedule: ["10s"], maxAttempts: 2 },
        worker: { pollInterval: "20ms" },
        alerts: { onDeadLetter: (a: DeadLetterAlert) => void alerts.push(a) },
      },
      { now: clock.now, random: () => 0.25 },
    );
    cleanups.push(env.cleanup);
    env.inbox.startWorker();
    const start = clock.now();
    const { eventId } = await env.post("msg_jitter", { type: "t" });
    await until(async () => {
      const d = (await env.inbox.store.getEvent(eventId))!.deliveries[0]!;
      return d.status === "pending" && d.attempts === 1;
    });
    const delivery = (await env.inbox.store.getEvent(eventId))!.deliveries[0]!;
    expect(delivery.runAt).toBe(new Date(start + 2500).toISOString());
    clock.advance(2500);
    await until(() => alerts.length === 1);
    expect(calls).toBe(2);
  });

  it("sends a dead-letter alert again later when the alert hook failed", async () => {
    const clock = manualClock();
    let hookCalls = 0;
    const env = processingInbox(
      {
        store: await storeUrl(factory),
        handlers: {
          "std:*": async () => {
            throw new PermanentError("no");
          },
        },
        worker: { pollInterval: "20ms", lease: "200ms" },
        alerts: {
          onDeadLetter: () => {
            hookCalls++;
            if (hookCalls === 1) throw new Error("pager down");
          },
        },
      },
      { now: clock.now },
    );
    cleanups.push(env.cleanup);
    env.inbox.startWorker();
    await env.post("msg_alert_retry", { type: "t" });
    await until(() => hookCalls === 2, 5000, "the alert's second try");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hookCalls).toBe(2);
  });
});
