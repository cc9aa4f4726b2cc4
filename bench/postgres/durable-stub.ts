// The PostgreSQL durable stub: "the least a durable PostgreSQL gateway can do", the second
// ingest baseline of bench/postgres.ts (its own process, like bare node:http and hookinbox).
// The HTTP half is bench/ingest/stub-http.ts, shared with the SQLite stub: Stripe HMAC on the raw
// bytes, the id by a scan of the first bytes. The writer: every request of an event-loop turn
// goes into one batch, one statement,
//   INSERT INTO events … SELECT FROM unnest(…) ON CONFLICT (source, dedup_key) DO NOTHING
//   RETURNING … plus the receipts, in data-modifying CTEs (autocommit: one round trip, one commit)
// with up to MAX_IN_FLIGHT batches in flight on a pool of as many connections; requests that
// arrive while all are busy wait for the next free one, as one batch. The bodies go as one binary
// bytea[] parameter, as hookinbox sends them (pg's default is hex text, parsed back by the
// server). A duplicate's event is found by a subquery on the unique key: a LEFT JOIN on events
// got a generic plan that hashed the whole table for every batch. Each request is answered 200
// only after its batch committed (synchronous_commit on, set on every connection). A duplicate gets
// the existing event id and a receipt with duplicate = true. Tables (in <schema>): the unique
// constraint on (source, dedup_key), what bench/postgres/verify.ts reads.
//   node bin/run-ts.mjs bench/postgres/durable-stub.ts <postgres url> <schema>
import pg from "pg";
import { byteaArrayParam } from "../../src/store/postgres/binary-array.ts";
import { type StubRequest, serveStub } from "../ingest/stub-http.ts";

const MAX_IN_FLIGHT = 4;
const [url, STUB_SCHEMA] = process.argv.slice(2);
if (!url || !STUB_SCHEMA || !/^[a-z_]+$/.test(STUB_SCHEMA))
  throw new Error("usage: durable-stub.ts <postgres url> <schema>");
const pool = new pg.Pool({
  connectionString: url,
  max: MAX_IN_FLIGHT,
  application_name: "hookinbox-bench-stub",
  options: `-c synchronous_commit=on -c search_path=${STUB_SCHEMA}`,
});
pool.on("error", (error) => process.stderr.write(`durable stub (PostgreSQL): ${error.message}\n`));

await pool.query(`
  CREATE SCHEMA IF NOT EXISTS ${STUB_SCHEMA};
  CREATE TABLE IF NOT EXISTS ${STUB_SCHEMA}.events (
    id text PRIMARY KEY, source text NOT NULL, dedup_key text NOT NULL,
    received_at timestamptz NOT NULL, body bytea NOT NULL, UNIQUE (source, dedup_key));
  CREATE TABLE IF NOT EXISTS ${STUB_SCHEMA}.receipts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, event_id text, received_at timestamptz NOT NULL,
    duplicate boolean NOT NULL, remote_address text, size integer NOT NULL);`);

// $1 ids, $2 bodies, $3 remote addresses; one row per request, in order. A key seen twice in the
// batch is inserted once (its first request is the original). A key another batch inserted but had
// not committed when this statement's snapshot was taken is neither inserted nor visible here:
// those rows come back with event_id NULL and no receipt, and go through LOOKUP below.
const ACCEPT = `
  WITH input AS (
    SELECT k, body, remote, n, min(n) OVER (PARTITION BY k) AS first
    FROM unnest($1::text[], $2::bytea[], $3::text[]) WITH ORDINALITY AS t(k, body, remote, n)),
  inserted AS (
    INSERT INTO events (id, source, dedup_key, received_at, body)
    SELECT k, 'stripe', k, now(), body FROM input WHERE n = first
    ON CONFLICT (source, dedup_key) DO NOTHING
    RETURNING id, dedup_key),
  resolved AS (
    SELECT i.n, i.remote, length(i.body) AS size,
           coalesce(ins.id, (SELECT e.id FROM events e WHERE e.source = 'stripe' AND e.dedup_key = i.k)) AS event_id,
           ins.id IS NULL OR i.n <> i.first AS duplicate
    FROM input i
    LEFT JOIN inserted ins ON ins.dedup_key = i.k),
  receipts AS (
    INSERT INTO receipts (event_id, received_at, duplicate, remote_address, size)
    SELECT event_id, now(), duplicate, remote, size FROM resolved WHERE event_id IS NOT NULL)
  SELECT event_id, duplicate FROM resolved ORDER BY n`;
// The rare rest (a concurrent batch committed the same key): a new statement, a new snapshot.
const LOOKUP = `
  WITH input AS (
    SELECT k, size, remote, n FROM unnest($1::text[], $2::int[], $3::text[]) WITH ORDINALITY AS t(k, size, remote, n)),
  resolved AS (
    SELECT i.n, e.id AS event_id, i.size, i.remote FROM input i
    JOIN events e ON e.source = 'stripe' AND e.dedup_key = i.k),
  receipts AS (
    INSERT INTO receipts (event_id, received_at, duplicate, remote_address, size)
    SELECT event_id, now(), true, remote, size FROM resolved)
  SELECT event_id FROM resolved ORDER BY n`;

let queue: StubRequest[] = [];
let scheduled = false;
let inFlight = 0;
let idle: (() => void) | null = null;

async function write(batch: StubRequest[]): Promise<void> {
  const { rows } = await pool.query<{ event_id: string | null; duplicate: boolean }>({
    name: "stub_accept",
    text: ACCEPT,
    values: [
      batch.map((r) => r.id),
      byteaArrayParam(batch.map((r) => r.body)),
      batch.map((r) => r.remote),
    ],
  });
  const rest: StubRequest[] = [];
  rows.forEach((row, i) => {
    if (row.event_id === null) rest.push(batch[i]!);
    else batch[i]!.reply(row.event_id, row.duplicate);
  });
  if (rest.length === 0) return;
  const looked = await pool.query<{ event_id: string }>({
    name: "stub_lookup",
    text: LOOKUP,
    values: [rest.map((r) => r.id), rest.map((r) => r.body.length), rest.map((r) => r.remote)],
  });
  if (looked.rows.length !== rest.length) throw new Error("stub: a conflicting key vanished");
  for (const [i, row] of looked.rows.entries()) rest[i]!.reply(row.event_id, true);
}

function flush(): void {
  scheduled = false;
  if (queue.length === 0 || inFlight >= MAX_IN_FLIGHT) return;
  const batch = queue;
  queue = [];
  inFlight++;
  write(batch).then(
    () => {
      inFlight--;
      flush(); // what queued up while every batch was busy
      if (inFlight === 0 && queue.length === 0) idle?.();
    },
    (error: Error) => {
      process.stderr.write(`durable stub (PostgreSQL) failed: ${error.message}\n`);
      process.exit(1);
    },
  );
}

serveStub(
  "durable stub (PostgreSQL)",
  (request) => {
    queue.push(request);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  },
  async () => {
    if (inFlight > 0 || queue.length > 0)
      await new Promise<void>((resolve) => {
        idle = resolve;
      });
    await pool.end();
  },
);
