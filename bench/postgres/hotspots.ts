// Where hookinbox's PostgreSQL time goes: the measurements behind the hot spots reported in
// docs/BENCHMARKS.md ("PostgreSQL: … vs graphile-worker"). Not part of `npm run bench:postgres`.
//
//   node ./bin/run-ts.mjs bench/postgres/hotspots.ts
//
// 1. CPU cost of single statements and of the queue functions, on one connection inside one
//    transaction that is rolled back (so no commit or fsync is counted), 6,000 preloaded events.
// 2. Accept throughput (10 connections, 200 in flight) of the accept statement's shape with a
//    delivery, with and without its pg_notify: what NOTIFY inside the accept transaction costs.
// 3. A hookinbox burn-down (20,000 events, keys on) as shipped and with hookinbox_refresh_event
//    rewritten as PL/pgSQL in the bench's own database (src/ is not touched).
import pg from "pg";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { plainBody } from "../queue-events.ts";
import { startChild } from "./child.ts";
import { createDatabase, databaseUrl, dropDatabase } from "./db.ts";

const ts = Math.floor(Date.now() / 1000);

async function preload(db: string, n: number): Promise<void> {
  const store = openPostgresStore(databaseUrl(db, { schema: "hookinbox" }));
  await store.migrate();
  for (let from = 0; from < n; from += 500) {
    const batch = [];
    for (let i = from; i < Math.min(n, from + 500); i++) {
      const id = `evt_${i}`;
      batch.push(
        store.accept({
          source: "stripe",
          identity: {
            dedupKey: id,
            type: "invoice.paid",
            occurredAt: ts * 1000,
            orderingKey: null,
            version: null,
          },
          body: plainBody(id),
          headers: [["Host", "127.0.0.1"]],
          receivedAt: Date.now(),
          remoteAddress: "127.0.0.1",
          secretIndex: 0,
          targets: ["stripe:*"],
        }),
      );
    }
    await Promise.all(batch);
  }
  await store.close();
}

const REFRESH_PLPGSQL = `CREATE OR REPLACE FUNCTION hookinbox_refresh_event(p_event_id text) RETURNS void
LANGUAGE plpgsql AS $f$ BEGIN
  UPDATE events SET status = CASE
    WHEN EXISTS (SELECT 1 FROM deliveries WHERE event_id = p_event_id AND status IN ('pending', 'blocked', 'running')) THEN 'pending'
    WHEN EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = p_event_id AND d.status = 'dead'
                 AND NOT EXISTS (SELECT 1 FROM deliveries r WHERE r.event_id = d.event_id AND r.target = d.target
                                 AND r.id > d.id AND r.status IN ('done', 'stale'))) THEN 'dead'
    ELSE 'done' END
  WHERE id = p_event_id;
END $f$`;

async function statementCosts(): Promise<void> {
  const db = await createDatabase("hot_sql");
  try {
    await preload(db, 6_000);
    const c = new pg.Client(databaseUrl(db));
    await c.connect();
    await c.query("SET search_path TO hookinbox");
    await c.query("ANALYZE");
    const ids = (await c.query("SELECT id, event_id FROM deliveries ORDER BY id")).rows;
    const timed = async (label: string, fn: (i: number) => Promise<unknown>) => {
      await c.query("BEGIN");
      const t0 = performance.now();
      for (let i = 0; i < 2_000; i++) await fn(i);
      const ms = (performance.now() - t0) / 2_000;
      await c.query("ROLLBACK");
      console.log(`  ${label.padEnd(72)} ${ms.toFixed(3)} ms`);
    };
    const now = Date.now();
    console.log(
      "1. one statement at a time, in a transaction rolled back (ms per statement, round trip included):",
    );
    await timed("SELECT 1 (the round trip alone)", () => c.query("SELECT 1"));
    await timed("UPDATE events SET status = 'done' (non-HOT: 7 indexes, ~2.4 KB row)", (i) =>
      c.query({
        name: "a",
        text: "UPDATE events SET status = 'done' WHERE id = $1",
        values: [ids[i].event_id],
      }),
    );
    await timed("UPDATE deliveries SET status = 'done', completed_at, updated_at", (i) =>
      c.query({
        name: "b",
        text: "UPDATE deliveries SET status = 'done', completed_at = $2, updated_at = $2 WHERE id = $1",
        values: [ids[i].id, now],
      }),
    );
    await timed("SELECT hookinbox_refresh_event($1) as shipped (LANGUAGE sql)", (i) =>
      c.query({ name: "c", text: "SELECT hookinbox_refresh_event($1)", values: [ids[i].event_id] }),
    );
    await c.query(REFRESH_PLPGSQL.replace("hookinbox_refresh_event", "bench_refresh_plpgsql"));
    await timed("the same UPDATE as a PL/pgSQL function (plan cached per session)", (i) =>
      c.query({ name: "d", text: "SELECT bench_refresh_plpgsql($1)", values: [ids[i].event_id] }),
    );
    await c.query("BEGIN");
    let claimMs = 0;
    let completeMs = 0;
    let n = 0;
    for (let k = 0; k < 200; k++) {
      const attempts = Array.from({ length: 10 }, (_, j) => `att_${k}_${j}`);
      let t0 = performance.now();
      const { rows } = await c.query({
        name: "e",
        text: "SELECT * FROM hookinbox_claim($1, $2, $3, $4, $5)",
        values: ["w1", 10, 30_000, Date.now(), attempts],
      });
      claimMs += performance.now() - t0;
      t0 = performance.now();
      for (const r of rows)
        await c.query({
          name: "f",
          text: "SELECT hookinbox_complete($1, $2, $3, $4, $5)",
          values: [r.id, "w1", r.attempt, Date.now(), "done"],
        });
      completeMs += performance.now() - t0;
      n += rows.length;
    }
    await c.query("ROLLBACK");
    console.log(
      `  hookinbox_claim (10 at a time): ${(claimMs / n).toFixed(3)} ms per delivery; hookinbox_complete: ${(completeMs / n).toFixed(3)} ms per delivery`,
    );
    await c.end();
  } finally {
    await dropDatabase(db);
  }
}

async function notifyCost(): Promise<void> {
  const db = await createDatabase("hot_notify");
  try {
    await preload(db, 0);
    const pool = new pg.Pool({
      connectionString: databaseUrl(db),
      max: 10,
      options: "-c search_path=hookinbox",
    });
    const sql = (notify: boolean) => `
      WITH ins AS (
        INSERT INTO events (id, source, dedup_key, type, occurred_at, status, received_at, body, headers, secret_index)
        VALUES ($1, 'stripe', $1, 'invoice.paid', 1, 'pending', 1, $2, '[]'::jsonb, 0)
        ON CONFLICT (source, dedup_key) DO NOTHING RETURNING id
      ), rc AS (
        INSERT INTO receipts (id, event_id, source, received_at, duplicate, remote_address, size, secret_index)
        SELECT 'rcp_' || $1, ins.id, 'stripe', 1, false, '127.0.0.1', 2000, 0 FROM ins
      ), dl AS (
        INSERT INTO deliveries (id, event_id, target, order_version, status, run_at, created_at, updated_at)
        SELECT 'dlv_' || $1, ins.id, 'stripe:*', -1e308, 'pending', 1, 1, 1 FROM ins RETURNING 1
      ) SELECT (SELECT count(*) FROM ${notify ? "(SELECT pg_notify('bench_channel', '') FROM dl) n" : "dl"})`;
    const body = plainBody("evt_x");
    const run = async (tag: string, notify: boolean, n: number) => {
      const t0 = performance.now();
      for (let from = 0; from < n; from += 200) {
        const batch = [];
        for (let i = from; i < from + 200; i++)
          batch.push(pool.query(sql(notify), [`evt_${tag}_${i}`, body]));
        await Promise.all(batch);
      }
      return n / ((performance.now() - t0) / 1000);
    };
    await run("warm", false, 2_000);
    const rates = { without: [] as number[], with: [] as number[] };
    for (let round = 0; round < 2; round++) {
      rates.without.push(await run(`a${round}`, false, 6_000));
      rates.with.push(await run(`b${round}`, true, 6_000));
    }
    const avg = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
    console.log(
      `2. event + receipt + delivery per statement, 10 connections: ${avg(rates.without)}/s without pg_notify, ${avg(rates.with)}/s with it`,
    );
    await pool.end();
  } finally {
    await dropDatabase(db);
  }
}

async function burnDown(label: string, experimentSql?: string): Promise<void> {
  const db = await createDatabase("hot_burn");
  try {
    const child = startChild(
      "hookinbox-burndown.ts",
      [databaseUrl(db, { schema: "hookinbox" }), "20000", "1000", "10"],
      () => undefined,
      experimentSql ? { BENCH_EXPERIMENT_SQL: experimentSql } : {},
    );
    const r = (await child.result) as { perSecond: number; pass: boolean };
    console.log(
      `  ${label}: ${Math.round(r.perSecond)} events/s (check ${r.pass ? "OK" : "FAILED"})`,
    );
  } finally {
    await dropDatabase(db);
  }
}

await statementCosts();
await notifyCost();
console.log("3. burn-down, 20,000 events, 1,000 ordering keys, concurrency 10:");
await burnDown("as shipped");
await burnDown("hookinbox_refresh_event as PL/pgSQL", REFRESH_PLPGSQL);
