import { afterEach, describe, expect, it } from "vitest";
import type { ProcessAvailableResult } from "../../src/queue/process-available.ts";
import { storeFactories } from "../helpers/stores.ts";
import { seedFuzzEvents } from "./fixtures/fuzz-config.ts";
import { runToExit } from "./fixtures/run-child.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const deliveries = 300;

describe.each(storeFactories())("processAvailable in concurrent processes ($name)", (factory) => {
  it(`3 processes over ${deliveries} due deliveries: each handler effect exactly once`, {
    timeout: 300_000,
  }, async () => {
    const store = await factory.open();
    cleanups.push(() => store.cleanup());
    await seedFuzzEvents(
      store,
      Array.from({ length: deliveries }, (_, i) => `msg_proc_${i}`),
    );

    // Three invocations at once (cron runs that overlap, or three serverless instances).
    const runs = await Promise.all(
      [1, 2, 3].map(() => runToExit("process-available-child.ts", [store.url, "120000"])),
    );
    const results = runs.map((run) => {
      expect(run, run.stderr).toMatchObject({ code: 0, signal: null });
      return (JSON.parse(run.stdout) as { result: ProcessAvailableResult }).result;
    });
    const sum = (key: keyof ProcessAvailableResult) =>
      results.reduce((total, result) => total + result[key], 0);
    expect(sum("done")).toBe(deliveries);
    expect([sum("retried"), sum("dead"), sum("failed")]).toEqual([0, 0, 0]);
    for (const result of results) expect(result.remaining).toBe(0);

    expect(await store.count("SELECT count(*) AS n FROM handled")).toBe(deliveries);
    expect(await store.count("SELECT count(DISTINCT delivery_id) AS n FROM handled")).toBe(
      deliveries,
    );
    expect(await store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'")).toBe(
      deliveries,
    );
    // One attempt per delivery: releases by one process never charged a try.
    expect(await store.count("SELECT count(*) AS n FROM attempts")).toBe(deliveries);
  });
});
