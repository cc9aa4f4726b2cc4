// The serverless user of issue 23, end to end: examples/nextjs-prisma-stripe (Next.js App Router,
// Prisma 7 on @prisma/adapter-pg, Stripe, PostgreSQL) built with `next build` from the packed
// tarball and run with `next start`. Events are processed by `after` right after each response and
// by the cron route; Prisma writes commit in the delivery's own transaction. Signed by the `stripe`
// package (test/helpers/signers.ts). The Prisma client is generated with a stub schema engine:
// `prisma generate` needs none, but would otherwise try to download one.
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase } from "../helpers/postgres.ts";
import { until } from "../helpers/processing.ts";
import { secrets, stripeRequest } from "../helpers/signers.ts";
import { repoRoot } from "../helpers/temp.ts";
import {
  type ConsumerProcess,
  type ConsumerRoot,
  freePort,
  installConsumerRoot,
  startConsumer,
} from "./consumer-root.ts";

const example = join(repoRoot, "examples/nextjs-prisma-stripe");
const cronSecret = "cron-secret-of-the-next-serverless-test-0123456789";
const EVENTS = 200;
const COPIES = 50;
const SLOW = 5;

let root: ConsumerRoot;
let app: string;
let next: string;
let db: Awaited<ReturnType<typeof freshDatabase>>;
let client: pg.Client;
let server: ConsumerProcess | undefined;

beforeAll(async () => {
  root = installConsumerRoot();
  app = join(root.dir, "nextjs-prisma-stripe");
  cpSync(example, app, {
    recursive: true,
    filter: (path) => !/\/(node_modules|\.next|generated)(\/|$)/.test(path.slice(example.length)),
  });
  const stub = join(root.dir, "schema-engine-stub");
  writeFileSync(stub, "#!/bin/sh\necho 'no schema engine in this test' >&2\nexit 1\n");
  chmodSync(stub, 0o755);
  execFileSync(
    process.execPath,
    [join(root.dir, "node_modules/prisma/build/index.js"), "generate"],
    {
      cwd: app,
      env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: stub, PRISMA_HIDE_UPDATE_MESSAGE: "1" },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  next = join(root.dir, "node_modules/next/dist/bin/next");
  execFileSync(process.execPath, [next, "build"], {
    cwd: app,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", HOOKINBOX_EXAMPLE_ROOT: root.dir },
    stdio: ["ignore", "ignore", "pipe"],
  });
  db = await freshDatabase();
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  // What `prisma migrate deploy` applies (the schema engine is a stub here).
  await client.query(readFileSync(join(app, "prisma/migrations/0001_init/migration.sql"), "utf8"));
}, 900_000);

afterAll(async () => {
  await server?.stop();
  await client?.end();
  await db?.cleanup();
  root?.cleanup();
}, 120_000);

/** `next start` of the example with the test's handlers; `slowMs` is how long test.slow takes. */
async function start(slowMs: number): Promise<ConsumerProcess> {
  const port = await freePort();
  return startConsumer(process.execPath, [next, "start", "-p", String(port), "-H", "127.0.0.1"], {
    cwd: app,
    env: {
      DATABASE_URL: db.url,
      STRIPE_WEBHOOK_SECRET: secrets.stripe,
      CRON_SECRET: cronSecret,
      HOOKINBOX_EXAMPLE_TEST_HOOKS: "1",
      HOOKINBOX_EXAMPLE_SLOW_MS: String(slowMs),
      WEBHOOK_LEASE: "3s",
    },
    ready: /Ready in/,
    port,
  });
}

const invoice = (id: string, type: string, customer: string, amount: number) =>
  stripeRequest(id, {
    type,
    extra: { data: { object: { id: `in_${id}`, customer, amount_paid: amount } } },
  });

async function send(signed: { body: string; headers: Record<string, string> }): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${server!.port}/api/webhooks/stripe`, {
    method: "POST",
    ...signed,
  });
  await response.arrayBuffer();
  return response.status;
}

async function cron(authorization?: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`http://127.0.0.1:${server!.port}/api/cron`, {
    headers: authorization ? { authorization } : {},
  });
  return { status: response.status, body: await response.json() };
}

const rows = async <T = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
  (await client.query(sql, params)).rows as T[];

const count = async (sql: string, params: unknown[] = []) =>
  Number((await rows<{ n: string }>(sql, params))[0]?.n);

/** Deliveries of one event type by status, e.g. { done: 200 }. */
async function statuses(type: string): Promise<Record<string, number>> {
  const found = await rows<{ status: string; n: number }>(
    `SELECT d.status, count(*)::int AS n FROM hookinbox.deliveries d
       JOIN hookinbox.events e ON e.id = d.event_id WHERE e.type = $1 GROUP BY 1 ORDER BY 1`,
    [type],
  );
  return Object.fromEntries(found.map((r) => [r.status, r.n]));
}

/** Calls the cron route (with the secret) until `done` says so; returns how many calls it took. */
async function cronUntil(done: () => Promise<boolean>): Promise<number> {
  let calls = 0;
  await until(
    async () => {
      if (await done()) return true;
      calls++;
      const answer = await cron(`Bearer ${cronSecret}`);
      expect(answer.status).toBe(200);
      return false;
    },
    120_000,
    "the cron route to finish the work",
  );
  return calls;
}

describe("examples/nextjs-prisma-stripe on next start, from the packed tarball", () => {
  it(`${EVENTS} Stripe events, each delivered ${COPIES} times at once: all 2xx, exactly ${EVENTS} credits, each committed with its delivery's done`, async () => {
    server = await start(1000);
    const statusCounts = new Map<number, number>();
    let expectedBalance = 0;
    // A few events at a time, each with its copies all in flight together.
    const inFlight = 4;
    for (let first = 0; first < EVENTS; first += inFlight) {
      const batch = [];
      for (let i = first; i < Math.min(first + inFlight, EVENTS); i++) {
        const signed = invoice(`evt_paid_${i}`, "invoice.paid", `cus_${i % 10}`, i + 1);
        expectedBalance += i + 1;
        for (let copy = 0; copy < COPIES; copy++) batch.push(send(signed));
      }
      for (const status of await Promise.all(batch)) {
        statusCounts.set(status, (statusCounts.get(status) ?? 0) + 1);
      }
    }
    console.log(`requests by status: ${JSON.stringify(Object.fromEntries(statusCounts))}`);
    expect(Object.fromEntries(statusCounts)).toEqual({ 200: EVENTS * COPIES });
    // Processed by the after-response runs alone: no cron call, no worker.
    await until(
      async () => (await statuses("invoice.paid")).done === EVENTS,
      120_000,
      "every invoice.paid delivery done",
    );
    expect(await statuses("invoice.paid")).toEqual({ done: EVENTS });
    expect(
      await rows(
        "SELECT duplicate, count(*)::int AS n FROM hookinbox.receipts GROUP BY 1 ORDER BY 1",
      ),
    ).toEqual([
      { duplicate: false, n: EVENTS },
      { duplicate: true, n: EVENTS * (COPIES - 1) },
    ]);
    expect(await count("SELECT count(*) AS n FROM public.credits")).toBe(EVENTS);
    expect(await count("SELECT sum(amount) AS n FROM public.balances")).toBe(expectedBalance);
    expect(
      await count(`SELECT count(*) AS n FROM hookinbox.attempts WHERE outcome <> 'success'`),
    ).toBe(0);
    // Each credit was written by the transaction that marked its delivery done: Prisma's
    // txid_current() (epoch and xid) has the done row's xmin as its low 32 bits.
    const together = await count(
      `SELECT count(*) AS n FROM public.credits c
           JOIN hookinbox.events e ON e.dedup_key = c.event_id
           JOIN hookinbox.deliveries d ON d.event_id = e.id AND d.status = 'done'
          WHERE (c.txid % 4294967296)::text = d.xmin::text`,
    );
    console.log(
      `${EVENTS * COPIES} requests (${EVENTS * (COPIES - 1)} duplicates), ${EVENTS} credits, ${together} in their delivery's transaction`,
    );
    expect(together).toBe(EVENTS);
  }, 900_000);

  it("a handler that throws after its Prisma write leaves nothing: retried once, then dead, no credit", async () => {
    const balances = await count("SELECT sum(amount) AS n FROM public.balances");
    expect(await send(invoice("evt_fails", "test.fails_after_write", "cus_fail", 999))).toBe(200);
    // The after-response run tried it once; the retry is due a second later, for the cron route.
    await until(
      async () =>
        (await count(
          `SELECT count(*) AS n FROM hookinbox.attempts a JOIN hookinbox.deliveries d ON d.id = a.delivery_id
             JOIN hookinbox.events e ON e.id = d.event_id WHERE e.dedup_key = 'evt_fails' AND a.outcome = 'error'`,
        )) === 1,
      60_000,
      "the first attempt",
    );
    await cronUntil(async () => (await statuses("test.fails_after_write")).dead === 1);
    expect(await statuses("test.fails_after_write")).toEqual({ dead: 1 });
    expect(
      await rows(
        `SELECT a.attempt, a.outcome FROM hookinbox.attempts a JOIN hookinbox.deliveries d ON d.id = a.delivery_id
           JOIN hookinbox.events e ON e.id = d.event_id WHERE e.dedup_key = 'evt_fails' ORDER BY a.attempt`,
      ),
    ).toEqual([
      { attempt: 1, outcome: "error" },
      { attempt: 2, outcome: "error" },
    ]);
    expect(
      await count("SELECT count(*) AS n FROM public.credits WHERE event_id = 'evt_fails'"),
    ).toBe(0);
    expect(
      await count("SELECT count(*) AS n FROM public.balances WHERE customer = 'cus_fail'"),
    ).toBe(0);
    expect(await count("SELECT sum(amount) AS n FROM public.balances")).toBe(balances);
  }, 300_000);

  it(`SIGKILL while ${SLOW} slow handlers run: after a restart the cron route (401 without the secret) credits each exactly once`, async () => {
    // This server's slow handlers never finish on their own.
    await server!.stop();
    server = await start(3_600_000);
    for (let i = 0; i < SLOW; i++) {
      expect(await send(invoice(`evt_slow_${i}`, "test.slow", "cus_slow", 10))).toBe(200);
    }
    await until(
      async () => (await statuses("test.slow")).running === SLOW,
      60_000,
      "the slow handlers running",
    );
    await server!.kill();
    expect(await statuses("test.slow")).toEqual({ running: SLOW });
    expect(
      await count("SELECT count(*) AS n FROM public.credits WHERE customer = 'cus_slow'"),
    ).toBe(0);
    server = await start(200);
    const refused = await cron();
    expect([refused.status, refused.body.error.code]).toEqual([401, "HOOKINBOX_CRON_UNAUTHORIZED"]);
    const calls = await cronUntil(async () => (await statuses("test.slow")).done === SLOW);
    expect(await statuses("test.slow")).toEqual({ done: SLOW });
    expect(
      await rows(
        "SELECT event_id, amount FROM public.credits WHERE customer = 'cus_slow' ORDER BY event_id",
      ),
    ).toEqual(Array.from({ length: SLOW }, (_, i) => ({ event_id: `evt_slow_${i}`, amount: 10 })));
    expect(await count("SELECT amount AS n FROM public.balances WHERE customer = 'cus_slow'")).toBe(
      SLOW * 10,
    );
    const rescued = await count(
      `SELECT count(*) AS n FROM hookinbox.attempts a JOIN hookinbox.deliveries d ON d.id = a.delivery_id
         JOIN hookinbox.events e ON e.id = d.event_id WHERE e.type = 'test.slow' AND a.outcome = 'lease-expired'`,
    );
    console.log(`slow events ${SLOW}, rescued ${rescued}, cron calls ${calls}`);
    expect(rescued).toBe(SLOW);
  }, 300_000);
});
