import { afterEach, describe, expect, it } from "vitest";
import type { HandlerContext } from "../../src/handlers/types.ts";
import { processingInbox, until } from "../helpers/processing.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("worker shutdown", () => {
  it("stops claiming, lets in-flight handlers finish, leaves the rest pending", async () => {
    let started = 0;
    const env = processingInbox({
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
    const env = processingInbox({
      handlers: {
        "std:*": async (_event: unknown, ctx: HandlerContext) => {
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
    await until(
      async () => (await env.inbox.store.listDeliveries({ status: "running" })).items.length === 1,
    );
    await worker.stop(50);
    expect(aborted).toBe(true);
    // The abandoned attempt's failure could not be recorded past the stop or was recorded as a
    // retry; either way it is not lost: it is running (lease will expire) or pending.
    const open = (await env.inbox.store.listDeliveries({})).items.map((d) => d.status);
    expect(open.length).toBe(1);
    expect(["running", "pending"]).toContain(open[0]);
  });
});
