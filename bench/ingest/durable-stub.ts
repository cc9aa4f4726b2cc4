// The second baseline: "the least a durable gateway can do". Its own process, started by
// ingest.ts next to bare-server.ts and hookinbox. Per request it
//   1. reads the raw bytes and checks the Stripe HMAC (t=…,v1=… over `${t}.${body}`, 5-minute
//      tolerance, constant-time compare) on them,
//   2. extracts the event id with a scan of the first bytes (no JSON.parse),
//   3. hands the bytes to a writer thread (durable-stub-writer.ts) as a transferred buffer,
// and answers 200 only after the writer's group COMMIT returned (WAL, synchronous = FULL).
// The writer commits `INSERT … ON CONFLICT DO NOTHING` of the event plus a receipt row; a
// duplicate answers with the existing event id. The schema matches what verify-store.ts reads,
// so the bench checks this store against the clients' 2xx like hookinbox's.
//   node bin/run-ts.mjs bench/ingest/durable-stub.ts <sqlite file>
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Worker } from "node:worker_threads";
import { STRIPE_SECRET } from "./requests.ts";

const dbPath = process.argv[2] ?? "durable-stub.db";
const writer = new Worker(new URL("./durable-stub-writer.mjs", import.meta.url), {
  workerData: { path: dbPath },
});
const waiting = new Map<number, ServerResponse>();
let nextSeq = 1;

writer.on("message", (replies: Array<[number, string, boolean]>) => {
  for (const [seq, eventId, duplicate] of replies) {
    const res = waiting.get(seq);
    if (!res) continue;
    waiting.delete(seq);
    send(res, 200, `{"ok":true,"eventId":"${eventId}","duplicate":${duplicate}}`);
  }
});
writer.on("error", (error) => {
  process.stderr.write(`durable stub writer failed: ${error.message}\n`);
  process.exit(1);
});

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

/** Stripe's scheme on the raw bytes: HMAC-SHA256 of `${t}.${body}`, any v1 may match. */
function verified(header: string | undefined, body: Buffer): boolean {
  if (!header) return false;
  let t = "";
  const v1: string[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    const key = part.slice(0, eq);
    if (key === "t") t = part.slice(eq + 1);
    else if (key === "v1") v1.push(part.slice(eq + 1));
  }
  const seconds = Number(t);
  if (!Number.isFinite(seconds) || Math.abs(Date.now() / 1000 - seconds) > 300) return false;
  const expected = createHmac("sha256", STRIPE_SECRET).update(`${t}.`).update(body).digest();
  return v1.some((hex) => {
    const given = Buffer.from(hex, "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

const ID_KEY = Buffer.from('"id":"');
/** The top-level `"id":"…"` of a Stripe event, found in the first bytes (Stripe puts it first). */
function scanId(body: Buffer): string | null {
  const at = body.indexOf(ID_KEY);
  if (at < 0 || at > 64) return null;
  const start = at + ID_KEY.length;
  const end = body.indexOf(34, start); // closing quote
  if (end < 0 || end - start > 255) return null;
  return body.toString("latin1", start, end);
}

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
  });
  req.on("end", () => {
    // An ArrayBuffer of its own (not a slice of the pool), so it can be transferred.
    const bytes = Buffer.from(new ArrayBuffer(size));
    let offset = 0;
    for (const chunk of chunks) offset += chunk.copy(bytes, offset);
    if (!verified(req.headers["stripe-signature"] as string | undefined, bytes)) {
      send(res, 401, '{"ok":false}');
      return;
    }
    const id = scanId(bytes);
    if (id === null) {
      send(res, 400, '{"ok":false}');
      return;
    }
    const seq = nextSeq++;
    waiting.set(seq, res);
    writer.postMessage([seq, id, bytes.buffer, req.socket.remoteAddress ?? null], [bytes.buffer]);
  });
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stderr.write(`durable stub listening on http://127.0.0.1:${port}\n`);
});
process.once("SIGTERM", () =>
  server.close(() => {
    writer.postMessage("close");
    writer.once("exit", () => process.exit(0));
  }),
);
