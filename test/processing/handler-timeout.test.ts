import { afterEach, describe, expect, it } from "vitest";
import type { HandlerContext } from "../../src/handlers/types.ts";
import { processingInbox, until } from "../helpers/processing.ts";
import { storeFactories } from "../helpers/stores.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each(storeFactories())("handler timeouts ($kind)", (factory) => {
  async function setup(
    hang: (event: unknown, ctx: HandlerContext) => Promise<void>,
    lease: string,
  ) {
    const store = await factory.open();
    cleanups.push(() => store.cleanup());
    let ok = 0;
    const env = processingInbox({
      store: store.url,
      handlers: {
        "std:hang": { handler: hang, options: { timeout: "150ms" } },
        "std:ok": async () => {
          ok++;
        },
      },
      retry: { schedule: ["10ms"], maxAttempts: 2, jitter: "none" },
      worker: { pollInterval: "20ms", lease, concurrency: 2 },
    });
    cleanups.push(env.cleanup);
    return { ...env, ok: () => ok };
  }

  async function attemptsOf(env: Awaited<ReturnType<typeof setup>>, eventId: string) {
    const event = await env.inbox.store.getEvent(eventId);
    return event!.deliveries[0]!;
  }

  it("aborts ctx.signal at the timeout, counts a failed attempt, retries, dead-letters; two hung handlers never stop the others", async () => {
    let aborted = 0;
    const env = await setup(
      (_event, ctx) =>
        new Promise<void>((_resolve, reject) => {
          ctx.signal.addEventListener("abort", () => {
            aborted++;
            reject(new Error("stopped on abort"));
          });
        }),
      "30s",
    );
    const worker = env.inbox.startWorker();
    const hung = [
      await env.post("msg_hang_1", { type: "hang", key: "a" }),
      await env.post("msg_hang_2", { type: "hang", key: "b" }),
    ];
    for (let i = 0; i < 10; i++) await env.post(`msg_ok_${i}`, { type: "ok", key: `k${i}` });
    await until(() => worker.stats().done === 10, 20_000, "ten other deliveries");
    for (const { eventId } of hung) {
      await until(
        async () => (await attemptsOf(env, eventId)).status === "dead",
        20_000,
        "dead letter",
      );
      const delivery = await attemptsOf(env, eventId);
      expect(delivery.attempts).toBe(2);
    }
    await until(() => worker.stats().dead === 2, 5_000, "dead letters counted");
    expect(aborted).toBe(4);
    expect(env.ok()).toBe(10);
    expect(worker.stats()).toMatchObject({ done: 10, retry: 2, dead: 2, abandoned: 0 });
    const detail = await env.inbox.store.listDeliveries({ status: "dead" });
    expect(detail.items).toHaveLength(2);
    // Recorded as the timeout, not as whatever the handler threw once aborted.
    expect(detail.items.map((d) => d.lastError)).toEqual(
      Array(2).fill(expect.stringContaining("The handler ran past its timeout")),
    );
  });

  it("abandons a handler that ignores the signal: its slot is freed, its lease expires, the rescue counts the try", async () => {
    let started = 0;
    const env = await setup(async () => {
      started++;
      await new Promise(() => undefined);
    }, "1s");
    const worker = env.inbox.startWorker();
    const { eventId } = await env.post("msg_hang_forever", { type: "hang", key: "a" });
    await until(() => worker.stats().abandoned === 1, 10_000, "abandoned");
    // Both slots are free again: other deliveries flow while the lease runs out.
    for (let i = 0; i < 10; i++) await env.post(`msg_ok_${i}`, { type: "ok", key: `k${i}` });
    await until(() => worker.stats().done === 10, 20_000, "ten other deliveries");
    await until(
      async () => (await attemptsOf(env, eventId)).status === "dead",
      30_000,
      "dead letter after the budget is spent",
    );
    await until(() => worker.stats().dead === 1, 5_000, "dead letter counted");
    expect(started).toBe(2);
    expect(env.ok()).toBe(10);
    expect(worker.stats()).toMatchObject({ done: 10, abandoned: 2, dead: 1 });
  }, 60_000);
});
