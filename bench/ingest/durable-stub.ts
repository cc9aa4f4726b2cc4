// The second baseline: "the least a durable gateway can do". Its own process, started by
// ingest.ts next to bare-server.ts and hookinbox. Per request it
//   1. reads the raw bytes and checks the Stripe HMAC (t=…,v1=… over `${t}.${body}`, 5-minute
//      tolerance, constant-time compare) on them,
//   2. extracts the event id with a scan of the first bytes (no JSON.parse),
//   (both in stub-http.ts, shared with the PostgreSQL stub, bench/postgres/durable-stub.ts)
//   3. hands the bytes to a writer thread (durable-stub-writer.mjs) as a transferred buffer,
// and answers 200 only after the writer's group COMMIT returned (WAL, synchronous = FULL).
// The writer commits `INSERT … ON CONFLICT DO NOTHING` of the event plus a receipt row; a
// duplicate answers with the existing event id. The schema matches what verify-store.ts reads,
// so the bench checks this store against the clients' 2xx like hookinbox's.
//   node bin/run-ts.mjs bench/ingest/durable-stub.ts <sqlite file>
import { Worker } from "node:worker_threads";
import { type StubRequest, serveStub } from "./stub-http.ts";

const dbPath = process.argv[2] ?? "durable-stub.db";
const writer = new Worker(new URL("./durable-stub-writer.mjs", import.meta.url), {
  workerData: { path: dbPath },
});
const waiting = new Map<number, StubRequest>();
let nextSeq = 1;

writer.on("message", (replies: Array<[number, string, boolean]>) => {
  for (const [seq, eventId, duplicate] of replies) {
    const request = waiting.get(seq);
    if (!request) continue;
    waiting.delete(seq);
    request.reply(eventId, duplicate);
  }
});
writer.on("error", (error) => {
  process.stderr.write(`durable stub writer failed: ${error.message}\n`);
  process.exit(1);
});

serveStub(
  "durable stub",
  (request) => {
    const seq = nextSeq++;
    waiting.set(seq, request);
    const buffer = request.body.buffer as ArrayBuffer; // its own, see stub-http.ts
    writer.postMessage([seq, request.id, buffer, request.remote], [buffer]);
  },
  () =>
    new Promise((resolve) => {
      writer.postMessage("close");
      writer.once("exit", () => resolve());
    }),
);
