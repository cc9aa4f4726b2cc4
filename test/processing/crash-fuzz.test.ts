import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createInbox } from "../../src/inbox.ts";
import { until } from "../helpers/processing.ts";
import { standardRequest } from "../helpers/signers.ts";
import { repoRoot, tempDir } from "../helpers/temp.ts";
import { fuzzConfig } from "./fixtures/fuzz-config.ts";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const events = Number(process.env.FUZZ_EVENTS ?? 1000);
const kills = Number(process.env.FUZZ_KILLS ?? 50);

function spawnWorker(dbPath: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      join(repoRoot, "bin/run-ts.mjs"),
      join(repoRoot, "test/processing/fixtures/fuzz-worker.ts"),
      dbPath,
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

describe("crash fuzz: SIGKILL the worker process at random moments while events flow", () => {
  it(`${events} events, ${kills} kills: every event has exactly one committed handler row`, {
    timeout: 240_000,
  }, async () => {
    const dbPath = join(tmp.dir, "fuzz.db");
    const inbox = createInbox(fuzzConfig(dbPath), { env: {} });
    await inbox.ready();
    const setup = new Database(dbPath);
    setup.exec(
      "CREATE TABLE handled (event_id TEXT NOT NULL, delivery_id TEXT NOT NULL, attempt INTEGER NOT NULL)",
    );
    setup.close();

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
      const child = await spawnWorker(dbPath);
      // Events keep arriving while this worker runs.
      const more = ingest(5);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 100));
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
      await more;
      killed++;
      if (process.env.FUZZ_DEBUG)
        console.log("kill", killed, "sent", sent, "open", countOpen(dbPath));
    }
    await ingest(events);

    // A last worker, left alone, finishes what is left (expired leases are rescued).
    const survivor = await spawnWorker(dbPath);
    const killsDone = performance.now();
    await until(() => countOpen(dbPath) === 0, 60_000, "the queue to drain");
    const drainMs = performance.now() - killsDone;
    survivor.kill("SIGTERM");

    const db = new Database(dbPath, { readonly: true });
    const perEvent = db
      .prepare(
        "SELECT e.id, (SELECT count(*) FROM handled h WHERE h.event_id = e.id) AS n FROM events e",
      )
      .all() as Array<{ id: string; n: number }>;
    const reruns = (
      db.prepare("SELECT coalesce(sum(attempts - 1), 0) AS n FROM deliveries").get() as {
        n: number;
      }
    ).n;
    const rescued = (
      db.prepare("SELECT count(*) AS n FROM attempts WHERE outcome = 'lease-expired'").get() as {
        n: number;
      }
    ).n;
    const statuses = db
      .prepare("SELECT status, count(*) AS n FROM deliveries GROUP BY status")
      .all();
    db.close();
    await inbox.close();
    const lost = perEvent.filter((e) => e.n === 0).length;
    const duplicated = perEvent.filter((e) => e.n > 1).length;
    console.info(
      `crash fuzz: ${killed} SIGKILLs, ${perEvent.length} events, ${reruns} re-runs (${rescued} rescued leases), ${lost} lost, ${duplicated} duplicated; drained ${Math.round(drainMs)} ms after the last kill`,
    );
    expect(perEvent).toHaveLength(events);
    expect(statuses).toEqual([{ status: "done", n: events }]);
    expect(lost).toBe(0);
    expect(duplicated).toBe(0);
  });
});

function countOpen(dbPath: string): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (
      db.prepare("SELECT count(*) AS n FROM deliveries WHERE status <> 'done'").get() as {
        n: number;
      }
    ).n;
  } finally {
    db.close();
  }
}
