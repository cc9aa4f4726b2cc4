import { describe, expect, it } from "vitest";
import {
  percentile,
  postEvent,
  prepareSchema,
  spawnRole,
  useCluster,
  writeClusterConfig,
} from "../helpers/cluster.ts";
import { until } from "../helpers/processing.ts";

// A `--role ingest` process accepts; a `--role worker` process (another "node") starts the
// delivery. The worker polls only every 30 s, so a prompt start can only come from PostgreSQL
// LISTEN/NOTIFY. Times are measured, printed, never asserted.

const cluster = useCluster();
const { tmp, processes, pools } = cluster;

const events = 50;

describe("LISTEN/NOTIFY across processes", () => {
  it(`a worker process starts each of ${events} sequential events accepted by an ingest process, without waiting for its poll`, {
    timeout: 120_000,
  }, async () => {
    const storeUrl = cluster.database.schemaUrl();
    const pool = await prepareSchema(storeUrl);
    pools.push(pool);
    const config = writeClusterConfig(tmp.dir, "listen-notify", {
      storeUrl,
      worker: { concurrency: 4, pollInterval: "30s" },
    });
    const [ingest, worker] = await Promise.all([
      spawnRole(tmp.dir, config, "ingest"),
      spawnRole(tmp.dir, config, "worker"),
    ]);
    processes.push(ingest, worker);
    // The worker looks once at start; give its LISTEN connection a moment before measuring.
    await new Promise((resolve) => setTimeout(resolve, 300));

    const enqueueToStart: number[] = [];
    const postToStart: number[] = [];
    for (let i = 0; i < events; i++) {
      const id = `msg_notify_${i}`;
      const posted = performance.timeOrigin + performance.now();
      const answer = await postEvent(ingest.url, id, { type: "scale.notify", i });
      expect(answer.status).toBe(200);
      // Each event is waited for before the next is sent: the poll (30 s) can never be what
      // started it within the test's time.
      const row = await until(
        async () =>
          (
            await pool.query<{ started_at: number; received_at: number }>(
              `SELECT h.started_at, e.received_at FROM handled h JOIN events e ON e.id = h.event_id
               WHERE e.dedup_key = $1`,
              [id],
            )
          ).rows[0],
        20_000,
        `event ${i} to start in the worker process`,
      );
      enqueueToStart.push(row.started_at - row.received_at);
      postToStart.push(row.started_at - posted);
    }
    const handled = Number((await pool.query("SELECT count(*) AS n FROM handled")).rows[0]?.n);
    const byPid = (await pool.query<{ pid: number }>("SELECT DISTINCT pid FROM handled")).rows;
    console.info(
      `LISTEN/NOTIFY: ${events} sequential events, enqueue-to-start p50 ${percentile(enqueueToStart, 50).toFixed(1)} ms (p90 ${percentile(enqueueToStart, 90).toFixed(1)}, max ${Math.max(...enqueueToStart).toFixed(1)}); post-to-start p50 ${percentile(postToStart, 50).toFixed(1)} ms`,
    );
    expect(handled).toBe(events);
    expect(byPid.map((r) => r.pid)).toEqual([worker.child.pid]);
  });
});
