import { describe, expect, it } from "vitest";
import {
  clusterCounts,
  inParallel,
  postEvent,
  prepareSchema,
  spawnRole,
  useCluster,
  writeClusterConfig,
} from "../helpers/cluster.ts";
import { until } from "../helpers/processing.ts";

// Three `hookinbox start` processes (ingest and workers each) on one PostgreSQL schema: the
// unique constraint deduplicates across them, and each event's handler runs once cluster-wide.

const cluster = useCluster();
const { tmp, processes, pools } = cluster;

const events = 200;
const copies = 5;

describe("three gateway processes on one database", () => {
  it(`${events} events, each delivered ${copies} times spread over the three in parallel → ${events} events, ${events * copies} receipts, ${events} handler effects`, {
    timeout: 120_000,
  }, async () => {
    const storeUrl = cluster.database.schemaUrl();
    const pool = await prepareSchema(storeUrl);
    pools.push(pool);
    const config = writeClusterConfig(tmp.dir, "three-gateways", {
      storeUrl,
      maxDelayMs: 3,
      worker: { concurrency: 8, pollInterval: "200ms" },
    });
    const gateways = await Promise.all([0, 1, 2].map(() => spawnRole(tmp.dir, config, "all")));
    processes.push(...gateways);

    // Copy c of event i goes to gateway (i + c) % 3, so each event reaches all three; then the
    // whole list is shuffled and sent 48 at a time.
    const deliveries = Array.from({ length: events * copies }, (_, n) => {
      const i = n % events;
      const c = Math.floor(n / events);
      return { id: `msg_scale_${i}`, gateway: gateways[(i + c) % 3]! };
    });
    for (let i = deliveries.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [deliveries[i], deliveries[j]] = [deliveries[j]!, deliveries[i]!];
    }
    const answers: Array<{ status: number; duplicate: boolean | null }> = [];
    const perGateway = [0, 0, 0];
    await inParallel(deliveries, 48, async (d) => {
      answers.push(await postEvent(d.gateway.url, d.id, { type: "scale.test", id: d.id }));
      perGateway[gateways.indexOf(d.gateway)]!++;
    });
    expect(answers.filter((a) => a.status === 200)).toHaveLength(events * copies);
    expect(answers.filter((a) => a.duplicate === false)).toHaveLength(events);
    expect(answers.filter((a) => a.duplicate === true)).toHaveLength(events * (copies - 1));

    await until(
      async () => (await clusterCounts(pool)).open === 0,
      60_000,
      "every delivery to be done",
    );
    const counts = await clusterCounts(pool);
    const byProcess = (
      await pool.query<{ pid: number; n: number }>(
        "SELECT pid, count(*)::int AS n FROM handled GROUP BY pid ORDER BY pid",
      )
    ).rows.map((r) => r.n);
    console.info(
      `three gateways: ${counts.events} events, ${counts.receipts} receipts (${counts.duplicateReceipts} duplicates), ${counts.handled} handler rows, posts per gateway ${perGateway.join("/")}, handler runs per process ${byProcess.join("/")}, ${counts.reruns} re-runs`,
    );
    expect(counts).toMatchObject({
      events,
      receipts: events * copies,
      duplicateReceipts: events * (copies - 1),
      deliveries: events,
      open: 0,
      handled: events,
      handledEvents: events,
      lost: 0,
      duplicated: 0,
    });
    // Every receipt of an event points at the one event row, whichever gateway took it.
    const perEvent = await pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM receipts GROUP BY event_id",
    );
    expect(new Set(perEvent.rows.map((r) => r.n))).toEqual(new Set([copies]));
    for (const gateway of gateways) expect(gateway.child.exitCode).toBeNull();
  });
});
