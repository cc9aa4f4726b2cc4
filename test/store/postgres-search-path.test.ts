// hookinbox names its schema in its own SQL and leaves the session's search_path alone, so a
// handler's ctx.transaction resolves the user's tables as the user's own connection would.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import type { Handler } from "../../src/handlers/types.ts";
import { PermanentError } from "../../src/index.ts";
import { loadPostgresMigrations } from "../../src/store/postgres/migrate.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { freshDatabase, postgresMigrationCount } from "../helpers/postgres.ts";
import { until } from "../helpers/processing.ts";
import { stripeRequest, testSources } from "../helpers/signers.ts";
import { acceptInput } from "./conformance.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh database and a client on it as its user would connect: no options, default path. */
async function userDatabase() {
  const database = await freshDatabase();
  cleanups.push(() => database.cleanup());
  const user = new pg.Client({ connectionString: database.url });
  await user.connect();
  cleanups.push(() => user.end());
  const rows = async (sql: string, params: unknown[] = []) => (await user.query(sql, params)).rows;
  return { database, user, rows };
}

type PaymentIntentEvent = {
  data: { object: { id: string; amount_received: number; receipt_email: string } };
};

const paymentIntent = (id: string, intent: string, amount: number) =>
  stripeRequest(id, {
    type: "payment_intent.succeeded",
    extra: {
      data: { object: { id: intent, amount_received: amount, receipt_email: "a@example.com" } },
    },
  });

describe("PostgreSQL: hookinbox names its schema, the session keeps the database's search_path", () => {
  it("runs the README's processing example: the credit in public commits with the delivery", async () => {
    const { database, rows } = await userDatabase();
    // The user's table, created as the user's own connection creates it: in public.
    await rows("CREATE TABLE credits (payment_id text PRIMARY KEY, amount integer NOT NULL)");
    const sent: string[] = [];
    const mailer = { send: async (to: string) => void sent.push(to) };
    const paths: string[] = [];
    // The README's handler, with PostgreSQL's $n placeholders.
    const credit: Handler<PaymentIntentEvent> = async (event, ctx) => {
      const intent = event.payload.data.object;
      await ctx.effect("receipt", () => mailer.send(intent.receipt_email), { onStale: "reclaim" });
      await ctx.transaction(async (tx) => {
        paths.push(String((await tx.query("SHOW search_path")).rows[0]?.search_path));
        await tx.query(
          "INSERT INTO credits (payment_id, amount) VALUES ($1, $2) ON CONFLICT DO NOTHING",
          [intent.id, intent.amount_received],
        );
        if (intent.amount_received < 0) throw new PermanentError("refused after the insert");
      });
    };
    const gateway: Gateway = await startGateway(
      {
        store: database.url,
        sources: { stripe: testSources.stripe },
        handlers: { "stripe:payment_intent.succeeded": credit },
      },
      { env: {}, port: 0, adminToken: testAdminToken },
    );
    cleanups.push(() => gateway.close());
    const post = async (request: { body: string; headers: Record<string, string> }) => {
      const response = await fetch(`${gateway.url}/webhooks/stripe`, {
        method: "POST",
        ...request,
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { eventId: string }).eventId;
    };
    const settled = (eventId: string) =>
      until(async () => {
        const event = await gateway.inbox.store.getEvent(eventId);
        return event && event.status !== "pending" ? event : null;
      });

    const paid = await settled(await post(paymentIntent("evt_paid", "pi_1", 1200)));
    const refused = await settled(await post(paymentIntent("evt_refused", "pi_2", -1)));

    expect(paid.deliveries.map((d) => d.status)).toEqual(["done"]);
    expect(refused.deliveries.map((d) => d.status)).toEqual(["dead"]);
    // The credit committed with its delivery; the refused one rolled back with its delivery.
    expect(await rows("SELECT payment_id, amount FROM credits")).toEqual([
      { payment_id: "pi_1", amount: 1200 },
    ]);
    expect(sent).toEqual(["a@example.com", "a@example.com"]);
    expect(paths).toEqual(['"$user", public', '"$user", public']);
    // hookinbox put nothing in public, and everything in its schema.
    expect(
      await rows("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"),
    ).toEqual([{ tablename: "credits" }]);
    expect(
      await rows(
        "SELECT count(*)::int AS n FROM hookinbox.deliveries d JOIN hookinbox.events e ON e.id = d.event_id",
      ),
    ).toEqual([{ n: 2 }]);
  });

  it("keeps a store with a custom schema to its own tables, beside another store", async () => {
    const { database, rows } = await userDatabase();
    const url = (schema: string) => {
      const u = new URL(database.url);
      u.searchParams.set("schema", schema);
      return u.toString();
    };
    const a = openPostgresStore(url("inbox_a"));
    const b = openPostgresStore(url("inbox_b"));
    cleanups.push(async () => {
      await a.close();
      await b.close();
    });
    await a.migrate();
    await b.migrate();
    await rows("CREATE TABLE credits (order_id text NOT NULL)");
    await a.accept(acceptInput({ identity: { dedupKey: "evt_1" }, targets: ["t"] }));
    for (const key of ["evt_1", "evt_2"])
      await b.accept(acceptInput({ identity: { dedupKey: key }, targets: ["t"] }));

    const now = Date.now();
    const [claimed] = await a.claimDeliveries({ workerId: "w", limit: 10, leaseMs: 30_000, now });
    await a.completeDelivery(
      { deliveryId: claimed!.id, workerId: "w", attempt: claimed!.attempt, now },
      (tx) => tx.query("INSERT INTO credits (order_id) VALUES ($1)", ["o1"]),
    );

    const count = async (table: string) =>
      Number((await rows(`SELECT count(*)::int AS n FROM ${table}`))[0]?.n);
    expect([await count("inbox_a.events"), await count("inbox_b.events")]).toEqual([1, 2]);
    expect(
      (
        await rows(
          "SELECT status FROM inbox_a.deliveries UNION ALL SELECT 'b:' || status FROM inbox_b.deliveries ORDER BY 1",
        )
      ).map((r) => r.status),
    ).toEqual(["b:pending", "b:pending", "done"]);
    expect(await count("credits")).toBe(1);
    expect(
      await rows(
        // Partitioned tables count once (their day partitions are not counted); 014 added
        // audit_pending and audit_sequencer.
        `SELECT schemaname, count(*)::int AS n FROM pg_tables t
         JOIN pg_class c ON c.oid = format('%I.%I', t.schemaname, t.tablename)::regclass
         WHERE schemaname IN ('public', 'inbox_a', 'inbox_b', 'hookinbox') AND NOT c.relispartition
         GROUP BY 1 ORDER BY 1`,
      ),
    ).toEqual([
      { schemaname: "inbox_a", n: 18 },
      { schemaname: "inbox_b", n: 18 },
      { schemaname: "public", n: 1 },
    ]);
  });

  it("upgrades a schema migrated by the old runner (search_path set, 001–003) and then needs no search_path", async () => {
    const { database, user, rows } = await userDatabase();
    // What an existing deployment has: 001–003 applied in schema `legacy` with search_path set.
    await rows("CREATE SCHEMA legacy");
    await rows("SET search_path TO legacy");
    await rows(
      "CREATE TABLE hookinbox_migrations (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    for (const migration of loadPostgresMigrations().filter((m) => m.id <= 3)) {
      await user.query(migration.sql);
      await rows("INSERT INTO hookinbox_migrations (id, name) VALUES ($1, $2)", [
        migration.id,
        migration.name,
      ]);
    }
    await rows("RESET search_path");

    const legacyUrl = new URL(database.url);
    legacyUrl.searchParams.set("schema", "legacy");
    const store = openPostgresStore(legacyUrl.toString());
    cleanups.push(() => store.close());
    const report = await store.migrate();
    // Every migration after 003, in order (the list follows the migrations folder).
    const later = loadPostgresMigrations().filter((m) => m.id > 3);
    expect(later[0]?.name).toBe("004_pin_function_search_path");
    expect(report.applied).toEqual(later.map((m) => m.name));
    expect(report.current).toBe(postgresMigrationCount);
    expect((await store.migrate()).applied).toEqual([]);

    await rows("CREATE TABLE credits (order_id text NOT NULL)");
    await store.accept(acceptInput({ identity: { dedupKey: "evt_old" }, targets: ["t"] }));
    const now = Date.now();
    const [claimed] = await store.claimDeliveries({
      workerId: "w",
      limit: 1,
      leaseMs: 30_000,
      now,
    });
    await store.completeDelivery(
      { deliveryId: claimed!.id, workerId: "w", attempt: claimed!.attempt, now },
      (tx) => tx.query("INSERT INTO credits (order_id) VALUES ($1)", ["o1"]),
    );
    expect(await rows("SELECT status FROM legacy.events")).toEqual([{ status: "done" }]);
    expect(await rows("SELECT order_id FROM public.credits")).toEqual([{ order_id: "o1" }]);
    // 010 dropped the queue's PL/pgSQL functions and 016 retention's partition helpers (009)
    // and 011's append; the audit log's batch append (012) stays, naming tables with its own path.
    expect(
      await rows(
        `SELECT p.proname, p.proconfig FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = 'legacy' ORDER BY 1`,
      ),
    ).toEqual([{ proname: "hookinbox_audit_append_leaves", proconfig: ["search_path=legacy"] }]);
  });
});
