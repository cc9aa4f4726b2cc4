import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { onCleanup } from "../helpers/cleanups.ts";
import { inParallel, killHard, postEvent, spawnRole } from "../helpers/cluster.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { until } from "../helpers/processing.ts";
import type { Receiver } from "../helpers/receiver.ts";
import { seeded } from "../helpers/seeded.ts";
import { secrets } from "../helpers/signers.ts";
import { schemaPool } from "../helpers/stores.ts";
import { tempDir } from "../helpers/temp.ts";
import { destination, receiver, requestsPerWindow } from "./forward-env.ts";

// 1,000 events forwarded by real `hookinbox start` processes to a destination that fails 20% of
// requests at random, with a worker SIGKILLed in the middle: a deduplicating receiver (by
// webhook-id) counts exactly 1,000 and every event arrives. On SQLite one gateway is killed and
// started again; on PostgreSQL one of three worker processes is killed for good, and the
// destination's concurrency cap and rate limit hold across the three.

const events = 1000;
const tmp = tempDir();
let database: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(async () => {
  await database.cleanup();
  tmp.cleanup();
});
const processes = new Set<GatewayProcess>();
afterEach(async () => {
  await Promise.all([...processes].map(killHard));
  processes.clear();
});

/** A receiver failing 20% of requests at random (500), recording the webhook-ids it accepted. */
async function flakyApp(seed: number) {
  const random = seeded(seed);
  const accepted = new Map<string, string>();
  const app: Receiver = await receiver((request) => {
    if (random() < 0.2) return { status: 500, delayMs: 5 };
    accepted.set(request.headers["webhook-id"]!, request.headers["hookinbox-event-id"]!);
    return { status: 200, delayMs: 5 };
  });
  return { app, accepted };
}

/** A JSON config: `std` events with `$.to` = "metered" go to `metered`, the rest to `app`. */
function writeConfig(name: string, store: string, destinations: Record<string, unknown>) {
  const path = join(tmp.dir, `${name}.json`);
  writeFileSync(
    path,
    JSON.stringify({
      store,
      log: { level: "warn" },
      sources: { std: { provider: "standard-webhooks", secrets: [secrets.standard] } },
      destinations,
      routes: [
        { from: "std", where: { "$.to": "app" }, to: "app" },
        { from: "std", where: { "$.to": "metered" }, to: "metered" },
      ],
      retry: { schedule: ["50ms", "100ms"], jitter: "none", maxAttempts: 50 },
      worker: { pollInterval: "50ms", concurrency: 8 },
    }),
  );
  return path;
}

async function spawn(config: string, role: "all" | "ingest" | "worker") {
  const started = await spawnRole(tmp.dir, config, role);
  processes.add(started);
  return started;
}

/** Posts events `from`..`to`-1 (10 at a time); every one must be acknowledged. */
async function post(url: string, from: number, to: number, target = "app") {
  const ids = Array.from({ length: to - from }, (_, i) => `msg_${target}_${from + i}`);
  const refused: string[] = [];
  await inParallel(ids, 10, async (id) => {
    const answer = await postEvent(url, id, { type: "crash.test", to: target, id });
    if (answer.status !== 200) refused.push(`${id}: ${answer.status}`);
  });
  expect(refused).toEqual([]);
}

describe("1,000 forwarded events, 20% failures, a SIGKILLed worker", () => {
  it("SQLite: the gateway is killed mid-way and started again; the receiver counts exactly 1,000", {
    timeout: 420_000,
  }, async () => {
    const { app, accepted } = await flakyApp(11);
    const store = `sqlite:${join(tmp.dir, "crash.db")}`;
    const config = writeConfig("sqlite", store, {
      app: destination(app.url, { timeout: "1s", concurrency: 8 }),
      metered: destination(app.url),
    });
    const first = await spawn(config, "all");
    await post(first.url, 0, events / 2);
    await until(() => app.requests.length >= 100, 30_000, "forwarding under way");
    await killHard(first);
    processes.delete(first);
    const killedAt = app.requests.length;
    const second = await spawn(config, "all");
    await post(second.url, events / 2, events);
    await until(() => accepted.size === events, 300_000, `${events} accepted webhook-ids`);
    console.info(
      `forward SIGKILL (sqlite): killed after ${killedAt} requests; ${app.requests.length} requests for ${accepted.size} webhook-ids`,
    );
    expect(killedAt).toBeLessThan(app.requests.length);
    expect(accepted.size).toBe(events);
    const arrived = new Set(
      [...accepted.values()].map((eventId) => eventId).filter((id) => id.length > 0),
    );
    expect(arrived.size).toBe(events);
    expect(new Set(app.requests.map((r) => r.headers["webhook-id"])).size).toBe(events);
    const bodies = new Set(
      app.requests.map((r) => (JSON.parse(r.body.toString()) as { id: string }).id),
    );
    expect(bodies.size).toBe(events);
  });

  it("PostgreSQL: one of three worker processes is killed; exactly 1,000 arrive, and the cap and rate limit hold across processes", {
    timeout: 240_000,
  }, async () => {
    const { app, accepted } = await flakyApp(23);
    const metered = await receiver();
    const storeUrl = database.schemaUrl();
    const config = writeConfig("postgres", storeUrl, {
      app: destination(app.url, { timeout: "1s", concurrency: 6 }),
      metered: destination(metered.url, { rateLimit: { max: 5, per: "3s" } }),
    });
    const ingest = await spawn(config, "ingest");
    const workers = [];
    for (let i = 0; i < 3; i++) workers.push(await spawn(config, "worker"));
    // Sent just after a window starts, so the first admissions sign within their window too.
    await until(() => Date.now() % 3000 < 100, 5_000, "a rate window's start");
    await post(ingest.url, 0, 15, "metered");
    await post(ingest.url, 0, events / 2);
    await until(() => app.requests.length >= 100, 30_000, "forwarding under way");
    await killHard(workers[0]!);
    processes.delete(workers[0]!);
    const killedAt = app.requests.length;
    await post(ingest.url, events / 2, events);
    await until(() => accepted.size === events, 150_000, `${events} accepted webhook-ids`);
    await until(() => metered.requests.length === 15, 30_000, "the metered events");
    console.info(
      `forward SIGKILL (postgres, 3 workers): killed after ${killedAt} requests; ${app.requests.length} requests for ${accepted.size} webhook-ids; most in flight ${app.maxInFlight()}`,
    );
    expect(accepted.size).toBe(events);
    expect(new Set(accepted.values()).size).toBe(events);
    expect(new Set(app.requests.map((r) => r.headers["webhook-id"])).size).toBe(events);
    // Concurrency 6 across the three processes (the killed one's work included).
    expect(app.maxInFlight()).toBeLessThanOrEqual(6);
    // 5 per 3 s window across the three processes: 15 events take at least three windows.
    const perWindow = requestsPerWindow(metered.requests, 3000);
    expect(Math.max(...perWindow)).toBeLessThanOrEqual(5);
    expect(perWindow.length).toBeGreaterThanOrEqual(3);
    const pool = schemaPool(storeUrl);
    onCleanup(() => pool.end());
    // The receiver sees a request before its worker commits `done` (and the killed worker's last
    // requests are re-sent once their leases expire), so wait for the store to settle, then assert.
    const open = async () =>
      Number(
        (await pool.query("SELECT count(*) AS n FROM deliveries WHERE status <> 'done'")).rows[0]
          ?.n,
      );
    await until(async () => (await open()) === 0, 60_000, "every delivery done");
    expect(await open()).toBe(0);
    expect(new Set(app.requests.map((r) => r.headers["webhook-id"])).size).toBe(events);
  });
});
