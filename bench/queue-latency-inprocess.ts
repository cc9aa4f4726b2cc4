// Child process of bench/queue.ts: enqueue-to-start latency through the library path.
//
//   node ./bin/run-ts.mjs bench/queue-latency-inprocess.ts <dir> <warmup> <events>
//
// One process holds the inbox, its worker (concurrency 10) and the sender: each pre-signed Stripe
// request goes through inbox.handle (verify, identify, durable accept, notify), and the next one is
// sent only after the previous handler started, so there is never more than one event in flight
// and the sender never competes with the worker. Latency = performance.now() just before
// inbox.handle → performance.now() as the handler's first statement (same clock, same process).
import { join } from "node:path";
import { createInbox } from "../src/inbox.ts";
import { STRIPE_SECRET } from "./ingest/requests.ts";
import { emitResult, percentiles, signedEvents } from "./queue-events.ts";

const [dir = "", warmupArg = "100", eventsArg = "1000"] = process.argv.slice(2);
if (!dir) throw new Error("usage: queue-latency-inprocess.ts <dir> <warmup> <events>");
const warmup = Number(warmupArg);
const events = Number(eventsArg);

const waiting = new Map<string, (at: number) => void>();
const inbox = createInbox(
  {
    store: `sqlite:${join(dir, "hookinbox.db")}`,
    sources: { stripe: { provider: "stripe", secrets: [STRIPE_SECRET] } },
    handlers: {
      "stripe:*": async (event: { dedupKey: string }) => {
        const at = performance.now();
        waiting.get(event.dedupKey)?.(at);
      },
    },
  },
  { env: {} },
);
await inbox.ready();
const worker = inbox.startWorker({ concurrency: 10 });

const requests = signedEvents("inproc", warmup + events);
const startMs: number[] = [];
const ackMs: number[] = [];
let non200 = 0;
for (const [i, event] of requests.entries()) {
  const started = new Promise<number>((resolve) => waiting.set(event.id, resolve));
  const t0 = performance.now();
  const response = await inbox.handle({
    method: "POST",
    url: "/webhooks/stripe",
    headers: {
      host: "127.0.0.1",
      "content-type": "application/json; charset=utf-8",
      "stripe-signature": event.signature,
      "content-length": String(event.body.byteLength),
    },
    body: event.body,
    remoteAddress: "127.0.0.1",
  });
  const acked = performance.now();
  if (response.status !== 200) {
    non200++;
    waiting.delete(event.id);
    continue;
  }
  const at = await started;
  waiting.delete(event.id);
  if (i < warmup) continue;
  startMs.push(at - t0);
  ackMs.push(acked - t0);
}
await worker.idle();
const stats = worker.stats();
await inbox.close();

emitResult({
  path: "in-process",
  warmup,
  events,
  measured: startMs.length,
  non200,
  start: percentiles(startMs),
  ack: percentiles(ackMs),
  done: stats.done,
  pass: non200 === 0 && stats.done === warmup + events,
});
