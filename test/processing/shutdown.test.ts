import { afterEach, describe, expect, it } from "vitest";
import type { HandlerContext } from "../../src/handlers/types.ts";
import { processingInbox, until } from "../helpers/processing.ts";
import { storeFactories } from "../helpers/stores.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each(storeFactories())("worker shutdown ($name)", (factory) => {
  it("stops claiming, lets in-flight handlers finish, leaves the rest pending", async () => {
    let started = 0;
    const store = await factory.open();
    cleanups.push(() => store.cleanup());
    const env = processingInbox({
      store: store.url,
      handlers: {
        "std:*": async () => {
          started++;
          await new Promise((resolve) => setTimeout(resolve, 200));
        },
      },
      worker: { concurrency: 2 },
    });
    cleanups.push(env.cleanup);
    for (let i = 0; i < 4; i++) await env.post(`msg_stop_${i}`, { type: "t" });
    const worker = env.inbox.startWorker();
    await until(() => started === 2);
    await worker.stop(5000);
    const byStatus = async (status: "done" | "pending" | "running") =>
      (await env.inbox.store.listDeliveries({ status })).items.length;
    expect([await byStatus("done"), await byStatus("pending"), await byStatus("running")]).toEqual([
      2, 2, 0,
    ]);
    expect(started).toBe(2);
  });

  it("after the timeout, aborts the handler's signal and leaves its lease to expire", async () => {
    let aborted = false;
    let running = false;
    const store = await factory.open();
    cleanups.push(() => store.cleanup());
    const env = processingInbox({
      store: store.url,
      handlers: {
        "std:*": async (_event: unknown, ctx: HandlerContext) => {
          running = true;
          await new Promise<void>((resolve) => {
            ctx.signal.addEventListener("abort", () => {
              aborted = true;
              resolve();
            });
          });
          throw new Error("aborted");
        },
      },
      worker: { lease: "30s" },
    });
    cleanups.push(env.cleanup);
    await env.post("msg_slow", { type: "t" });
    const worker = env.inbox.startWorker();
    // The handler itself has started (on PostgreSQL the row is `running` one round trip before
    // the worker has the event in hand; a stop in that window releases the claim instead).
    await until(() => running, 10_000, "the handler to start");
    expect((await env.inbox.store.listDeliveries({ status: "running" })).items).toHaveLength(1);
    await worker.stop(50);
    expect(aborted).toBe(true);
    // The abandoned attempt's failure could not be recorded past the stop or was recorded as a
    // retry; either way it is not lost: it is running (lease will expire) or pending.
    const open = (await env.inbox.store.listDeliveries({})).items.map((d) => d.status);
    expect(open.length).toBe(1);
    expect(["running", "pending"]).toContain(open[0]);
  });
});
