import { generateKeyPairSync } from "node:crypto";
import Database from "better-sqlite3";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { firstReceiptLeafHashOf } from "../../src/audit/first-receipt-leaf.ts";
import { leafFieldsOf } from "../../src/audit/leaf.ts";
import { type LogVerification, rootAt, verifyLog } from "../../src/audit/log.ts";
import { runRetention } from "../../src/audit/retention.ts";
import { retentionLeafHashOf } from "../../src/audit/retention-leaf.ts";
import { firstReceiptIdOf, retentionLeafId } from "../../src/audit/retention-record.ts";
import { signTreeHead } from "../../src/audit/tree-head.ts";
import { ulidTimePrefix } from "../../src/ids.ts";
import type { AuditStore } from "../../src/store/audit-types.ts";
import type { SqlStatement } from "../../src/store/core/sql-template.ts";
import { coreReads } from "../../src/store/core/store-reads.ts";
import { openStore } from "../../src/store/open-store.ts";
import { parsePostgresUrl } from "../../src/store/postgres/connection.ts";
import { schemaNames } from "../../src/store/postgres/schema-names.ts";
import { dialectOf } from "../helpers/dialect.ts";
import { schemaPool, storeFactories, type TestStore } from "../helpers/stores.ts";
import { acceptInput } from "../store/conformance.ts";
import { eventsOnly, sequencedAccepts } from "./opened-store.ts";

// Random tamperings of a stored log, each detected by verify against an earlier head: 10,000 on
// SQLite, 1,000 on PostgreSQL (each costs a dozen round trips there). The log (24 events, the
// first 6 received 400 days ago and expired by retention.events: 365d, the trusted head signed at
// 20) is built once through the real store; each tampering runs in a transaction on a second
// connection, verify reads through that same connection (so it sees the tampered rows), and the
// transaction is rolled back before the next one.

const EVENTS = 24;
const EXPIRED = 6;
const HEAD_SIZE = 20;
const day = 86_400_000;
const now = Date.UTC(2026, 2, 1, 12);
const eventsMs = 365 * day;
const receivedAt = (seq: number) =>
  seq < EXPIRED ? now - 400 * day + seq * 1_000 : now - day + seq * 1_000;
const { privateKey, publicKey } = generateKeyPairSync("ed25519");

/** SQL on the tampering connection, `?` placeholders on both stores. */
interface Tamperer {
  run(sql: string, params?: unknown[]): Promise<void>;
  all<Row>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** The audit reads verify uses, through the same connection. */
  readonly audit: Pick<
    AuditStore,
    "auditLeafPage" | "auditUnloggedEvents" | "treeHeadsSignedBy" | "auditRetentionLeaves"
  >;
  close(): Promise<void>;
}

function sqliteTamperer(url: string): Tamperer {
  const db = new Database(url.slice("sqlite:".length));
  db.pragma("foreign_keys = ON");
  return {
    run: async (sql, params = []) => void db.prepare(sql).run(...params),
    all: async <Row>(sql: string, params: unknown[] = []) =>
      db.prepare(sql).all(...params) as Row[],
    audit: {
      ...coreReads({
        dialect: "sqlite",
        table: (name) => name,
        rows: async <Row>(s: SqlStatement) => db.prepare(s.text).all(...s.params) as Row[],
      }),
    },
    close: async () => void db.close(),
  };
}

async function postgresTamperer(url: string): Promise<Tamperer> {
  const pool = schemaPool(url, 1);
  const client: pg.PoolClient = await pool.connect();
  const { sql } = dialectOf(url);
  const t = schemaNames(parsePostgresUrl(url).schema);
  const heads = coreReads({
    dialect: "postgres",
    table: (name) => t[name],
    rows: async <Row>(s: SqlStatement) => (await client.query(s.text, s.params)).rows as Row[],
  });
  const audit = heads;
  return {
    run: async (text, params = []) => void (await client.query(sql(text), params)),
    all: async <Row>(text: string, params: unknown[] = []) =>
      (await client.query(sql(text), params)).rows as Row[],
    audit,
    close: async () => {
      client.release();
      await pool.end();
    },
  };
}

/** Deterministic randomness (mulberry32), so a failure reproduces. */
function random(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return { int: (n: number) => Math.floor(next() * n) };
}

type Rng = ReturnType<typeof random>;
interface EventRow {
  id: string;
  seq: number;
  source: string;
  dedup_key: string;
  received_at: number;
  body: Buffer;
  headers: Array<[string, string]>;
}

/** A forged event id inside the day of `at` (PostgreSQL keeps a partition per day of ids). */
const forgedId = (at: number, n: number) =>
  `evt_${ulidTimePrefix(at)}FORGED${String(n).padStart(10, "0")}`;

/** Each kind changes the stored log so that it no longer extends the head; returns its name. */
function tamperingsOf(db: Tamperer): Array<(rng: Rng) => Promise<string>> {
  /** A living (not expired) event and its leaf's seq, `pick` in [0, count). */
  const eventAt = async (seq: number): Promise<EventRow> => {
    const [row] = await db.all<EventRow & { headers: unknown; received_at: number | string }>(
      "SELECT e.*, l.seq FROM events e JOIN audit_leaves l ON l.event_id = e.id WHERE l.seq = ?",
      [seq],
    );
    const headers = typeof row!.headers === "string" ? JSON.parse(row!.headers) : row!.headers;
    return { ...row!, headers, received_at: Number(row!.received_at) };
  };
  const living = (rng: Rng, below = EVENTS) => eventAt(EXPIRED + rng.int(below - EXPIRED));
  const deleteEvent = async (id: string) => {
    await db.run("DELETE FROM receipts WHERE event_id = ?", [id]);
    await db.run("DELETE FROM events WHERE id = ?", [id]);
  };
  const setLeafEvent = (seq: number, id: string) =>
    db.run("UPDATE audit_leaves SET event_id = ? WHERE seq = ?", [id, seq]);
  const insertEvent = (
    id: string,
    row: Pick<EventRow, "source" | "received_at">,
    like?: EventRow,
  ) =>
    db.run(
      `INSERT INTO events (id, source, dedup_key, status, received_at, body, headers)
       VALUES (?, ?, ?, 'ignored', ?, ?, ?)`,
      [
        id,
        row.source,
        `forged_${id}`,
        row.received_at,
        like?.body ?? Buffer.from("{}"),
        JSON.stringify(like?.headers ?? []),
      ],
    );
  /** The leaf an attacker who knows the encoding would write for a changed event. */
  const forgedLeaf = (row: EventRow): Buffer =>
    firstReceiptLeafHashOf({
      ...leafFieldsOf(row.seq, {
        source: row.source,
        dedupKey: row.dedup_key,
        receivedAt: row.received_at,
        body: row.body,
        headers: row.headers,
      }),
      receiptId: firstReceiptIdOf(row.id),
      remoteAddress: "203.0.113.9",
      secretIndex: 0,
    });
  return [
    async (rng) => {
      const row = await living(rng);
      const body = Buffer.from(row.body);
      const at = rng.int(body.length);
      body[at] = body[at]! ^ (1 + rng.int(255));
      await db.run("UPDATE events SET body = ? WHERE id = ?", [body, row.id]);
      return "body byte";
    },
    async (rng) => {
      const row = await living(rng);
      const headers = row.headers;
      const pick = rng.int(4);
      if (pick === 0) headers.push(["X-Injected", "1"]);
      else if (pick === 1) headers.splice(rng.int(headers.length), 1);
      else if (pick === 2) headers[0]![1] = `${headers[0]![1]} `;
      else headers[1]![0] = headers[1]![0].toLowerCase();
      await db.run("UPDATE events SET headers = ? WHERE id = ?", [JSON.stringify(headers), row.id]);
      return "header";
    },
    async (rng) => {
      const row = await living(rng);
      const delta = (1 + rng.int(86_400_000)) * (rng.int(2) === 0 ? 1 : -1);
      await db.run("UPDATE events SET received_at = ? WHERE id = ?", [
        row.received_at + delta,
        row.id,
      ]);
      return "received-at";
    },
    async (rng) => {
      await deleteEvent((await living(rng)).id);
      return "delete event row";
    },
    async (rng) => {
      await db.run("DELETE FROM audit_leaves WHERE seq = ?", [rng.int(EVENTS)]);
      return "delete leaf row";
    },
    async (rng) => {
      const row = await living(rng, HEAD_SIZE);
      await db.run("DELETE FROM audit_leaves WHERE seq = ?", [row.seq]);
      await deleteEvent(row.id);
      return "delete event and leaf";
    },
    async (rng) => {
      const at = receivedAt(EXPIRED + rng.int(EVENTS - EXPIRED)) + rng.int(1_000);
      await insertEvent(forgedId(at, rng.int(1_000_000)), { source: "stripe", received_at: at });
      return "insert event row";
    },
    async (rng) => {
      const row = await living(rng);
      const id = forgedId(row.received_at, rng.int(1_000_000));
      await insertEvent(id, row, row);
      await setLeafEvent(row.seq, id);
      return "insert event in a leaf's place";
    },
    async (rng) => {
      const a = EXPIRED + rng.int(EVENTS - EXPIRED);
      const b = EXPIRED + ((a - EXPIRED + 1 + rng.int(EVENTS - EXPIRED - 1)) % (EVENTS - EXPIRED));
      const ea = (await eventAt(a)).id;
      const eb = (await eventAt(b)).id;
      await setLeafEvent(a, `tmp_${ea}`);
      await setLeafEvent(b, ea);
      await setLeafEvent(a, eb);
      return "reorder two events";
    },
    async (rng) => {
      const a = rng.int(EVENTS);
      const b = (a + 1 + rng.int(EVENTS - 1)) % EVENTS;
      await db.run("UPDATE audit_leaves SET seq = -1 WHERE seq = ?", [a]);
      await db.run("UPDATE audit_leaves SET seq = ? WHERE seq = ?", [a, b]);
      await db.run("UPDATE audit_leaves SET seq = ? WHERE seq = -1", [b]);
      return "reorder two leaves";
    },
    async (rng) => {
      const from = rng.int(HEAD_SIZE);
      const ids = await db.all<{ event_id: string }>(
        "SELECT event_id FROM audit_leaves WHERE seq >= ?",
        [from],
      );
      await db.run("DELETE FROM audit_leaves WHERE seq >= ?", [from]);
      for (const { event_id } of ids) await deleteEvent(event_id);
      return "truncate";
    },
    async (rng) => {
      // A careful attacker: change the event and rewrite its stored leaf to match.
      const row = await living(rng, HEAD_SIZE);
      const body = Buffer.concat([row.body, Buffer.from(" ")]);
      await db.run("UPDATE events SET body = ? WHERE id = ?", [body, row.id]);
      await db.run("UPDATE audit_leaves SET hash = ? WHERE seq = ?", [
        forgedLeaf({ ...row, body }),
        row.seq,
      ]);
      return "edit event and rewrite its leaf";
    },
    async (rng) => {
      // The expiry mark is a plain row: raised past everything, it must not excuse a recent gap.
      await db.run(
        `INSERT INTO retention_marks (name, value) VALUES ('events_before', 'evt_ZZZZZZZZZZ')
         ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
      );
      await deleteEvent((await living(rng)).id);
      return "raise the expiry mark and delete a recent event";
    },
    async (rng) => {
      // A leaf's event id is not in its hash: renamed to an old-looking id, it proves nothing.
      const row = await living(rng);
      await setLeafEvent(row.seq, forgedId(now - 400 * day, rng.int(1_000_000)));
      await deleteEvent(row.id);
      return "rename a recent leaf's event to an old id and delete it";
    },
    async (rng) => {
      // The first receipt's own row is in its event's leaf.
      const row = await living(rng);
      await db.run("UPDATE receipts SET remote_address = ? WHERE id = ?", [
        `192.0.2.${rng.int(256)}`,
        firstReceiptIdOf(row.id),
      ]);
      return "edit a first receipt's remote address";
    },
    async (rng) => {
      await db.run("DELETE FROM receipts WHERE id = ?", [firstReceiptIdOf((await living(rng)).id)]);
      return "delete a first receipt";
    },
    async (rng) => {
      // A retention record appended by hand, with its leaf hashed right, covering a recent event:
      // only a signed head old enough excuses a missing row.
      const row = await living(rng);
      const [last] = await db.all<{ seq: number | string }>(
        "SELECT max(seq) AS seq FROM audit_leaves",
      );
      const fields = {
        kind: "events" as const,
        firstId: row.id,
        lastId: row.id,
        removed: 1,
        cut: now,
      };
      const seq = Number(last!.seq) + 1;
      await db.run("INSERT INTO audit_leaves (seq, event_id, hash) VALUES (?, ?, ?)", [
        seq,
        retentionLeafId(`FORGED${rng.int(1_000_000)}`, fields),
        retentionLeafHashOf({ seq, ...fields }),
      ]);
      await deleteEvent(row.id);
      return "forge a retention record and delete a recent event";
    },
    async (rng) => {
      // A head claiming every leaf is old, without the key's signature, does not count.
      await db.run(
        `INSERT INTO audit_heads (size, root, signed_at, public_key, signature)
         VALUES (?, ?, ?, ?, ?)`,
        [EVENTS, Buffer.alloc(32, 7), now - 399 * day, "00".repeat(32), Buffer.alloc(64, 1)],
      );
      await deleteEvent((await living(rng)).id);
      return "forge an old head and delete a recent event";
    },
  ];
}

const stores = storeFactories().filter((f) => f.name !== "pgbouncer");

describe.each(stores)("tampering ($name)", ({ open, kind }) => {
  const TAMPERINGS = kind === "sqlite" ? 10_000 : 1_000;
  let testStore: TestStore;
  let db: Tamperer;
  let head: { size: number; root: Buffer };

  beforeAll(async () => {
    testStore = await open();
    const store = sequencedAccepts(openStore(testStore.url));
    await store.migrate();
    for (let i = 0; i < EVENTS; i++) {
      await store.accept(
        acceptInput({
          body: new TextEncoder().encode(`{"id":"evt_${i}","amount":${i * 100}}`),
          headers: [
            ["Content-Type", "application/json"],
            ["X-Delivery", `d${i}`],
          ],
          receivedAt: receivedAt(i),
          identity: { dedupKey: `evt_${i}` },
        }),
      );
      if (i + 1 === EXPIRED) {
        // The head retention is checked against: signed once the old events were in.
        const tree = { size: EXPIRED, root: await rootAt(store, EXPIRED) };
        await store.saveTreeHead(signTreeHead(privateKey, tree, receivedAt(i) + 10_000));
      }
      if (i + 1 === HEAD_SIZE) head = { size: HEAD_SIZE, root: await rootAt(store, HEAD_SIZE) };
    }
    const removed = await runRetention(store, eventsOnly(eventsMs), { now, dryRun: false });
    expect(removed.events).toBe(EXPIRED);
    await store.close();
    db = kind === "sqlite" ? sqliteTamperer(testStore.url) : await postgresTamperer(testStore.url);
  });

  afterAll(async () => {
    await db?.close();
    await testStore?.cleanup();
  });

  // Heavy by design (thousands of rollbacks); no time is asserted, so the shared CI machine gets
  // room beyond the 60 s default.
  it(`detects each of ${TAMPERINGS} random tamperings against a head of ${HEAD_SIZE} leaves`, async () => {
    const expiry = { trustedKey: publicKey, eventsMs, now };
    // Retention recorded its deletion in one leaf (on SQLite one more for the receipts that go
    // with the events).
    const recorded = kind === "sqlite" ? 2 : 1;
    const check = (): Promise<LogVerification> =>
      verifyLog(db.audit, head, { pageSize: 7, expiry });
    expect(await check()).toEqual({
      ok: true,
      leaves: EVENTS + recorded,
      defect: null,
      coverage: expect.any(Object),
    });
    const tamperings = tamperingsOf(db);

    const rng = random(13);
    const detected = new Map<string, number>();
    const reasons = new Set<string>();
    let missed = 0;
    for (let i = 0; i < TAMPERINGS; i++) {
      await db.run("BEGIN");
      try {
        const name = await tamperings[rng.int(tamperings.length)]!(rng);
        const result = await check();
        if (result.ok) missed++;
        else {
          detected.set(name, (detected.get(name) ?? 0) + 1);
          reasons.add(result.defect!.reason.replace(/\d+/g, "N"));
        }
      } finally {
        await db.run("ROLLBACK");
      }
    }
    const total = [...detected.values()].reduce((a, b) => a + b, 0);
    console.log(`tamperings detected: ${total} of ${TAMPERINGS}`, Object.fromEntries(detected));
    expect(missed).toBe(0);
    expect(total).toBe(TAMPERINGS);
    expect(detected.size).toBe(tamperings.length);
    expect([...reasons].sort()).toEqual([
      "leaf N is missing (next is N)",
      "the event as stored does not match its leaf",
      "the event as stored does not match its leaf, or its first receipt row is missing",
      "the event has no leaf",
      "the event or its first receipt as stored does not match its leaf",
      "the first N leaves do not hash to the root of the signed head retention is checked against",
      "the first N leaves do not hash to the trusted head's root",
      "the leaf's event row is missing",
      "the log ends at N leaves; the head has N",
    ]);
    // Every change was rolled back: the log verifies again.
    expect(await check()).toEqual({
      ok: true,
      leaves: EVENTS + recorded,
      defect: null,
      coverage: expect.any(Object),
    });
  }, 600_000);
});
