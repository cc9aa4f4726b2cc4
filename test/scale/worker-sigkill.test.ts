import type pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  clusterCounts,
  killHard,
  postEvent,
  prepareSchema,
  spawnRole,
  writeClusterConfig,
} from "../helpers/cluster.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { until } from "../helpers/processing.ts";
import { tempDir } from "../helpers/temp.ts";

// One `--role ingest` gateway and three `--role worker` processes on one PostgreSQL schema.
// While events stream in, one of the three workers is SIGKILLed at a random moment, again and
// again, and started again. Short leases (500 ms) let the survivors rescue its work quickly.

let database: Awaited<ReturnType<typeof freshDatabase>>;
const tmp = tempDir();
beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(async () => {
  await database.cleanup();
  tmp.cleanup();
});

const processes = new Set<GatewayProcess>();
const pools: pg.Pool[] = [];
afterEach(async () => {
  await Promise.all([...processes].map(killHard));
  processes.clear();
  await Promise.all(pools.splice(0).map((p) => p.end()));
});

const kills = Number(process.env.SCALE_KILLS ?? 12);

describe("SIGKILL one of three worker processes repeatedly under load", () => {
  it(`${kills} kills → 0 events lost, 0 duplicated transactional effects`, {
    timeout: 600_000,
  }, async () => {
    const storeUrl = database.schemaUrl();
    const pool = await prepareSchema(storeUrl);
    pools.push(pool);
    const config = writeClusterConfig(tmp.dir, "worker-sigkill", {
      storeUrl,
      // Up to 20 ms of work before the transaction: a kill often lands mid-handler.
      maxDelayMs: 20,
      worker: { concurrency: 4, lease: "500ms", pollInterval: "100ms" },
    });
    const spawn = async (role: "ingest" | "worker") => {
      const started = await spawnRole(tmp.dir, config, role);
      processes.add(started);
      return started;
    };
    const ingest = await spawn("ingest");
    const workers = await Promise.all([0, 1, 2].map(() => spawn("worker")));

    // Load: 6 senders stream unique events into the ingest process until the kills are over.
    let killing = true;
    const acknowledged: string[] = [];
    const refused: Array<{ id: string; status: number }> = [];
    let next = 0;
    const sender = async () => {
      while (killing) {
        const id = `msg_kill_${next++}`;
        const answer = await postEvent(ingest.url, id, { type: "scale.kill", id });
        if (answer.status === 200) acknowledged.push(id);
        else refused.push({ id, status: answer.status });
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    const senders = Array.from({ length: 6 }, sender);

    // Kills: wait a random 150–600 ms, SIGKILL a random worker, start a replacement.
    let killed = 0;
    const killedPids: number[] = [];
    while (killed < kills) {
      await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 450));
      const index = Math.floor(Math.random() * workers.length);
      const victim = workers[index]!;
      killedPids.push(victim.child.pid!);
      await killHard(victim);
      processes.delete(victim);
      killed++;
      workers[index] = await spawn("worker");
    }
    killing = false;
    await Promise.all(senders);
    expect(refused).toEqual([]);

    const drainStart = performance.now();
    await until(
      async () => (await clusterCounts(pool)).open === 0,
      60_000,
      "every delivery to be done",
    );
    const drainMs = performance.now() - drainStart;
    const counts = await clusterCounts(pool);
    const stored = new Set(
      (await pool.query<{ dedup_key: string }>("SELECT dedup_key FROM events")).rows.map(
        (r) => r.dedup_key,
      ),
    );
    const killedRuns = Number(
      (
        await pool.query("SELECT count(*) AS n FROM handled WHERE pid = ANY($1::int[])", [
          killedPids,
        ])
      ).rows[0]?.n,
    );
    console.info(
      `worker SIGKILL: ${killed} kills, ${acknowledged.length} events acknowledged, ${counts.events} stored, ${counts.handled} handler rows (${killedRuns} committed by workers later killed), recoveries: ${counts.reruns} re-runs, ${counts.rescued} rescued leases, ${counts.lost} lost, ${counts.duplicated} duplicated; drained ${Math.round(drainMs)} ms after the last kill`,
    );
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    expect(counts).toMatchObject({
      events: acknowledged.length,
      deliveries: acknowledged.length,
      open: 0,
      handled: acknowledged.length,
      handledEvents: acknowledged.length,
      lost: 0,
      duplicated: 0,
    });
    // The kills hit work in flight: some leases were rescued and their deliveries re-run.
    expect(counts.rescued).toBeGreaterThan(0);
    expect(counts.reruns).toBeGreaterThanOrEqual(counts.rescued);
    expect(ingest.child.exitCode).toBeNull();
  });
});
