// What the circuit breaker is for, as correctness checks on the default breaker and the default
// retry policy (5s, 5m, 30m, … with full jitter); how fast is bench/breaker.ts's to say.
// 1. A flaky app that is up (it fails the first 0–2 attempts of each event, seeded) is not cut
//    off: all 150 events arrive, each answered 2xx exactly once. The default backoff puts some
//    second retries minutes out, so the test's clock skips ahead whenever nothing is running and
//    nothing is due (the schedule is kept; only idle waiting is skipped).
// 2. An outage: the app refuses connections while events arrive, then comes back; every event
//    reaches it, on the real clock, well before the 5-minute second retry of those that failed
//    twice: closing the circuit made them due.
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.ts";
import { onCleanup } from "../helpers/cleanups.ts";
import { until } from "../helpers/processing.ts";
import type { ReceivedRequest } from "../helpers/receiver.ts";
import { seeded } from "../helpers/seeded.ts";
import { storeFactories, type TestStore } from "../helpers/stores.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import { destination, forwardingInbox, receiver } from "./forward-env.ts";

const doneCount = "SELECT count(*) AS n FROM deliveries WHERE status = 'done'";

/** Real time plus whatever the test skipped. */
function skippingClock() {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    skipTo(at: number) {
      offset += Math.max(0, at - (Date.now() + offset));
    },
  };
}

/**
 * Skips the clock to the next due delivery whenever none is running and none is due, until
 * `stop()`: the schedule's delays pass without being waited for, and no lease is ever jumped
 * over (nothing is running when it moves).
 */
function skipIdleTime(store: TestStore, clock: ReturnType<typeof skippingClock>) {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const running = await store.count(
        "SELECT count(*) AS n FROM deliveries WHERE status = 'running'",
      );
      if (running > 0) continue;
      const [next] = await store.rows<{ at: number | null }>(
        "SELECT min(run_at) AS at FROM deliveries WHERE status = 'pending'",
      );
      if (next?.at != null && Number(next.at) > clock.now()) clock.skipTo(Number(next.at));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

/** A logger keeping the messages of what it logs, to count the circuit's transitions. */
function messagesLogger() {
  const messages: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n"))
        if (line.trim()) messages.push((JSON.parse(line) as { msg: string }).msg);
      done();
    },
  });
  const count = (prefix: string) => messages.filter((m) => m.startsWith(prefix)).length;
  return { logger: createLogger({ level: "info", destination }), count };
}

/** 2xx answers per webhook-id, from what the app answered to each request. */
function successes(requests: readonly ReceivedRequest[], answered: readonly number[]) {
  const counts = new Map<string, number>();
  requests.forEach((request, index) => {
    const status = answered[index] ?? 0;
    if (status < 200 || status >= 300) return;
    const id = request.headers["webhook-id"]!;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  });
  return counts;
}

describe.each(storeFactories())("circuit breaker goals ($name)", (factory) => {
  it("a flaky app that is up gets all 150 events, each exactly once, on the default breaker and retry", {
    timeout: 240_000,
  }, async () => {
    const events = 150;
    const random = seeded(150);
    // Event n fails its first failuresOf[n] attempts (0, 1 or 2), then succeeds.
    const failuresOf = Array.from({ length: events }, () => Math.floor(random() * 3));
    const seen = new Map<number, number>();
    const answered: number[] = [];
    const app = await receiver((request, index) => {
      const n = (JSON.parse(request.body.toString()) as { n: number }).n;
      const attempt = (seen.get(n) ?? 0) + 1;
      seen.set(n, attempt);
      const status = attempt <= failuresOf[n]! ? 500 : 200;
      answered[index] = status;
      return { status };
    });
    const clock = skippingClock();
    const log = messagesLogger();
    const env = await forwardingInbox(
      factory,
      // Default concurrency (10), breaker and retry policy.
      { app: destination(app.url, { timeout: "15s" }) },
      { retry: {} },
      { now: clock.now, random: seeded(7), logger: log.logger },
    );
    const worker = env.inbox.startWorker();
    for (let n = 0; n < events; n++) await env.post(`msg_flaky_${n}`, { type: "t", n });
    const stopSkipping = skipIdleTime(env.store, clock);
    try {
      await until(
        async () => (await env.store.count(doneCount)) === events,
        200_000,
        `${events} delivered`,
      );
    } finally {
      await stopSkipping();
      await worker.stop();
    }
    const ok = successes(app.requests, answered);
    expect(ok.size).toBe(events);
    expect([...ok.values()].every((n) => n === 1)).toBe(true);
    // Every failed attempt was retried once, nothing more: no attempt was lost or doubled.
    const failures = failuresOf.reduce((sum, k) => sum + k, 0);
    expect(app.requests).toHaveLength(events + failures);
    expect(await env.store.count("SELECT count(*) AS n FROM attempts")).toBe(events + failures);
    expect(
      await env.store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'dead'"),
    ).toBe(0);
  });

  it("after an outage every event that arrived during it reaches the app, on the default breaker and retry", {
    timeout: 120_000,
  }, async () => {
    const app = await receiver();
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: app.port });
    onCleanup(() => proxy.close());
    const url = `http://127.0.0.1:${proxy.port}/hooks`;
    const log = messagesLogger();
    const env = await forwardingInbox(
      factory,
      { app: destination(url, { timeout: "15s" }) },
      { retry: {} },
      { logger: log.logger },
    );
    const worker = env.inbox.startWorker();
    for (let i = 0; i < 5; i++) await env.post(`msg_before_${i}`, { type: "t" });
    await until(async () => (await env.store.count(doneCount)) === 5, 20_000, "warm-up");

    // Down for 8 s (past one cool-down and a failed round of trials); 24 events meanwhile.
    await proxy.cut();
    const outage = 24;
    for (let i = 0; i < outage; i++) {
      await env.post(`msg_outage_${i}`, { type: "t" });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const refused = await env.store.count(
      "SELECT count(*) AS n FROM attempts WHERE error_class = 'connect'",
    );
    await proxy.restore();
    // Generous, but far below the 5-minute second retry of an event refused twice.
    await until(
      async () => (await env.store.count(doneCount)) === 5 + outage,
      60_000,
      "every event after the outage",
    );
    await worker.stop();
    expect(refused).toBeGreaterThanOrEqual(5);
    expect(log.count("circuit opened: the destination is down")).toBe(1);
    expect(log.count("circuit closed")).toBe(1);
    expect(app.requests).toHaveLength(5 + outage);
    expect(new Set(app.requests.map((r) => r.headers["webhook-id"])).size).toBe(5 + outage);
  });
});
