// The circuit breaker end to end (src/forward/circuit-policy.ts decides, the store keeps the
// counters), over real HTTP on loopback: it opens on a failure rate only past minCalls, never on
// 4xx answers, and on 5 connect/reset failures in a row; half-open lets exactly `trials` through
// across two workers; closing makes the deliveries it postponed and the retries a "down" failure
// pushed out due at once; a postponement is no attempt. Counts are exact.
import { describe, expect, it } from "vitest";
import { destinationStatus } from "../../src/forward/destination-admin.ts";
import { onCleanup } from "../helpers/cleanups.ts";
import { manualClock, until } from "../helpers/processing.ts";
import type { ReceivedRequest } from "../helpers/receiver.ts";
import { storeFactories, type TestStore } from "../helpers/stores.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import { destination, forwardingInbox, receiver } from "./forward-env.ts";

/** Lets the workers poll several times (every 50 ms) before asserting that nothing more came. */
const idle = (ms = 500) => new Promise((resolve) => setTimeout(resolve, ms));

const doneCount = "SELECT count(*) AS n FROM deliveries WHERE status = 'done'";

/** A destination URL through a TCP proxy the test can cut (connections refused) and restore. */
async function proxied(port: number) {
  const proxy = await startTcpProxy({ host: "127.0.0.1", port });
  onCleanup(() => proxy.close());
  return { proxy, url: `http://127.0.0.1:${proxy.port}/hooks` };
}

/** Deliveries as the store has them: attempts, run_at, and the circuit_wait mark. */
function deliveries(store: TestStore) {
  return store.rows<{
    id: string;
    status: string;
    attempts: number;
    run_at: number;
    wait: number;
  }>(
    `SELECT id, status, attempts, run_at, CASE WHEN circuit_wait THEN 1 ELSE 0 END AS wait
     FROM deliveries ORDER BY id`,
  );
}

/** Successful answers per webhook-id: exactly one each means delivered exactly once. */
function successesById(requests: readonly ReceivedRequest[], ok: (index: number) => boolean) {
  const counts = new Map<string, number>();
  requests.forEach((request, index) => {
    if (!ok(index)) return;
    const id = request.headers["webhook-id"]!;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  });
  return counts;
}

describe.each(storeFactories())("circuit breaker ($name)", (factory) => {
  it("opens on its failure rate only once minCalls calls are in the window; a rate under it keeps the traffic", async () => {
    // Under the rate: every other answer is a 503 (50% < 85%), 30 events, none held back.
    const flaky = await receiver((_r, index) => ({ status: index % 2 === 0 ? 503 : 200 }));
    // Over it: every answer a 503.
    const failing = await receiver(() => ({ status: 503 }));
    // A window of an hour: on a loaded machine the 10 calls took over the default 30 s, the
    // first slid out of the window, and an 11th went out before 10 were in it.
    const breaker = { failureRate: 0.85, minCalls: 10, window: "1h", cooldown: "1h" };
    const retry = { schedule: ["50ms"], jitter: "none", maxAttempts: 100 };
    const env = await forwardingInbox(factory, {
      flaky: destination(flaky.url, { concurrency: 1, circuitBreaker: breaker, retry }),
      failing: destination(failing.url, { concurrency: 1, circuitBreaker: breaker, retry }),
    });
    const configured = [
      { name: "flaky", url: flaky.url },
      { name: "failing", url: failing.url },
    ];
    const worker = env.inbox.startWorker();
    for (let i = 0; i < 30; i++) await env.post(`msg_rate_${i}`, { type: "t" });
    await until(async () => (await env.store.count(doneCount)) === 30, 30_000, "30 delivered");
    await idle();
    await worker.stop();
    // 30 events: each of them first failed then passed on its retry (60 requests), circuit closed.
    expect(flaky.requests).toHaveLength(60);
    expect(
      (await destinationStatus(env.inbox.store, configured, "flaky", Date.now())).circuit,
    ).toBe("closed");
    // The failing one: one attempt after another until the 10th, which opens it; then nothing.
    expect(failing.requests).toHaveLength(10);
    const status = await destinationStatus(env.inbox.store, configured, "failing", Date.now());
    expect(status).toMatchObject({ circuit: "open", failures: 0 });
    expect(
      await env.store.count(
        "SELECT count(*) AS n FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.target = 'failing'",
      ),
    ).toBe(10);
  });

  it("4xx answers (400, 404, 422) are the app up: they never open it", async () => {
    const statuses = [400, 404, 422];
    const app = await receiver((_r, index) => ({ status: statuses[index % 3]! }));
    const env = await forwardingInbox(factory, {
      app: destination(app.url, {
        concurrency: 4,
        circuitBreaker: { failureRate: 0.5, minCalls: 5, downInRow: 2, cooldown: "1h" },
        retry: { schedule: ["50ms"], jitter: "none", maxAttempts: 3 },
      }),
    });
    const worker = env.inbox.startWorker();
    for (let i = 0; i < 20; i++) await env.post(`msg_4xx_${i}`, { type: "t" });
    const dead = "SELECT count(*) AS n FROM deliveries WHERE status = 'dead'";
    await until(async () => (await env.store.count(dead)) === 20, 30_000, "20 dead letters");
    await worker.stop();
    // Every attempt went out: 20 events × 3 attempts, none held back by the breaker.
    expect(app.requests).toHaveLength(60);
    const status = await destinationStatus(
      env.inbox.store,
      [{ name: "app", url: app.url }],
      "app",
      Date.now(),
    );
    expect(status).toMatchObject({ circuit: "closed", failures: 0, dead: 20 });
  });

  it("5 down results in a row open it (connection refused); an answer in between starts the run over", async () => {
    let phase: "mixed" | "reset" = "mixed";
    // Mixed: 4 resets, a 503, 4 resets, then a 200 (the longest run is 4); then only resets.
    const app = await receiver((_r, index) => {
      if (phase === "mixed" && index === 4) return { status: 503 };
      if (phase === "mixed" && index === 9) return { status: 200 };
      throw new Error("reset the connection");
    });
    const { proxy, url } = await proxied(app.port);
    const env = await forwardingInbox(factory, {
      app: destination(url, {
        concurrency: 1,
        circuitBreaker: { cooldown: "1h" },
        retry: { schedule: ["50ms"], jitter: "none", maxAttempts: 50 },
      }),
    });
    const configured = [{ name: "app", url }];
    const worker = env.inbox.startWorker();
    await env.post("msg_down_0", { type: "t" });
    await until(async () => (await env.store.count(doneCount)) === 1, 20_000, "the mixed event");
    expect(app.requests).toHaveLength(10);
    expect((await destinationStatus(env.inbox.store, configured, "app", Date.now())).circuit).toBe(
      "closed",
    );

    // Now the app is gone: connections are refused.
    phase = "reset";
    await proxy.cut();
    for (let i = 1; i <= 3; i++) await env.post(`msg_down_${i}`, { type: "t" });
    const open = await until(async () => {
      const status = await destinationStatus(env.inbox.store, configured, "app", Date.now());
      return status.circuit === "open" ? status : null;
    });
    expect(open.failures).toBe(5);
    await idle(800);
    await worker.stop();
    // Exactly 5 attempts were refused; the breaker postponed everything after, recording nothing.
    const refused = await env.store.count(
      "SELECT count(*) AS n FROM attempts WHERE error_class = 'connect'",
    );
    expect(refused).toBe(5);
    const rows = (await deliveries(env.store)).filter((d) => d.status !== "done");
    expect(rows).toHaveLength(3);
    expect(rows.reduce((sum, d) => sum + d.attempts, 0)).toBe(5);
    expect(rows.every((d) => d.status === "pending" && d.wait === 1)).toBe(true);
    expect(await env.store.count("SELECT count(*) AS n FROM attempts")).toBe(10 + 5);
    expect(app.requests).toHaveLength(10);
  });

  it("half-open lets exactly `trials` requests through across two workers, and closes when they pass", async () => {
    const app = await receiver(() => ({ status: 503 }));
    const env = await forwardingInbox(
      factory,
      {
        app: destination(app.url, {
          concurrency: 10,
          circuitBreaker: { failureRate: 1, minCalls: 5, cooldown: "2s", trials: 3 },
          retry: { schedule: ["50ms"], jitter: "none", maxAttempts: 50 },
        }),
      },
      { worker: { pollInterval: "50ms", concurrency: 10 } },
    );
    const configured = [{ name: "app", url: app.url }];
    const workers = [env.inbox.startWorker(), env.inbox.startWorker()];
    const events = 12;
    for (let i = 0; i < events; i++) await env.post(`msg_trial_${i}`, { type: "t" });
    await until(async () => {
      const status = await destinationStatus(env.inbox.store, configured, "app", Date.now());
      return status.circuit === "open";
    });
    // Let the attempts in flight when it opened finish, then make the app slow but healthy.
    await idle(300);
    const before = app.requests.length;
    app.respond(() => ({ status: 200, delayMs: 1500 }));
    await until(() => app.requests.length > before, 10_000, "the first trial");
    const firstTrialAt = app.requests[before]!.at;
    await until(async () => (await env.store.count(doneCount)) === events, 30_000, "all done");
    for (const worker of workers) await worker.stop();
    const trials = app.requests.slice(before);
    // While the trials ran (1.5 s each), nothing else went out: exactly 3.
    const duringTrials = trials.filter((r) => r.at < firstTrialAt + 1400);
    expect(duringTrials).toHaveLength(3);
    // Then the circuit closed and every other event went at once: one success per event.
    expect(trials).toHaveLength(events);
    const ok = successesById(app.requests, (index) => index >= before);
    expect(ok.size).toBe(events);
    expect([...ok.values()].every((n) => n === 1)).toBe(true);
    expect(await destinationStatus(env.inbox.store, configured, "app", Date.now())).toMatchObject({
      circuit: "closed",
      failures: 0,
    });
  });

  it("closing makes postponed deliveries and retries after down failures due at once; postponements are no attempts", async () => {
    const app = await receiver();
    const { proxy, url } = await proxied(app.port);
    await proxy.cut();
    // The test's clock: it moves only when told, so "due at once" is due at the close's time.
    const clock = manualClock(Math.floor(Date.now() / 1000) * 1000);
    const t0 = clock.now();
    const env = await forwardingInbox(
      factory,
      {
        // The breaker's defaults: 5 down in a row, cool-down 5 s, 3 trials.
        app: destination(url, {
          concurrency: 10,
          retry: { schedule: ["5m"], jitter: "none", maxAttempts: 10 },
        }),
      },
      { worker: { pollInterval: "50ms", concurrency: 10 } },
      { now: clock.now },
    );
    const configured = [{ name: "app", url }];
    const status = () => destinationStatus(env.inbox.store, configured, "app", clock.now());
    // 8 events while the app is down, claimed together: 8 refused attempts, the 5th opens it.
    for (let i = 0; i < 8; i++) await env.post(`msg_down_${i}`, { type: "t" });
    const worker = env.inbox.startWorker();
    await until(
      async () => (await env.store.count("SELECT count(*) AS n FROM attempts")) === 8,
      20_000,
      "8 attempts",
    );
    await until(async () => (await status()).circuit === "open");
    // 4 more while it is open: postponed to the end of the cool-down, no attempt.
    for (let i = 8; i < 12; i++) await env.post(`msg_down_${i}`, { type: "t" });
    await until(
      async () =>
        (await deliveries(env.store)).filter((d) => d.attempts === 0 && d.wait === 1).length === 4,
      10_000,
      "4 postponed",
    );
    await idle();
    const open = await deliveries(env.store);
    const retries = open.filter((d) => d.attempts === 1);
    const postponed = open.filter((d) => d.attempts === 0);
    expect(retries).toHaveLength(8);
    expect(retries.every((d) => d.wait === 1 && d.run_at === t0 + 300_000)).toBe(true);
    expect(postponed).toHaveLength(4);
    expect(postponed.every((d) => d.wait === 1 && d.run_at === t0 + 5_000)).toBe(true);
    expect(await env.store.count("SELECT count(*) AS n FROM attempts")).toBe(8);
    expect(app.requests).toHaveLength(0);

    // The app is back; the cool-down ends. The clock stops there: whatever is delivered from
    // now on was made due by the closing, not by its backoff.
    await proxy.restore();
    clock.advance(5_000);
    await until(async () => (await env.store.count(doneCount)) === 12, 20_000, "all 12 delivered");
    await worker.stop();
    expect(clock.now()).toBe(t0 + 5_000);
    // 3 trials (postponed deliveries), then the other 9 at once: each event exactly once.
    expect(app.requests).toHaveLength(12);
    expect(new Set(app.requests.map((r) => r.headers["webhook-id"])).size).toBe(12);
    // Attempts, exactly: 8 refused + 12 delivered; a postponement recorded none.
    expect(await env.store.count("SELECT count(*) AS n FROM attempts")).toBe(20);
    const done = await deliveries(env.store);
    expect(done.filter((d) => d.attempts === 2)).toHaveLength(8);
    expect(done.filter((d) => d.attempts === 1)).toHaveLength(4);
    expect(done.every((d) => d.status === "done")).toBe(true);
    expect(await status()).toMatchObject({ circuit: "closed", failures: 0 });
  });
});
