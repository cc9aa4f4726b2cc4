// npm run bench:forward-bus [-- --events N]
//
// Queue destinations (issue 26) beside HTTP forwarding, in one run on SQLite: N pre-signed ~2 KB
// Stripe events, 50 in flight, posted to `hookinbox start` (its own process) forwarding every
// event to one destination of each type in turn, on a fresh store each time:
// - http: a bare node:http receiver in this process, counting distinct hookinbox-event-ids;
// - amqp: the machine's RabbitMQ (127.0.0.1:5672, guest/guest), a durable queue bound to a
//   fresh exchange, counted by its message count;
// - nats: a throwaway nats-server -js on a free port, a file stream, counted by its messages;
// - redis: a throwaway redis-server (append-only, fsync every second) on a free port, by XLEN.
// Forwarded events/s = N over the time from the first send to the N-th arrival (polled every
// 20 ms), and the ratio to HTTP. Every destination: concurrency 50, worker concurrency 50.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { connect as natsConnect } from "nats";
import { createClient } from "redis";
import {
  declareRabbitQueue,
  rabbitUrl,
  startNatsServer,
  startRedisServer,
} from "../test/helpers/brokers.ts";
import { eventPoster } from "./forward/post-events.ts";
import { startHookinboxPostgres } from "./postgres/servers.ts";
import { backgroundCpu, signedEvents } from "./queue-events.ts";

const { values } = parseArgs({ options: { events: { type: "string", default: "5000" } } });
const EVENTS = Number(values.events);
const IN_FLIGHT = 50;
const SECRET = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A destination under test: its config, how many messages arrived, and its teardown. */
interface Sink {
  readonly destination: Record<string, unknown>;
  count(): Promise<number>;
  close(): Promise<void>;
}

async function httpSink(): Promise<Sink> {
  const ids = new Set<string>();
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      ids.add(String(req.headers["hookinbox-event-id"]));
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    destination: {
      url: `http://127.0.0.1:${port}/hooks`,
      secret: SECRET,
      allowPrivateNetworks: true,
    },
    count: async () => ids.size,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function amqpSink(): Promise<Sink> {
  const { name, model, channel } = await declareRabbitQueue("hookinbox-bench");
  return {
    destination: { type: "amqp", url: rabbitUrl, exchange: name },
    count: async () => (await channel.checkQueue(name)).messageCount,
    async close() {
      await channel.deleteQueue(name);
      await channel.deleteExchange(name);
      await model.close();
    },
  };
}

async function natsSink(): Promise<Sink> {
  const server = await startNatsServer();
  const nc = await natsConnect({ servers: `127.0.0.1:${server.port}` });
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({ name: "BENCH", subjects: ["hookinbox.>"], storage: "file" as never });
  return {
    destination: { type: "nats", url: server.url },
    count: async () => (await jsm.streams.info("BENCH")).state.messages,
    async close() {
      await nc.close();
      await server.dispose();
    },
  };
}

async function redisSink(): Promise<Sink> {
  const server = await startRedisServer();
  const client = createClient({ url: server.url });
  await client.connect();
  return {
    destination: { type: "redis", url: server.url },
    count: () => client.xLen("hookinbox:stripe"),
    async close() {
      client.destroy();
      await server.dispose();
    },
  };
}

const sinks = { http: httpSink, amqp: amqpSink, nats: natsSink, redis: redisSink };
const results: Array<{ type: string; postMs: number; forwardMs: number; rate: number }> = [];
console.log(`forwarding to queue destinations: ${EVENTS} events, ${IN_FLIGHT} in flight, SQLite`);
console.log(`background CPU before: ${Math.round(await backgroundCpu())}% of one core`);
for (const [type, open] of Object.entries(sinks)) {
  const dir = mkdtempSync(join(tmpdir(), `hookinbox-bench-bus-${type}-`));
  const sink = await open();
  const gateway = await startHookinboxPostgres(dir, `sqlite:${join(dir, "hookinbox.db")}`, false, {
    destinations: { app: { ...sink.destination, concurrency: 50 } },
    routes: [{ from: "stripe", to: "app" }],
    worker: { concurrency: 50 },
    log: { level: "warn" },
  });
  const events = signedEvents(`bus_${type}`, EVENTS);
  const poster = eventPoster(IN_FLIGHT);
  const started = performance.now();
  const non200 = await poster.postAll(gateway.target, events);
  const postMs = performance.now() - started;
  let arrived = 0;
  let lastChange = performance.now();
  while (arrived < EVENTS) {
    const now = await sink.count();
    if (now !== arrived) lastChange = performance.now();
    arrived = now;
    if (performance.now() - lastChange > 30_000) break;
    if (arrived < EVENTS) await sleep(20);
  }
  const forwardMs = performance.now() - started;
  poster.close();
  await gateway.stop();
  await sink.close();
  rmSync(dir, { recursive: true, force: true });
  if (non200 > 0 || arrived < EVENTS)
    throw new Error(`${type}: ${non200} non-200 answers, ${arrived}/${EVENTS} arrived`);
  results.push({ type, postMs, forwardMs, rate: EVENTS / (forwardMs / 1000) });
}
const http = results.find((r) => r.type === "http")!;
console.log("| destination | accepted in | all forwarded in | forwarded events/s | vs HTTP |");
console.log("| --- | --- | --- | --- | --- |");
for (const r of results)
  console.log(
    `| ${r.type} | ${(r.postMs / 1000).toFixed(2)} s | ${(r.forwardMs / 1000).toFixed(2)} s | ${Math.round(r.rate)} | ${(r.rate / http.rate).toFixed(2)}x |`,
  );
