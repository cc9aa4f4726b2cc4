// The durable stub's writer thread (see durable-stub.ts): every message that arrived while the
// previous COMMIT was running goes into one BEGIN IMMEDIATE … COMMIT (WAL, synchronous = FULL),
// then the replies go back in one message. Plain .mjs: a worker needs no TypeScript loader.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const db = new Database(workerData.path);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = FULL");
db.exec(`
  CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, dedup_key TEXT NOT NULL,
    received_at INTEGER NOT NULL, body BLOB NOT NULL, UNIQUE (source, dedup_key)) STRICT;
  CREATE TABLE IF NOT EXISTS receipts (
    id INTEGER PRIMARY KEY, event_id TEXT, received_at INTEGER NOT NULL,
    duplicate INTEGER NOT NULL, remote_address TEXT, size INTEGER NOT NULL) STRICT;`);
const insertEvent = db.prepare(
  `INSERT INTO events (id, source, dedup_key, received_at, body) VALUES (?, 'stripe', ?, ?, ?)
   ON CONFLICT (source, dedup_key) DO NOTHING RETURNING id`,
);
const existing = db.prepare("SELECT id FROM events WHERE source = 'stripe' AND dedup_key = ?");
const insertReceipt = db.prepare(
  "INSERT INTO receipts (event_id, received_at, duplicate, remote_address, size) VALUES (?, ?, ?, ?, ?)",
);

let queue = [];
let scheduled = false;
const flush = () => {
  scheduled = false;
  const batch = queue;
  queue = [];
  const now = Date.now();
  const replies = [];
  db.exec("BEGIN IMMEDIATE");
  for (const [seq, id, buffer, remote] of batch) {
    const body = Buffer.from(buffer);
    const row = insertEvent.get(id, id, now, body);
    const eventId = row ? row.id : existing.get(id).id;
    insertReceipt.run(eventId, now, row ? 0 : 1, remote, body.length);
    replies.push([seq, eventId, !row]);
  }
  db.exec("COMMIT");
  parentPort.postMessage(replies);
};

parentPort.on("message", (message) => {
  if (message === "close") {
    if (queue.length > 0) flush();
    db.close();
    process.exit(0);
  }
  queue.push(message);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
});
