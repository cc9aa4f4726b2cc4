// The package as users get it: packed, installed from the tarball into fresh projects (no
// TypeScript loader, no better-sqlite3), each receiving Stripe events signed by the `stripe`
// package over loopback into its own PostgreSQL database. See consumer-root.ts.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase } from "../helpers/postgres.ts";
import { until } from "../helpers/processing.ts";
import { secrets, stripeRequest } from "../helpers/signers.ts";
import { repoRoot } from "../helpers/temp.ts";
import {
  type ConsumerRoot,
  freePort,
  installConsumerRoot,
  npmInstall,
  startConsumer,
} from "./consumer-root.ts";

let root: ConsumerRoot;
/** Consumer servers, stopped first, then the databases they used (cleanups). */
const stops: Array<() => Promise<void>> = [];
const cleanups: Array<() => Promise<void>> = [];

beforeAll(() => {
  root = installConsumerRoot();
  console.log(`tarball ${root.tarball}: ${root.tarballBytes} bytes`);
}, 600_000);

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
  await Promise.all(cleanups.map((cleanup) => cleanup()));
  root?.cleanup();
}, 120_000);

/** A fresh database for one consumer, dropped after the file. */
async function database(): Promise<{ url: string; client: pg.Client }> {
  const db = await freshDatabase();
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  cleanups.push(async () => {
    await client.end();
    await db.cleanup();
  });
  return { url: db.url, client };
}

const consumerEnv = (url: string) => ({
  DATABASE_URL: url,
  STRIPE_WEBHOOK_SECRET: secrets.stripe,
});

/**
 * Posts two events, a duplicate of the first and a forgery to `url`; asserts the answers and
 * exactly what the consumer's database stored.
 */
async function assertReceives(url: string, client: pg.Client): Promise<void> {
  const first = stripeRequest("evt_pkg_first");
  const second = stripeRequest("evt_pkg_second", { type: "payment_intent.succeeded" });
  const forged = stripeRequest("evt_pkg_forged", { secret: "whsec_not_the_secret" });
  const answers = [];
  for (const request of [first, second, first, forged]) {
    const response = await fetch(url, { method: "POST", ...request });
    answers.push({ status: response.status, body: (await response.json()) as object });
  }
  expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 401]);
  expect(answers.slice(0, 3).map((a) => (a.body as { duplicate: boolean }).duplicate)).toEqual([
    false,
    false,
    true,
  ]);
  expect(answers[3]?.body).toMatchObject({ error: { code: "HOOKINBOX_SIGNATURE_MISMATCH" } });
  const events = await client.query(
    "SELECT source, dedup_key, type FROM hookinbox.events ORDER BY dedup_key",
  );
  expect(events.rows).toEqual([
    { source: "stripe", dedup_key: "evt_pkg_first", type: "invoice.paid" },
    { source: "stripe", dedup_key: "evt_pkg_second", type: "payment_intent.succeeded" },
  ]);
  const receipts = await client.query(
    "SELECT duplicate, count(*)::int AS n FROM hookinbox.receipts WHERE event_id IS NOT NULL GROUP BY 1 ORDER BY 1",
  );
  expect(receipts.rows).toEqual([
    { duplicate: false, n: 2 },
    { duplicate: true, n: 1 },
  ]);
}

const nodeServers = [
  {
    name: "plain Node ESM (node:http, hookinbox/node, hookinbox/providers)",
    file: "esm/server.mjs",
  },
  { name: "CommonJS require of every entry", file: "cjs/server.cjs" },
  { name: "Express 5 (hookinbox/express, global JSON parser)", file: "express/server.mjs" },
  { name: "Fastify 5 (hookinbox/fastify)", file: "fastify/server.mjs" },
  { name: "Hono on @hono/node-server (hookinbox/hono)", file: "hono/server.mjs" },
];

describe("consumers installed from the packed tarball", () => {
  it.each(nodeServers)("$name stores signed events once", async ({ file }) => {
    const { url, client } = await database();
    const server = await startConsumer(process.execPath, [join(root.dir, file)], {
      cwd: join(root.dir, file, ".."),
      env: consumerEnv(url),
      ready: /ready (\d+)/,
    });
    stops.push(server.stop);
    await assertReceives(`http://127.0.0.1:${server.port}/webhooks/stripe`, client);
  });

  it.each(["node16", "bundler"])(
    "a TypeScript consumer type-checks under moduleResolution %s",
    (resolution) => {
      const tsc = join(root.dir, "node_modules/typescript/bin/tsc");
      const out = execFileSync(process.execPath, [tsc, "-p", `tsconfig.${resolution}.json`], {
        cwd: join(root.dir, "types"),
        encoding: "utf8",
      });
      expect(out).toBe("");
    },
    // A type-check of the consumer takes 7 s alone, over a minute beside a next build on a
    // loaded machine: it is bounded by the type-check, not by the default 60 s.
    300_000,
  );

  it("a Next.js App Router app (next build, next start) stores Stripe events once", async () => {
    const app = join(root.dir, "next-app");
    const next = join(root.dir, "node_modules/next/dist/bin/next");
    execFileSync(process.execPath, [next, "build"], {
      cwd: app,
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const { url, client } = await database();
    const port = await freePort();
    const server = await startConsumer(
      process.execPath,
      [next, "start", "-p", String(port), "-H", "127.0.0.1"],
      { cwd: app, env: consumerEnv(url), ready: /Ready in/, port },
    );
    stops.push(server.stop);
    await assertReceives(`http://127.0.0.1:${port}/api/webhooks/stripe`, client);
  }, 600_000);

  it("the README's processing example, pasted into a project on PostgreSQL with credits in public, commits the credit and the delivery together", async () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Processing"));
    const sql = /```sql\n([\s\S]*?)```/.exec(section)?.[1];
    const config = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    if (!sql || !config) throw new Error("README: no sql + ts blocks under ## Processing");
    // Its own project: the README says `npm install hookinbox tsx` (tsx loads the .ts config).
    const dir = join(root.dir, "readme-example");
    mkdirSync(dir);
    writeFileSync(join(dir, "package.json"), '{ "name": "readme-example", "private": true }\n');
    const tsx = (
      JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
        devDependencies: Record<string, string>;
      }
    ).devDependencies.tsx;
    npmInstall(dir, [root.tarball, `tsx@${tsx}`]);
    writeFileSync(join(dir, "hookinbox.config.ts"), config);
    const { url, client } = await database();
    await client.query(sql); // in public, where the user's tables live
    const server = await startConsumer(
      process.execPath,
      [join(dir, "node_modules/hookinbox/bin/hookinbox.mjs"), "start", "--port", "0"],
      { cwd: dir, env: consumerEnv(url), ready: /listening on http:\/\/\S*:(\d+)/ },
    );
    stops.push(server.stop);
    // The packed package ships the built dashboard, and `hookinbox start` serves it at /.
    const page = await fetch(`http://127.0.0.1:${server.port}/`);
    expect([page.status, page.headers.get("content-type")]).toEqual([
      200,
      "text/html; charset=utf-8",
    ]);
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(await page.text())?.[1];
    const asset = await fetch(`http://127.0.0.1:${server.port}/${script}`);
    expect([asset.status, asset.headers.get("content-type")]).toEqual([
      200,
      "text/javascript; charset=utf-8",
    ]);
    const payment = stripeRequest("evt_readme_1", {
      type: "payment_intent.succeeded",
      extra: {
        data: { object: { id: "pi_1", amount_received: 2000, receipt_email: "a@example.com" } },
      },
    });
    const webhook = `http://127.0.0.1:${server.port}/webhooks/stripe`;
    const duplicates = [];
    for (let i = 0; i < 2; i++) {
      const response = await fetch(webhook, { method: "POST", ...payment });
      duplicates.push(((await response.json()) as { duplicate: boolean }).duplicate);
    }
    expect(duplicates).toEqual([false, true]);
    await until(
      async () =>
        (await client.query("SELECT 1 FROM hookinbox.deliveries WHERE status = 'done'")).rowCount,
      30_000,
      "the delivery done",
    );
    expect((await client.query("SELECT payment_id, amount::int FROM public.credits")).rows).toEqual(
      [{ payment_id: "pi_1", amount: 2000 }],
    );
    // Together: the credit and the delivery's `done` were written by one transaction.
    const together = await client.query(
      "SELECT (SELECT xmin::text FROM public.credits) = (SELECT xmin::text FROM hookinbox.deliveries) AS same",
    );
    expect(together.rows).toEqual([{ same: true }]);
    expect((await client.query("SELECT name, status FROM hookinbox.effects")).rows).toEqual([
      { name: "receipt", status: "done" },
    ]);
    expect(server.output().match(/receipt sent to a@example\.com/g)).toHaveLength(1);
  }, 300_000);
});
