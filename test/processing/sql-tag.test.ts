// tx.sql: one handler, written once with a tagged template, runs unchanged on SQLite (inline and
// thread writer), PostgreSQL and PostgreSQL behind PgBouncer (issue 23). Its values (booleans,
// Dates, bigints, bytes, null) bind as each store needs, it gets tx.query's { rows, rowCount },
// and a refused value fails the attempt with nothing of the transaction committed.
import { afterEach, describe, expect, it } from "vitest";
import type { Handler } from "../../src/handlers/types.ts";
import type { InboxOptions } from "../../src/inbox.ts";
import { processingInbox, until } from "../helpers/processing.ts";
import { type StoreVariant, storeVariants, type TestStore } from "../helpers/stores.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface OrderEvent {
  readonly order: string;
  readonly amount: number;
  readonly paid: boolean;
  readonly at: string;
}

/** What the handler saw of each statement, per run, for exact assertions. */
interface Seen {
  order: string;
  inserted: number;
  paidIds: string[];
  updated: number;
  bigMatches: number;
}

const big = 9_007_199_254_740_993n; // 2^53 + 1: not a safe JavaScript number
const bytes = new Uint8Array([0x00, 0xff, 0x80, 0x0a]);

/** The handler under test: the same source on every store. */
function orderHandler(seen: Seen[]): Handler<OrderEvent> {
  return async (event, ctx) => {
    const { order, amount, paid, at } = event.payload;
    await ctx.transaction(async (tx) => {
      const insert = await tx.sql`
        INSERT INTO orders (id, amount, paid, paid_at, big, bytes, note)
        VALUES (${order}, ${amount}, ${paid}, ${new Date(at)}, ${big}, ${bytes}, ${null})
        ON CONFLICT (id) DO NOTHING`;
      const paidRows = await tx.sql<{ id: string; amount: number }>`
        SELECT id, amount FROM orders WHERE paid = ${true} ORDER BY id`;
      const update = await tx.sql`
        UPDATE orders SET paid = ${true} WHERE id = ${order} AND paid = ${false}`;
      const matches = await tx.sql<{ id: string }>`
        SELECT id FROM orders WHERE big = ${big} AND bytes = ${bytes} AND note IS NULL
          AND paid_at = ${new Date(at)}`;
      seen.push({
        order,
        inserted: insert.rowCount,
        paidIds: paidRows.rows.map((row) => `${row.id}:${row.amount}`),
        updated: update.rowCount,
        bigMatches: matches.rows.length,
      });
    });
  };
}

/** The user's table, as each store spells its column types. */
const ordersTable = (store: TestStore) =>
  store.kind === "sqlite"
    ? `CREATE TABLE orders (id TEXT PRIMARY KEY, amount INTEGER NOT NULL, paid INTEGER NOT NULL,
         paid_at TEXT NOT NULL, big INTEGER NOT NULL, bytes BLOB NOT NULL, note TEXT)`
    : `CREATE TABLE orders (id TEXT PRIMARY KEY, amount INTEGER NOT NULL, paid BOOLEAN NOT NULL,
         paid_at TIMESTAMPTZ NOT NULL, big BIGINT NOT NULL, bytes BYTEA NOT NULL, note TEXT)`;

async function openEnv(variant: StoreVariant, handlers: Record<string, unknown>) {
  const store = await variant.open();
  cleanups.push(() => store.cleanup());
  await store.exec(ordersTable(store));
  const options: InboxOptions = variant.writer ? { sqliteWriter: variant.writer } : {};
  const env = processingInbox(
    {
      store: store.url,
      handlers,
      retry: { schedule: ["10ms"], maxAttempts: 1, jitter: "none" },
      worker: { pollInterval: "20ms", lease: "30s" },
    },
    options,
  );
  cleanups.push(env.cleanup);
  return { store, env };
}

describe.each(storeVariants())("tx.sql ($name)", (variant: StoreVariant) => {
  it("runs the same handler unchanged, binding each value as the store needs", async () => {
    const seen: Seen[] = [];
    const { store, env } = await openEnv(variant, { "std:*": orderHandler(seen) });
    const worker = env.inbox.startWorker();
    const at = "2026-12-05T08:00:00.123Z";
    const orders: OrderEvent[] = [
      { order: "ord_a", amount: 100, paid: true, at },
      { order: "ord_b", amount: 250, paid: false, at },
      { order: "ord_c", amount: 75, paid: false, at },
    ];
    // One at a time, so each handler sees the rows of the ones before it.
    for (const [index, order] of orders.entries()) {
      await env.post(`msg_${order.order}`, { type: "order.created", ...order });
      await until(() => worker.stats().done === index + 1, 10_000, `${order.order} done`);
    }
    // A second event about ord_b inserts nothing and updates nothing.
    await env.post("msg_ord_b_again", { type: "order.created", ...orders[1]! });
    await until(() => worker.stats().done === 4, 10_000, "the repeat done");

    expect(worker.stats()).toMatchObject({ done: 4, retry: 0, dead: 0 });
    const all = ["ord_a:100", "ord_b:250", "ord_c:75"];
    expect(seen).toEqual([
      { order: "ord_a", inserted: 1, paidIds: ["ord_a:100"], updated: 0, bigMatches: 1 },
      { order: "ord_b", inserted: 1, paidIds: ["ord_a:100"], updated: 1, bigMatches: 2 },
      {
        order: "ord_c",
        inserted: 1,
        paidIds: ["ord_a:100", "ord_b:250"],
        updated: 1,
        bigMatches: 3,
      },
      { order: "ord_b", inserted: 0, paidIds: all, updated: 0, bigMatches: 3 },
    ]);
    expect(await store.count("SELECT count(*) AS n FROM orders")).toBe(3);
    expect(
      await store.count("SELECT count(*) AS n FROM orders WHERE paid = ?", [
        store.kind === "sqlite" ? 1 : true,
      ]),
    ).toBe(3);
    expect(await store.count("SELECT count(*) AS n FROM orders WHERE paid_at = ?", [at])).toBe(3);
    const stored = await store.rows<{ bytes: Buffer }>("SELECT bytes FROM orders WHERE id = ?", [
      "ord_a",
    ]);
    expect([...stored[0]!.bytes]).toEqual([...bytes]);
    expect(await store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'")).toBe(4);
  });

  it.each([
    ["undefined", "HOOKINBOX_SQL_VALUE_UNDEFINED", undefined],
    ["an object", "HOOKINBOX_SQL_VALUE_UNSUPPORTED", { amount: 1 }],
    ["an array", "HOOKINBOX_SQL_VALUE_UNSUPPORTED", [1, 2]],
  ])(
    "refuses %s: the attempt fails with %s and nothing of it commits",
    async (_what, code, value) => {
      let runs = 0;
      const handler: Handler = async (_event, ctx) => {
        runs++;
        await ctx.transaction(async (tx) => {
          await tx.sql`INSERT INTO orders (id, amount, paid, paid_at, big, bytes)
          VALUES (${"ord_x"}, ${1}, ${true}, ${new Date()}, ${1n}, ${bytes})`;
          await tx.sql`UPDATE orders SET note = ${value as unknown as string} WHERE id = ${"ord_x"}`;
        });
      };
      const { store, env } = await openEnv(variant, { "std:*": handler });
      const worker = env.inbox.startWorker();
      await env.post("msg_refused", { type: "order.created" });
      await until(() => worker.stats().dead === 1, 10_000, "the dead letter");

      expect(runs).toBe(1);
      const dead = await env.inbox.store.listDeliveries({ status: "dead" });
      expect(dead.items).toHaveLength(1);
      expect(dead.items[0]!.lastError).toContain(code);
      expect(dead.items[0]!.lastError).toContain("parameter 1 of 2");
      expect(await store.count("SELECT count(*) AS n FROM orders")).toBe(0);
      expect(await store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'")).toBe(
        0,
      );
    },
  );

  it("refuses tx.sql called without the tag, and runs nothing", async () => {
    const handler: Handler = async (_event, ctx) => {
      await ctx.transaction(async (tx) => {
        const untagged = tx.sql as unknown as (text: string) => Promise<unknown>;
        await untagged("DELETE FROM orders");
      });
    };
    const { store, env } = await openEnv(variant, { "std:*": handler });
    await store.exec(
      store.kind === "sqlite"
        ? "INSERT INTO orders VALUES ('ord_kept', 1, 1, 'x', 1, x'00', NULL)"
        : "INSERT INTO orders VALUES ('ord_kept', 1, true, now(), 1, '\\x00', NULL)",
    );
    const worker = env.inbox.startWorker();
    await env.post("msg_untagged", { type: "order.created" });
    await until(() => worker.stats().dead === 1, 10_000, "the dead letter");

    const dead = await env.inbox.store.listDeliveries({ status: "dead" });
    expect(dead.items[0]!.lastError).toBe(
      "HookinboxError: tx.sql was called as a function; write it as a tag, tx.sql`…`, or use tx.query (HOOKINBOX_SQL_NOT_TEMPLATE)",
    );
    expect(await store.count("SELECT count(*) AS n FROM orders")).toBe(1);
  });
});
