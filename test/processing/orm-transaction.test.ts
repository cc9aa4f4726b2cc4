// ORMs inside ctx.transaction, as docs/recipes.md shows them: Drizzle on the transaction's driver
// connection (tx.connection), Kysely as a query builder whose compiled SQL runs through tx.query.
// On SQLite, PostgreSQL and PostgreSQL behind PgBouncer: the ORM's write commits with the
// delivery's `done`, and a handler that throws after it rolls it back.
import type Database from "better-sqlite3";
import { drizzle as drizzleSqlite } from "drizzle-orm/better-sqlite3";
import { drizzle as drizzlePostgres } from "drizzle-orm/node-postgres";
import { integer as pgInteger, pgTable, text as pgText } from "drizzle-orm/pg-core";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "kysely";
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { PermanentError } from "../../src/handlers/errors.ts";
import type { HandlerContext, HandlerEvent } from "../../src/handlers/types.ts";
import type { TransactionClient } from "../../src/store/queue-types.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { until } from "../helpers/processing.ts";
import { stripeRequest, testSources } from "../helpers/signers.ts";
import { type StoreFactory, storeFactories, type TestStore } from "../helpers/stores.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// Drizzle: one table definition per dialect, a database object on the transaction's connection.
const pgCredits = pgTable("credits", {
  paymentId: pgText("payment_id").notNull(),
  amount: pgInteger("amount").notNull(),
});
const sqliteCredits = sqliteTable("credits", {
  paymentId: text("payment_id").notNull(),
  amount: integer("amount").notNull(),
});

async function insertWithDrizzle(tx: TransactionClient, paymentId: string, amount: number) {
  if (tx.dialect === "postgres") {
    const db = drizzlePostgres({ client: tx.connection as pg.PoolClient });
    await db.insert(pgCredits).values({ paymentId, amount });
  } else {
    const db = drizzleSqlite({ client: tx.connection as Database.Database });
    db.insert(sqliteCredits).values({ paymentId, amount }).run();
  }
}

// Kysely: a query builder only (DummyDriver); tx.query runs what it compiles.
interface Tables {
  credits: { payment_id: string; amount: number };
}
const builders = {
  postgres: new Kysely<Tables>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  }),
  sqlite: new Kysely<Tables>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  }),
};

async function insertWithKysely(tx: TransactionClient, paymentId: string, amount: number) {
  const query = builders[tx.dialect]
    .insertInto("credits")
    .values({ payment_id: paymentId, amount })
    .compile();
  await tx.query(query.sql, query.parameters);
}

type Payment = { data: { object: { id: string; amount: number; fail?: boolean } } };
const orms = { drizzle: insertWithDrizzle, kysely: insertWithKysely };

async function start(factory: StoreFactory, orm: keyof typeof orms) {
  const store: TestStore = await factory.open();
  cleanups.push(() => store.cleanup());
  await store.exec("CREATE TABLE credits (payment_id TEXT NOT NULL, amount INTEGER NOT NULL)");
  const gateway: Gateway = await startGateway(
    {
      store: store.url,
      sources: { stripe: testSources.stripe },
      handlers: {
        "stripe:payment_intent.succeeded": async (
          event: HandlerEvent<Payment>,
          ctx: HandlerContext,
        ) => {
          const payment = event.payload.data.object;
          await ctx.transaction(async (tx) => {
            await orms[orm](tx, payment.id, payment.amount);
            // After the ORM's write, inside the transaction: it must not survive.
            if (payment.fail) throw new PermanentError("refused after the write");
          });
        },
      },
    },
    { env: {}, port: 0, adminToken: testAdminToken },
  );
  cleanups.push(() => gateway.close());
  const send = async (id: string, object: Payment["data"]["object"]) => {
    const request = stripeRequest(id, {
      type: "payment_intent.succeeded",
      extra: { data: { object } },
    });
    const response = await fetch(`${gateway.url}/webhooks/stripe`, { method: "POST", ...request });
    const { eventId } = (await response.json()) as { eventId: string };
    return until(async () => {
      const stored = await gateway.inbox.store.getEvent(eventId);
      return stored?.deliveries.every((d) => d.status === "done" || d.status === "dead")
        ? stored
        : null;
    }, 30_000);
  };
  return { store, send };
}

describe.each(storeFactories())("ORMs inside ctx.transaction ($name)", (factory) => {
  it.each(["drizzle", "kysely"] as const)(
    "%s: the write commits with the delivery; a throw after it rolls it back",
    async (orm) => {
      const { store, send } = await start(factory, orm);
      const paid = await send("evt_orm_paid", { id: "pi_paid", amount: 2000 });
      const refused = await send("evt_orm_refused", { id: "pi_refused", amount: 500, fail: true });
      expect(paid.deliveries.map((d) => d.status)).toEqual(["done"]);
      expect(refused.deliveries.map((d) => d.status)).toEqual(["dead"]);
      expect(await store.rows("SELECT payment_id, amount FROM credits")).toEqual([
        { payment_id: "pi_paid", amount: 2000 },
      ]);
      if (store.kind === "postgres") {
        // One transaction wrote both: the credit row and the delivery's `done` share an xmin.
        const together = await store.rows(
          "SELECT (SELECT xmin::text FROM public.credits) = (SELECT xmin::text FROM deliveries WHERE status = 'done') AS same",
        );
        expect(together).toEqual([{ same: true }]);
      }
    },
  );
});
