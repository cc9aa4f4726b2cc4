// The SQLite forwarder stub's writer thread (see durable-forwarder-stub.ts), the pattern of the
// ingest stub's (bench/ingest/durable-stub-writer.mjs): every message that arrived while the
// previous COMMIT was running goes into one BEGIN IMMEDIATE … COMMIT (WAL, synchronous = FULL):
// the accepted events with their deliveries, the ended POSTs' marks (one statement each for done
// and for due-again), and one claim of up to the free POST slots. Then the replies and the claimed
// deliveries go back in one message. The thread owns the slot count: a claim takes slots, every
// ended POST gives one back. Plain .mjs: a worker needs no TypeScript loader.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const { path, leaseMs, retryMs } = workerData;
let slots = workerData.slots;
const db = new Database(path);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = FULL");
db.exec(`
  CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY, received_at INTEGER NOT NULL, body BLOB NOT NULL) STRICT;
  CREATE TABLE IF NOT EXISTS deliveries (
    id INTEGER PRIMARY KEY, event_id TEXT NOT NULL REFERENCES events, due_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, done INTEGER NOT NULL DEFAULT 0) STRICT;
  CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (due_at) WHERE done = 0;`);
const insertEvent = db.prepare(
  "INSERT INTO events (id, received_at, body) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
);
const insertDelivery = db.prepare("INSERT INTO deliveries (event_id, due_at) VALUES (?, ?)");
// Ids as a JSON array: one statement whatever the batch's size.
const markDone = db.prepare(
  "UPDATE deliveries SET done = 1 WHERE id IN (SELECT value FROM json_each(?))",
);
const markRetry = db.prepare(
  "UPDATE deliveries SET due_at = ? WHERE id IN (SELECT value FROM json_each(?))",
);
const claim = db
  .prepare(
    `UPDATE deliveries SET due_at = ?, attempts = attempts + 1
     WHERE id IN (SELECT id FROM deliveries WHERE done = 0 AND due_at <= ? ORDER BY due_at LIMIT ?)
     RETURNING id, event_id, (SELECT body FROM events WHERE events.id = deliveries.event_id)`,
  )
  .raw();

const accepted = [];
let done = [];
let failed = [];
/** There may be due deliveries that no claim has seen yet (a lease ran out on a crash). */
let due = true;
let quiescing = false;
let scheduled = false;

const flush = () => {
  const now = Date.now();
  scheduled = false;
  const replies = [];
  let claimed = [];
  db.exec("BEGIN IMMEDIATE");
  for (const [seq, id, buffer] of accepted.splice(0)) {
    const fresh = insertEvent.run(id, now, Buffer.from(buffer)).changes === 1;
    if (fresh) {
      insertDelivery.run(id, now);
      due = true;
    }
    replies.push([seq, !fresh]);
  }
  if (done.length > 0) markDone.run(JSON.stringify(done));
  if (failed.length > 0) markRetry.run(now + retryMs, JSON.stringify(failed));
  done = [];
  failed = [];
  if (due && slots > 0 && !quiescing) {
    claimed = claim.all(now + leaseMs, now, slots);
    due = claimed.length === slots;
    slots -= claimed.length;
  }
  db.exec("COMMIT");
  parentPort.postMessage({ replies, claimed });
};

const schedule = () => {
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
};

parentPort.on("message", (message) => {
  if (message === "close") {
    flush();
    db.close();
    process.exit(0);
  }
  if (message === "quiesce") {
    quiescing = true;
    parentPort.postMessage("quiesced");
    return;
  }
  if (message === "wake") {
    due = true;
    if (slots > 0) schedule();
    return;
  }
  if (Array.isArray(message)) accepted.push(message);
  else {
    done.push(...message.done);
    failed.push(...message.failed);
    slots += message.done.length + message.failed.length;
  }
  schedule();
});
