// "The least a durable forwarder can do": the limit bench/forward.ts measures hookinbox's
// forwarding against (issue 24), in one process, on SQLite (a fresh file, WAL) or PostgreSQL (a
// fresh schema in the given database). It is bench/ingest's durable stub plus the delivery half:
//   accept  (bench/ingest/stub-http.ts, shared with the ingest stubs): the Stripe HMAC on the raw
//           bytes, the id by a scan; the event and one pending delivery inserted in one group
//           commit; 200 only after that commit (a duplicate id: 200, no new delivery).
//   claim   the due deliveries, up to the free POST slots, in one statement per batch, which also
//           pushes each one's due time a lease ahead (PostgreSQL: FOR UPDATE SKIP LOCKED) and
//           returns its event's body.
//   POST    each to the destination on an undici keep-alive Pool (CONNECTIONS sockets), signed as
//           Standard Webhooks sign: webhook-id (the event id), webhook-timestamp, webhook-signature
//           `v1,<base64 HMAC-SHA256 of ${id}.${timestamp}.${body}>`; x-bench-id is the event id
//           (the same value the bench's client sent, which hookinbox forwards as a header).
//   mark    the 2xx ones done, the others due again RETRY_MS later, one statement per batch.
// Nothing acknowledged is lost (the 200 follows the commit of event and delivery) and every
// event is delivered at least once: a delivery is done only after a 2xx, a failed POST is due
// again, and one whose mark never committed (a crash) is due again when its lease runs out.
// It keeps no attempt log, no headers, no ordering, no circuit breaker: what it does is the
// floor under any durable forwarder's cost.
//   node bin/run-ts.mjs bench/forward/durable-forwarder-stub.ts <store> <destination url> <secret>
// <store>: `sqlite:<file>` (the writer thread is durable-forwarder-writer.mjs, as the SQLite
// ingest stub's) or a postgres:// URL (tables in schema FORWARDER_SCHEMA).
import { createHmac } from "node:crypto";
import { Worker } from "node:worker_threads";
import pg from "pg";
import { Pool } from "undici";
import { standardWebhooksKey } from "../../src/providers/standard-webhooks.ts";
import { byteaArrayParam } from "../../src/store/postgres/binary-array.ts";
import { type StubRequest, serveStub } from "../ingest/stub-http.ts";

/** POSTs in flight at most: hookinbox's destination concurrency in bench/forward.ts. */
export const CONNECTIONS = 50;
/** How far a claim pushes a delivery's due time: when it is due again if never marked. */
const LEASE_MS = 30_000;
/** When a failed POST's delivery is due again. */
const RETRY_MS = 500;
/** How often the store looks for deliveries that became due (retries, expired leases). */
const POLL_MS = 250;
/** Accept batches in flight at once on PostgreSQL, as bench/postgres/durable-stub.ts. */
const ACCEPTS_IN_FLIGHT = 4;
/** The schema the PostgreSQL forwarder creates its tables in. */
export const FORWARDER_SCHEMA = "forwarder_stub";

/** A claimed delivery: its id, its event's id and body. */
export type Claimed = [id: number, eventId: string, body: Uint8Array];

/** What the forwarder needs of a store; the store calls `deliver` with what it claimed. */
interface ForwarderStore {
  /** Inserts event and delivery in the next group commit, then answers the request. */
  accept(request: StubRequest): void;
  /** A POST ended: its delivery is done (2xx) or due again; its slot is free. */
  finished(id: number, ok: boolean): void;
  /** Deliveries may have become due (retries, leases): claim if a slot is free. */
  wake(): void;
  /** Claims no more; resolves once no claim is running (what it claimed was delivered). */
  quiesce(): Promise<void>;
  /** Commits what is queued, then closes (after the last POST ended). */
  close(): Promise<void>;
}

type Deliver = (rows: readonly Claimed[]) => void;

/**
 * Collects items and hands them to `write` as one batch per event-loop turn, with at most
 * `maxInFlight` batches being written; what arrives meanwhile waits for a free one, as one batch.
 */
function batcher<T>(maxInFlight: number, write: (batch: T[]) => Promise<void>) {
  let queue: T[] = [];
  let scheduled = false;
  let inFlight = 0;
  let idle: (() => void) | null = null;
  const flush = (): void => {
    scheduled = false;
    if (queue.length === 0 || inFlight >= maxInFlight) return;
    const batch = queue;
    queue = [];
    inFlight++;
    write(batch).then(() => {
      inFlight--;
      flush();
      if (inFlight === 0 && queue.length === 0) idle?.();
    }, fail);
  };
  return {
    push(item: T): void {
      queue.push(item);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    /** Resolves once everything pushed so far is written. */
    drained: (): Promise<void> =>
      inFlight === 0 && queue.length === 0
        ? Promise.resolve()
        : new Promise((resolve) => {
            idle = resolve;
          }),
  };
}

function fail(error: Error): never {
  process.stderr.write(`durable forwarder stub failed: ${error.message}\n`);
  process.exit(1);
}

// ---- SQLite: one writer thread does every write, as the SQLite ingest stub's ----

function sqliteStore(path: string, deliver: Deliver): ForwarderStore {
  const writer = new Worker(new URL("./durable-forwarder-writer.mjs", import.meta.url), {
    workerData: { path, slots: CONNECTIONS, leaseMs: LEASE_MS, retryMs: RETRY_MS },
  });
  const waiting = new Map<number, StubRequest>();
  let nextSeq = 1;
  // Ended POSTs go to the writer once per turn: [done ids, failed ids].
  const ended = batcher<[number, boolean]>(1, async (batch) => {
    const done = batch.filter(([, ok]) => ok).map(([id]) => id);
    const failed = batch.filter(([, ok]) => !ok).map(([id]) => id);
    writer.postMessage({ done, failed });
  });
  let quiesced: (() => void) | null = null;
  writer.on(
    "message",
    (message: { replies: Array<[number, boolean]>; claimed: readonly Claimed[] } | "quiesced") => {
      if (message === "quiesced") return quiesced?.();
      for (const [seq, duplicate] of message.replies) {
        const request = waiting.get(seq);
        if (!request) continue;
        waiting.delete(seq);
        request.reply(request.id, duplicate);
      }
      if (message.claimed.length > 0) deliver(message.claimed);
    },
  );
  writer.on("error", fail);
  return {
    accept(request) {
      const seq = nextSeq++;
      waiting.set(seq, request);
      const buffer = request.body.buffer as ArrayBuffer; // its own, see stub-http.ts
      writer.postMessage([seq, request.id, buffer], [buffer]);
    },
    finished: (id, ok) => ended.push([id, ok]),
    wake: () => writer.postMessage("wake"),
    quiesce: () =>
      new Promise((resolve) => {
        quiesced = resolve;
        writer.postMessage("quiesce");
      }),
    async close() {
      await ended.drained();
      writer.postMessage("close");
      await new Promise((resolve) => writer.once("exit", resolve));
    },
  };
}

// ---- PostgreSQL: statements on a pool, from this thread ----

// $1 ids, $2 bodies. An id twice in the batch is inserted once; an id already stored (or being
// stored by a concurrent batch, which this INSERT waits for) gets no row back: a duplicate.
const ACCEPT = `
  WITH input AS (
    SELECT DISTINCT ON (k) k, body FROM unnest($1::text[], $2::bytea[]) AS t(k, body)),
  inserted AS (
    INSERT INTO events (id, received_at, body) SELECT k, now(), body FROM input
    ON CONFLICT (id) DO NOTHING RETURNING id),
  deliveries AS (
    INSERT INTO deliveries (event_id, due_at) SELECT id, now() FROM inserted)
  SELECT id FROM inserted`;
// $1 how many, $2 the lease (ms). Rows another claim holds are skipped, not waited for.
const CLAIM = `
  UPDATE deliveries d SET due_at = now() + $2 * interval '1 millisecond', attempts = d.attempts + 1
  FROM (SELECT id FROM deliveries WHERE NOT done AND due_at <= now()
        ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED) c, events e
  WHERE d.id = c.id AND e.id = d.event_id
  RETURNING d.id, d.event_id, e.body`;
const DONE = "UPDATE deliveries SET done = true WHERE id = ANY($1::bigint[])";
const RETRY = `UPDATE deliveries SET due_at = now() + $2 * interval '1 millisecond'
  WHERE id = ANY($1::bigint[])`;

async function postgresStore(url: string, deliver: Deliver): Promise<ForwarderStore> {
  const pool = new pg.Pool({
    connectionString: url,
    max: ACCEPTS_IN_FLIGHT + 3, // accepts, one claim, one done and one retry batch
    application_name: "hookinbox-bench-forwarder-stub",
    options: `-c synchronous_commit=on -c search_path=${FORWARDER_SCHEMA}`,
  });
  pool.on("error", fail);
  await pool.query(`
    CREATE SCHEMA IF NOT EXISTS ${FORWARDER_SCHEMA};
    CREATE TABLE IF NOT EXISTS ${FORWARDER_SCHEMA}.events (
      id text PRIMARY KEY, received_at timestamptz NOT NULL, body bytea NOT NULL);
    CREATE TABLE IF NOT EXISTS ${FORWARDER_SCHEMA}.deliveries (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, event_id text NOT NULL REFERENCES events,
      due_at timestamptz NOT NULL, attempts integer NOT NULL DEFAULT 0,
      done boolean NOT NULL DEFAULT false);
    CREATE INDEX IF NOT EXISTS deliveries_due ON ${FORWARDER_SCHEMA}.deliveries (due_at)
      WHERE NOT done;`);

  let slots = CONNECTIONS;
  let claiming: Promise<void> | null = null;
  let closing = false;
  /** There may be due deliveries that no claim has seen yet. */
  let due = true;
  const claim = (): void => {
    if (claiming || closing || slots === 0 || !due) return;
    due = false;
    const n = slots;
    slots = 0;
    claiming = pool
      .query<{ id: string; event_id: string; body: Buffer }>({
        name: "forwarder_claim",
        text: CLAIM,
        values: [n, LEASE_MS],
      })
      .then(({ rows }) => {
        claiming = null;
        slots += n - rows.length;
        if (rows.length === n) due = true;
        if (rows.length > 0) deliver(rows.map((r) => [Number(r.id), r.event_id, r.body]));
        claim();
      }, fail);
  };
  const accepts = batcher<StubRequest>(ACCEPTS_IN_FLIGHT, async (batch) => {
    const { rows } = await pool.query<{ id: string }>({
      name: "forwarder_accept",
      text: ACCEPT,
      values: [batch.map((r) => r.id), byteaArrayParam(batch.map((r) => r.body))],
    });
    const inserted = new Set(rows.map((r) => r.id));
    for (const request of batch) {
      request.reply(request.id, !inserted.delete(request.id));
    }
    due = true;
    claim();
  });
  const marks = (text: string, ...extra: unknown[]) =>
    batcher<number>(1, async (ids) => {
      await pool.query(text, [ids, ...extra]);
    });
  const done = marks(DONE);
  const retry = marks(RETRY, RETRY_MS);
  return {
    accept: (request) => accepts.push(request),
    finished(id, ok) {
      (ok ? done : retry).push(id);
      slots++;
      claim();
    },
    wake() {
      due = true;
      claim();
    },
    async quiesce() {
      closing = true;
      while (claiming) await claiming;
    },
    async close() {
      await Promise.all([accepts.drained(), done.drained(), retry.drained()]);
      await pool.end();
    },
  };
}

// ---- the process ----

const [storeArg, destinationArg, secret] = process.argv.slice(2);
if (!storeArg || !destinationArg || !secret)
  throw new Error("usage: durable-forwarder-stub.ts <sqlite:file | postgres url> <url> <secret>");
const key = standardWebhooksKey(secret);
if (!key) throw new Error("the secret is not a Standard Webhooks secret (whsec_…)");
const destination = new URL(destinationArg);
const path = `${destination.pathname}${destination.search}`;
const http = new Pool(destination.origin, {
  connections: CONNECTIONS,
  keepAliveTimeout: 30_000,
  headersTimeout: 15_000,
  bodyTimeout: 15_000,
});

let posting = 0;
let allEnded: (() => void) | null = null;

/** One signed POST; resolves true on a 2xx. */
async function post(eventId: string, body: Uint8Array): Promise<boolean> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac("sha256", key!)
    .update(`${eventId}.${timestamp}.`)
    .update(body)
    .digest("base64");
  try {
    const res = await http.request({
      path,
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": eventId,
        "webhook-timestamp": timestamp,
        "webhook-signature": `v1,${signature}`,
        "x-bench-id": eventId,
      },
      body,
    });
    await res.body.dump();
    return res.statusCode >= 200 && res.statusCode < 300;
  } catch {
    return false;
  }
}

const deliver: Deliver = (rows) => {
  for (const [id, eventId, body] of rows) {
    posting++;
    post(eventId, body).then((ok) => {
      posting--;
      store.finished(id, ok);
      if (posting === 0) allEnded?.();
    }, fail);
  }
};

const store = storeArg.startsWith("sqlite:")
  ? sqliteStore(storeArg.slice("sqlite:".length), deliver)
  : await postgresStore(storeArg, deliver);
const poll = setInterval(() => store.wake(), POLL_MS);

serveStub(
  "durable forwarder stub",
  (request) => store.accept(request),
  async () => {
    clearInterval(poll);
    await store.quiesce();
    if (posting > 0)
      await new Promise<void>((resolve) => {
        allEnded = resolve;
      });
    await store.close();
    await http.close();
  },
);
