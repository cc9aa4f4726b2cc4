import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/store/index.ts";
import { acceptInput } from "./conformance.ts";
import { runQueueConformance } from "./queue-conformance.ts";

const tempRoot = mkdtempSync(join(tmpdir(), "hookinbox-sqlite-queue-"));
let counter = 0;
afterAll(() => rmSync(tempRoot, { recursive: true, force: true }));

async function openFresh() {
  const path = join(tempRoot, `q${++counter}.db`);
  const store = openSqliteStore({ path });
  await store.migrate();
  return { store, path, cleanup: () => store.close() };
}

runQueueConformance("sqlite", openFresh, {
  createTable: "CREATE TABLE credits (order_id TEXT NOT NULL)",
  insert: "INSERT INTO credits (order_id) VALUES (?)",
  count: "SELECT count(*) AS n FROM credits",
});

describe("SQLite queue specifics", () => {
  it("enforces one running delivery per target and ordering key in the schema itself", async () => {
    const { store, path, cleanup } = await openFresh();
    await store.accept(
      acceptInput({ identity: { dedupKey: "a", orderingKey: "k" }, targets: ["t"] }),
    );
    await store.accept(
      acceptInput({ identity: { dedupKey: "b", orderingKey: "k" }, targets: ["t"] }),
    );
    await cleanup();
    const db = new Database(path);
    db.exec("UPDATE deliveries SET status = 'running' WHERE rowid = 1");
    expect(() => db.exec("UPDATE deliveries SET status = 'running' WHERE rowid = 2")).toThrow(
      /UNIQUE constraint failed/,
    );
    db.close();
  });

  it("claims through indexes: no table scan or sort on the due list or the key queue", async () => {
    const { path, cleanup } = await openFresh();
    await cleanup();
    const db = new Database(path, { readonly: true });
    const plan = (sql: string) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>)
        .map((r) => r.detail)
        .join(" | ");
    expect(
      plan(
        `SELECT id FROM deliveries INDEXED BY deliveries_due WHERE status = 'pending' AND run_at <= 1 AND (run_at, id) > (0, '') ORDER BY run_at, id LIMIT 10`,
      ),
    ).toMatch(/^SEARCH deliveries USING (COVERING )?INDEX deliveries_due \([^|]*\)$/); // one step: no sort
    expect(
      plan(`SELECT 1 FROM deliveries WHERE target = 't' AND ordering_key = 'k'
            AND (status IN ('pending', 'blocked', 'running') OR blocks_key = 1) AND id <> 'x'
            AND (status = 'running' OR blocks_key = 1 OR order_version < 1 OR (order_version = 1 AND id < 'x')) LIMIT 1`),
    ).toMatch(/USING (COVERING )?INDEX deliveries_key_queue/);
    expect(
      plan("SELECT min(run_at) FROM deliveries INDEXED BY deliveries_due WHERE status = 'pending'"),
    ).toMatch(/deliveries_due/);
    db.close();
  });
});
