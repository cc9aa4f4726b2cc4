import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { PermanentError } from "../../src/handlers/errors.ts";
import { createLogger } from "../../src/log.ts";
import { counted, manualClock, processingInbox } from "../helpers/processing.ts";
import { storeFactories } from "../helpers/stores.ts";
import { seedFuzzEvents } from "./fixtures/fuzz-config.ts";
import { runToExit } from "./fixtures/run-child.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(storeFactories())("inbox.processAvailable ($name)", (factory) => {
  async function setup(config: Record<string, unknown>) {
    const store = await factory.open();
    cleanups.push(() => store.cleanup());
    const env = processingInbox({
      store: store.url,
      retry: { schedule: ["1h"], maxAttempts: 3, jitter: "none" },
      ...config,
    });
    cleanups.push(env.cleanup);
    return { ...env, store };
  }

  it("runs what is due and counts done, retried and dead exactly, the dead letter alerted before it returns; nothing remains", async () => {
    const ran: string[] = [];
    const alerted: string[] = [];
    const env = await setup({
      alerts: {
        onDeadLetter: async (alert: { deliveryId: string }) => {
          await sleep(50);
          alerted.push(alert.deliveryId);
        },
      },
      handlers: {
        "std:ok": async (event: { dedupKey: string }) => {
          ran.push(event.dedupKey);
        },
        "std:fail": async () => {
          throw new Error("try again later");
        },
        "std:perm": async () => {
          throw new PermanentError("never");
        },
      },
    });
    for (let i = 0; i < 3; i++) await env.post(`msg_ok_${i}`, { type: "ok" });
    for (let i = 0; i < 2; i++) await env.post(`msg_fail_${i}`, { type: "fail" });
    await env.post("msg_perm", { type: "perm" });

    const result = await env.inbox.processAvailable({ maxMs: 20_000, concurrency: 2 });
    expect(result).toEqual(counted({ done: 3, retried: 2, dead: 1 }));
    expect(ran.sort()).toEqual(["msg_ok_0", "msg_ok_1", "msg_ok_2"]);
    expect(await env.store.count("SELECT count(*) AS n FROM attempts")).toBe(6);
    expect(alerted).toHaveLength(1);
    expect(
      await env.store.count("SELECT count(*) AS n FROM deliveries WHERE alerted_at IS NOT NULL"),
    ).toBe(1);
    expect(
      await env.store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'pending'"),
    ).toBe(2);

    // The retries are due in an hour: a second call finds nothing.
    expect(await env.inbox.processAvailable({ maxMs: 20_000 })).toEqual(counted());
  });

  it("with eventIds claims only those events' deliveries; remaining counts theirs", async () => {
    const ran: string[] = [];
    const env = await setup({
      handlers: {
        "std:*": async (event: { dedupKey: string }) => {
          ran.push(event.dedupKey);
        },
      },
    });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await env.post(`msg_${i}`, { type: "x" })).eventId);

    const result = await env.inbox.processAvailable({ eventIds: [ids[1]!, ids[3]!] });
    expect(result).toEqual(counted({ done: 2 }));
    expect(ran.sort()).toEqual(["msg_1", "msg_3"]);
    expect(await env.inbox.store.countDue({ now: Date.now() })).toBe(3);

    const rest = await env.inbox.processAvailable({ eventIds: [ids[0]!, "evt_unknown"] });
    expect(rest).toMatchObject({ done: 1, remaining: 0 });
    expect(await env.inbox.processAvailable()).toMatchObject({ done: 2, remaining: 0 });
    expect(ran.sort()).toEqual(["msg_0", "msg_1", "msg_2", "msg_3", "msg_4"]);
  });

  it("stops claiming at the deadline and puts back what it claimed but did not start, with no attempt charged", async () => {
    const env = await setup({
      handlers: {
        "std:fast": async () => undefined,
        // Runs past the deadline, and ends within the grace.
        "std:slow": async () => sleep(600),
      },
    });
    for (let i = 0; i < 30; i++) await env.post(`msg_a_${i}`, { type: "fast" });
    await env.post("msg_slow", { type: "slow" });
    for (let i = 0; i < 30; i++) await env.post(`msg_b_${i}`, { type: "fast" });

    const result = await env.inbox.processAvailable({
      maxMs: 300,
      graceMs: 10_000,
      concurrency: 1,
    });
    // The fast handlers made the worker claim ahead; those behind the slow one were never started.
    expect(result.released).toBeGreaterThan(0);
    expect(result).toMatchObject({ retried: 0, dead: 0, failed: 0 });
    expect(result.remaining).toBe(61 - result.done);
    const done = await env.store.count(
      "SELECT count(*) AS n FROM deliveries WHERE status = 'done'",
    );
    expect(done).toBe(result.done);
    // One attempt per delivery that ran; none for the released ones, which are due again.
    expect(await env.store.count("SELECT count(*) AS n FROM attempts")).toBe(result.done);
    expect(
      await env.store.count(
        "SELECT count(*) AS n FROM deliveries WHERE status = 'pending' AND attempts = 0",
      ),
    ).toBe(61 - result.done);
    expect(
      await env.store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'running'"),
    ).toBe(0);
  });

  it("abandons a handler still running at the grace deadline; a later call rescues it once its lease expired and runs it exactly once more", async () => {
    const clock = manualClock();
    let runs = 0;
    const store = await factory.open();
    cleanups.push(() => store.cleanup());
    const env = processingInbox(
      {
        store: store.url,
        handlers: {
          // The first run hangs and ignores its signal; the second returns.
          "std:hang": async () => {
            runs++;
            if (runs === 1) await new Promise(() => undefined);
          },
        },
        worker: { lease: "1m" },
      },
      { now: clock.now },
    );
    cleanups.push(env.cleanup);
    const { eventId } = await env.post("msg_hang", { type: "hang" });

    // Long enough for the claim to land before the deadline on a busy machine.
    const first = await env.inbox.processAvailable({ maxMs: 2_000, graceMs: 100 });
    expect(first).toEqual(counted({ failed: 1 }));
    expect(runs).toBe(1);
    // Still leased to the abandoned run: a call inside the lease leaves it alone.
    expect(await env.inbox.processAvailable({ maxMs: 100, graceMs: 100 })).toEqual(counted());
    expect(runs).toBe(1);

    clock.advance(60_001);
    const second = await env.inbox.processAvailable({ maxMs: 5_000, graceMs: 100 });
    expect(second).toEqual(counted({ done: 1 }));
    expect(runs).toBe(2);
    const delivery = (await env.inbox.store.getEvent(eventId))!.deliveries[0]!;
    expect(delivery.status).toBe("done");
    expect(delivery.attemptLog!.map((a) => a.outcome)).toEqual(["lease-expired", "success"]);
  });

  it("warns once per inbox when a lease is not longer than maxMs + graceMs", async () => {
    const lines: string[] = [];
    const destination = new PassThrough();
    destination.on("data", (chunk: Buffer) => lines.push(...chunk.toString().trim().split("\n")));
    const store = await factory.open();
    cleanups.push(() => store.cleanup());
    const env = processingInbox(
      {
        store: store.url,
        handlers: {
          "std:short": { handler: async () => undefined, options: { lease: "2s" } },
          "std:long": async () => undefined,
        },
        worker: { lease: "1m" },
      },
      { logger: createLogger({ level: "warn", destination }) },
    );
    cleanups.push(env.cleanup);
    await env.inbox.processAvailable({ maxMs: 100, graceMs: 100 });
    expect(lines).toEqual([]);
    await env.inbox.processAvailable({ maxMs: 1_000, graceMs: 1_000 });
    await env.inbox.processAvailable({ maxMs: 1_000, graceMs: 1_000 });
    const warnings = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ leases: ["std:short"], maxMs: 1_000, graceMs: 1_000 });
  });

  const writers =
    factory.kind === "sqlite" ? (["inline", "thread"] as const) : (["inline"] as const);
  it.each(writers)(
    "leaves nothing behind: a process that never calls close() exits on its own (%s writer)",
    async (writer) => {
      const store = await factory.open();
      cleanups.push(() => store.cleanup());
      await seedFuzzEvents(
        store,
        Array.from({ length: 20 }, (_, i) => `msg_exit_${i}`),
      );

      // Nothing kills the child: the test waits for it to end by itself.
      const run = await runToExit("process-available-child.ts", [store.url, "60000", writer]);
      expect(run).toMatchObject({ code: 0, signal: null });
      expect(JSON.parse(run.stdout)).toEqual({
        result: counted({ done: 20 }),
        // Nothing keeps its event loop alive after the call: no timer, socket, LISTEN or thread.
        alive: [],
      });
      expect(await store.count("SELECT count(*) AS n FROM handled")).toBe(20);
    },
  );
});

describe("inbox.processAvailable options", () => {
  it("refuses options out of range with HOOKINBOX_PROCESS_OPTIONS_INVALID, before claiming anything", async () => {
    const env = processingInbox({ handlers: { "std:*": async () => undefined } });
    cleanups.push(env.cleanup);
    await env.post("msg_untouched", { type: "x" });
    for (const options of [
      { maxMs: -1 },
      { graceMs: Number.NaN },
      { concurrency: 0 },
      { concurrency: 1.5 },
      { eventIds: "evt_1" as unknown as string[] },
    ]) {
      await expect(env.inbox.processAvailable(options)).rejects.toMatchObject({
        code: "HOOKINBOX_PROCESS_OPTIONS_INVALID",
      });
    }
    expect(await env.inbox.store.countDue({ now: Date.now() })).toBe(1);
  });
});
