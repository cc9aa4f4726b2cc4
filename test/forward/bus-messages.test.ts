import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pauseDestination, resumeDestination } from "../../src/operations/destinations.ts";
import { replayEvent } from "../../src/operations/replay.ts";
import { until } from "../helpers/processing.ts";
import { storeFactories } from "../helpers/stores.ts";
import { amqpHarness, type BusHarness, distinctIds, natsHarness, redisHarness } from "./bus-env.ts";
import { forwardingInbox } from "./forward-env.ts";

// Queue destinations in process, on each real broker (RabbitMQ of the machine, throwaway NATS
// and Redis servers): the headers or fields each message carries, the body byte for byte, a
// replay, retries while the broker is down, and pause/resume.

const sqlite = storeFactories().find((f) => f.kind === "sqlite")!;
const harnesses = { amqp: amqpHarness, nats: natsHarness, redis: redisHarness };

describe.each(Object.keys(harnesses) as Array<keyof typeof harnesses>)("%s destination", (type) => {
  let bus: BusHarness;
  beforeAll(async () => {
    bus = await harnesses[type]();
  });
  afterAll(async () => {
    await bus?.dispose();
  });
  /** Messages from `from` on (each test reads the same broker). */
  const since = async (from: number) => (await bus.read()).slice(from);

  it("carries the stable id, attempt, replay flag, source and type, the body as stored; a replay republishes flagged", async () => {
    const from = (await bus.read()).length;
    const env = await forwardingInbox(sqlite, { bus: bus.destination() });
    const worker = env.inbox.startWorker();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (
          await env.post(`msg_fields_${type}_${i}`, {
            type: "order.created",
            n: i,
            text: "é ✓ \u0000",
          })
        ).eventId,
      );
    await until(async () => distinctIds(await since(from)) === 3, 10_000, "3 messages");
    const messages = await since(from);
    expect(messages).toHaveLength(3);
    for (const message of messages) {
      const eventId = message.headers["hookinbox-event-id"]!;
      expect(ids).toContain(eventId);
      expect(message.headers["webhook-id"]).toBe(`${eventId}:bus`);
      // Redis has no dedup id of its own: its id is the entry's.
      if (type !== "redis") expect(message.brokerId).toBe(`${eventId}:bus`);
      expect(message.headers["hookinbox-attempt"]).toBe("1");
      expect(message.headers["hookinbox-replay"]).toBe("false");
      expect(message.headers["hookinbox-source"]).toBe("std");
      expect(message.headers["hookinbox-type"]).toBe("order.created");
      expect(message.headers["hookinbox-delivery-id"]).toMatch(/\S/);
      expect(message.headers["content-type"]).toBe("application/json");
      const event = await env.inbox.store.getEvent(eventId);
      expect(Buffer.compare(message.body, Buffer.from(event!.body))).toBe(0);
    }
    const replay = await replayEvent.run(env.inbox.operations, {
      id: ids[0]!,
      destination: ["bus"],
    });
    expect(replay.deliveries).toHaveLength(1);
    await until(async () => (await since(from)).length === 4, 10_000, "the replay");
    await worker.stop();
    const replayed = (await since(from))[3]!;
    expect(replayed.headers["hookinbox-replay"]).toBe("true");
    expect(replayed.headers["webhook-id"]).toBe(`${ids[0]}:bus`);
    // Brokers deduplicate a replay's retries, not the replay itself.
    if (type !== "redis")
      expect(replayed.brokerId).toBe(
        `${ids[0]}:bus:replay:${replayed.headers["hookinbox-delivery-id"]}`,
      );
    expect(
      Buffer.compare(
        replayed.body,
        messages.find((m) => m.headers["hookinbox-event-id"] === ids[0])!.body,
      ),
    ).toBe(0);
    expect(await since(from)).toHaveLength(4);
  });

  it("retries while the broker is unreachable (HOOKINBOX_BUS_UNREACHABLE), then publishes once it is back", async () => {
    const from = (await bus.read()).length;
    const env = await forwardingInbox(
      sqlite,
      { bus: bus.destination({ timeout: "2s" }, true) },
      {
        retry: { schedule: ["50ms"], jitter: "none", maxAttempts: 50 },
      },
    );
    await bus.proxy.cut();
    const worker = env.inbox.startWorker();
    const { eventId } = await env.post(`msg_down_${type}`, { type: "order.created" });
    const failed = () =>
      env.store.count(
        "SELECT count(*) AS n FROM deliveries WHERE last_error LIKE '%HOOKINBOX_BUS_UNREACHABLE%' AND attempts >= 2",
      );
    await until(async () => (await failed()) === 1, 10_000, "two failed attempts");
    expect(await since(from)).toHaveLength(0);
    await bus.proxy.restore();
    await until(async () => (await since(from)).length === 1, 10_000, "the message");
    await worker.stop();
    const [message] = await since(from);
    expect(message!.headers["webhook-id"]).toBe(`${eventId}:bus`);
    expect(Number(message!.headers["hookinbox-attempt"])).toBeGreaterThanOrEqual(3);
    expect(
      await env.store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'"),
    ).toBe(1);
  });

  it("one connection per destination in the process, reused by every publish, closed when the inbox closes", async () => {
    const from = (await bus.read()).length;
    const before = bus.proxy.connections();
    const env = await forwardingInbox(sqlite, { bus: bus.destination({ concurrency: 8 }, true) });
    const worker = env.inbox.startWorker({ concurrency: 8 });
    for (let i = 0; i < 30; i++)
      await env.post(`msg_conn_${type}_${i}`, { type: "order.created", n: i });
    await until(async () => distinctIds(await since(from)) === 30, 10_000, "30 messages");
    await worker.stop();
    expect(bus.proxy.connections() - before).toBe(1);
    await env.inbox.close();
    await until(() => bus.proxy.openSockets() === 0, 5_000, "the connection closed");
  });

  it("a paused destination publishes nothing until resumed", async () => {
    const from = (await bus.read()).length;
    const env = await forwardingInbox(sqlite, { bus: bus.destination() });
    await env.inbox.ready();
    await pauseDestination.run(env.inbox.operations, { name: "bus", reason: "test" });
    const worker = env.inbox.startWorker();
    for (let i = 0; i < 20; i++)
      await env.post(`msg_pause_${type}_${i}`, { type: "order.created", n: i });
    // Every delivery claimed and parked by the paused gate (for a minute, or until resumed).
    const parked = () =>
      env.store.count(
        `SELECT count(*) AS n FROM deliveries WHERE status = 'pending' AND run_at > ${Date.now() + 30_000}`,
      );
    await until(async () => (await parked()) === 20, 10_000, "20 parked deliveries");
    expect(await since(from)).toHaveLength(0);
    await resumeDestination.run(env.inbox.operations, { name: "bus" });
    await until(async () => distinctIds(await since(from)) === 20, 10_000, "20 messages");
    await worker.stop();
    expect(await since(from)).toHaveLength(20);
  });
});
