// `stuck` shows what stalls quietly (issue 8, items 4 and 11): a handler abandoned after its
// timeout at once (not only once its lease expires), and an ordering key blocked by a dead
// delivery with the count parked behind it, which the dead-letter alert carries too.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PermanentError } from "../../src/handlers/errors.ts";
import type { DeadLetterAlert } from "../../src/store/queue-types.ts";
import { runCli } from "../helpers/cli-capture.ts";
import { processingInbox, until } from "../helpers/processing.ts";
import { storeFactories } from "../helpers/stores.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each(storeFactories())("stuck reports ($name)", (factory) => {
  async function setup(config: Record<string, unknown>) {
    const store = await factory.open();
    cleanups.push(() => store.cleanup());
    const env = processingInbox({
      store: store.url,
      retry: { schedule: ["10ms"], maxAttempts: 2, jitter: "none" },
      worker: { pollInterval: "20ms", lease: "60s", concurrency: 2 },
      ...config,
    });
    cleanups.push(env.cleanup);
    // `hookinbox stuck` reads the same store through a config file.
    const configPath = join(env.dir, "stuck.config.json");
    writeFileSync(configPath, JSON.stringify({ store: store.url, sources: {} }));
    const stuckCli = async () => {
      const result = await runCli(["stuck", "--json", "--config", configPath]);
      return { code: result.code, report: JSON.parse(result.stdout) };
    };
    return { ...env, store, stuckCli };
  }

  it("shows a handler abandoned after its timeout at once, while its lease is still valid", async () => {
    const env = await setup({
      handlers: {
        "std:hang": {
          handler: () => new Promise(() => undefined),
          options: { timeout: "150ms" },
        },
      },
    });
    const worker = env.inbox.startWorker();
    const { eventId } = await env.post("msg_hang", { type: "hang", key: "a" });
    await until(() => worker.stats().abandoned === 1, 10_000, "abandoned");

    const report = await env.inbox.store.stuck({
      now: Date.now(),
      olderThanMs: 3_600_000,
      limit: 50,
    });
    expect(report.expiredLeases).toEqual([]);
    expect(report.abandoned).toHaveLength(1);
    expect(report.abandoned[0]).toMatchObject({
      eventId,
      status: "running",
      attempts: 1,
      leaseOwner: worker.id,
      lastError:
        "abandoned: the handler ignored its timeout's abort signal for 150 ms after 150 ms; its lease is left to expire",
    });
    const attempts = await env.store.rows<{ outcome: string; error_message: string | null }>(
      "SELECT outcome, error_message FROM attempts",
    );
    expect(attempts).toEqual([
      { outcome: "running", error_message: report.abandoned[0]!.lastError },
    ]);
    const cli = await env.stuckCli();
    expect(cli.code).toBe(1);
    expect(cli.report.stuck).toBe(true);
    expect(cli.report.abandoned.map((d: { id: string }) => d.id)).toEqual([
      report.abandoned[0]!.id,
    ]);
    expect(cli.report.expiredLeases).toEqual([]);
  });

  it("reports a key blocked by a dead delivery with the exact count parked, in the alert and in stuck", async () => {
    const alerts: DeadLetterAlert[] = [];
    let ran = 0;
    const env = await setup({
      handlers: {
        "std:*": async (event: { payload: { seq: number } }) => {
          ran++;
          if (event.payload.seq === 1) throw new PermanentError("seq 1 cannot be applied");
        },
      },
      alerts: { onDeadLetter: (alert: DeadLetterAlert) => void alerts.push(alert) },
    });
    // Everything arrives before the worker starts: seq 1 dies, seq 2–4 of key k park behind it.
    for (const seq of [1, 2, 3, 4]) await env.post(`msg_k_${seq}`, { type: "t", key: "k", seq });
    await env.post("msg_other", { type: "t", key: "other", seq: 2 });
    const worker = env.inbox.startWorker();
    await until(() => alerts.length === 1 && worker.stats().done === 1, 10_000, "alert");
    await worker.idle();
    expect(ran).toBe(2);
    expect(alerts).toEqual([
      expect.objectContaining({
        target: "std:*",
        orderingKey: "k",
        blocksKey: true,
        parked: 3,
        attempts: 1,
        lastError: "PermanentError: seq 1 cannot be applied",
      }),
    ]);
    const report = await env.inbox.store.stuck({
      now: Date.now(),
      olderThanMs: 3_600_000,
      limit: 50,
    });
    expect(report.blockedKeys).toEqual([
      {
        deliveryId: alerts[0]!.deliveryId,
        eventId: alerts[0]!.eventId,
        target: "std:*",
        source: "std",
        type: "t",
        orderingKey: "k",
        parked: 3,
        lastError: "PermanentError: seq 1 cannot be applied",
      },
    ]);
    expect(
      await env.store.count(
        "SELECT count(*) AS n FROM deliveries WHERE status IN ('pending', 'blocked')",
      ),
    ).toBe(3);
    const cli = await env.stuckCli();
    expect(cli.code).toBe(1);
    expect(cli.report.blockedKeys).toEqual(report.blockedKeys);
  });
});
