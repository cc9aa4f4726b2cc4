// The queue-destination crash scenario, one file per broker: 1,000 events (10 ordering keys, 100
// in sequence each) forwarded by real `hookinbox start` processes to the broker, which is
// restarted once in the middle, with the first process SIGKILLed after that and a second one
// finishing the work. The broker then holds exactly 1,000 distinct delivery ids, and each key's
// sequence numbers first arrive in order.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, expect, it } from "vitest";
import { inParallel, killHard, postEvent, spawnRole } from "../helpers/cluster.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { until } from "../helpers/processing.ts";
import { secrets } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";
import { type BusHarness, distinctIds, type Received } from "./bus-env.ts";

const events = 1000;
const keys = 10;
const perKey = events / keys;

/** The first arrival of each (key, seq), per key in arrival order. */
function firstArrivals(messages: readonly Received[]): Map<string, number[]> {
  const seen = new Set<string>();
  const byKey = new Map<string, number[]>();
  for (const message of messages) {
    const { key, seq } = JSON.parse(message.body.toString()) as { key: string; seq: number };
    if (seen.has(`${key}/${seq}`)) continue;
    seen.add(`${key}/${seq}`);
    byKey.set(key, [...(byKey.get(key) ?? []), seq]);
  }
  return byKey;
}

/**
 * Defines the scenario for one broker's harness (made in the test, disposed after).
 *
 * @example
 * ```ts
 * busCrashScenario("nats", natsHarness);
 * ```
 */
export function busCrashScenario(name: string, harness: () => Promise<BusHarness>): void {
  const tmp = tempDir();
  const processes = new Set<GatewayProcess>();
  let bus: BusHarness | undefined;
  afterEach(async (context) => {
    // A failure shows what the processes logged (warnings and errors only).
    if (context.task.result?.state !== "pass")
      for (const p of processes) console.error(p.output().stderr.slice(-3000));
    await Promise.all([...processes].map(killHard));
    processes.clear();
    await bus?.dispose();
  });
  afterAll(() => tmp.cleanup());

  it(`${name}: 1,000 events, the broker restarted mid-way and a SIGKILLed worker: exactly 1,000 distinct ids, each key in order`, {
    timeout: 120_000,
  }, async () => {
    bus = await harness();
    const b = bus;
    const dbPath = join(tmp.dir, `${name}.db`);
    /** The config of one process: the first is paced slower, so that the restart and the kill land mid-way. */
    const writeConfig = (file: string, rateLimit: number) => {
      const path = join(tmp.dir, `${name}-${file}.json`);
      writeFileSync(
        path,
        JSON.stringify({
          store: `sqlite:${dbPath}`,
          log: { level: "warn" },
          sources: {
            std: {
              provider: "standard-webhooks",
              secrets: [secrets.standard],
              identity: { orderingKey: "$.key" },
            },
          },
          // The breaker opens on the restart's failures and lets trials through after a short cool-down.
          destinations: {
            bus: b.destination({
              timeout: "1s",
              concurrency: 8,
              rateLimit,
              circuitBreaker: { cooldown: "300ms" },
            }),
          },
          routes: [{ from: "std", to: "bus" }],
          retry: { schedule: ["50ms", "100ms", "200ms"], jitter: "none", maxAttempts: 100 },
          worker: { pollInterval: "50ms", concurrency: 8 },
        }),
      );
      return path;
    };
    const spawn = async (config: string) => {
      const started = await spawnRole(tmp.dir, config, "all");
      processes.add(started);
      return started;
    };
    /** Posts seq `from`..`to`-1 of every key, each key's in order, the keys side by side. */
    const post = (url: string, from: number, to: number) =>
      inParallel(
        Array.from({ length: keys }, (_, k) => `k${k}`),
        keys,
        async (key) => {
          for (let seq = from; seq < to; seq++) {
            const id = `msg_${name}_${key}_${seq}`;
            const answer = await postEvent(url, id, { type: "bus.crash", key, seq, id });
            if (answer.status !== 200) throw new Error(`${id}: ${answer.status}`);
          }
        },
      );
    const count = async () => distinctIds(await b.read());

    const first = await spawn(writeConfig("first", 100));
    // The first process gets 30 of each key's 100 before the restart and 20 more after it: on a
    // loaded machine the restart command can take seconds to begin while publishing goes on, so
    // only events posted after it returns are sure to be left for a new connection to publish.
    const beforeRestart = post(first.url, 0, 30);
    await until(async () => (await count()) >= 100, 30_000, "publishing under way");
    const restartMs = await b.restart();
    const atRestart = await count();
    await beforeRestart;
    const afterRestart = post(first.url, 30, perKey / 2);
    // Publishing picks up again on a new connection, then the worker dies mid-flight.
    await until(
      async () => (await count()) >= atRestart + 50,
      30_000,
      "publishing after the restart",
    );
    await afterRestart;
    await killHard(first);
    processes.delete(first);
    const killedAt = await count();
    const second = await spawn(writeConfig("second", 1000));
    await post(second.url, perKey / 2, perKey);
    await until(async () => (await count()) === events, 60_000, `${events} distinct ids`);
    const db = new Database(dbPath, { readonly: true });
    const open = () =>
      (
        db.prepare("SELECT count(*) AS n FROM deliveries WHERE status <> 'done'").get() as {
          n: number;
        }
      ).n;
    await until(() => open() === 0, 30_000, "every delivery done");
    db.close();
    const messages = await b.read();
    console.info(
      `bus ${name}: 1 broker restart (${restartMs} ms, at ${atRestart} ids), 1 SIGKILL (at ${killedAt} ids); ${messages.length} messages for ${distinctIds(messages)} ids`,
    );
    expect(killedAt).toBeLessThan(events / 2);
    expect(distinctIds(messages)).toBe(events);
    expect(new Set(messages.map((m) => m.headers["hookinbox-event-id"])).size).toBe(events);
    const arrivals = firstArrivals(messages);
    expect(arrivals.size).toBe(keys);
    for (const [, seqs] of arrivals)
      expect(seqs).toEqual(Array.from({ length: perKey }, (_, i) => i));
  });
}
