// How long inbox.processAvailable runs past its deadline (issue 23: "the measured overrun past
// maxMs"), on each store.
//
//   npm run bench:process-available                     # both stores
//   npm run bench:process-available -- --store sqlite   # or postgres
//
// Per store, in this process, on a fresh SQLite file or a fresh PostgreSQL database:
// 1. Busy: 4,000 Standard Webhooks events are accepted through inbox.handle (untimed); then
//    `--runs` calls of processAvailable({ maxMs: 500, graceMs: 5000, concurrency: 8 }) with a
//    handler that sleeps 0–40 ms and writes one row in the delivery's transaction. There is always
//    more due than a call can run, so every call ends at its deadline: overrun = the call's
//    duration minus maxMs (what the last claimed handlers need to finish).
// 2. Hung: one event whose handler never ends; processAvailable({ maxMs: 300, graceMs: 500 })
//    abandons it at the grace deadline: overrun = duration minus (maxMs + graceMs).
// Checks: every handler row belongs to a delivery marked done (no effect without its done), and
// the call's counts add up to what the store holds.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import type { HandlerContext, HandlerEvent } from "../src/handlers/types.ts";
import { createInbox, type Inbox } from "../src/inbox.ts";
import { acceptedEventIds } from "../src/ingest/accepted-events.ts";
import { createDatabase, databaseUrl, dropDatabase } from "./postgres/db.ts";

const { values } = parseArgs({
  options: {
    store: { type: "string", default: "both" },
    runs: { type: "string", default: "10" },
  },
});
const stores = values.store === "both" ? ["sqlite", "postgres"] : [String(values.store)];
const runs = Number(values.runs);
const SECRET = `whsec_${Buffer.from("bench-process-available-secret!!").toString("base64")}`;
const EVENTS = 4_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** Runs one statement on the store's database with its own client (setup and checks). */
async function direct(store: string, sql: string): Promise<number> {
  if (store.startsWith("sqlite:")) {
    const db = new Database(store.slice("sqlite:".length));
    try {
      const statement = db.prepare(sql);
      if (!statement.reader) return statement.run().changes;
      return Number((statement.get() as { n: number }).n);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: store });
  await client.connect();
  try {
    const result = await client.query<{ n: string }>(sql);
    return Number(result.rows[0]?.n ?? result.rowCount);
  } finally {
    await client.end();
  }
}

function openInbox(store: string): Inbox {
  return createInbox(
    {
      store,
      sources: { std: { provider: "standard-webhooks", secrets: [SECRET] } },
      handlers: {
        "std:work": async (event: HandlerEvent, ctx: HandlerContext) => {
          await sleep(Math.random() * 40);
          await ctx.transaction(
            (tx) => tx.sql`INSERT INTO handled (event_id) VALUES (${event.id})`,
          );
        },
        "std:hang": () => new Promise<void>(() => undefined),
      },
      retry: { maxAttempts: 1000 },
      worker: { concurrency: 8, lease: "2m" },
    },
    { env: {} },
  );
}

async function accept(inbox: Inbox, id: string, type: string): Promise<readonly string[]> {
  const body = JSON.stringify({ type, data: { id } });
  const date = new Date();
  const response = await inbox.handle({
    method: "POST",
    url: "/webhooks/std",
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(date.getTime() / 1000)),
      "webhook-signature": new Webhook(SECRET).sign(id, date, body),
    },
    body: new TextEncoder().encode(body),
  });
  if (response.status !== 200) throw new Error(`accept ${id}: HTTP ${response.status}`);
  return acceptedEventIds(response) ?? [];
}

async function timed(inbox: Inbox, maxMs: number, graceMs: number) {
  const start = performance.now();
  const result = await inbox.processAvailable({ maxMs, graceMs, concurrency: 8 });
  return { ms: performance.now() - start, result };
}

async function measure(name: string, url: string): Promise<void> {
  const inbox = openInbox(url);
  await inbox.ready();
  await direct(url, "CREATE TABLE handled (event_id TEXT NOT NULL)");
  for (let i = 0; i < EVENTS; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, j) => accept(inbox, `msg_work_${i + j}`, "work")),
    );
  }
  const overruns: number[] = [];
  let done = 0;
  for (let run = 0; run < runs; run++) {
    const { ms, result } = await timed(inbox, 500, 5_000);
    if (result.remaining === 0) throw new Error("ran out of due events: raise EVENTS");
    overruns.push(ms - 500);
    done += result.done;
  }
  overruns.sort((a, b) => a - b);
  const handled = await direct(url, "SELECT count(*) AS n FROM handled");
  if (handled !== done) throw new Error(`FAILED CHECK: ${handled} handler rows, ${done} done`);
  console.log(
    `${name} busy (maxMs 500, graceMs 5000, ${runs} calls, ${done} done): overrun past maxMs p50 ${percentile(overruns, 50).toFixed(1)} ms, max ${(overruns.at(-1) ?? 0).toFixed(1)} ms`,
  );

  // The hung event is due behind the work events: the call is given its id.
  const eventIds = await accept(inbox, "msg_hang", "hang");
  if (eventIds.length !== 1) throw new Error("the hung event was not accepted");
  const start = performance.now();
  const hung = await inbox.processAvailable({ maxMs: 300, graceMs: 500, concurrency: 8, eventIds });
  const ms = performance.now() - start;
  console.log(
    `${name} hung handler (maxMs 300, graceMs 500): returned after ${ms.toFixed(1)} ms, overrun past maxMs + graceMs ${(ms - 800).toFixed(1)} ms, ${JSON.stringify(hung)}`,
  );
  await inbox.close();
}

for (const store of stores) {
  if (store === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "hookinbox-bench-pa-"));
    try {
      await measure("SQLite", `sqlite:${join(dir, "bench.db")}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  } else {
    const name = await createDatabase("pa");
    try {
      await measure("PostgreSQL", databaseUrl(name));
    } finally {
      await dropDatabase(name);
    }
  }
}
// The hung handlers' promises never settle; nothing else holds the process.
process.exit(0);
