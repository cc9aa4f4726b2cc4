import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { isHookinboxError } from "../../src/errors.ts";
import { listEventsSql } from "../../src/store/core/event-reads.ts";
import { encodeCursor } from "../../src/store/core/paging.ts";
import { loadSqliteMigrations, openSqliteStore, type SqliteStore } from "../../src/store/index.ts";
import { acceptInput, rejectionInput, runStoreConformance } from "./conformance.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const tempRoot = mkdtempSync(join(tmpdir(), "hookinbox-sqlite-"));
let counter = 0;

/** A fresh database path in the temp folder (inside a not-yet-existing subfolder). */
function freshPath(): string {
  counter += 1;
  return join(tempRoot, `t${counter}`, "nested", "hookinbox.db");
}

afterAll(() => {
  rmSync(tempRoot, { recursive: true, force: true });
});

runStoreConformance("sqlite", async () => {
  const path = freshPath();
  const store = openSqliteStore({ path });
  await store.migrate();
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(join(path, "..", ".."), { recursive: true, force: true });
    },
  };
});

async function openFresh(options: { busyTimeoutMs?: number } = {}): Promise<SqliteStore> {
  const store = openSqliteStore({ path: freshPath(), ...options });
  await store.migrate();
  return store;
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject");
}

function runChild(
  script: string,
  args: string[],
): { child: ChildProcess; exit: Promise<{ code: number | null; signal: string | null }> } {
  const child = spawn(process.execPath, ["bin/run-ts.mjs", script, ...args], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  return { child, exit };
}

describe("SQLite store specifics", () => {
  it("creates parent folders, runs in WAL mode with synchronous = FULL (2)", async () => {
    const path = freshPath();
    expect(existsSync(join(path, ".."))).toBe(false);
    const store = openSqliteStore({ path, busyTimeoutMs: 1234 });
    await store.migrate();
    expect(store.kind).toBe("sqlite");
    expect(store.pragmas()).toEqual({
      journalMode: "wal",
      synchronous: 2,
      busyTimeoutMs: 1234,
      foreignKeys: true,
    });
    await store.accept(acceptInput());
    // WAL is a property of the file: another connection sees it too.
    const other = new Database(path, { readonly: true });
    expect(other.pragma("journal_mode", { simple: true })).toBe("wal");
    other.close();
    await store.close();
  });

  it("defaults the busy timeout to 5000 ms", async () => {
    const store = await openFresh();
    expect(store.pragmas().busyTimeoutMs).toBe(5000);
    await store.close();
  });

  it("rejects with HOOKINBOX_STORE_UNAVAILABLE while another connection holds an exclusive lock, then succeeds", async () => {
    const store = await openFresh({ busyTimeoutMs: 200 });
    const locker = new Database(store.path);
    locker.exec("BEGIN EXCLUSIVE");
    try {
      const input = acceptInput({ identity: { dedupKey: "locked" } });
      const started = Date.now();
      const error = await rejectionOf(store.accept(input));
      expect(isHookinboxError(error, "HOOKINBOX_STORE_UNAVAILABLE")).toBe(true);
      expect((error as Error).cause).toMatchObject({ code: "SQLITE_BUSY" });
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
      // A batch failing on the lock fails as a whole after ONE busy timeout, not one per item.
      const batchStarted = Date.now();
      const outcomes = await Promise.allSettled(
        Array.from({ length: 5 }, (_, i) =>
          store.accept(acceptInput({ identity: { dedupKey: `b${i}` } })),
        ),
      );
      expect(
        outcomes.every(
          (o) =>
            o.status === "rejected" && isHookinboxError(o.reason, "HOOKINBOX_STORE_UNAVAILABLE"),
        ),
      ).toBe(true);
      expect(Date.now() - batchStarted).toBeLessThan(900); // 5 items × 200 ms would be 1000
      const pingError = await rejectionOf(store.ping());
      expect(isHookinboxError(pingError, "HOOKINBOX_STORE_UNAVAILABLE")).toBe(true);

      locker.exec("COMMIT");
      const result = await store.accept(input);
      expect(result.duplicate).toBe(false);
      const event = await store.getEvent(result.eventId);
      expect(event?.dedupKey).toBe("locked");
      expect(event?.receipts).toHaveLength(1);
      await expect(store.ping()).resolves.toBeUndefined();
    } finally {
      if (locker.inTransaction) locker.exec("ROLLBACK");
      locker.close();
      await store.close();
    }
  });

  it("group commit: 100 concurrent accepts take fewer than 100 transactions", async () => {
    const store = await openFresh();
    const before = store.stats();
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        store.accept(acceptInput({ identity: { dedupKey: `k${i % 80}` } })),
      ),
    );
    const after = store.stats();
    expect(results).toHaveLength(100);
    expect(after.accepted - before.accepted).toBe(100);
    expect(after.duplicates - before.duplicates).toBe(20);
    expect(after.commits - before.commits).toBeLessThan(100);
    expect(after.commits - before.commits).toBeGreaterThanOrEqual(1);
    expect(after.largestBatch).toBeGreaterThan(1);
    await store.close();
  });

  it("splits batches at maxBatch and reports every commit", async () => {
    const sizes: number[] = [];
    const store = openSqliteStore({
      path: freshPath(),
      maxBatch: 8,
      onCommit: (info) => sizes.push(info.items),
    });
    await store.migrate();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.accept(acceptInput({ identity: { dedupKey: `k${i}` } })),
      ),
    );
    expect(sizes).toEqual([8, 8, 4]);
    expect(store.stats()).toMatchObject({ commits: 3, accepted: 20, largestBatch: 8 });
    await store.close();
  });

  it("one bad item in a batch does not fail its neighbours", async () => {
    const store = await openFresh();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        store.accept(
          i === 4
            ? // NOT NULL violation: fails the batch, then fails alone.
              acceptInput({ source: null as unknown as string, identity: { dedupKey: "bad" } })
            : acceptInput({ identity: { dedupKey: `k${i}` } }),
        ),
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual([
      ...Array(4).fill("fulfilled"),
      "rejected",
      ...Array(5).fill("fulfilled"),
    ]);
    const failed = outcomes[4];
    expect(
      failed?.status === "rejected" &&
        isHookinboxError(failed.reason, "HOOKINBOX_STORE_UNAVAILABLE"),
    ).toBe(true);
    expect((await store.listEvents({})).items).toHaveLength(9);
    // one failed batch, then nine single commits
    expect(store.stats()).toMatchObject({ commits: 9, accepted: 9 });
    await store.close();
  });

  it("accept before migrate rejects with HOOKINBOX_STORE_UNAVAILABLE naming migrate()", async () => {
    const store = openSqliteStore({ path: freshPath() });
    const error = await rejectionOf(store.accept(acceptInput()));
    expect(isHookinboxError(error, "HOOKINBOX_STORE_UNAVAILABLE")).toBe(true);
    expect((error as Error).message).toMatch(/migrate\(\)/);
    await store.close();
  });

  it("stores rejections as metadata only: status, code, header names, no event", async () => {
    const store = await openFresh();
    await store.recordRejection(
      rejectionInput({
        status: 401,
        code: "HOOKINBOX_SIGNATURE_MISMATCH",
        headerNames: ["A", "b"],
      }),
    );
    await store.close();
    const db = new Database(store.path, { readonly: true });
    const rows = db.prepare("SELECT * FROM receipts").all();
    expect(rows).toEqual([
      expect.objectContaining({
        event_id: null,
        source: "stripe",
        duplicate: 0,
        status: 401,
        code: "HOOKINBOX_SIGNATURE_MISMATCH",
        size: 812,
        header_names: '["A","b"]',
        remote_address: "198.51.100.7",
      }),
    ]);
    expect(db.prepare("SELECT count(*) AS n FROM events").get()).toEqual({ n: 0 });
    db.close();
  });

  it("every listEvents filter combination is an index range scan without a sort", async () => {
    const store = await openFresh();
    await store.accept(acceptInput());
    await store.close();
    const db = new Database(store.path, { readonly: true });
    const filters = ["source", "type", "status"] as const;
    for (let mask = 0; mask < 8; mask++) {
      const active = filters.filter((_, bit) => mask & (1 << bit));
      for (const withCursor of [false, true]) {
        const query: Record<string, string> = {};
        for (const filter of active) query[filter] = "x";
        if (withCursor) query.cursor = encodeCursor("evt_01JD7Q5Z8X9K3M4N5P6R7S8T9V");
        const { text, params } = listEventsSql(
          "sqlite",
          { events: "events", receipts: "receipts" },
          query,
          50,
        );
        const plan = (
          db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...params) as {
            detail: string;
          }[]
        ).map((row) => row.detail);
        const label = `${active.join("+") || "no filter"}${withCursor ? " + cursor" : ""}: ${plan.join(" | ")}`;
        expect(
          plan.some((line) => /TEMP B-TREE/.test(line)),
          label,
        ).toBe(false);
        const events = plan.find(
          (line) => / e /.test(`${line} `) || /^(SCAN|SEARCH) e\b/.test(line),
        );
        expect(events, label).toMatch(/USING (COVERING )?INDEX/);
        if (active.length > 0) expect(events, label).toMatch(/^SEARCH e USING INDEX events_\w+_id/);
        if (withCursor) expect(events, label).toMatch(/id<\?/);
        expect(plan.join(" "), label).toMatch(
          /SEARCH r USING COVERING INDEX receipts_event_id_received_at \(event_id=\?\)/,
        );
      }
    }
    db.close();
  });

  it("concurrent migrations from 4 processes apply each migration exactly once", async () => {
    const path = freshPath();
    const children = Array.from({ length: 4 }, () =>
      runChild("test/store/fixtures/migrate.ts", [path]),
    );
    const outputs = await Promise.all(
      children.map(async ({ child, exit }) => {
        let stdout = "";
        let stderr = "";
        child.stdout?.on("data", (chunk) => {
          stdout += chunk;
        });
        child.stderr?.on("data", (chunk) => {
          stderr += chunk;
        });
        const status = await exit;
        return { status, stdout, stderr };
      }),
    );
    for (const output of outputs) {
      expect(output.status, output.stderr).toEqual({ code: 0, signal: null });
    }
    const migrations = loadSqliteMigrations();
    const reports = outputs.map(
      (o) => JSON.parse(o.stdout) as { applied: string[]; current: number },
    );
    expect(reports.flatMap((r) => r.applied).sort()).toEqual(migrations.map((m) => m.name).sort());
    expect(reports.every((r) => r.current === migrations.length)).toBe(true);
    const db = new Database(path, { readonly: true });
    expect(db.prepare("SELECT id, name FROM hookinbox_migrations ORDER BY id").all()).toEqual(
      migrations.map((m) => ({ id: m.id, name: m.name })),
    );
    db.close();
  });

  it("crash safety: every id printed after accept resolved survives SIGKILL", async () => {
    const path = freshPath();
    const { child, exit } = runChild("test/store/fixtures/crash-writer.ts", [path]);
    const printed: string[] = [];
    let buffered = "";
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`child printed ${printed.length} ids; ${stderr}`)),
        30_000,
      );
      child.stdout?.on("data", (chunk: Buffer) => {
        buffered += chunk.toString("utf8");
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? ""; // only complete lines count
        printed.push(...lines);
        if (printed.length >= 200) {
          clearTimeout(timer);
          child.kill("SIGKILL");
          resolve();
        }
      });
      child.on("exit", () => {
        clearTimeout(timer);
        if (printed.length < 200) reject(new Error(`child exited early: ${stderr}`));
      });
    });
    const status = await exit;
    expect(status.signal).toBe("SIGKILL");

    const db = new Database(path);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    const find = db.prepare<[string], { dedup_key: string }>(
      "SELECT dedup_key FROM events WHERE id = ?",
    );
    const missing = printed.filter((line) => {
      const [id, key] = line.split(" ");
      return find.get(id ?? "")?.dedup_key !== key;
    });
    expect(missing).toEqual([]);
    const stored = db.prepare("SELECT count(*) AS n FROM events").get() as { n: number };
    expect(stored.n).toBeGreaterThanOrEqual(printed.length);
    db.close();
  });
});
