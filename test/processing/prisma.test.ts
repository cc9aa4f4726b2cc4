// hookinbox/prisma: Prisma 7 (PrismaPg on a joinablePool) writing inside the transaction that marks
// a delivery done, on PostgreSQL and PostgreSQL behind a real PgBouncer (transaction mode), with a
// client generated offline from test/processing/fixtures/prisma/. And every refusal, on both
// stores (SQLite with both writers).
import { cpSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { isHookinboxError } from "../../src/errors.ts";
import type { HandlerContext, HandlerEvent } from "../../src/handlers/types.ts";
import { joinablePool, joinableSqlite, withPrisma } from "../../src/prisma/index.ts";
import { joinablePoolClass } from "../../src/prisma/joinable-pool.ts";
import type { TransactionClient } from "../../src/store/queue-types.ts";
import { generatedPrismaClient } from "../helpers/prisma-client.ts";
import { processingInbox, until } from "../helpers/processing.ts";
import { storeFactories, type TestStore } from "../helpers/stores.ts";
import { repoRoot } from "../helpers/temp.ts";

/** The generated client's shape, as far as these tests use it (the real types live in tmp/). */
interface Credit {
  id: number;
  eventId: string;
  amount: number;
}
interface CreditDb {
  credit: {
    create(args: { data: { eventId: string; amount: number } }): Promise<Credit>;
    upsert(args: {
      where: { eventId: string };
      create: { eventId: string; amount: number };
      update: { amount?: number };
    }): Promise<Credit>;
    findUnique(args: { where: { eventId: string } }): Promise<Credit | null>;
    count(): Promise<number>;
  };
  $queryRawUnsafe<T = unknown>(sql: string, ...values: unknown[]): Promise<T>;
}
interface CreditPrisma extends CreditDb {
  $transaction<R>(
    fn: (db: CreditDb) => Promise<R>,
    options?: { maxWait?: number; timeout?: number },
  ): Promise<R>;
  $disconnect(): Promise<void>;
}

type Order = { type: string; order: string; amount: number };
type OrderHandler = (event: HandlerEvent<Order>, ctx: HandlerContext) => Promise<void>;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let PostgresClient: new (options: { adapter: unknown }) => unknown;
let SqliteClient: new (options: { adapter: unknown }) => unknown;
/** A second copy of `pg` (another folder, so another module instance), as a broken install has. */
let otherPg: typeof pg;
beforeAll(async () => {
  PostgresClient = (await generatedPrismaClient("postgres")).PrismaClient;
  SqliteClient = (await generatedPrismaClient("sqlite")).PrismaClient;
  const copy = join(repoRoot, "tmp", "pg-copy", "node_modules", "pg");
  if (!existsSync(copy))
    cpSync(join(repoRoot, "node_modules", "pg"), copy, { recursive: true, dereference: true });
  otherPg = createRequire(join(repoRoot, "tmp", "pg-copy", "index.js"))("pg") as typeof pg;
}, 180_000);

/** The URL Prisma's own pool connects with: the store's server (or PgBouncer), no hookinbox params. */
function prismaUrl(store: TestStore): string {
  const url = new URL(store.url);
  url.search = "";
  return url.toString();
}

/** A PrismaClient on a joinablePool, and how many connections its pool handed out on its own. */
function joinablePrisma(store: TestStore) {
  const pool = joinablePool(pg, { connectionString: prismaUrl(store), max: 4 });
  let acquired = 0;
  pool.on("acquire", () => {
    acquired++;
  });
  const prisma = new PostgresClient({ adapter: new PrismaPg(pool) }) as CreditPrisma;
  cleanups.push(async () => {
    await prisma.$disconnect();
    await pool.end();
  });
  return { prisma, acquired: () => acquired };
}

/** A PrismaClient Prisma's way (PrismaPg on a pg.Pool of its own): it cannot join. */
function plainPrisma(store: TestStore, Pool: typeof pg.Pool = pg.Pool) {
  const pool = new Pool({ connectionString: prismaUrl(store), max: 2 });
  const prisma = new PostgresClient({ adapter: new PrismaPg(pool) }) as CreditPrisma;
  cleanups.push(async () => {
    await prisma.$disconnect();
    await pool.end();
  });
  return prisma;
}

function sqlitePrisma(store: TestStore) {
  const prisma = new SqliteClient({
    adapter: new PrismaBetterSqlite3({ url: `file:${join(store.dir, "prisma.db")}` }),
  }) as CreditPrisma;
  cleanups.push(() => prisma.$disconnect());
  return prisma;
}

/** An inbox on `store` whose `std:*` deliveries run `handler`, with a started worker. */
function inboxWith(store: TestStore, handler: OrderHandler, sqliteWriter?: "inline" | "thread") {
  const env = processingInbox(
    {
      store: store.url,
      handlers: { "std:*": handler },
      retry: { schedule: ["10ms"], maxAttempts: 5, jitter: "none" },
      worker: { pollInterval: "20ms", lease: "30s" },
    },
    sqliteWriter ? { sqliteWriter } : {},
  );
  cleanups.push(env.cleanup);
  const worker = env.inbox.startWorker();
  cleanups.push(async () => void (await worker.stop(5_000)));
  return { env, worker };
}

/** A refusal's code: a HookinboxError's, or the one Prisma copies onto the error it wraps it in. */
const codeOf = (error: unknown) => {
  if (isHookinboxError(error)) return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : `not refused by hookinbox: ${String(error)}`;
};

/** Runs `work` and returns the code it was refused with. */
async function refusedWith(work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
  } catch (error) {
    return codeOf(error);
  }
  return "not refused";
}

/** A PostgreSQL URL for a client that is refused before it ever connects. */
const postgresUrlForShape = "postgres://postgres@127.0.0.1:5432/postgres";

/** A function that resolves for every caller once `parties` callers have called it. */
function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return () => {
    arrived++;
    if (arrived === parties) open();
    return opened;
  };
}

const postgresStores = storeFactories().filter((factory) => factory.kind === "postgres");
const sqliteStores = storeFactories().filter((factory) => factory.kind === "sqlite");

describe.each(postgresStores)("withPrisma on PostgreSQL ($name)", (factory) => {
  async function open() {
    const store = await factory.open();
    cleanups.push(() => store.cleanup());
    await store.exec(
      'CREATE TABLE public."Credit" (id SERIAL PRIMARY KEY, "eventId" TEXT NOT NULL UNIQUE, amount INTEGER NOT NULL)',
    );
    return store;
  }

  it("N deliveries write through withPrisma: N rows, each in its delivery's own transaction", async () => {
    const store = await open();
    const { prisma, acquired } = joinablePrisma(store);
    const txids: Array<{ prisma: string; hookinbox: string }> = [];
    const { env, worker } = inboxWith(store, async (event, ctx) => {
      const { order, amount } = event.payload;
      await ctx.transaction((tx) =>
        withPrisma(prisma, tx, async (db) => {
          await db.credit.create({ data: { eventId: order, amount } });
          const [fromPrisma] = await db.$queryRawUnsafe<Array<{ id: string }>>(
            "SELECT txid_current()::text AS id",
          );
          const fromTx = await tx.query<{ id: string }>("SELECT txid_current()::text AS id");
          txids.push({ prisma: fromPrisma!.id, hookinbox: fromTx.rows[0]!.id });
        }),
      );
    });
    const n = 12;
    for (let i = 0; i < n; i++)
      await env.post(`msg_${i}`, { type: "order.paid", order: `ord_${i}`, amount: i });
    await until(() => worker.stats().done === n, 30_000, "every delivery done");

    expect(await store.count('SELECT count(*) AS n FROM "Credit"')).toBe(n);
    expect(txids).toHaveLength(n);
    expect(txids.filter((t) => t.prisma === t.hookinbox)).toHaveLength(n);
    expect(new Set(txids.map((t) => t.prisma)).size).toBe(n);
    // Those transactions are the ones that marked the deliveries done (Prisma's rows carry the
    // xid of its savepoint, a subtransaction, so their own xmin is not the delivery's).
    const doneXmins = await store.rows<{ x: string }>(
      "SELECT xmin::text AS x FROM deliveries WHERE status = 'done' ORDER BY 1",
    );
    expect(doneXmins.map((r) => r.x)).toEqual(txids.map((t) => t.hookinbox).sort());
    expect(worker.stats()).toMatchObject({ done: n, retry: 0, dead: 0 });
    // No Prisma query ran on the pool's own connections.
    expect(acquired()).toBe(0);
  });

  it("a handler that throws after its Prisma write leaves no row, and the retry writes once", async () => {
    const store = await open();
    const { prisma } = joinablePrisma(store);
    const { env, worker } = inboxWith(store, async (event, ctx) => {
      const { order } = event.payload;
      await ctx.transaction(async (tx) => {
        await withPrisma(prisma, tx, async (db) => {
          await db.credit.create({ data: { eventId: order, amount: event.attempt } });
          // Inside Prisma's part: its savepoint rolls back, then the delivery's transaction.
          if (order === "ord_inside" && event.attempt === 1) throw new Error("refused inside");
        });
        // After Prisma's part, inside the delivery's transaction: it all rolls back.
        if (order === "ord_after" && event.attempt === 1) throw new Error("refused after");
      });
    });
    await env.post("msg_inside", { type: "order.paid", order: "ord_inside", amount: 1 });
    await env.post("msg_after", { type: "order.paid", order: "ord_after", amount: 1 });
    await until(() => worker.stats().done === 2, 30_000, "both deliveries done");

    // Had the first attempt's row survived, the second attempt's create would hit the unique key.
    expect(await store.rows('SELECT "eventId", amount FROM "Credit" ORDER BY "eventId"')).toEqual([
      { eventId: "ord_after", amount: 2 },
      { eventId: "ord_inside", amount: 2 },
    ]);
    expect(
      await store.rows("SELECT attempt, outcome FROM attempts ORDER BY delivery_id, attempt"),
    ).toEqual([
      { attempt: 1, outcome: "error" },
      { attempt: 2, outcome: "success" },
      { attempt: 1, outcome: "error" },
      { attempt: 2, outcome: "success" },
    ]);
    expect(worker.stats()).toMatchObject({ done: 2, retry: 2, dead: 0 });
  });

  it("concurrent deliveries' findUnique calls run in their own transactions, none outside", async () => {
    const store = await open();
    const { prisma, acquired } = joinablePrisma(store);
    const m = 6;
    const everyoneWrote = barrier(m);
    const everyoneRead = barrier(m);
    const seen: Array<{ own: unknown; again: unknown; other: unknown; count: number }> = [];
    const { env, worker } = inboxWith(store, async (event, ctx) => {
      const { order, amount } = event.payload;
      const other = order === "ord_0" ? "ord_1" : "ord_0";
      await ctx.transaction((tx) =>
        withPrisma(
          prisma,
          tx,
          async (db) => {
            await db.credit.create({ data: { eventId: order, amount } });
            // Every delivery's row is written, uncommitted, before any reads, and every read is
            // done before any commit.
            await everyoneWrote();
            const [own, again, others] = await Promise.all([
              db.credit.findUnique({ where: { eventId: order } }),
              db.credit.findUnique({ where: { eventId: order } }),
              db.credit.findUnique({ where: { eventId: other } }),
            ]);
            seen.push({
              own: own?.eventId,
              again: again?.eventId,
              other: others,
              count: await db.credit.count(),
            });
            await everyoneRead();
          },
          // Prisma's own limit on its part (5 s by default), while the barrier waits.
          { timeout: 60_000 },
        ),
      );
    });
    for (let i = 0; i < m; i++)
      await env.post(`msg_${i}`, { type: "order.paid", order: `ord_${i}`, amount: i });
    await until(() => worker.stats().done === m, 60_000, "every delivery done");

    expect(seen).toHaveLength(m);
    // Each saw its own uncommitted row, and neither the other's uncommitted row nor any other.
    expect(seen.filter((s) => s.own === s.again && s.own !== undefined)).toHaveLength(m);
    expect(seen.filter((s) => s.other === null && s.count === 1)).toHaveLength(m);
    expect(await store.count('SELECT count(*) AS n FROM "Credit"')).toBe(m);
    expect(acquired()).toBe(0);
  });

  it("the same event delivered 20 times in parallel, and 20 events of one order, give one row each", async () => {
    const store = await open();
    const { prisma } = joinablePrisma(store);
    const { env, worker } = inboxWith(store, async (event, ctx) => {
      const { order, amount } = event.payload;
      await ctx.transaction((tx) =>
        withPrisma(prisma, tx, (db) =>
          db.credit.upsert({
            where: { eventId: order },
            create: { eventId: order, amount },
            update: { amount },
          }),
        ),
      );
    });
    const same = await Promise.all(
      Array.from({ length: 20 }, () =>
        env.post("msg_same", { type: "order.paid", order: "ord_same", amount: 7 }),
      ),
    );
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        env.post(`msg_shared_${i}`, { type: "order.paid", order: "ord_shared", amount: 9 }),
      ),
    );
    await until(() => worker.stats().done === 21, 60_000, "every delivery done");

    expect(same.filter((s) => s.duplicate)).toHaveLength(19);
    expect(await store.rows('SELECT "eventId", amount FROM "Credit" ORDER BY "eventId"')).toEqual([
      { eventId: "ord_same", amount: 7 },
      { eventId: "ord_shared", amount: 9 },
    ]);
    expect(await store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'")).toBe(
      21,
    );
    expect(worker.stats()).toMatchObject({ done: 21, dead: 0 });
  });

  it("refuses what cannot join, each with its own code, and writes nothing", async () => {
    const store = await open();
    const { prisma } = joinablePrisma(store);
    const plain = plainPrisma(store);
    const fromSqlite = sqlitePrisma(store);
    const Foreign = joinablePoolClass(otherPg);
    const foreign = plainPrisma(store, Foreign as typeof pg.Pool);
    const codes: Record<string, string> = {};
    let later: Promise<string> = Promise.resolve("never started");
    let ended: TransactionClient | undefined;
    const { env, worker } = inboxWith(store, async (_event, ctx) => {
      await ctx.transaction(async (tx) => {
        ended = tx;
        const write = (db: CreditDb) => db.credit.create({ data: { eventId: "ord_x", amount: 1 } });
        codes.notJoinable = await refusedWith(() => withPrisma(plain, tx, write));
        codes.pgMismatch = await refusedWith(() => withPrisma(foreign, tx, write));
        codes.dialect = await refusedWith(() => withPrisma(fromSqlite, tx, write));
        await withPrisma(prisma, tx, async () => {
          // Started inside the scope, run after the delivery's transaction has ended.
          later = refusedWith(async () => {
            await new Promise((resolve) => setTimeout(resolve, 0));
            await prisma.$transaction(write);
          });
        });
      });
    });
    await env.post("msg_refusals", { type: "order.paid", order: "ord_x", amount: 1 });
    await until(() => worker.stats().done === 1, 30_000, "the delivery done");
    codes.outside = await later;
    codes.ended = await refusedWith(() => withPrisma(prisma, ended!, async () => 1));
    codes.fake = await refusedWith(() =>
      withPrisma(
        prisma,
        { dialect: "postgres", connection: null, query: async () => ({ rows: [], rowCount: 0 }) },
        async () => 1,
      ),
    );
    codes.foreignPool = await refusedWith(async () => joinablePool(otherPg, {}));

    expect(codes).toEqual({
      notJoinable: "HOOKINBOX_PRISMA_NOT_JOINABLE",
      pgMismatch: "HOOKINBOX_PRISMA_PG_MISMATCH",
      dialect: "HOOKINBOX_PRISMA_DIALECT_MISMATCH",
      // Prisma may wrap the pool's refusal in its own error, which keeps the code and message.
      outside: "HOOKINBOX_PRISMA_OUTSIDE_TRANSACTION",
      ended: "HOOKINBOX_PRISMA_NO_TRANSACTION",
      fake: "HOOKINBOX_PRISMA_NO_TRANSACTION",
      foreignPool: "HOOKINBOX_PRISMA_PG_MISMATCH",
    });
    expect(await store.count('SELECT count(*) AS n FROM "Credit"')).toBe(0);
  });
});

// SQLite, with both writers. Inline: the store's transaction runs on its own better-sqlite3
// connection in the caller's thread, and a joinableSqlite client runs Prisma on it. Thread: that
// connection lives in the writer thread, and withPrisma refuses.
const sqliteFile = (store: TestStore) => store.url.replace(/^sqlite:/, "");

function joinableSqlitePrisma(store: TestStore) {
  const prisma = new SqliteClient({
    adapter: joinableSqlite(PrismaBetterSqlite3, { url: `file:${sqliteFile(store)}` }),
  }) as CreditPrisma;
  cleanups.push(() => prisma.$disconnect());
  return prisma;
}

async function openSqlite() {
  const store = await sqliteStores[0]!.open();
  cleanups.push(() => store.cleanup());
  await store.exec(
    'CREATE TABLE "Credit" (id INTEGER PRIMARY KEY AUTOINCREMENT, "eventId" TEXT NOT NULL UNIQUE, amount INTEGER NOT NULL)',
  );
  return store;
}

describe.runIf(sqliteStores.length > 0)("withPrisma on SQLite", () => {
  it("inline writer: N deliveries give N rows; a throw after the write leaves none and the retry writes once", async () => {
    const store = await openSqlite();
    const prisma = joinableSqlitePrisma(store);
    const { env, worker } = inboxWith(
      store,
      async (event, ctx) => {
        const { order } = event.payload;
        await ctx.transaction(async (tx) => {
          await withPrisma(prisma, tx, async (db) => {
            await db.credit.create({ data: { eventId: order, amount: event.attempt } });
            const found = await db.credit.findUnique({ where: { eventId: order } });
            if (found?.amount !== event.attempt) throw new Error("own row not visible");
            if (order === "ord_inside" && event.attempt === 1) throw new Error("refused inside");
          });
          if (order === "ord_after" && event.attempt === 1) throw new Error("refused after");
        });
      },
      "inline",
    );
    const n = 8;
    for (let i = 0; i < n; i++)
      await env.post(`msg_${i}`, { type: "order.paid", order: `ord_${i}`, amount: 1 });
    await env.post("msg_inside", { type: "order.paid", order: "ord_inside", amount: 1 });
    await env.post("msg_after", { type: "order.paid", order: "ord_after", amount: 1 });
    await until(() => worker.stats().done === n + 2, 30_000, "every delivery done");

    expect(await store.count('SELECT count(*) AS n FROM "Credit"')).toBe(n + 2);
    expect(await store.count('SELECT count(*) AS n FROM "Credit" WHERE amount = 1')).toBe(n);
    expect(
      await store.rows(
        'SELECT "eventId", amount FROM "Credit" WHERE "eventId" IN (\'ord_inside\', \'ord_after\') ORDER BY "eventId"',
      ),
    ).toEqual([
      { eventId: "ord_after", amount: 2 },
      { eventId: "ord_inside", amount: 2 },
    ]);
    expect(worker.stats()).toMatchObject({ done: n + 2, retry: 2, dead: 0 });
  });

  it.each(["inline", "thread"] as const)(
    "%s writer: refuses what cannot join, each with its own code, writing nothing",
    async (writer) => {
      const store = await openSqlite();
      const joinable = joinableSqlitePrisma(store);
      const plain = sqlitePrisma(store);
      const { prisma: fromPostgres } = joinablePrisma({ ...store, url: postgresUrlForShape });
      const codes: Record<string, string> = {};
      const { env, worker } = inboxWith(
        store,
        async (_event, ctx) => {
          await ctx.transaction(async (tx) => {
            const write = (db: CreditDb) =>
              db.credit.create({ data: { eventId: "ord_x", amount: 1 } });
            codes.joinable = await refusedWith(() => withPrisma(joinable, tx, write));
            codes.plain = await refusedWith(() => withPrisma(plain, tx, write));
            codes.postgres = await refusedWith(() => withPrisma(fromPostgres, tx, write));
          });
        },
        writer,
      );
      await env.post("msg_sqlite", { type: "order.paid", order: "ord_x", amount: 1 });
      await until(() => worker.stats().done === 1, 30_000, "the delivery done");

      expect(codes).toEqual({
        // Inline, the joinable client writes (then the plain one is refused, the row stays once).
        joinable: writer === "inline" ? "not refused" : "HOOKINBOX_PRISMA_SQLITE_UNSUPPORTED",
        plain:
          writer === "inline"
            ? "HOOKINBOX_PRISMA_NOT_JOINABLE"
            : "HOOKINBOX_PRISMA_SQLITE_UNSUPPORTED",
        postgres: "HOOKINBOX_PRISMA_DIALECT_MISMATCH",
      });
      expect(await store.count('SELECT count(*) AS n FROM "Credit"')).toBe(
        writer === "inline" ? 1 : 0,
      );
    },
  );
});
