import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createInbox } from "../../src/inbox.ts";
import { until } from "../helpers/processing.ts";
import { standardRequest } from "../helpers/signers.ts";
import { storeFactories, type TestStore } from "../helpers/stores.ts";
import { repoRoot } from "../helpers/temp.ts";
import { fuzzConfig, handledTable } from "./fixtures/fuzz-config.ts";

// The same fuzz on both stores. PostgreSQL runs a shorter variant by default (each worker start
// costs a process boot either way; the suite must stay within its time budget).
const sizes = {
  sqlite: {
    events: Number(process.env.FUZZ_EVENTS ?? 1000),
    kills: Number(process.env.FUZZ_KILLS ?? 50),
  },
  postgres: {
    events: Number(process.env.FUZZ_PG_EVENTS ?? 300),
    kills: Number(process.env.FUZZ_PG_KILLS ?? 15),
  },
};

function spawnWorker(storeUrl: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      join(repoRoot, "bin/run-ts.mjs"),
      join(repoRoot, "test/processing/fixtures/fuzz-worker.ts"),
      storeUrl,
    ],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`worker exited early with ${code}`)));
  });
}

const countOpen = (store: TestStore) =>
  store.count("SELECT count(*) AS n FROM deliveries WHERE status <> 'done'");

describe.each(storeFactories())(
  "crash fuzz: SIGKILL the worker process at random moments while events flow ($name)",
  (factory) => {
    const { events, kills } = sizes[factory.kind];
    it(`${events} events, ${kills} kills: every event has exactly one committed handler row`, {
      timeout: 600_000,
    }, async () => {
      const store = await factory.open();
      const inbox = createInbox(fuzzConfig(store.url), { env: {} });
      await inbox.ready();
      await store.exec(handledTable);

      // Ingest in this process, a slice of the events before each worker start, so that every
      // worker is busy when it is killed: a kill lands at a random moment of its first ~100 ms.
      let sent = 0;
      const ingest = async (count: number) => {
        const batch = Array.from({ length: Math.min(count, events - sent) }, () => sent++);
        await Promise.all(
          batch.map(async (i) => {
            const signed = standardRequest(`msg_fuzz_${i}`, JSON.stringify({ type: "fuzz", n: i }));
            const response = await inbox.handle({
              method: "POST",
              url: "/webhooks/std",
              headers: signed.headers,
              body: new TextEncoder().encode(signed.body),
            });
            if (response.status !== 200)
              throw new Error(`ingest ${i}: ${response.status} ${response.body}`);
          }),
        );
      };

      let killed = 0;
      while (killed < kills) {
        await ingest(Math.ceil(events / kills));
        const child = await spawnWorker(store.url);
        // Events keep arriving while this worker runs.
        const more = ingest(5);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 100));
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        await exited;
        await more;
        killed++;
        if (process.env.FUZZ_DEBUG)
          console.log("kill", killed, "sent", sent, "open", await countOpen(store));
      }
      await ingest(events);

      // A last worker, left alone, finishes what is left (expired leases are rescued).
      const survivor = await spawnWorker(store.url);
      const killsDone = performance.now();
      await until(async () => (await countOpen(store)) === 0, 60_000, "the queue to drain").catch(
        async (error: unknown) => {
          // What was left, so that a failure says why (status, tries, error, when it may run).
          const left = await store.rows(
            "SELECT status, attempts, last_error, run_at, lease_expires_at FROM deliveries WHERE status <> 'done' LIMIT 10",
          );
          console.error("crash fuzz: deliveries left open", Date.now(), left);
          // Not left running (and polling the store) after the test has failed.
          survivor.kill("SIGKILL");
          throw error;
        },
      );
      const drainMs = performance.now() - killsDone;
      const survivorExited = new Promise((resolve) => survivor.once("exit", resolve));
      survivor.kill("SIGTERM");
      await survivorExited;

      const perEvent = await store.rows<{ id: string; n: number }>(
        "SELECT e.id, (SELECT count(*) FROM handled h WHERE h.event_id = e.id) AS n FROM events e",
      );
      const reruns = await store.count(
        "SELECT coalesce(sum(attempts - 1), 0) AS n FROM deliveries",
      );
      const mostTries = await store.count("SELECT max(attempts) AS n FROM deliveries");
      const rescued = await store.count(
        "SELECT count(*) AS n FROM attempts WHERE outcome = 'lease-expired'",
      );
      const statuses = await store.rows(
        "SELECT status, count(*) AS n FROM deliveries GROUP BY status",
      );
      await inbox.close();
      await store.cleanup();
      const lost = perEvent.filter((e) => e.n === 0).length;
      const duplicated = perEvent.filter((e) => e.n > 1).length;
      console.info(
        `crash fuzz (${factory.name}): ${killed} SIGKILLs, ${perEvent.length} events, ${reruns} re-runs (${rescued} rescued leases, at most ${mostTries} tries of one delivery), ${lost} lost, ${duplicated} duplicated; drained ${Math.round(drainMs)} ms after the last kill`,
      );
      expect(perEvent).toHaveLength(events);
      expect(statuses).toEqual([{ status: "done", n: events }]);
      expect(lost).toBe(0);
      expect(duplicated).toBe(0);
    });
  },
);
