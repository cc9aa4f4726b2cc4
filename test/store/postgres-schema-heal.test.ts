// A PostgreSQL store notices its schema is gone (schema dropped, or the database dropped and
// created empty) and re-applies its migrations without a restart: accepts and /readyz recover
// (issue 8, item 9).
import { readdirSync } from "node:fs";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { freshDatabase, postgresServerUrl } from "../helpers/postgres.ts";
import { secrets, standardRequest } from "../helpers/signers.ts";

const migrations = readdirSync(
  new URL("../../src/store/postgres/migrations/", import.meta.url),
).filter((name) => name.endsWith(".sql")).length;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sql<Row>(url: string, text: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as Row[];
  } finally {
    await client.end();
  }
}

async function setup() {
  const database = await freshDatabase();
  cleanups.push(() => database.cleanup());
  const gw = await startGateway(
    {
      store: database.url,
      sources: { std: { provider: "standard-webhooks", secrets: [secrets.standard] } },
    },
    { env: {}, port: 0, adminToken: testAdminToken },
  );
  cleanups.push(() => gw.close());
  return { gw, url: database.url };
}

async function post(gw: Gateway, id: string) {
  const signed = standardRequest(id, JSON.stringify({ type: "t", id }));
  const response = await fetch(`${gw.url}/webhooks/std`, {
    method: "POST",
    headers: signed.headers,
    body: signed.body,
  });
  return { status: response.status, json: (await response.json()) as any };
}

const readyz = async (gw: Gateway) => (await fetch(`${gw.url}/readyz`)).status;

const counts = async (url: string) => {
  const [row] = await sql<{ events: number; receipts: number; migrations: number }>(
    url,
    `SELECT (SELECT count(*)::int FROM hookinbox.events) AS events,
            (SELECT count(*)::int FROM hookinbox.receipts) AS receipts,
            (SELECT count(*)::int FROM hookinbox.hookinbox_migrations) AS migrations`,
  );
  return row;
};

describe("a PostgreSQL schema that disappears under a running gateway", () => {
  it("is re-migrated when the schema is dropped: accepts and /readyz recover", async () => {
    const { gw, url } = await setup();
    expect((await post(gw, "msg_before_1")).status).toBe(200);
    expect((await post(gw, "msg_before_2")).status).toBe(200);
    expect(await counts(url)).toEqual({ events: 2, receipts: 2, migrations });

    await sql(url, "DROP SCHEMA hookinbox CASCADE");
    const after = await post(gw, "msg_after_drop");
    expect(after).toMatchObject({ status: 200, json: { ok: true, duplicate: false } });
    // What was stored before went with the schema; the new schema has exactly the new event.
    expect(await counts(url)).toEqual({ events: 1, receipts: 1, migrations });
    expect(await readyz(gw)).toBe(200);
    // An event sent before the drop is new again, not a duplicate.
    expect((await post(gw, "msg_before_1")).json.duplicate).toBe(false);
    expect(await counts(url)).toEqual({ events: 2, receipts: 2, migrations });
  });

  it("is re-migrated when the database is dropped and created empty; /readyz answers only once it can accept", async () => {
    const { gw, url } = await setup();
    expect((await post(gw, "msg_1")).status).toBe(200);
    const name = new URL(url).pathname.slice(1);
    await sql(postgresServerUrl(), `DROP DATABASE ${name} WITH (FORCE)`);
    await sql(postgresServerUrl(), `CREATE DATABASE ${name}`);
    expect(
      await sql<{ n: number }>(
        url,
        "SELECT count(*)::int AS n FROM information_schema.schemata WHERE schema_name = 'hookinbox'",
      ),
    ).toEqual([{ n: 0 }]);
    // /readyz's ping finds the schema missing, re-migrates, then answers: ready is true.
    expect(await readyz(gw)).toBe(200);
    expect(await counts(url)).toEqual({ events: 0, receipts: 0, migrations });
    const after = await post(gw, "msg_2");
    expect(after).toMatchObject({ status: 200, json: { ok: true, duplicate: false } });
    expect(await counts(url)).toEqual({ events: 1, receipts: 1, migrations });
  });
});
