import { describe, expect, it } from "vitest";
import { destinationStatus } from "../../src/forward/destination-admin.ts";
import { manualClock, until } from "../helpers/processing.ts";
import { storeFactories } from "../helpers/stores.ts";
import { destination, forwardingInbox, receiver } from "./forward-env.ts";

// Flow control per destination: the circuit breaker opens on its failure rate and lets its trials
// through per cool-down until they succeed (the breaker in detail: circuit-breaker.test.ts); the
// concurrency cap and the rate limit hold for two workers sharing the store (across processes on
// PostgreSQL: see crash.test.ts).

/** Lets the workers poll several times (every 50 ms) before asserting that nothing more came. */
const idle = () => new Promise((resolve) => setTimeout(resolve, 500));

const doneCount = "SELECT count(*) AS n FROM deliveries WHERE status = 'done'";

describe.each(storeFactories())("destination flow control ($name)", (factory) => {
  it("the circuit opens at its failure rate, tries one trial per cool-down, and closes when it passes", async () => {
    const failing = 5;
    const app = await receiver((_r, index) => ({ status: index < failing ? 503 : 200 }));
    const env = await forwardingInbox(
      factory,
      {
        app: destination(app.url, {
          concurrency: 1,
          // 100% of at least 3 calls: the 3rd 503 opens it; one trial per cool-down.
          circuitBreaker: { failureRate: 1, minCalls: 3, cooldown: "1s", trials: 1 },
          retry: { schedule: ["50ms"], jitter: "none", maxAttempts: 20 },
        }),
      },
      { worker: { pollInterval: "50ms", concurrency: 4 } },
    );
    const configured = [{ name: "app", url: app.url }];
    const worker = env.inbox.startWorker();
    const first = await env.post("msg_circuit_0", { type: "t" });
    const open = await until(async () => {
      const status = await destinationStatus(env.inbox.store, configured, "app", Date.now());
      return status.circuit === "open" ? status : null;
    });
    // 503s are failures, not "down": the rate opened it, no run of network failures.
    expect(open.failures).toBe(0);
    // More work while the circuit is open waits with the rest.
    for (let i = 1; i <= 4; i++) await env.post(`msg_circuit_${i}`, { type: "t" });
    await until(async () => (await env.store.count(doneCount)) === 5, 20_000, "every delivery");
    await worker.stop();
    // 5 failures (3 to open, then 2 failed trials), then the trial that closes it and the rest.
    expect(app.requests).toHaveLength(failing + 5);
    // Once open, one request per cool-down: the trials.
    for (let i = 3; i <= failing; i++)
      expect(app.requests[i]!.at - app.requests[i - 1]!.at).toBeGreaterThanOrEqual(1000);
    const ofFirst = app.requests.filter((r) => r.headers["hookinbox-event-id"] === first.eventId);
    expect(ofFirst.length).toBeGreaterThanOrEqual(3);
    const closed = await destinationStatus(env.inbox.store, configured, "app", Date.now());
    expect(closed).toMatchObject({ circuit: "closed", failures: 0, state: "active", dead: 0 });
    expect(new Set(app.requests.map((r) => r.headers["webhook-id"])).size).toBe(5);
  });

  it("the concurrency cap holds for two workers on one store", async () => {
    const events = 12;
    const app = await receiver(() => ({ status: 200, delayMs: 150 }));
    const env = await forwardingInbox(factory, { app: destination(app.url, { concurrency: 2 }) });
    const workers = [env.inbox.startWorker(), env.inbox.startWorker()];
    for (let i = 0; i < events; i++) await env.post(`msg_cap_${i}`, { type: "t" });
    await until(async () => (await env.store.count(doneCount)) === events, 20_000, "all done");
    for (const worker of workers) await worker.stop();
    expect(app.maxInFlight()).toBeLessThanOrEqual(2);
    expect(app.requests).toHaveLength(events);
    expect(new Set(app.requests.map((r) => r.headers["webhook-id"])).size).toBe(events);
    // Deferred by the cap, not failed: every delivery took one attempt.
    expect(await env.store.count("SELECT count(*) AS n FROM attempts")).toBe(events);
  });

  it("the rate limit holds for two workers on one store: 4 attempts per window, the rest wait for the next", async () => {
    const events = 12;
    const app = await receiver();
    // The test's clock moves the rate window: nothing else can let a delivery through.
    const clock = manualClock(Math.floor(Date.now() / 1000) * 1000 + 100);
    const env = await forwardingInbox(
      factory,
      { app: destination(app.url, { rateLimit: { max: 4, per: "1s" } }) },
      {},
      { now: clock.now },
    );
    const workers = [env.inbox.startWorker(), env.inbox.startWorker()];
    for (let i = 0; i < events; i++) await env.post(`msg_rate_${i}`, { type: "t" });
    for (let window = 1; window <= 3; window++) {
      await until(() => app.requests.length >= 4 * window, 10_000, `window ${window}`);
      await idle();
      expect(app.requests).toHaveLength(4 * window);
      clock.advance(1000);
    }
    await until(async () => (await env.store.count(doneCount)) === events, 10_000, "all done");
    for (const worker of workers) await worker.stop();
    expect(new Set(app.requests.map((r) => r.headers["webhook-id"])).size).toBe(events);
    // Deferred by the limit, not failed: every delivery took one attempt.
    expect(await env.store.count("SELECT count(*) AS n FROM attempts")).toBe(events);
  });
});
