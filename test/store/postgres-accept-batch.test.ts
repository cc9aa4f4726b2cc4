import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { currentTree, proveInclusion } from "../../src/audit/log.ts";
import { verifyInclusion } from "../../src/audit/merkle.ts";
import { sequenceAll } from "../../src/audit/sequencer.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { testPool } from "../helpers/stores.ts";
import { acceptInput } from "./conformance.ts";

// PostgreSQL gathers concurrent accepts into batches (one statement, one audit append, one
// commit per batch). These tests send many accepts at once so batches form, from several pools
// as several gateways would, and assert exact rows: dedup stays exact inside a batch and across
// racing batches, every new event is one leaf of one gapless tree, and one bad accept in a batch
// fails alone.

let database: Awaited<ReturnType<typeof freshDatabase>>;
let direct: pg.Pool;
beforeAll(async () => {
  database = await freshDatabase();
  direct = testPool({ connectionString: database.url, max: 2 });
});
afterAll(async () => {
  await direct.end();
  await database.cleanup();
});

const count = async (sql: string, schema: string) =>
  Number((await direct.query(sql.replaceAll("$s", `"${schema}"`))).rows[0].n);

describe("PostgreSQL accept batches", () => {
  it("600 accepts of 60 keys, 10 copies each, from 3 pools at once: 60 events, 600 leaves in a row (60 events', 540 duplicates' receipts), 600 receipts, 60 deliveries", async () => {
    const url = database.schemaUrl();
    const schema = new URL(url).searchParams.get("schema")!;
    const stores = Array.from({ length: 3 }, () => openPostgresStore(url));
    await stores[0]!.migrate();
    try {
      const at = Date.UTC(2026, 5, 1, 12);
      const results = await Promise.all(
        Array.from({ length: 600 }, (_, i) =>
          stores[i % 3]!.accept(
            acceptInput({
              identity: { dedupKey: `evt_${i % 60}`, orderingKey: null, version: null },
              receivedAt: at + i,
              targets: ["t"],
            }),
          ),
        ),
      );
      expect(results.filter((r) => !r.duplicate)).toHaveLength(60);
      expect(results.reduce((n, r) => n + r.deliveries, 0)).toBe(60);
      for (let k = 0; k < 60; k++) {
        const ids = new Set(results.filter((_, i) => i % 60 === k).map((r) => r.eventId));
        expect(ids.size).toBe(1);
      }
      expect(await count("SELECT count(*) AS n FROM $s.events", schema)).toBe(60);
      expect(await count("SELECT count(*) AS n FROM $s.receipts", schema)).toBe(600);
      expect(await count("SELECT count(*) AS n FROM $s.receipts WHERE duplicate", schema)).toBe(
        540,
      );
      expect(await count("SELECT count(*) AS n FROM $s.deliveries", schema)).toBe(60);
      // Accepts only queue leaves (migration 014): 600 pending until sequenced.
      expect(await stores[0]!.auditPendingCount()).toBe(600);
      expect(await sequenceAll(stores[1]!)).toBe(600);
      // One leaf per event and one per duplicate's receipt, seq 0..599 without a gap, and every
      // event's proof verifies.
      expect(
        await count(
          "SELECT count(DISTINCT l.event_id) AS n FROM $s.audit_leaves l JOIN $s.events e ON e.id = l.event_id",
          schema,
        ),
      ).toBe(60);
      expect(
        await count(
          "SELECT count(*) AS n FROM $s.audit_leaves l JOIN $s.receipts r ON r.id = l.event_id AND r.duplicate",
          schema,
        ),
      ).toBe(540);
      expect(await count("SELECT max(seq) + 1 AS n FROM $s.audit_leaves", schema)).toBe(600);
      const head = await currentTree(stores[0]!);
      expect(head.size).toBe(600);
      for (const r of results.filter((x) => !x.duplicate)) {
        const proof = (await proveInclusion(stores[0]!, r.eventId, head.size))!;
        const leaf = (await stores[0]!.auditLeafOf(r.eventId))!;
        expect(verifyInclusion(leaf.seq, head.size, proof.leafHash, proof.proof, head.root)).toBe(
          true,
        );
      }
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it("one accept PostgreSQL refuses (a NUL in its dedup key) fails alone; the 99 beside it are stored", async () => {
    const url = database.schemaUrl();
    const schema = new URL(url).searchParams.get("schema")!;
    const store = openPostgresStore(url);
    await store.migrate();
    try {
      const settled = await Promise.allSettled(
        Array.from({ length: 100 }, (_, i) =>
          store.accept(
            acceptInput({
              identity: { dedupKey: i === 37 ? "evt_\u0000bad" : `evt_ok_${i}` },
              receivedAt: Date.UTC(2026, 5, 2) + i,
              targets: ["t"],
            }),
          ),
        ),
      );
      expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(99);
      expect(settled[37]!.status).toBe("rejected");
      expect(await count("SELECT count(*) AS n FROM $s.events", schema)).toBe(99);
      expect(await count("SELECT count(*) AS n FROM $s.receipts", schema)).toBe(99);
      expect(await sequenceAll(store)).toBe(99);
      expect(await count("SELECT count(*) AS n FROM $s.audit_leaves", schema)).toBe(99);
      expect(await count("SELECT max(seq) + 1 AS n FROM $s.audit_leaves", schema)).toBe(99);
    } finally {
      await store.close();
    }
  });

  it("with the audit log on, a batch is one statement in its own transaction, 2 at a time: 200 accepts at once send no BEGIN or COMMIT, each accept is in exactly one batch statement, at most 2 run at once, 200 leaves in a row", async () => {
    const url = database.schemaUrl();
    const schema = new URL(url).searchParams.get("schema")!;
    const store = openPostgresStore(url);
    await store.migrate();
    await store.accept(
      acceptInput({ identity: { dedupKey: "evt_first" }, receivedAt: Date.now() }),
    );
    const sent: Array<string | pg.QueryConfig> = [];
    let running = 0;
    let mostRunning = 0;
    const query = pg.Client.prototype.query;
    const spy = vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (
      this: pg.Client,
      ...args: unknown[]
    ) {
      sent.push(args[0] as string | pg.QueryConfig);
      mostRunning = Math.max(mostRunning, ++running);
      // Each statement is held 30 ms before it is sent, so a batch is still in flight when the
      // next one could leave: how many run at once is then the cap, not how fast PostgreSQL is
      // (a fast batch could otherwise end before the second one starts).
      const send = () => (query as (...a: unknown[]) => unknown).apply(this, args);
      // pg.Pool's query passes a callback; a client's own query returns a promise.
      const last = args.at(-1);
      if (typeof last === "function") {
        args[args.length - 1] = (...results: unknown[]) => {
          running--;
          return (last as (...r: unknown[]) => unknown)(...results);
        };
        setTimeout(send, 30);
        return undefined;
      }
      const result = new Promise((resolve) => setTimeout(resolve, 30)).then(send);
      void result.finally(() => running--);
      return result;
    } as typeof query);
    try {
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          store.accept(
            acceptInput({ identity: { dedupKey: `evt_one_${i}` }, receivedAt: Date.now() }),
          ),
        ),
      );
      expect(results.filter((r) => r.duplicate)).toHaveLength(0);
    } finally {
      spy.mockRestore();
    }
    const texts = sent.map((q) => (typeof q === "string" ? q : q.text));
    expect(texts.filter((t) => /\b(BEGIN|COMMIT)\b/.test(t))).toHaveLength(0);
    const batches = sent.filter(
      (q): q is pg.QueryConfig =>
        typeof q !== "string" && q.name === "hookinbox_accept_batch_audit",
    );
    expect(batches.length).toBe(sent.length);
    expect(batches.reduce((n, q) => n + (q.values![15] as number[]).length, 0)).toBe(200);
    expect(mostRunning).toBe(2);
    await sequenceAll(store);
    expect(await count("SELECT count(*) AS n FROM $s.audit_leaves", schema)).toBe(201);
    expect(await count("SELECT max(seq) + 1 AS n FROM $s.audit_leaves", schema)).toBe(201);
    expect(
      await count(
        "SELECT count(*) AS n FROM $s.events e JOIN $s.audit_leaves l ON l.event_id = e.id",
        schema,
      ),
    ).toBe(201);
    await store.close();
  });
});
