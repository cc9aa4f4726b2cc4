import { existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSqliteMigrations, migrateSqlite } from "../../src/store/sqlite/migrate.ts";
import { runCli } from "../helpers/cli-capture.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/temp.ts";

// Read-only commands never migrate: against a store with no schema, or one a migration behind,
// each fails with HOOKINBOX_SCHEMA_BEHIND (exit 1, one line naming `hookinbox migrate`) and the
// store is left exactly as it was. After `hookinbox migrate` the same commands run.

const readOnly = [
  ["events", "list"],
  ["events", "show", "evt_nope"],
  ["dlq", "list"],
  ["stuck"],
  ["effects", "list"],
  ["destinations", "list"],
  ["destinations", "deliveries", "app"],
  ["audit", "prove", "evt_nope"],
  ["audit", "consistency", "--from", "0"],
  ["overview"],
  ["events", "search", "msg_nope"],
  ["receipts", "list", "--rejected"],
  ["runbooks", "list"],
];

async function expectAllRefused(env: Record<string, string>) {
  for (const args of readOnly) {
    const result = await runCli(args, env);
    expect({ args, code: result.code, stdout: result.stdout }).toEqual({
      args,
      code: 1,
      stdout: "",
    });
    expect(result.stderr).toMatch(
      /^hookinbox: HOOKINBOX_SCHEMA_BEHIND: .*run `hookinbox migrate`\n$/,
    );
  }
}

describe("read-only commands on SQLite", () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  it("leave a missing database file missing", async () => {
    const path = join(tmp.dir, "absent.db");
    await expectAllRefused({ DATABASE_URL: `sqlite:${path}` });
    expect(existsSync(path)).toBe(false);
  });

  it("leave a database one migration behind as it was, and run once it is migrated", async () => {
    const path = join(tmp.dir, "behind.db");
    const all = loadSqliteMigrations();
    const db = new Database(path);
    migrateSqlite(db, { migrations: all.slice(0, -1) });
    db.close();
    const env = { DATABASE_URL: `sqlite:${path}` };
    await expectAllRefused(env);
    const check = new Database(path, { readonly: true });
    expect(check.prepare("SELECT max(id) AS id FROM hookinbox_migrations").get()).toEqual({
      id: all.length - 1,
    });
    check.close();
    expect((await runCli(["migrate"], env)).code).toBe(0);
    const listed = await runCli(["events", "list", "--json"], env);
    expect(listed).toEqual({ code: 0, stdout: '{"items":[],"nextCursor":null}\n', stderr: "" });
    expect((await runCli(["stuck"], env)).code).toBe(0);
  });
});

describe("read-only commands on PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database.cleanup());

  async function query<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query<T>(sql)).rows;
    } finally {
      await client.end();
    }
  }

  it("leave an absent schema absent", async () => {
    const url = database.schemaUrl();
    const schema = new URL(url).searchParams.get("schema")!;
    await expectAllRefused({ DATABASE_URL: url });
    expect(
      await query(
        `SELECT schema_name FROM information_schema.schemata WHERE schema_name = '${schema}'`,
      ),
    ).toEqual([]);
  });

  it("leave a schema one migration behind as it was, and run once it is migrated", async () => {
    const url = database.schemaUrl();
    const schema = new URL(url).searchParams.get("schema")!;
    const env = { DATABASE_URL: url };
    expect((await runCli(["migrate"], env)).code).toBe(0);
    const [latest] = await query<{ id: number }>(
      `SELECT max(id) AS id FROM ${schema}.hookinbox_migrations`,
    );
    // Pretend the newest migration never ran (its row is what the check reads).
    await query(`DELETE FROM ${schema}.hookinbox_migrations WHERE id = ${latest!.id}`);
    await expectAllRefused(env);
    expect(await query(`SELECT max(id) AS id FROM ${schema}.hookinbox_migrations`)).toEqual([
      { id: latest!.id - 1 },
    ]);
    // Put the row back (re-running that migration's DDL would fail on objects it made): current.
    await query(
      `INSERT INTO ${schema}.hookinbox_migrations (id, name) VALUES (${latest!.id}, 'restored')`,
    );
    const listed = await runCli(["events", "list", "--json"], env);
    expect(listed).toEqual({ code: 0, stdout: '{"items":[],"nextCursor":null}\n', stderr: "" });
  });
});
