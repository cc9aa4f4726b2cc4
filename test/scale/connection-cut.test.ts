import { afterEach, describe, expect, it } from "vitest";
import {
  clusterCounts,
  postEvent,
  prepareSchema,
  spawnRole,
  useCluster,
  writeClusterConfig,
} from "../helpers/cluster.ts";
import { until } from "../helpers/processing.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

// A gateway (ingest and worker in one process) reaches PostgreSQL through a TCP proxy in this
// test. While deliveries stream in, the proxy resets every connection and refuses new ones for
// 1.5 s (a database restart, a network cut), then lets them through again. Senders behave like
// providers: a non-2xx answer is retried with the same id until it gets a 2xx.

const cluster = useCluster();
const { tmp, processes, pools } = cluster;
const proxies: TcpProxy[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});

const outageMs = 1500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("PostgreSQL connections cut during a stream of deliveries", () => {
  it("answers 503 while the database is away, recovers by itself, and stores and processes every 2xx'd delivery exactly once", {
    timeout: 120_000,
  }, async () => {
    const storeUrl = cluster.database.schemaUrl();
    const pool = await prepareSchema(storeUrl);
    pools.push(pool);
    const direct = new URL(storeUrl);
    const proxy = await startTcpProxy({
      host: direct.hostname,
      port: Number(direct.port || 5432),
    });
    proxies.push(proxy);
    const proxied = new URL(storeUrl);
    proxied.hostname = "127.0.0.1";
    proxied.port = String(proxy.port);
    const config = writeClusterConfig(tmp.dir, "connection-cut", {
      storeUrl: proxied.toString(),
      maxDelayMs: 5,
      // Short leases and retries, so work interrupted by the cut is retried or rescued quickly;
      // a budget large enough that the outage cannot dead-letter anything.
      worker: { concurrency: 8, lease: "1s", pollInterval: "100ms" },
      retry: { schedule: ["200ms"], maxAttempts: 50 },
    });
    const gateway = await spawnRole(tmp.dir, config, "all");
    processes.push(gateway);

    let sending = true;
    let cutAt = Number.POSITIVE_INFINITY;
    let restoredAt = Number.POSITIVE_INFINITY;
    const acknowledged: Array<{ id: string; at: number }> = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const sender = async () => {
      while (sending) {
        const id = `msg_cut_${next++}`;
        for (;;) {
          const answer = await postEvent(gateway.url, id, { type: "scale.cut", id });
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          if (answer.status >= 200 && answer.status < 300) {
            acknowledged.push({ id, at: performance.now() });
            break;
          }
          await sleep(100);
        }
        await sleep(5);
      }
    };
    const senders = Array.from({ length: 4 }, sender);

    await until(() => acknowledged.length >= 100, 30_000, "100 acknowledged before the cut");
    await proxy.cut();
    cutAt = performance.now();
    await sleep(outageMs);
    await proxy.restore();
    restoredAt = performance.now();
    const ackedBeforeRestore = acknowledged.length;
    await until(
      () => acknowledged.length >= ackedBeforeRestore + 100,
      30_000,
      "100 acknowledged after the restore",
    ).catch((error: Error) => {
      const { stdout, stderr } = gateway.output();
      throw new Error(
        `${error.message}; answers ${JSON.stringify(Object.fromEntries(statuses))}, ${proxy.connections()} proxied connections\ngateway stderr:\n${stderr.slice(-3000)}\ngateway stdout:\n${stdout.slice(-6000)}`,
      );
    });
    sending = false;
    await Promise.all(senders);

    await until(
      async () => (await clusterCounts(pool)).open === 0,
      60_000,
      "every delivery to be done",
    );
    const counts = await clusterCounts(pool);
    const stored = new Set(
      (await pool.query<{ dedup_key: string }>("SELECT dedup_key FROM events")).rows.map(
        (r) => r.dedup_key,
      ),
    );
    const ok = [...statuses].filter(([s]) => s >= 200 && s < 300).reduce((n, [, c]) => n + c, 0);
    const unavailable = statuses.get(503) ?? 0;
    const firstAfterRestore = acknowledged.find((a) => a.at > restoredAt);
    const ackedDuringOutage = acknowledged.filter((a) => a.at > cutAt && a.at < restoredAt);
    console.info(
      `connection cut (${outageMs} ms): ${ok} 2xx, ${unavailable} 503, other answers ${JSON.stringify(Object.fromEntries([...statuses].filter(([s]) => s !== 503 && (s < 200 || s >= 300))))}, ${ackedDuringOutage.length} 2xx inside the outage window (commits before the cut), ${counts.events} stored, ${counts.handled} processed (${counts.reruns} re-runs, ${counts.rescued} rescued leases), first 2xx ${Math.round((firstAfterRestore?.at ?? Number.NaN) - restoredAt)} ms after the restore, ${proxy.connections()} proxied connections`,
    );

    // Ingest answered 503 during the outage, and only 2xx or 503 throughout.
    expect(unavailable).toBeGreaterThan(0);
    expect([...statuses.keys()].filter((s) => s !== 503 && (s < 200 || s >= 300))).toEqual([]);
    // No 2xx lost: every acknowledged delivery is stored, and processed exactly once.
    expect(acknowledged.filter((a) => !stored.has(a.id))).toEqual([]);
    expect(counts).toMatchObject({
      events: acknowledged.length,
      deliveries: acknowledged.length,
      open: 0,
      handled: acknowledged.length,
      handledEvents: acknowledged.length,
      lost: 0,
      duplicated: 0,
    });
    // Recovered by itself: the same process, ready again, and processing what came after.
    expect(gateway.child.exitCode).toBeNull();
    expect((await fetch(`${gateway.url}/readyz`)).status).toBe(200);
    expect(firstAfterRestore).toBeDefined();
  });
});
