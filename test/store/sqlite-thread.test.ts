import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { isHookinboxError } from "../../src/errors.ts";
import { openSqliteStore } from "../../src/store/index.ts";
import { acceptInput, runStoreConformance } from "./conformance.ts";
import { runQueueConformance } from "./queue-conformance.ts";

// The same contract with the writer on its own thread (what `hookinbox start` uses).
const tempRoot = mkdtempSync(join(tmpdir(), "hookinbox-sqlite-thread-"));
let counter = 0;
afterAll(() => rmSync(tempRoot, { recursive: true, force: true }));

async function openFresh(options: { busyTimeoutMs?: number } = {}) {
  const path = join(tempRoot, `w${++counter}.db`);
  const store = openSqliteStore({ path, writer: "thread", ...options });
  await store.migrate();
  return { store, path, cleanup: () => store.close() };
}

runStoreConformance("sqlite (writer thread)", openFresh);
runQueueConformance("sqlite (writer thread)", openFresh, {
  createTable: "CREATE TABLE credits (order_id TEXT NOT NULL)",
  insert: "INSERT INTO credits (order_id) VALUES (?)",
  count: "SELECT count(*) AS n FROM credits",
});

describe("SQLite writer thread specifics", () => {
  it("keeps WAL and synchronous = FULL on the writing connection", async () => {
    const { store, cleanup } = await openFresh();
    expect(store.pragmas()).toMatchObject({ journalMode: "wal", synchronous: 2 });
    await cleanup();
  });

  it("answers 503-class errors while another connection holds the write lock, then recovers", async () => {
    const { store, path, cleanup } = await openFresh({ busyTimeoutMs: 200 });
    const locker = new Database(path);
    locker.exec("BEGIN EXCLUSIVE");
    const error = await store
      .accept(acceptInput({ identity: { dedupKey: "locked" } }))
      .catch((e: unknown) => e);
    expect(isHookinboxError(error, "HOOKINBOX_STORE_UNAVAILABLE")).toBe(true);
    locker.exec("COMMIT");
    locker.close();
    const stored = await store.accept(acceptInput({ identity: { dedupKey: "locked" } }));
    expect(stored.duplicate).toBe(false);
    await cleanup();
  });

  it("batches concurrent accepts into fewer commits than accepts", async () => {
    const { store, cleanup } = await openFresh();
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        store.accept(acceptInput({ identity: { dedupKey: `b${i}` } })),
      ),
    );
    const stats = store.stats();
    expect(stats.accepted).toBe(100);
    expect(stats.commits).toBeLessThan(100);
    await cleanup();
  });
});
