import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeLeaf, leafFieldsOf } from "../../src/audit/leaf.ts";
import { type LogVerification, rootAt, verifyLog } from "../../src/audit/log.ts";
import { leafHash } from "../../src/audit/merkle.ts";
import { openStore } from "../../src/store/open-store.ts";
import { prepareAuditReads } from "../../src/store/sqlite/audit.ts";
import { tempDir } from "../helpers/temp.ts";
import { acceptInput } from "../store/conformance.ts";

// 10,000 random tamperings of a stored log, each detected by verify against an earlier head.
// The log (24 events, head signed at 20) is built once through the real store; each tampering
// runs in a transaction on a second connection, verify reads through that same connection (so
// it sees the tampered rows), and the transaction is rolled back before the next one.

const EVENTS = 24;
const HEAD_SIZE = 20;
const TAMPERINGS = 10_000;

let dir: { dir: string; cleanup(): void };
let db: Database.Database;
let head: { size: number; root: Buffer };

beforeAll(async () => {
  dir = tempDir();
  const url = `sqlite:${join(dir.dir, "hookinbox.db")}`;
  const store = openStore(url);
  await store.migrate();
  for (let i = 0; i < EVENTS; i++) {
    await store.accept(
      acceptInput({
        body: new TextEncoder().encode(`{"id":"evt_${i}","amount":${i * 100}}`),
        headers: [
          ["Content-Type", "application/json"],
          ["X-Delivery", `d${i}`],
        ],
        receivedAt: 1_767_225_600_000 + i * 1_000,
        identity: { dedupKey: `evt_${i}` },
      }),
    );
    if (i + 1 === HEAD_SIZE) head = { size: HEAD_SIZE, root: await rootAt(store, HEAD_SIZE) };
  }
  await store.close();
  db = new Database(join(dir.dir, "hookinbox.db"));
  db.pragma("foreign_keys = ON");
});

afterAll(() => {
  db.close();
  dir.cleanup();
});

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
  headers: string;
}

function eventAt(seq: number): EventRow {
  return db
    .prepare<[number], EventRow>(
      "SELECT e.*, l.seq FROM events e JOIN audit_leaves l ON l.event_id = e.id WHERE l.seq = ?",
    )
    .get(seq)!;
}

function deleteEvent(id: string) {
  db.prepare("DELETE FROM receipts WHERE event_id = ?").run(id);
  db.prepare("DELETE FROM events WHERE id = ?").run(id);
}

/** The leaf an attacker who knows the encoding would write for a changed event. */
function forgedLeaf(row: EventRow): Buffer {
  return leafHash(
    encodeLeaf(
      leafFieldsOf(row.seq, {
        source: row.source,
        dedupKey: row.dedup_key,
        receivedAt: row.received_at,
        body: row.body,
        headers: JSON.parse(row.headers),
      }),
    ),
  );
}

/** Each kind changes the stored log so that it no longer extends the head; returns its name. */
const tamperings: Array<(rng: Rng) => string> = [
  (rng) => {
    const row = eventAt(rng.int(EVENTS));
    const body = Buffer.from(row.body);
    const at = rng.int(body.length);
    body[at] = body[at]! ^ (1 + rng.int(255));
    db.prepare("UPDATE events SET body = ? WHERE id = ?").run(body, row.id);
    return "body byte";
  },
  (rng) => {
    const row = eventAt(rng.int(EVENTS));
    const headers = JSON.parse(row.headers) as [string, string][];
    const pick = rng.int(4);
    if (pick === 0) headers.push(["X-Injected", "1"]);
    else if (pick === 1) headers.splice(rng.int(headers.length), 1);
    else if (pick === 2) headers[0]![1] = `${headers[0]![1]} `;
    else headers[1]![0] = headers[1]![0].toLowerCase();
    db.prepare("UPDATE events SET headers = ? WHERE id = ?").run(JSON.stringify(headers), row.id);
    return "header";
  },
  (rng) => {
    const row = eventAt(rng.int(EVENTS));
    const delta = (1 + rng.int(86_400_000)) * (rng.int(2) === 0 ? 1 : -1);
    db.prepare("UPDATE events SET received_at = ? WHERE id = ?").run(
      row.received_at + delta,
      row.id,
    );
    return "received-at";
  },
  (rng) => {
    deleteEvent(eventAt(rng.int(EVENTS)).id);
    return "delete event row";
  },
  (rng) => {
    db.prepare("DELETE FROM audit_leaves WHERE seq = ?").run(rng.int(EVENTS));
    return "delete leaf row";
  },
  (rng) => {
    const row = eventAt(rng.int(HEAD_SIZE));
    db.prepare("DELETE FROM audit_leaves WHERE seq = ?").run(row.seq);
    deleteEvent(row.id);
    return "delete event and leaf";
  },
  (rng) => {
    const n = rng.int(1_000_000);
    db.prepare(
      `INSERT INTO events (id, source, dedup_key, status, received_at, body, headers)
       VALUES (?, 'stripe', ?, 'ignored', ?, X'7b7d', '[]')`,
    ).run(`evt_forged_${n}`, `forged_${n}`, 1_767_225_600_000 + n);
    return "insert event row";
  },
  (rng) => {
    const row = eventAt(rng.int(EVENTS));
    const n = rng.int(1_000_000);
    db.prepare(
      `INSERT INTO events (id, source, dedup_key, status, received_at, body, headers)
       VALUES (?, ?, ?, 'ignored', ?, ?, ?)`,
    ).run(`evt_forged_${n}`, row.source, `forged_${n}`, row.received_at, row.body, row.headers);
    db.prepare("UPDATE audit_leaves SET event_id = ? WHERE seq = ?").run(
      `evt_forged_${n}`,
      row.seq,
    );
    return "insert event in a leaf's place";
  },
  (rng) => {
    const a = rng.int(EVENTS);
    const b = (a + 1 + rng.int(EVENTS - 1)) % EVENTS;
    const ea = eventAt(a).id;
    const eb = eventAt(b).id;
    db.prepare("UPDATE audit_leaves SET event_id = ? WHERE seq = ?").run(`tmp_${ea}`, a);
    db.prepare("UPDATE audit_leaves SET event_id = ? WHERE seq = ?").run(ea, b);
    db.prepare("UPDATE audit_leaves SET event_id = ? WHERE seq = ?").run(eb, a);
    return "reorder two events";
  },
  (rng) => {
    const a = rng.int(EVENTS);
    const b = (a + 1 + rng.int(EVENTS - 1)) % EVENTS;
    const [ha, hb] = [a, b].map(
      (seq) =>
        db
          .prepare<[number], { hash: Buffer }>("SELECT hash FROM audit_leaves WHERE seq = ?")
          .get(seq)!.hash,
    );
    db.prepare("UPDATE audit_leaves SET seq = -1 WHERE seq = ?").run(a);
    db.prepare("UPDATE audit_leaves SET seq = ? WHERE seq = ?").run(a, b);
    db.prepare("UPDATE audit_leaves SET seq = ? WHERE seq = -1").run(b);
    expect(ha!.equals(hb!)).toBe(false);
    return "reorder two leaves";
  },
  (rng) => {
    const from = rng.int(HEAD_SIZE);
    const ids = db
      .prepare<[number], { event_id: string }>("SELECT event_id FROM audit_leaves WHERE seq >= ?")
      .all(from);
    db.prepare("DELETE FROM audit_leaves WHERE seq >= ?").run(from);
    for (const { event_id } of ids) deleteEvent(event_id);
    return "truncate";
  },
  (rng) => {
    // A careful attacker: change the event and rewrite its stored leaf to match.
    const row = eventAt(rng.int(HEAD_SIZE));
    const body = Buffer.concat([row.body, Buffer.from(" ")]);
    db.prepare("UPDATE events SET body = ? WHERE id = ?").run(body, row.id);
    db.prepare("UPDATE audit_leaves SET hash = ? WHERE seq = ?").run(
      forgedLeaf({ ...row, body }),
      row.seq,
    );
    return "edit event and rewrite its leaf";
  },
];

describe("tampering (sqlite)", () => {
  // Heavy by design (real processes, thousands of rows); no time is asserted, so the shared CI
  // machine gets room beyond the 60 s default.
  it(`detects each of ${TAMPERINGS} random tamperings against a head of ${HEAD_SIZE} leaves`, async () => {
    const reads = prepareAuditReads(db);
    const store = {
      auditLeafPage: async (afterSeq: number, limit: number) => reads.leafPage(afterSeq, limit),
      auditUnloggedEvents: async (afterId: string, limit: number) => reads.unlogged(afterId, limit),
    };
    const check = (): Promise<LogVerification> => verifyLog(store, head, { pageSize: 7 });
    expect(await check()).toEqual({ ok: true, leaves: EVENTS, defect: null });

    const rng = random(13);
    const detected = new Map<string, number>();
    const reasons = new Set<string>();
    let missed = 0;
    for (let i = 0; i < TAMPERINGS; i++) {
      db.exec("BEGIN");
      try {
        const kind = tamperings[rng.int(tamperings.length)]!(rng);
        const result = await check();
        if (result.ok) missed++;
        else {
          detected.set(kind, (detected.get(kind) ?? 0) + 1);
          reasons.add(result.defect!.reason.replace(/\d+/g, "N"));
        }
      } finally {
        db.exec("ROLLBACK");
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
      "the event has no leaf",
      "the first N leaves do not hash to the trusted head's root",
      "the leaf's event row is missing",
      "the log ends at N leaves; the head has N",
    ]);
    // Every change was rolled back: the log verifies again.
    expect(await check()).toEqual({ ok: true, leaves: EVENTS, defect: null });
  }, 300_000);
});
